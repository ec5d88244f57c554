// Myers line diff in linear space, and unified-diff hunks with context.
#include "core/TextDiff.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <unordered_map>

namespace fb {

namespace {

/// Finds a shortest edit script between two sequences of interned line ids and records it as
/// per-line "deleted" / "inserted" flags, which is all the script is made of.
class MyersDiff {
public:
  MyersDiff(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b)
      : m_a(a), m_b(b), m_deleted(a.size(), false), m_inserted(b.size(), false) {}

  void run() { compare(0, m_a.size(), 0, m_b.size()); }
  const std::vector<bool>& deleted() const { return m_deleted; }
  const std::vector<bool>& inserted() const { return m_inserted; }

private:
  /// Diffs a[aLo, aHi) with b[bLo, bHi): strips the common prefix and suffix, then splits at the
  /// middle snake of a shortest path and recurses on both halves.
  void compare(size_t aLo, size_t aHi, size_t bLo, size_t bHi) {
    while (aLo < aHi && bLo < bHi && m_a[aLo] == m_b[bLo]) {
      ++aLo;
      ++bLo;
    }
    while (aLo < aHi && bLo < bHi && m_a[aHi - 1] == m_b[bHi - 1]) {
      --aHi;
      --bHi;
    }
    if (aLo == aHi) {
      for (size_t j = bLo; j < bHi; ++j)
        m_inserted[j] = true;
      return;
    }
    if (bLo == bHi) {
      for (size_t i = aLo; i < aHi; ++i)
        m_deleted[i] = true;
      return;
    }
    size_t x = 0, y = 0;
    if (!middleSnake(aLo, aHi, bLo, bHi, x, y)) {
      for (size_t i = aLo; i < aHi; ++i)
        m_deleted[i] = true;
      for (size_t j = bLo; j < bHi; ++j)
        m_inserted[j] = true;
      return;
    }
    compare(aLo, aLo + x, bLo, bLo + y);
    compare(aLo + x, aHi, bLo + y, bHi);
  }

