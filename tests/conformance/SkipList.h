// The conformance skip list: which ONNX node-test cases Fusebox does not run, and why. Keeping it
// in the repo makes every skip a decision someone wrote down; the runner checks it both ways (a
// skip that is not listed fails, and so does a listed case that now passes).
//
// File format, one entry per line ('#' starts a comment line):
//   [BACKEND ]REGEX: REASON
// REGEX must match the whole case name (ECMAScript syntax); BACKEND, when present, is "interp" or
// "cpu" and limits the entry to that backend. The first entry that matches wins.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace fb::conformance {

class SkipList {
public:
  struct Entry {
    std::string backend; ///< empty for every backend
    std::string pattern;
    std::regex regex;
    std::string reason;
    int line = 0;
  };

  /// Reads `path`; on a malformed line returns nullopt and sets `error` naming file and line.
  static std::optional<SkipList> read(const std::string& path, std::string& error);

  /// The entry that lists `caseName` for `backend` ("interp" or "cpu"), or nullptr.
  const Entry* find(const std::string& caseName, const std::string& backend) const;

  const std::string& path() const { return m_path; }

private:
  std::string m_path;
  std::vector<Entry> m_entries;
};

} // namespace fb::conformance
