// Lowering of graphs to kernels: one kernel per node or fused group, with elementwise tails
// computed in the producer's output loop and GEMM specs for MatMul/Gemm/Conv anchors.
//
// Algorithm, per node (a fused group's body is walked in its order):
//  1. Every operand is bound to a kernel argument, created on first read (constants become
//     Weight arguments with their data).
//  2. Elementwise, broadcast and injective ops are not given loops: each output is defined as
//     an expression of its inputs' elements (an ExprFn), so chains of them inline into the one
//     loop nest that finally stores a value (compute_inline, in Halide's words).
//  3. Every other op (MatMul, Conv, pooling, reductions, softmax, ...) gets its own nest. When
//     its result feeds only an elementwise chain ending in one group output of the same shape,
//     the nest writes that output directly and the chain is applied to each element's final
//     value (an epilogue: bias, activation, residual add); otherwise it writes a scratch buffer.
//  4. Group outputs computed by inline ops get an elementwise nest over their shape.
//  5. When the whole kernel is one GEMM-class nest whose epilogue maps onto EpilogueOps, the
//     kernel also carries a GemmSpec for the micro-kernel generator.
//  6. The default schedule (or an override) is applied to the textbook nest.
#include "codegen/loops/Lower.h"

#include "codegen/loops/LowerContext.h"
#include "codegen/loops/Schedule.h"
#include "core/ControlFlow.h"
#include "core/Cost.h"
#include "core/ops/KernelUtil.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <unordered_set>

