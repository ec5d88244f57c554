// Operator fusion's analysis: operand roles, the dataflow graph, its post-dominator tree and the
// phased union-find partitioner (after TVM's FuseOps).
#include "passes/FusePartition.h"

#include "core/ShapeInference.h"
#include "passes/ContractedDag.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace fb {

// ---------------------------------------------------------------------------------------------
// Operand roles

const Tensor* knownOperandData(const Value* v) {
  // Mirrors InferContext::inputConstant.
  if (v->isConstant() && v->constantData().valid())
    return &v->constantData();
  if (const Node* p = v->producer(); p && p->op() == OpKind::Constant)
    if (const AttrValue* a = p->attrs().find("value"))
      if (const Tensor* t = std::get_if<Tensor>(a))
        return t;
  return nullptr;
}

namespace {

/// What inference computed for a node's outputs; `ok` is false when it failed.
struct ProbeResult {
  bool ok = false;
  std::vector<TensorType> types;
  std::vector<std::optional<std::vector<Dim>>> shapeValues;

  bool sameAs(const ProbeResult& other) const {
    if (ok != other.ok || types.size() != other.types.size())
      return false;
    for (size_t i = 0; i < types.size(); ++i)
      if (types[i].dtype != other.types[i].dtype || types[i].dims != other.types[i].dims)
        return false;
    return shapeValues == other.shapeValues;
  }
};

/// Re-infers `node` alone in a scratch graph. Operands keep what inference can see of them
/// (constant data, shape values), except `opaqueOperand`, which becomes a plain typed input.
ProbeResult probeInference(const Node& node, int opaqueOperand) {
  Graph scratch("probe");
  const Graph* root = node.graph();
  while (root && root->parent())
    root = root->parent();
  if (root)
    scratch.setOpset(root->opset());
  std::vector<Value*> ins;
  for (size_t i = 0; i < node.numInputs(); ++i) {
    const Value* v = node.input(i);
    if (!v) {
      ins.push_back(nullptr);
      continue;
    }
    std::string name = "p" + std::to_string(i);
    const Tensor* data = knownOperandData(v);
    if (int(i) != opaqueOperand && data) {
      Value* c = scratch.addConstant(name, *data); // shares the data, copies nothing
      TensorType t = c->type();
      t.quant = v->type().quant;
      c->setType(t);
      ins.push_back(c);
    } else {
      Value* in = scratch.addInput(name, v->type());
      if (int(i) != opaqueOperand)
        in->setShapeValue(v->shapeValue());
      ins.push_back(in);
    }
  }
  Node* copy =
      scratch.addNodeWithId(node.id(), node.op(), ins, node.numOutputs(), {}, node.name());
  copy->attrs() = node.attrs();
  for (size_t k = 0; k < node.numOutputs(); ++k)
    copy->output(k)->setType(node.output(k)->type());
  ProbeResult r;
  if (!inferNodeShapes(*copy).ok())
    return r;
  r.ok = true;
  for (const Value* out : copy->outputs()) {
    r.types.push_back(out->type());
    r.shapeValues.push_back(out->shapeValue());
  }
  return r;
}

} // namespace

OperandRoles classifyOperands(const Node& node) {
  OperandRoles roles;
  roles.shapeParameter.assign(node.numInputs(), false);
  ProbeResult stored;
  stored.ok = true;
  for (const Value* out : node.outputs()) {
    stored.types.push_back(out->type());
    stored.shapeValues.push_back(out->shapeValue());
  }
  ProbeResult baseline = probeInference(node, -1);
  if (!baseline.sameAs(stored)) {
    // Stale or uninferable types: a body could not reproduce them, so keep the node out.
    roles.fusible = false;
    return roles;
  }
  for (size_t i = 0; i < node.numInputs(); ++i) {
    const Value* v = node.input(i);
    if (!v || (!knownOperandData(v) && !v->shapeValue()))
      continue; // inference sees only the type of this operand
    if (probeInference(node, int(i)).sameAs(baseline))
      continue;
    roles.shapeParameter[i] = true;
    if (!knownOperandData(v))
      roles.fusible = false; // a run-time shape (from Shape): the body would lose it
  }
  // Dropout's ratio and training_mode decide what it computes, not its shape: known ones stay
  // constants in the body, so the kernel sees inference mode (a run-time one is refused).
  if (node.op() == OpKind::Dropout)
    for (size_t i = 1; i < node.numInputs(); ++i)
      if (node.input(i) && knownOperandData(node.input(i)))
        roles.shapeParameter[i] = true;
  return roles;
}

// ---------------------------------------------------------------------------------------------
// Partitioning