  /// Runs the forward and the reverse search of Myers' paper at the same time, one edit at a
  /// time, until their furthest-reaching paths overlap; (x, y) is then a point on a shortest
  /// path, relative to (aLo, bLo). Returns false when the sequences share nothing.
  bool middleSnake(size_t aLo, size_t aHi, size_t bLo, size_t bHi, size_t& xOut, size_t& yOut) {
    const int64_t n = int64_t(aHi - aLo), m = int64_t(bHi - bLo);
    const int64_t maxD = (n + m + 1) / 2;
    const int64_t offset = maxD + 1;
    const size_t length = size_t(2 * maxD + 3);
    m_forward.assign(length, -1);
    m_reverse.assign(length, -1);
    m_forward[size_t(offset + 1)] = 0;
    m_reverse[size_t(offset + 1)] = 0;
    const int64_t delta = n - m;
    const bool checkInForward = (delta % 2) != 0; // the paths meet in the forward pass iff odd
    auto a = [&](int64_t i) { return m_a[aLo + size_t(i)]; };
    auto b = [&](int64_t j) { return m_b[bLo + size_t(j)]; };
    // Diagonals that ran off the edit graph narrow the range searched later.
    int64_t k1Start = 0, k1End = 0, k2Start = 0, k2End = 0;
    for (int64_t d = 0; d < maxD; ++d) {
      for (int64_t k1 = -d + k1Start; k1 <= d - k1End; k1 += 2) {
        const int64_t k1Off = offset + k1;
        int64_t x1;
        if (k1 == -d || (k1 != d && m_forward[size_t(k1Off - 1)] < m_forward[size_t(k1Off + 1)]))
          x1 = m_forward[size_t(k1Off + 1)];
        else
          x1 = m_forward[size_t(k1Off - 1)] + 1;
        int64_t y1 = x1 - k1;
        while (x1 < n && y1 < m && a(x1) == b(y1)) {
          ++x1;
          ++y1;
        }
        m_forward[size_t(k1Off)] = x1;
        if (x1 > n) {
          k1End += 2;
        } else if (y1 > m) {
          k1Start += 2;
        } else if (checkInForward) {
          const int64_t k2Off = offset + delta - k1;
          if (k2Off >= 0 && k2Off < int64_t(length) && m_reverse[size_t(k2Off)] != -1) {
            const int64_t x2 = n - m_reverse[size_t(k2Off)];
            if (x1 >= x2) {
              xOut = size_t(x1);
              yOut = size_t(y1);
              return true;
            }
          }
        }
      }
      for (int64_t k2 = -d + k2Start; k2 <= d - k2End; k2 += 2) {
        const int64_t k2Off = offset + k2;
        int64_t x2;
        if (k2 == -d || (k2 != d && m_reverse[size_t(k2Off - 1)] < m_reverse[size_t(k2Off + 1)]))
          x2 = m_reverse[size_t(k2Off + 1)];
        else
          x2 = m_reverse[size_t(k2Off - 1)] + 1;
        int64_t y2 = x2 - k2;
        while (x2 < n && y2 < m && a(n - x2 - 1) == b(m - y2 - 1)) {
          ++x2;
          ++y2;
        }
        m_reverse[size_t(k2Off)] = x2;
        if (x2 > n) {
          k2End += 2;
        } else if (y2 > m) {
          k2Start += 2;
        } else if (!checkInForward) {
          const int64_t k1Off = offset + delta - k2;
          if (k1Off >= 0 && k1Off < int64_t(length) && m_forward[size_t(k1Off)] != -1) {
            const int64_t x1 = m_forward[size_t(k1Off)];
            const int64_t y1 = offset + x1 - k1Off;
            if (x1 >= n - x2) {
              xOut = size_t(x1);
              yOut = size_t(y1);
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  const std::vector<uint32_t>& m_a;
  const std::vector<uint32_t>& m_b;
  std::vector<bool> m_deleted;
  std::vector<bool> m_inserted;
  std::vector<int64_t> m_forward; // furthest x reached on each diagonal, reused across calls
  std::vector<int64_t> m_reverse;
};

/// "l,n" of a hunk header; `diff -u` leaves out ",1", and names the line before an empty range.
std::string hunkRange(size_t start, size_t count) {
  if (count == 0)
    return std::to_string(start) + ",0";
  if (count == 1)
    return std::to_string(start + 1);
  return std::to_string(start + 1) + "," + std::to_string(count);
}

void appendLine(std::string& out, char marker, std::string_view line) {
  out += marker;
  out.append(line.data(), line.size());
  if (line.empty() || line.back() != '\n')
    out += "\n\\ No newline at end of file\n";
}

} // namespace

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

std::vector<LineEdit> diffLines(const std::vector<std::string_view>& a,
                                const std::vector<std::string_view>& b) {
  // Interning lines as integers makes each comparison in the search O(1).
  std::unordered_map<std::string_view, uint32_t> ids;
  auto intern = [&](const std::vector<std::string_view>& lines) {
    std::vector<uint32_t> out;
    out.reserve(lines.size());
    for (std::string_view l : lines)
      out.push_back(ids.emplace(l, uint32_t(ids.size())).first->second);
    return out;
  };
  std::vector<uint32_t> ia = intern(a), ib = intern(b);
  MyersDiff diff(ia, ib);
  diff.run();
  std::vector<LineEdit> edits;
  edits.reserve(std::max(a.size(), b.size()));
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && diff.deleted()[i]) {
      edits.push_back({LineEdit::Kind::Delete, i++, j});
    } else if (j < b.size() && diff.inserted()[j]) {
      edits.push_back({LineEdit::Kind::Insert, i, j++});
    } else {
      assert(i < a.size() && j < b.size() && ia[i] == ib[j] && "unmarked lines are common");
      edits.push_back({LineEdit::Kind::Equal, i++, j++});
    }
  }
  return edits;
}

std::string unifiedDiff(std::string_view a, std::string_view b, const UnifiedDiffOptions& options) {
  std::vector<std::string_view> la = splitLines(a), lb = splitLines(b);
  std::vector<LineEdit> edits = diffLines(la, lb);
  std::vector<size_t> changes; // indices into edits of Delete/Insert steps
  for (size_t e = 0; e < edits.size(); ++e)
    if (edits[e].kind != LineEdit::Kind::Equal)
      changes.push_back(e);
  if (changes.empty())
    return {};

  std::string out = "--- " + options.labelA + "\n+++ " + options.labelB + "\n";
  const size_t ctx = options.context;
  size_t c = 0;
  while (c < changes.size()) {
    // Grow the hunk while the next change is at most 2·context unchanged lines away.
    size_t last = c;
    while (last + 1 < changes.size() && changes[last + 1] - changes[last] - 1 <= 2 * ctx)
      ++last;
    size_t begin = changes[c] >= ctx ? changes[c] - ctx : 0;
    size_t end = std::min(edits.size(), changes[last] + ctx + 1);
    size_t aCount = 0, bCount = 0;
    for (size_t e = begin; e < end; ++e) {
      aCount += edits[e].kind != LineEdit::Kind::Insert;
      bCount += edits[e].kind != LineEdit::Kind::Delete;
    }
    out += "@@ -" + hunkRange(edits[begin].aLine, aCount) + " +" +
           hunkRange(edits[begin].bLine, bCount) + " @@\n";
    for (size_t e = begin; e < end; ++e) {
      const LineEdit& ed = edits[e];
      switch (ed.kind) {
      case LineEdit::Kind::Equal:
        appendLine(out, ' ', la[ed.aLine]);
        break;
      case LineEdit::Kind::Delete:
        appendLine(out, '-', la[ed.aLine]);
        break;
      case LineEdit::Kind::Insert:
        appendLine(out, '+', lb[ed.bLine]);
        break;
      default:
        assert(false && "unknown edit kind");
        break;
      }
    }
    c = last + 1;
  }
  return out;
}

} // namespace fb