namespace fb::cg {

using namespace lower;

namespace {

std::string lowercase(std::string s) {
  for (char& c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The nodes a kernel is made of, in order (a fused group's body, or the node itself).
std::vector<const Node*> memberNodes(const Node& node) {
  std::vector<const Node*> nodes;
  if (node.op() == OpKind::Fused && node.body())
    for (const auto& n : node.body()->nodes())
      nodes.push_back(n.get());
  else
    nodes.push_back(&node);
  return nodes;
}

Status checkStatic(const Node& node) {
  auto check = [&](const Value* v) -> Status {
    if (v && !v->type().isStatic())
      return makeUnsupported(node.describe(), ": value ", v->name(), " has type ",
                             v->type().str(),
                             "; the CPU backend needs static shapes (bind symbolic dims first)");
    return Status::success();
  };
  for (const Value* v : node.inputs())
    FB_TRY(check(v));
  for (const Value* v : node.outputs())
    FB_TRY(check(v));
  if (node.body())
    for (const auto& n : node.body()->nodes())
      FB_TRY(checkStatic(*n));
  return Status::success();
}

/// Ops with a generator of their own behind a GemmSpec: the GEMM micro-kernels (MatMul, Gemm,
/// Conv) and the direct depthwise generator (depthwise Conv, and MaxPool/AveragePool).
bool isGemmClass(const Node& n) {
  return n.op() == OpKind::MatMul || n.op() == OpKind::Gemm || n.op() == OpKind::Conv ||
         n.op() == OpKind::MaxPool || n.op() == OpKind::AveragePool;
}

/// Replaces every load of `placeholder` in e by `value`.
ExprPtr replacePlaceholder(const ExprPtr& e, const Buffer* placeholder, const ExprPtr& value) {
  if (e->kind == Expr::Kind::Load && e->buffer.get() == placeholder)
    return value;
  if (e->operands.empty())
    return e;
  bool changed = false;
  std::vector<ExprPtr> ops;
  for (const ExprPtr& o : e->operands) {
    ops.push_back(replacePlaceholder(o, placeholder, value));
    changed |= ops.back() != o;
  }
  if (!changed)
    return e;
  auto c = std::make_shared<Expr>(*e);
  c->operands = std::move(ops);
  return c;
}

/// True when every load of `placeholder` in e has exactly `idx` as its indices.
bool placeholderAtIdentity(const ExprPtr& e, const Buffer* placeholder, const Indices& idx) {
  if (e->kind == Expr::Kind::Load && e->buffer.get() == placeholder) {
    for (size_t d = 0; d < idx.size(); ++d)
      if (!equal(e->operands[d], idx[d]))
        return false;
    return true;
  }
  for (const ExprPtr& o : e->operands)
    if (!placeholderAtIdentity(o, placeholder, idx))
      return false;
  return true;
}

/// Lowers one node or fused group to a kernel (unscheduled).
class NodeLowering {
public:
  NodeLowering(const Node& node, std::string name, const LowerOptions& options)
      : m_node(node), m_b(std::move(name), options) {}

  Expected<Kernel> run() {
    FB_TRY(checkStatic(m_node));
    std::vector<const Value*> innerOutputs;
    if (m_node.op() == OpKind::Fused) {
      const Graph* body = m_node.body();
      if (!body)
        return makeError(m_node.describe(), ": fused group has no body");
      for (size_t i = 0; i < body->inputs().size() && i < m_node.numInputs(); ++i)
        m_b.bindInput(body->inputs()[i], m_node.input(i));
      for (const Value* c : body->constants())
        m_b.bindInput(c, c);
      for (size_t i = 0; i < body->outputs().size(); ++i) {
        innerOutputs.push_back(body->outputs()[i]);
        if (!m_outBuf.count(body->outputs()[i]))
          m_outBuf[body->outputs()[i]] = m_b.bindOutput(body->outputs()[i], m_node.output(i));
      }
    } else {
      for (const Value* v : m_node.inputs())
        if (v)
          m_b.bindInput(v, v);
      for (const Value* v : m_node.outputs()) {
        innerOutputs.push_back(v);
        m_outBuf[v] = m_b.bindOutput(v, v);
      }
    }
    // Inputs first, in operand order (reads create the other arguments as they come).
    for (size_t i = 0; i < m_node.numInputs(); ++i) {
      const Value* in = m_node.input(i);
      if (!in || in->isConstant())
        continue;
      const Value* inner = m_node.op() == OpKind::Fused && i < m_node.body()->inputs().size()
                               ? m_node.body()->inputs()[i]
                               : in;
      (void)m_b.directBuffer(inner);
    }
    std::vector<const Node*> members = memberNodes(m_node);
    std::vector<StmtPtr> stmts;
    for (const Node* n : members) {
      if (isInlineOp(n->op())) {
        Status st = defineInline(m_b, *n);
        if (!st.ok())
          return st.error();
        for (const Value* o : n->outputs())
          if (m_outBuf.count(o)) {
            FB_ASSIGN_OR_RETURN(StmtPtr s, materializeOutput(o));
            stmts.push_back(std::move(s));
          }
        continue;
      }
      const Value* a = n->output(0);
      std::vector<BufferPtr> extras;
      for (size_t i = 1; i < n->numOutputs(); ++i) {
        const Value* o = n->output(i);
        bool wanted = o->hasUses() || m_outBuf.count(o);
        if (wanted && !nestWritesExtraOutputs(n->op()))
          return makeUnsupported(n->describe(), ": output ", i, " (", o->name(), ") of ",
                                 opName(n->op()), " is not supported by the CPU backend");
        extras.push_back(!wanted ? nullptr : m_outBuf.count(o) ? m_outBuf[o] : m_b.scratchFor(o));
        if (wanted)
          m_b.defineLoad(o, extras.back());
        if (m_outBuf.count(o))
          m_materialized.insert(o);
      }
      if (!extras.empty() && std::any_of(extras.begin(), extras.end(), [](const BufferPtr& e) { return e != nullptr; })) {
        // Extra outputs are written by the nest itself: no epilogue fusion into a sink.
        BufferPtr target = m_outBuf.count(a) ? m_outBuf[a] : m_b.scratchFor(a);
        FB_ASSIGN_OR_RETURN(StmtPtr s, lowerNestOp(m_b, *n, target, nullptr, extras));
        stmts.push_back(std::move(s));
        m_b.defineLoad(a, target);
        m_otherNests = true;
        continue;
      }
      if (m_outBuf.count(a)) {
        FB_ASSIGN_OR_RETURN(StmtPtr s, lowerNestOp(m_b, *n, m_outBuf[a], nullptr));
        noteGemmAnchor(n, a, a);
        stmts.push_back(std::move(s));
        m_b.defineLoad(a, m_outBuf[a]);
      } else if (const Value* y = fusableSink(a)) {
        m_pending[y] = n;
        // Until y is reached, reads of a are placeholders resolved there.
        auto ph = std::make_shared<Buffer>();
        ph->name = "__anchor_" + a->name();
        ph->kind = Buffer::Kind::Local;
        ph->dtype = a->type().dtype;
        ph->sizes = KernelBuilder::sizesOf(a);
        ph->strides = rowMajorStrides(ph->sizes);
        m_placeholder[n] = ph;
        m_b.define(a, [ph](const Indices& idx) { return load(ph, idx); });
      } else {
        BufferPtr t = m_b.scratchFor(a);
        FB_ASSIGN_OR_RETURN(StmtPtr s, lowerNestOp(m_b, *n, t, nullptr));
        stmts.push_back(std::move(s));
        m_b.defineLoad(a, t);
        m_otherNests = true;
      }
    }
    // A group output that is a body input passes through: copy it.
    for (const Value* o : innerOutputs)
      if (!m_materialized.count(o) && !o->producer()) {
        FB_ASSIGN_OR_RETURN(StmtPtr s, materializeOutput(o));
        stmts.push_back(std::move(s));
      }
    if (m_options().gemmSpecs && m_gemmAnchor && stmts.size() == 1 && !m_otherNests)
      buildGemmSpec();

    std::vector<NodeId> ids;
    std::string summary;
    for (const Node* n : members) {
      if (n->provenance().empty())
        ids.push_back(n->id());
      else
        ids.insert(ids.end(), n->provenance().begin(), n->provenance().end());
      summary += (summary.empty() ? "" : "+") + std::string(opName(n->op()));
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    OpCost cost = nodeCost(m_node);
    return m_b.finish(block(std::move(stmts)), std::move(ids), summary, cost.flops, cost.bytes);
  }

private:
  const LowerOptions& m_options() const { return m_b.options(); }

  /// The one group output that `a` reaches only through inline ops, with a's shape and dtype.
  const Value* fusableSink(const Value* a) {
    std::unordered_set<const Value*> seen{a};
    std::vector<const Value*> stack{a};
    std::set<const Value*> sinks;
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      for (const Use& u : v->uses()) {
        if (!isInlineOp(u.user->op()))
          return nullptr;
        for (const Value* o : u.user->outputs()) {
          if (!seen.insert(o).second)
            continue;
          if (m_outBuf.count(o))
            sinks.insert(o);
          else
            stack.push_back(o);
        }
      }
    }
    if (sinks.size() != 1)
      return nullptr;
    const Value* y = *sinks.begin();
    if (y->type().dtype != a->type().dtype ||
        KernelBuilder::sizesOf(y) != KernelBuilder::sizesOf(a))
      return nullptr;
    return y;
  }

  /// Emits the nest that computes group output o (fusing a pending anchor into it).
  Expected<StmtPtr> materializeOutput(const Value* o) {
    m_materialized.insert(o);
    const BufferPtr& out = m_outBuf[o];
    std::string comment = o->producer() ? std::string("n") + std::to_string(o->producer()->id()) +
                                              " " + opName(o->producer()->op())
                                        : "copy";
    auto pending = m_pending.find(o);
    if (pending == m_pending.end()) {
      StmtPtr s = elementwiseNest(out, [&](const Indices& idx) { return m_b.read(o, idx); },
                                  comment);
      m_b.defineLoad(o, out);
      m_otherNests = true;
      return s;
    }
    const Node* anchor = pending->second;
    const Value* a = anchor->output(0);
    std::shared_ptr<Buffer> ph = m_placeholder[anchor];
    std::vector<std::string> names;
    for (size_t d = 0; d < out->rank(); ++d)
      names.push_back("__e" + std::to_string(d));
    Indices evars = varsOf(names);
    ExprPtr yExpr = m_b.read(o, evars);
    StmtPtr s;
    if (placeholderAtIdentity(yExpr, ph.get(), evars)) {
      Epilogue epi = [yExpr, ph, names](const Indices& idx, ExprPtr value) {
        ExprPtr e = replacePlaceholder(yExpr, ph.get(), value);
        for (size_t d = 0; d < names.size(); ++d)
          e = substitute(e, names[d], idx[d]);
        return e;
      };
      FB_ASSIGN_OR_RETURN(s, lowerNestOp(m_b, *anchor, out, epi));
      noteGemmAnchor(anchor, a, o);
    } else {
      BufferPtr t = m_b.scratchFor(a);
      FB_ASSIGN_OR_RETURN(StmtPtr s1, lowerNestOp(m_b, *anchor, t, nullptr));
      m_b.defineLoad(a, t);
      StmtPtr s2 = elementwiseNest(out, [&](const Indices& idx) { return m_b.read(o, idx); },
                                   comment);
      s = block({s1, s2});
      m_otherNests = true;
    }
    m_b.defineLoad(o, out);
    return s;
  }

  void noteGemmAnchor(const Node* n, const Value* a, const Value* y) {
    if (!isGemmClass(*n))
      return;
    if (m_gemmAnchor)
      m_otherNests = true;
    m_gemmAnchor = n;
    m_gemmFrom = a;
    m_gemmTo = y;
  }

  /// The GEMM spec of the anchor with the chain up to the kernel output as its epilogue, or
  /// none when the chain does not map onto one.
  void buildGemmSpec() {
    m_b.gemm() =
        gemmSpecWithEpilogue(m_b, *m_gemmAnchor, m_gemmFrom, m_gemmTo, m_outBuf[m_gemmTo]);
  }

  const Node& m_node;
  KernelBuilder m_b;
  std::unordered_map<const Value*, BufferPtr> m_outBuf;         // group output → its buffer
  std::unordered_map<const Value*, const Node*> m_pending;      // sink → anchor fused into it
  std::unordered_map<const Node*, std::shared_ptr<Buffer>> m_placeholder;
  std::unordered_set<const Value*> m_materialized;
  const Node* m_gemmAnchor = nullptr;
  const Value* m_gemmFrom = nullptr;
  const Value* m_gemmTo = nullptr;
  bool m_otherNests = false;
};

} // namespace

std::string kernelNameFor(const Node& node, size_t index) {
  std::string name = "k" + std::to_string(index);
  size_t listed = 0;
  std::vector<const Node*> members = memberNodes(node);
  for (const Node* m : members) {
    std::string part = "_" + lowercase(opName(m->op()));
    if (name.size() + part.size() > 40)
      break;
    name += part;
    ++listed;
  }
  if (listed < members.size())
    name += "_etc";
  return name;
}

bool runsInterpreted(const Node& node) {
  if (isControlFlowOp(node.op()))
    return true;
  // A run-time shape that comes from control flow; a symbolic graph input is an error instead
  // (bind its size).
  for (const Value* in : node.inputs())
    if (in && !in->type().isStatic() && in->producer() && runsInterpreted(*in->producer()))
      return true;
  return false;
}

/// The kernel of a control-flow node (or of a node downstream of a run-time shape): no code, just the arguments the executor binds for the
/// interpreter (the present operands in order, then the results). Bodies are interpreted too;
/// compiling them into kernels of their own is future work.
static Kernel interpretedKernel(const Node& node, std::string name) {
  Kernel k;
  k.name = std::move(name);
  k.nodes = {node.id()};
  k.opSummary = std::string(opName(node.op())) + " (interpreted)";
  // (A fused group downstream of a run-time shape is interpreted whole, body included.)
  k.interpreted = true;
  auto arg = [](const Value* v, KernelArg::Role role) {
    KernelArg a;
    a.role = role;
    a.name = v->name();
    a.dtype = v->type().dtype;
    for (const Dim& d : v->type().dims)
      a.sizes.push_back(d.isStatic() ? d.size() : -1);
    a.dynamicShape = !v->type().isStatic();
    a.bytes = int64_t(dtypeSize(a.dtype)) * v->type().numElements().value_or(0);
    if (role == KernelArg::Role::Weight)
      a.data = v->constantData();
    return a;
  };
  for (const Value* in : node.inputs())
    if (in)
      k.args.push_back(arg(in, in->isConstant() ? KernelArg::Role::Weight : KernelArg::Role::Input));
  for (const Value* out : node.outputs())
    k.args.push_back(arg(out, KernelArg::Role::Output));
  k.body = withComment(block({}), node.describe() + " runs in the executor through the "
                                                    "reference interpreter" +
                                        std::string(node.hasBodies() ? " (bodies included)" : ""));
  OpCost cost = nodeCost(node);
  k.flops = cost.flops;
  k.bytes = cost.bytes;
  return k;
}

/// The kernel of a QLinearConv or QLinearMatMul (or a ConvInteger / MatMulInteger the int8
/// generator takes): compiled by the int8 generator
/// (codegen/gemm/Int8GemmEmitter.h) when its operands fit (lower::int8SpecFor), else the
/// interpreted kernel, with the reason in its loop-view comment. The int8 kernel keeps the
/// interpreted kernel's arguments, so the backend can still hand it to the interpreter when the
/// target cannot run the generator's code (prepareKernels). Without GEMM specs (the GPU
/// backend, the textbook views) it is interpreted.
static Kernel quantizedKernel(const Node& node, std::string name, const LowerOptions& options) {
  Kernel k = interpretedKernel(node, std::move(name));
  std::string why = "GEMM-class kernels are not generated for this backend";
  std::optional<Int8GemmSpec> spec =
      options.gemmSpecs ? lower::int8SpecFor(node, why) : std::nullopt;
  if (!spec) {
    k.body = withComment(block({}), node.describe() +
                                        " runs in the executor through the "
                                        "reference interpreter: " +
                                        why);
    return k;
  }
  k.interpreted = false;
  k.int8 = std::move(spec);
  k.opSummary = std::string(opName(node.op())) + " (int8)";
  k.body = withComment(block({}), node.describe() +
                                      " is compiled by the int8 GEMM generator (integer "
                                      "products, int32 sums, the interpreter's requantization)");
  return k;
}

Expected<std::vector<Kernel>> lowerGraph(const Graph& graph, const LowerOptions& options) {
  const std::vector<ScheduleOverride>& overrides = options.scheduleOverrides;
  std::vector<bool> used(overrides.size(), false);
  std::vector<Kernel> kernels;
  const bool quantizes = std::any_of(graph.nodes().begin(), graph.nodes().end(), [](const auto& n) {
    return n->op() == OpKind::QuantizeLinear;
  });
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& node = *graph.nodes()[i];
    if (runsInterpreted(node)) {
      kernels.push_back(interpretedKernel(node, kernelNameFor(node, i)));
      continue;
    }
    if (node.op() == OpKind::QLinearConv || node.op() == OpKind::QLinearMatMul) {
      kernels.push_back(quantizedKernel(node, kernelNameFor(node, i), options));
      continue;
    }
    // ConvInteger / MatMulInteger also have loop nests: the int8 generator takes those it can.
    if (options.gemmSpecs &&
        (node.op() == OpKind::ConvInteger || node.op() == OpKind::MatMulInteger)) {
      std::string why;
      if (lower::int8SpecFor(node, why)) {
        kernels.push_back(quantizedKernel(node, kernelNameFor(node, i), options));
        continue;
      }
    }
    NodeLowering lowering(node, kernelNameFor(node, i), options);
    FB_ASSIGN_OR_RETURN(Kernel k, lowering.run());
    // Compiled CPU code (not the textbook views) reads byte-to-anything functions from a table.
    if (options.gemmSpecs && !k.gemm) {
      std::string why;
      lower::tabulateByteFunction(node, k, why); // else k is as lowered
    }
    // Winograd's transforms round about ten times as much as the direct sum; in a QDQ graph
    // a result quantized downstream could land on the other side of a rounding step, so there
    // convolutions keep im2col unless a schedule asks otherwise.
    if (k.gemm && k.gemm->conv && quantizes)
      k.gemm->algorithm = ConvAlgorithm::Im2col;
    k.body = simplify(k.body);
    StmtPtr unscheduled = k.body;
    const ScheduleOverride* ov = nullptr;
    for (size_t o = 0; o < overrides.size(); ++o)
      if (overrides[o].kernel == k.name || overrides[o].kernel == "*" ||
          overrides[o].kernel == "k" + std::to_string(i)) {
        ov = &overrides[o];
        used[o] = true;
      }
    if (options.defaultSchedules)
      k.body = applyDefaultSchedule(k.body, options);
    if (ov) {
      FB_TRY(applyScheduleOverride(k, unscheduled, *ov, options));
      k.schedule = printScheduleOverrides({*ov});
      k.schedule = k.schedule.substr(k.schedule.find(':') + 1);
    }
    kernels.push_back(std::move(k));
  }
  for (size_t o = 0; o < overrides.size(); ++o)
    if (!used[o])
      return makeError("schedule override: no kernel is named ", overrides[o].kernel,
                       " (kernel names are those the loop view prints)");
  return kernels;
}

} // namespace fb::cg