namespace {

OpCategory combine(OpCategory a, OpCategory b) { return std::max(a, b); }

/// A use of a node's result by another node, with the pattern the fusion rules see on it.
struct Edge {
  int consumer;
  OpCategory pattern;
};

/// A top-level node in the dataflow graph that the partitioner works on.
struct FlowNode {
  Node* node = nullptr;
  OpCategory pattern = OpCategory::Opaque; ///< the op's category, Opaque when not fusible
  bool externRef = false;                  ///< one of its results is a graph output
  std::vector<Edge> consumers;
};

/// A node of the post-dominator tree.
struct DomNode {
  int parent = -1; ///< the immediate post-dominator; -1 is the virtual sink
  int depth = 1;
  /// The combined pattern of every edge on the paths from the node to its parent.
  OpCategory pattern = OpCategory::Elementwise;
};

bool isAnchorCategory(OpCategory c) {
  return c == OpCategory::ComplexOutFusable || c == OpCategory::Reduction;
}

/// True when both shapes are known to be equal: then a Broadcast op does not broadcast that
/// operand, and the edge is as good as elementwise (TVM makes the same refinement).
bool sameKnownShape(const TensorType& a, const TensorType& b) {
  if (a.dims != b.dims)
    return false;
  for (const Dim& d : a.dims)
    if (d.isUnknown())
      return false;
  return true;
}

/// ConvInteger or MatMulInteger whose weights and zero points are constants.
bool integerProductTakenByInt8Kernels(const Node& n) {
  if (n.op() != OpKind::ConvInteger && n.op() != OpKind::MatMulInteger)
    return false;
  for (size_t i = 1; i < n.numInputs(); ++i)
    if (n.input(i) && !n.input(i)->isConstant())
      return false;
  return n.numInputs() > 1 && n.input(1);
}

std::vector<FlowNode> buildDataflowGraph(const Graph& graph) {
  std::vector<FlowNode> nodes;
  std::unordered_map<const Node*, int> index;
  for (const auto& n : graph.nodes()) {
    index[n.get()] = int(nodes.size());
    FlowNode f;
    f.node = n.get();
    f.pattern = n->info().category;
    if (f.pattern != OpCategory::Opaque && !classifyOperands(*n).fusible)
      f.pattern = OpCategory::Opaque;
    // QLinearConv and QLinearMatMul are kernels of their own (the CPU backend's int8 generator,
    // else the interpreter's kernel), never inside a group; so are ConvInteger and
    // MatMulInteger with constant weights and zero points, which the int8 generator takes
    // (codegen/loops/LowerQLinear.cpp): as a loop nest fused with the dequantization after it,
    // a 1x1 convolution on 112x112 ran 20 times slower than the int8 kernel plus an
    // elementwise one.
    if (n->op() == OpKind::QLinearConv || n->op() == OpKind::QLinearMatMul ||
        integerProductTakenByInt8Kernels(*n))
      f.pattern = OpCategory::Opaque;
    nodes.push_back(std::move(f));
  }
  // The index operand of Gather, GatherElements and GatherND is range-checked by the CPU executor
  // before the kernel runs (codegen Kernel::indexChecks), so it must arrive as a tensor, not be
  // computed inside the gather's kernel: its producer stays a kernel of its own.
  for (const FlowNode& f : nodes) {
    const OpKind op = f.node->op();
    if ((op == OpKind::Gather || op == OpKind::GatherElements || op == OpKind::GatherND) &&
        f.node->numInputs() > 1 && f.node->input(1) && f.node->input(1)->producer()) {
      auto it = index.find(f.node->input(1)->producer());
      if (it != index.end())
        nodes[size_t(it->second)].pattern = OpCategory::Opaque;
    }
  }
  for (FlowNode& f : nodes) {
    for (const Value* out : f.node->outputs()) {
      f.externRef = f.externRef || out->isGraphOutput();
      for (const Use& u : out->uses()) {
        auto it = index.find(u.user);
        assert(it != index.end() && "a use outside the graph that defines the value");
        const FlowNode& c = nodes[size_t(it->second)];
        OpCategory p = c.pattern;
        if (p == OpCategory::Broadcast && c.node->numOutputs() == 1 &&
            sameKnownShape(out->type(), c.node->output(0)->type()))
          p = OpCategory::Elementwise;
        f.consumers.push_back({it->second, p});
      }
    }
  }
  return nodes;
}

/// The post-dominator tree, built in reverse execution order: a node's parent is the least
/// common ancestor of its consumers, so every path from the node to the end passes through it.
std::vector<DomNode> buildPostDominatorTree(const std::vector<FlowNode>& nodes) {
  std::vector<DomNode> dom(nodes.size());
  auto lca = [&](int a, int b, OpCategory& pattern) {
    while (a != b) {
      if (a < 0 || b < 0)
        return -1;
      const DomNode& da = dom[size_t(a)];
      const DomNode& db = dom[size_t(b)];
      if (da.depth < db.depth) {
        pattern = combine(pattern, db.pattern);
        b = db.parent;
      } else if (db.depth < da.depth) {
        pattern = combine(pattern, da.pattern);
        a = da.parent;
      } else {
        pattern = combine(pattern, combine(da.pattern, db.pattern));
        a = da.parent;
        b = db.parent;
      }
    }
    return a;
  };
  for (size_t i = nodes.size(); i-- > 0;) {
    const FlowNode& f = nodes[i];
    DomNode& d = dom[i];
    if (f.externRef) {
      // A graph output must stay visible: only the virtual sink post-dominates it.
      d = {-1, 1, OpCategory::Opaque};
      continue;
    }
    if (f.consumers.empty()) {
      d = {-1, 1, OpCategory::Elementwise};
      continue;
    }
    OpCategory pattern = combine(OpCategory::Elementwise, f.consumers[0].pattern);
    int parent = f.consumers[0].consumer;
    for (size_t k = 1; k < f.consumers.size(); ++k) {
      parent = lca(parent, f.consumers[k].consumer, pattern);
      pattern = combine(pattern, f.consumers[k].pattern);
    }
    d.parent = parent;
    d.depth = parent < 0 ? 1 : dom[size_t(parent)].depth + 1;
    d.pattern = pattern;
  }
  return dom;
}

/// The dataflow graph's edges as ContractedDag takes them.
std::vector<std::vector<int>> consumerLists(const std::vector<FlowNode>& nodes) {
  std::vector<std::vector<int>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Edge& e : nodes[i].consumers)
      consumers[i].push_back(e.consumer);
  return consumers;
}

