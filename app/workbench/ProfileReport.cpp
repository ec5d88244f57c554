// Per-kernel summaries of a profile, time shares on graph nodes and profile comparisons.
#include "app/workbench/ProfileReport.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace fb::workbench {

ProfileSummary summarizeProfile(const cg::Profile& profile) {
  ProfileSummary s;
  s.runs = int(profile.runs.size());
  s.threads = profile.threads;
  // Each kernel's time in each run (a kernel may run more than once per run: summed).
  std::vector<std::vector<double>> perRun(profile.kernels.size(),
                                          std::vector<double>(profile.runs.size(), 0.0));
  for (const cg::KernelEvent& e : profile.events)
    if (size_t(e.kernel) < perRun.size() && e.run >= 0 && size_t(e.run) < profile.runs.size())
      perRun[size_t(e.kernel)][size_t(e.run)] += e.durationUs;
  for (size_t k = 0; k < profile.kernels.size(); ++k) {
    const cg::KernelProfileInfo& info = profile.kernels[k];
    KernelTiming t;
    t.kernel = int(k);
    t.name = info.name;
    t.op = info.op;
    t.generator = info.generator;
    t.nodeNames = info.nodeNames;
    t.nodes = info.nodes;
    t.flops = info.flops;
    t.bytes = info.bytes;
    t.meanUs = profile.meanUs(int(k));
    std::vector<double>& times = perRun[k];
    if (!times.empty()) {
      std::sort(times.begin(), times.end());
      const size_t n = times.size();
      t.medianUs = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    }
    const double seconds = t.medianUs * 1e-6;
    t.gflops = seconds > 0 ? t.flops / seconds * 1e-9 : 0.0;
    t.gbps = seconds > 0 ? t.bytes / seconds * 1e-9 : 0.0;
    s.totalUs += t.medianUs;
    s.totalMeanUs += t.meanUs;
    s.kernels.push_back(std::move(t));
  }
  for (KernelTiming& t : s.kernels)
    t.percent = s.totalUs > 0 ? 100.0 * t.medianUs / s.totalUs : 0.0;
  return s;
}

