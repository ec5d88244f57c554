// Line diff of two texts (Myers' O(ND) algorithm in linear space) and unified-diff output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

/// One step of a line edit script.
struct LineEdit {
  enum class Kind : unsigned char { Equal, Delete, Insert };
  Kind kind;
  size_t aLine; ///< 0-based line of `a` (Equal, Delete); for Insert, the next line of `a`
  size_t bLine; ///< 0-based line of `b` (Equal, Insert); for Delete, the next line of `b`
};

/// Splits a text into lines; each line keeps its '\n', so a last line without one differs from
/// the same line with one (as in `diff`). An empty text has no lines.
std::vector<std::string_view> splitLines(std::string_view text);

/// A shortest edit script turning lines `a` into lines `b`: Equal steps are a longest common
/// subsequence; within a change, deletions come before insertions. Uses Myers' O((N+M)·D)-time
/// algorithm with the linear-space middle-snake refinement, so memory is O(N+M).
std::vector<LineEdit> diffLines(const std::vector<std::string_view>& a,
                                const std::vector<std::string_view>& b);

/// Options of a unified diff.
struct UnifiedDiffOptions {
  std::string labelA = "a"; ///< printed as `--- labelA`
  std::string labelB = "b"; ///< printed as `+++ labelB`
  size_t context = 3;       ///< unchanged lines shown around each change
};

/// A unified diff of two texts, as `diff -u` prints it: `--- a` and `+++ b` headers, then hunks
/// `@@ -l,n +l,n @@` of context (' '), removed ('-') and added ('+') lines; changes closer than
/// twice the context share a hunk. A last line without a newline is followed by
/// `\ No newline at end of file`. Identical texts give an empty string.
std::string unifiedDiff(std::string_view a, std::string_view b,
                        const UnifiedDiffOptions& options = {});

} // namespace fb
