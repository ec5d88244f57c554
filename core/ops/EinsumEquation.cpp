// Einsum equation parsing and label sizes (see EinsumEquation.h).
#include "core/ops/EinsumEquation.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace fb {

namespace {

/// One term of the equation: letters with an optional ellipsis at `ellipsisAt`.
struct Term {
  std::string letters;
  int ellipsisAt = -1; ///< position in `letters` where "..." stands, or -1
};

Expected<Term> parseTerm(const std::string& equation, const std::string& text) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ')
      continue;
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0 || t.ellipsisAt >= 0)
        return makeError("einsum equation '", equation, "': a term may hold one '...' only");
      t.ellipsisAt = int(t.letters.size());
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)))
      return makeError("einsum equation '", equation, "': '", std::string(1, c),
                       "' is not a letter");
    t.letters.push_back(c);
  }
  return t;
}

} // namespace

Expected<EinsumEquation> parseEinsumEquation(const std::string& equation,
                                             const std::vector<size_t>& ranks) {
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    FB_ASSIGN_OR_RETURN(Term t, parseTerm(equation, lhs.substr(start, comma - start)));
    terms.push_back(std::move(t));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size())
    return makeError("einsum equation '", equation, "' has ", terms.size(), " operand terms for ",
                     ranks.size(), " inputs");
  EinsumEquation eq;
  std::array<int, 128> labelOf;
  labelOf.fill(-1);
  std::array<int, 128> count{};
  // The ellipsis spans the most dims any operand gives it.
  size_t ellipsisRank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    if (t.ellipsisAt < 0 ? t.letters.size() != ranks[k] : t.letters.size() > ranks[k])
      return makeError("einsum equation '", equation, "': term ", k, " has ", t.letters.size(),
                       " letters for an operand of rank ", ranks[k]);
    if (t.ellipsisAt >= 0)
      ellipsisRank = std::max(ellipsisRank, ranks[k] - t.letters.size());
  }
  for (const Term& t : terms)
    for (char c : t.letters) {
      ++count[size_t(c)];
      if (labelOf[size_t(c)] < 0)
        labelOf[size_t(c)] = eq.numLabels++;
    }
  eq.isEllipsis.assign(size_t(eq.numLabels), false);
  std::vector<int> ellipsisLabels;
  for (size_t e = 0; e < ellipsisRank; ++e) {
    ellipsisLabels.push_back(eq.numLabels++);
    eq.isEllipsis.push_back(true);
  }
  auto labelsOf = [&](const Term& t, size_t rank) {
    std::vector<int> labels;
    const size_t span = rank - t.letters.size();
    for (size_t i = 0; i <= t.letters.size(); ++i) {
      if (int(i) == t.ellipsisAt)
        for (size_t e = ellipsisRank - span; e < ellipsisRank; ++e)
          labels.push_back(ellipsisLabels[e]);
      if (i < t.letters.size())
        labels.push_back(labelOf[size_t(t.letters[i])]);
    }
    return labels;
  };
  for (size_t k = 0; k < terms.size(); ++k)
    eq.inputs.push_back(labelsOf(terms[k], ranks[k]));
  if (arrow == std::string::npos) {
    eq.output = ellipsisLabels;
    for (int c = 0; c < 128; ++c)
      if (count[size_t(c)] == 1)
        eq.output.push_back(labelOf[size_t(c)]);
    return eq;
  }
  FB_ASSIGN_OR_RETURN(Term out, parseTerm(equation, equation.substr(arrow + 2)));
  if (out.ellipsisAt < 0 && ellipsisRank > 0)
    return makeError("einsum equation '", equation,
                     "': the operands have '...' but the output does not");
  for (char c : out.letters) {
    if (labelOf[size_t(c)] < 0)
      return makeError("einsum equation '", equation, "': output letter '", std::string(1, c),
                       "' is in no operand");
    if (std::count(out.letters.begin(), out.letters.end(), c) > 1)
      return makeError("einsum equation '", equation, "': output letter '", std::string(1, c),
                       "' occurs twice");
  }
  eq.output = labelsOf(out, out.letters.size() + ellipsisRank);
  return eq;
}

Expected<std::vector<int64_t>> einsumLabelSizes(const EinsumEquation& eq,
                                                const std::vector<std::vector<int64_t>>& sizes) {
  std::vector<int64_t> size(size_t(eq.numLabels), -1);
  for (size_t k = 0; k < eq.inputs.size(); ++k)
    for (size_t d = 0; d < eq.inputs[k].size(); ++d) {
      const size_t l = size_t(eq.inputs[k][d]);
      const int64_t s = sizes[k][d];
      if (size[l] < 0 || (eq.isEllipsis[l] && size[l] == 1))
        size[l] = s;
      else if (s != size[l] && !(eq.isEllipsis[l] && s == 1))
        return makeError("einsum: operand ", k, " dim ", d, " has size ", s,
                         " but the same label "
                         "has size ",
                         size[l], " elsewhere");
    }
  for (int64_t& s : size)
    if (s < 0)
      s = 1;
  return size;
}

} // namespace fb