namespace {

/// The original ids of one op (not a group): its provenance, or itself.
void addOrigins(const Node& op, std::set<NodeId>& ids) {
  if (op.provenance().empty())
    ids.insert(op.id());
  else
    ids.insert(op.provenance().begin(), op.provenance().end());
}

/// The original ids a kernel computes: the ops it lists, looked up in the graph it ran.
std::set<NodeId> kernelOrigins(const KernelTiming& k, const Graph& graph) {
  std::set<NodeId> ids;
  for (NodeId id : k.nodes) {
    if (const Node* n = graph.findNode(id)) {
      const std::set<NodeId> more = originalNodeIds(*n);
      ids.insert(more.begin(), more.end());
    } else {
      ids.insert(id); // not in the graph (should not happen): the id itself is the best guess
    }
  }
  return ids;
}

/// Union-find over indices, for grouping kernels that share original nodes.
struct Groups {
  std::vector<size_t> parent;
  explicit Groups(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t(0)); }
  size_t find(size_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

std::string joinNames(const ProfileSummary& s, const std::vector<int>& kernels) {
  std::string out;
  for (int k : kernels)
    out += (out.empty() ? "" : ", ") + s.kernels[size_t(k)].name;
  return out;
}

std::string joinOps(const ProfileSummary& s, const std::vector<int>& kernels) {
  std::string out;
  for (int k : kernels)
    out += (out.empty() ? "" : ", ") + s.kernels[size_t(k)].op;
  return out;
}

} // namespace

std::set<NodeId> originalNodeIds(const Node& node) {
  std::set<NodeId> ids;
  if (node.body()) {
    for (const auto& inner : node.body()->nodes())
      addOrigins(*inner, ids);
  } else {
    addOrigins(node, ids);
  }
  return ids;
}

std::vector<NodeId> correspondingNodes(const Graph& from, NodeId id, const Graph& to) {
  for (const auto& n : to.nodes())
    if (n->id() == id)
      return {id};
  const Node* node = from.findNode(id);
  if (!node)
    return {};
  std::set<NodeId> origins;
  if (node->graph() == &from)
    origins = originalNodeIds(*node);
  else
    addOrigins(*node, origins); // an op inside a fused group: just that op
  std::vector<NodeId> out;
  for (const auto& n : to.nodes()) {
    const std::set<NodeId> other = originalNodeIds(*n);
    if (std::any_of(other.begin(), other.end(), [&](NodeId o) { return origins.count(o) > 0; }))
      out.push_back(n->id());
  }
  return out;
}

std::vector<int> kernelsOfNode(const ProfileSummary& summary, const Graph& profiled,
                               const Graph& shown, NodeId id) {
  const Node* node = shown.findNode(id);
  if (!node)
    return {};
  std::set<NodeId> origins;
  if (node->graph() == &shown)
    origins = originalNodeIds(*node);
  else
    addOrigins(*node, origins);
  std::vector<int> out;
  for (size_t k = 0; k < summary.kernels.size(); ++k) {
    const std::set<NodeId> ko = kernelOrigins(summary.kernels[k], profiled);
    if (std::any_of(ko.begin(), ko.end(), [&](NodeId o) { return origins.count(o) > 0; }))
      out.push_back(int(k));
  }
  return out;
}

std::map<NodeId, double> timeShareByNode(const ProfileSummary& summary, const Graph& profiled,
                                         const Graph& shown) {
  // Index: original id -> kernels computing it.
  std::unordered_map<NodeId, std::vector<int>> kernelsOf;
  for (size_t k = 0; k < summary.kernels.size(); ++k)
    for (NodeId id : kernelOrigins(summary.kernels[k], profiled))
      kernelsOf[id].push_back(int(k));
  auto shareOf = [&](const std::set<NodeId>& origins) -> std::optional<double> {
    std::set<int> kernels;
    for (NodeId id : origins)
      if (auto it = kernelsOf.find(id); it != kernelsOf.end())
        kernels.insert(it->second.begin(), it->second.end());
    if (kernels.empty())
      return std::nullopt;
    double percent = 0;
    for (int k : kernels)
      percent += summary.kernels[size_t(k)].percent;
    return std::min(1.0, percent / 100.0);
  };
  std::map<NodeId, double> share;
  for (const auto& n : shown.nodes()) {
    if (auto s = shareOf(originalNodeIds(*n)))
      share[n->id()] = *s;
    if (n->body())
      for (const auto& inner : n->body()->nodes()) {
        std::set<NodeId> origins;
        addOrigins(*inner, origins);
        if (auto s = shareOf(origins))
          share[inner->id()] = *s;
      }
  }
  return share;
}

ProfileComparison compareProfiles(const ProfileSummary& before, const Graph& beforeGraph,
                                  const ProfileSummary& after, const Graph& afterGraph) {
  const size_t nb = before.kernels.size(), na = after.kernels.size();
  // Kernels 0..nb-1 are before's, nb..nb+na-1 after's; shared original ids join them.
  Groups groups(nb + na);
  std::unordered_map<NodeId, size_t> firstKernelOf;
  auto link = [&](size_t kernel, const std::set<NodeId>& origins) {
    for (NodeId id : origins) {
      auto [it, inserted] = firstKernelOf.emplace(id, kernel);
      if (!inserted)
        groups.join(kernel, it->second);
    }
  };
  for (size_t k = 0; k < nb; ++k)
    link(k, kernelOrigins(before.kernels[k], beforeGraph));
  for (size_t k = 0; k < na; ++k)
    link(nb + k, kernelOrigins(after.kernels[k], afterGraph));

  std::map<size_t, KernelSaving> byRoot; // ordered by root: deterministic before sorting
  for (size_t k = 0; k < nb; ++k) {
    KernelSaving& row = byRoot[groups.find(k)];
    row.before.push_back(int(k));
    row.beforeUs += before.kernels[k].medianUs;
  }
  for (size_t k = 0; k < na; ++k) {
    KernelSaving& row = byRoot[groups.find(nb + k)];
    row.after.push_back(int(k));
    row.afterUs += after.kernels[k].medianUs;
  }
  ProfileComparison c;
  c.beforeTotalUs = before.totalUs;
  c.afterTotalUs = after.totalUs;
  c.beforeKernels = int(nb);
  c.afterKernels = int(na);
  for (auto& [root, row] : byRoot) {
    row.beforeNames = joinNames(before, row.before);
    row.afterNames = joinNames(after, row.after);
    row.afterOp = row.after.empty() ? joinOps(before, row.before) : joinOps(after, row.after);
    c.rows.push_back(std::move(row));
  }
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const KernelSaving& a, const KernelSaving& b) {
    return a.savedUs() > b.savedUs();
  });
  return c;
}

} // namespace fb::workbench