/// Union-find over the dataflow graph (kept, with the groups' members and the cycle check, by
/// ContractedDag). As in TVM, a group's root is the sink of its latest union, and a node's
/// `pattern` is its group's pattern from the last time it was a root, so a finished
/// conv+epilogue group (pattern ComplexOutFusable at its last node) only grows by the epilogue
/// rule.
class Partitioner {
public:
  Partitioner(const std::vector<FlowNode>& nodes, const std::vector<DomNode>& dom,
              const FusionOptions& options)
      : m_nodes(nodes), m_dom(dom), m_maxGroupSize(options.maxGroupSize),
        m_mayUnite(options.mayUnite), m_dag(consumerLists(nodes), options.verifyConvexity),
        m_groups(nodes.size()), m_mark(nodes.size(), 0) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      m_groups[i].pattern = nodes[i].pattern;
      m_groups[i].anchors = isAnchorCategory(nodes[i].pattern) ? 1 : 0;
    }
  }

  void runPhase(int phase) {
    for (size_t i = 0; i < m_nodes.size(); ++i) {
      OpCategory pattern = m_groups[i].pattern;
      int sink = m_dom[i].parent;
      if (pattern == OpCategory::Opaque || sink < 0 || find(int(i)) == find(sink))
        continue;
      OpCategory domPattern = m_dom[i].pattern;
      if (pattern == OpCategory::ComplexOutFusable) {
        // Epilogue: conv/matmul/pool absorbs an elementwise path to its post-dominator.
        if (phase != 0 || domPattern != OpCategory::Elementwise)
          continue;
        tryFuse(int(i), sink, [](OpCategory k, bool) { return k <= OpCategory::Broadcast; });
      } else if (pattern <= OpCategory::Broadcast) {
        if (phase == 0)
          continue; // let every epilogue finish first
        if (!(domPattern <= OpCategory::Injective || domPattern == OpCategory::Reduction))
          continue;
        // Side branches may be injective; the sink may be anything fusible (a reduction, or an
        // epilogue already fused into a conv).
        tryFuse(int(i), sink, [](OpCategory k, bool isSink) {
          return isSink ? k != OpCategory::Opaque : k <= OpCategory::Injective;
        });
      } else if (pattern == OpCategory::Injective) {
        if (phase != 2)
          continue;
        tryFuse(int(i), sink, [](OpCategory k, bool) { return k <= OpCategory::Injective; });
      }
      // Reductions never fuse into their consumers (TVM's kCommReduce does nothing either).
    }
  }

  FusionPlan plan() const {
    FusionPlan plan;
    plan.refusedForSize = m_refusedForSize;
    plan.refusedForCycle = m_refusedForCycle;
    plan.refusedForAnchors = m_refusedForAnchors;
    plan.cycleSearchSteps = m_dag.searchSteps();
    plan.convexityMismatches = m_dag.convexityMismatches();
    plan.orderViolations = m_dag.orderViolations();
    std::vector<std::vector<int>> byRoot(m_nodes.size());
    for (size_t i = 0; i < m_nodes.size(); ++i)
      byRoot[size_t(m_dag.findConst(int(i)))].push_back(int(i));
    std::vector<std::vector<int>> groups;
    for (auto& members : byRoot)
      if (members.size() >= 2)
        groups.push_back(members); // indices ascend: execution order
    std::sort(groups.begin(), groups.end(),
              [](const auto& a, const auto& b) { return a.front() < b.front(); });
    for (const auto& members : groups) {
      FusionGroup g;
      for (int m : members) {
        Node* n = m_nodes[size_t(m)].node;
        g.members.push_back(n);
        if (!g.anchor && isAnchorCategory(m_nodes[size_t(m)].pattern))
          g.anchor = n;
      }
      if (!g.anchor)
        g.anchor = g.members.front();
      g.lastUnion = m_groups[size_t(m_dag.findConst(members.front()))].lastUnion;
      plan.groups.push_back(std::move(g));
    }
    return plan;
  }

