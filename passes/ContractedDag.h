// A DAG whose nodes are merged into groups one union at a time, kept acyclic by checks that search
// only near the union, in a dynamic topological order of the groups (after Pearce and Kelly).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace fb {

/// The fusion partitioner's view of the dataflow graph: a union-find over its nodes, each group
/// seen as one node of a contracted graph that must stay acyclic (a fused group becomes one node,
/// so no path may leave a group and come back).
///
/// Searching the whole downstream graph for such a path on every union makes partitioning
/// quadratic in a long chain. Instead the DAG keeps a topological order of the groups, `ord`,
/// and searches only the window between the first and the last group of a union S:
///   1. S's groups span the orders lo..hi;
///   2. a path that leaves S and comes back runs only through groups ordered strictly between
///      two groups of S, so the forward search from S's consumers never enters a group ordered
///      after hi. Reaching S again refuses the union; otherwise the groups entered are F, S's
///      descendants ordered before hi;
///   3. the backward search from S's producers collects B, S's ancestors ordered after lo;
///   4. the orders of B, S and F are pooled and handed out again in ascending order: B's groups
///      first (keeping their relative order), then the merged group, then F's. B only moves
///      earlier and F only later, B precedes F, and groups outside B, S and F keep their order,
///      so every edge still points forward.
/// Orders stay distinct but not dense (the merged set frees slots). Ordering by the nodes'
/// original indices instead would be unsound: a group's members can lie far apart.
class ContractedDag {
public:
  /// `consumers[i]`: the nodes that read node i's results. Node indices must already be a
  /// topological order (the graph keeps its nodes in execution order). With `verify`, every
  /// union is also checked by the exhaustive search, which then decides, and the order is
  /// checked after every union (O(nodes + edges) each: for tests and debugging).
  ContractedDag(const std::vector<std::vector<int>>& consumers, bool verify);

  /// The root of `x`'s group.
  int find(int x);
  int findConst(int x) const;
  /// The members of a root's group, in no particular order.
  const std::vector<int>& members(int root) const { return m_members[size_t(root)]; }

  /// Merges the groups of `roots` into the group of root `target` and returns true, unless the
  /// union would have a path that leaves it and comes back: then returns false and changes
  /// nothing. `roots` are distinct roots other than `target`. When given, `mayCommit` is asked
  /// once the union is legal, right before it is made (the rewrite counter); false refuses it.
  bool tryMerge(int target, const std::vector<int>& roots,
                const std::function<bool()>& mayCommit = {});

  /// Edges the bounded searches examined, all unions together: their cost, which tests bound.
  size_t searchSteps() const { return m_searchSteps; }
  /// With verify: unions on which the bounded search and the exhaustive one disagreed.
  size_t convexityMismatches() const { return m_convexityMismatches; }
  /// With verify: times (after construction or a union) the order was not topological.
  size_t orderViolations() const { return m_orderViolations; }

private:
  void newMarks() { ++m_stamp; }
  bool marked(int x) const { return m_mark[size_t(x)] == m_stamp; }
  void mark(int x) { m_mark[size_t(x)] = m_stamp; }
  bool inSet(int root) const { return m_inSet[size_t(root)] == m_setStamp; }

  static void absorb(std::vector<int>& into, std::vector<int>& from);
  bool leavesAndReturnsBefore(int hi);
  void collectAncestorsAfter(int lo);
  void reorder(int merged);
  bool leavesAndReturnsExhaustive();
  bool orderIsTopological();

  std::vector<std::vector<int>> m_consumers, m_producers; ///< per node, each neighbour once
  bool m_verify;
  std::vector<int> m_parent;
  std::vector<std::vector<int>> m_members; ///< valid at roots
  /// Valid at roots: the members with a consumer outside the group (`m_leaving`) and with a
  /// producer outside it (`m_entering`), so that the searches cross a big group in time
  /// proportional to its boundary, not its size.
  std::vector<std::vector<int>> m_leaving, m_entering;
  /// A topological order of the groups, valid at roots: distinct, not necessarily dense.
  std::vector<int> m_ord;
  // Marks are generation-stamped so that each search starts clean without clearing: the
  // searches' visited groups, and the roots of the union being tried.
  std::vector<uint32_t> m_mark, m_inSet;
  uint32_t m_stamp = 0, m_setStamp = 0;
  // Scratch of one union, kept to allocate nothing per try: its roots, the groups the searches
  // entered after it (F) and before it (B), a search stack and the pooled orders.
  std::vector<int> m_set, m_after, m_before, m_stack, m_slots;
  size_t m_searchSteps = 0, m_convexityMismatches = 0, m_orderViolations = 0;
};

} // namespace fb
