// A DAG whose nodes are merged into groups one union at a time, kept acyclic by checks that search
// only near the union, in a dynamic topological order of the groups (after Pearce and Kelly).
#include "passes/ContractedDag.h"

#include <algorithm>

namespace fb {

ContractedDag::ContractedDag(const std::vector<std::vector<int>>& consumers, bool verify)
    : m_consumers(consumers), m_producers(consumers.size()), m_verify(verify),
      m_parent(consumers.size()), m_members(consumers.size()), m_leaving(consumers.size()),
      m_entering(consumers.size()), m_ord(consumers.size()), m_mark(consumers.size(), 0),
      m_inSet(consumers.size(), 0) {
  for (size_t i = 0; i < m_consumers.size(); ++i) {
    std::vector<int>& cs = m_consumers[i];
    std::sort(cs.begin(), cs.end());
    cs.erase(std::unique(cs.begin(), cs.end()), cs.end());
    for (int c : cs)
      m_producers[size_t(c)].push_back(int(i));
    m_parent[i] = int(i);
    m_members[i] = {int(i)};
    m_ord[i] = int(i);
  }
  for (size_t i = 0; i < m_consumers.size(); ++i) {
    if (!m_consumers[i].empty())
      m_leaving[i] = {int(i)};
    if (!m_producers[i].empty())
      m_entering[i] = {int(i)};
  }
  if (m_verify && !orderIsTopological())
    ++m_orderViolations;
}

int ContractedDag::find(int x) {
  while (m_parent[size_t(x)] != x) {
    m_parent[size_t(x)] = m_parent[size_t(m_parent[size_t(x)])];
    x = m_parent[size_t(x)];
  }
  return x;
}

int ContractedDag::findConst(int x) const {
  while (m_parent[size_t(x)] != x)
    x = m_parent[size_t(x)];
  return x;
}

bool ContractedDag::tryMerge(int target, const std::vector<int>& roots,
                             const std::function<bool()>& mayCommit) {
  m_set = roots;
  m_set.push_back(target);
  ++m_setStamp;
  int lo = m_ord[size_t(target)], hi = lo;
  for (int r : m_set) {
    m_inSet[size_t(r)] = m_setStamp;
    lo = std::min(lo, m_ord[size_t(r)]);
    hi = std::max(hi, m_ord[size_t(r)]);
  }
  bool cycle = leavesAndReturnsBefore(hi);
  if (m_verify) {
    // The exhaustive answer decides, so that a wrong bounded answer is counted but the plan
    // stays the reference plan.
    bool reference = leavesAndReturnsExhaustive();
    if (reference != cycle)
      ++m_convexityMismatches;
    cycle = reference;
  }
  if (cycle || (mayCommit && !mayCommit()))
    return false;
  collectAncestorsAfter(lo);
  reorder(target);
  for (int r : roots) {
    m_parent[size_t(r)] = target;
    absorb(m_members[size_t(target)], m_members[size_t(r)]);
    absorb(m_leaving[size_t(target)], m_leaving[size_t(r)]);
    absorb(m_entering[size_t(target)], m_entering[size_t(r)]);
  }
  // Members whose edges all stay inside the union leave the boundary lists.
  auto keepBoundary = [&](std::vector<int>& list, const std::vector<std::vector<int>>& edges) {
    std::erase_if(list, [&](int y) {
      return std::all_of(edges[size_t(y)].begin(), edges[size_t(y)].end(),
                         [&](int z) { return find(z) == target; });
    });
  };
  keepBoundary(m_leaving[size_t(target)], m_consumers);
  keepBoundary(m_entering[size_t(target)], m_producers);
  if (m_verify && !orderIsTopological())
    ++m_orderViolations;
  return true;
}

/// Moves `from` into `into`, the shorter into the longer, so that a node moves O(log n) times.
void ContractedDag::absorb(std::vector<int>& into, std::vector<int>& from) {
  if (into.size() < from.size())
    into.swap(from);
  into.insert(into.end(), from.begin(), from.end());
  from.clear();
  from.shrink_to_fit();
}

/// Step 2: true when a path leaves m_set's groups and comes back, searching only groups ordered
/// before `hi`; otherwise m_after holds the groups entered.
bool ContractedDag::leavesAndReturnsBefore(int hi) {
  newMarks();
  m_after.clear();
  m_stack.clear();
  for (int s : m_set)
    for (int y : m_leaving[size_t(s)]) {
      m_searchSteps += m_consumers[size_t(y)].size();
      for (int c : m_consumers[size_t(y)])
        if (!inSet(find(c)))
          m_stack.push_back(c);
    }
  while (!m_stack.empty()) {
    int root = find(m_stack.back());
    m_stack.pop_back();
    ++m_searchSteps;
    if (inSet(root))
      return true;
    if (marked(root) || m_ord[size_t(root)] > hi)
      continue;
    mark(root);
    m_after.push_back(root);
    for (int y : m_leaving[size_t(root)])
      for (int c : m_consumers[size_t(y)])
        m_stack.push_back(c);
  }
  return false;
}

/// Step 3: collects in m_before the ancestors of m_set's groups ordered after `lo`.
void ContractedDag::collectAncestorsAfter(int lo) {
  newMarks();
  m_before.clear();
  m_stack.clear();
  for (int s : m_set)
    for (int y : m_entering[size_t(s)])
      for (int p : m_producers[size_t(y)])
        m_stack.push_back(p);
  while (!m_stack.empty()) {
    int root = find(m_stack.back());
    m_stack.pop_back();
    ++m_searchSteps;
    // The set's own edges lead back into it; any other path into it would be a cycle, which
    // step 2 refused.
    if (inSet(root) || marked(root) || m_ord[size_t(root)] < lo)
      continue;
    mark(root);
    m_before.push_back(root);
    for (int y : m_entering[size_t(root)])
      for (int p : m_producers[size_t(y)])
        m_stack.push_back(p);
  }
}

/// Step 4: hands the pooled orders of m_before, m_set and m_after out again, `merged` (the root
/// that stays) standing for the whole set.
void ContractedDag::reorder(int merged) {
  auto byOrd = [&](int a, int b) { return m_ord[size_t(a)] < m_ord[size_t(b)]; };
  std::sort(m_before.begin(), m_before.end(), byOrd);
  std::sort(m_after.begin(), m_after.end(), byOrd);
  m_slots.clear();
  for (const std::vector<int>* groups : {&m_before, &m_set, &m_after})
    for (int r : *groups)
      m_slots.push_back(m_ord[size_t(r)]);
  std::sort(m_slots.begin(), m_slots.end());
  size_t k = 0;
  for (int r : m_before)
    m_ord[size_t(r)] = m_slots[k++];
  m_ord[size_t(merged)] = m_slots[k];
  k = m_slots.size() - m_after.size();
  for (int r : m_after)
    m_ord[size_t(r)] = m_slots[k++];
}

/// The reference for verify, the search the bounded one replaced: follows every path from the
/// union to the end of the graph, each existing group contracted to one node.
bool ContractedDag::leavesAndReturnsExhaustive() {
  newMarks();
  std::vector<int> stack;
  for (int s : m_set)
    for (int y : m_members[size_t(s)])
      for (int c : m_consumers[size_t(y)])
        if (!inSet(find(c)))
          stack.push_back(c);
  while (!stack.empty()) {
    int x = stack.back();
    stack.pop_back();
    int root = find(x);
    if (inSet(root))
      return true;
    if (marked(root))
      continue;
    mark(root);
    for (int y : m_members[size_t(root)])
      for (int c : m_consumers[size_t(y)])
        stack.push_back(c);
  }
  return false;
}

/// For verify: true when the roots' orders are distinct and every edge between two groups goes
/// from a lower order to a higher one.
bool ContractedDag::orderIsTopological() {
  std::vector<int> ords;
  for (size_t i = 0; i < m_parent.size(); ++i)
    if (find(int(i)) == int(i))
      ords.push_back(m_ord[i]);
  std::sort(ords.begin(), ords.end());
  if (std::adjacent_find(ords.begin(), ords.end()) != ords.end())
    return false;
  for (size_t i = 0; i < m_consumers.size(); ++i) {
    int from = find(int(i));
    for (int c : m_consumers[i]) {
      int to = find(c);
      if (from != to && m_ord[size_t(from)] >= m_ord[size_t(to)])
        return false;
    }
  }
  return true;
}

} // namespace fb