private:
  struct Group {
    OpCategory pattern = OpCategory::Opaque;
    int anchors = 0; ///< ComplexOutFusable and Reduction members; valid at roots
    int64_t lastUnion = 0; ///< the index mayUnite gave the latest union into this root
  };

  int find(int x) { return m_dag.find(x); }

  /// Marks are generation-stamped so each search starts clean without clearing.
  void newMarks() { ++m_stamp; }
  bool marked(int x) const { return m_mark[size_t(x)] == m_stamp; }
  void mark(int x) { m_mark[size_t(x)] = m_stamp; }

  /// Checks every node on every path from `src` to `sink` with `cond(groupPattern, isSink)` and
  /// collects them; false when one fails. Every path from src reaches sink (it post-dominates).
  template <typename Cond>
  bool checkPaths(int src, int sink, Cond cond, std::vector<int>& onPath) {
    newMarks();
    std::vector<int> stack;
    for (const Edge& e : m_nodes[size_t(src)].consumers)
      stack.push_back(e.consumer);
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      if (marked(x))
        continue;
      mark(x);
      if (!cond(m_groups[size_t(find(x))].pattern, x == sink))
        return false;
      if (x == sink)
        continue;
      onPath.push_back(x);
      for (const Edge& e : m_nodes[size_t(x)].consumers)
        stack.push_back(e.consumer);
    }
    return true;
  }

  template <typename Cond> void tryFuse(int src, int sink, Cond cond) {
    std::vector<int> onPath;
    if (!checkPaths(src, sink, cond, onPath))
      return;
    int target = find(sink);
    std::vector<int> roots = {find(src)};
    for (int x : onPath)
      roots.push_back(find(x));
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    roots.erase(std::remove(roots.begin(), roots.end(), target), roots.end());
    size_t size = m_dag.members(target).size();
    int anchors = m_groups[size_t(target)].anchors;
    for (int r : roots) {
      size += m_dag.members(r).size();
      anchors += m_groups[size_t(r)].anchors;
    }
    if (size > m_maxGroupSize) {
      ++m_refusedForSize;
      return;
    }
    if (anchors > 1) {
      // One kernel is built around one loop nest: two convolutions (or a conv and a reduction)
      // never share a group.
      ++m_refusedForAnchors;
      return;
    }
    // The rewrite counter is asked only for a legal union, so that its count is the number
    // of unions made.
    int64_t unionIndex = 0;
    bool refusedByCounter = false;
    auto mayCommit = [&] {
      if (!m_mayUnite)
        return true;
      unionIndex = m_mayUnite();
      refusedByCounter = unionIndex == 0;
      return !refusedByCounter;
    };
    if (!m_dag.tryMerge(target, roots, mayCommit)) {
      if (!refusedByCounter)
        ++m_refusedForCycle;
      return;
    }
    Group& t = m_groups[size_t(target)];
    t.lastUnion = unionIndex;
    for (int r : roots) {
      const Group& g = m_groups[size_t(r)];
      t.pattern = combine(t.pattern, g.pattern);
      t.anchors += g.anchors;
    }
  }

  const std::vector<FlowNode>& m_nodes;
  const std::vector<DomNode>& m_dom;
  size_t m_maxGroupSize;
  std::function<int64_t()> m_mayUnite;
  ContractedDag m_dag;
  std::vector<Group> m_groups;
  std::vector<uint32_t> m_mark;
  uint32_t m_stamp = 0;
  size_t m_refusedForSize = 0, m_refusedForCycle = 0, m_refusedForAnchors = 0;
};

} // namespace

FusionPlan planFusion(const Graph& graph, const FusionOptions& options) {
  std::vector<FlowNode> nodes = buildDataflowGraph(graph);
  std::vector<DomNode> dom = buildPostDominatorTree(nodes);
  Partitioner partitioner(nodes, dom, options);
  for (int phase = 0; phase < 3; ++phase)
    partitioner.runPhase(phase);
  return partitioner.plan();
}

} // namespace fb
