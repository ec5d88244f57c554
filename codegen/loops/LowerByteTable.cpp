// Elementwise functions of one byte tensor as a 256-entry table (lower::tabulateByteFunction).
#include "codegen/loops/LowerContext.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <unordered_map>

namespace fb::cg {
namespace lower {

namespace {

/// The single non-constant operand of `node` when it is u8/i8 with the output's sizes and every
/// other operand is a constant scalar; else null.
const Value* byteOperand(const Node& node, std::string& why) {
  const Value* x = nullptr;
  for (const Value* in : node.inputs()) {
    if (!in)
      continue;
    if (in->isConstant()) {
      if (in->constantData().numElements() != 1) {
        why = "a constant operand is not a scalar";
        return nullptr;
      }
      continue;
    }
    if (x) {
      why = "more than one operand is computed at run time";
      return nullptr;
    }
    x = in;
  }
  if (!x || (x->type().dtype != DType::U8 && x->type().dtype != DType::I8)) {
    why = "the run-time operand is not u8 or i8";
    return nullptr;
  }
  const Value* y = node.output(0);
  if (!x->type().isStatic() || !y->type().isStatic() ||
      x->type().staticSizes() != y->type().staticSizes()) {
    why = "the operand and the result differ in shape";
    return nullptr;
  }
  return x;
}

/// The node's function at every value of its byte operand, by the interpreter: the node (or a
/// fused group's body) rebuilt on a [256] operand, the scalars as they are.
Expected<Tensor> tabulate(const Node& node, const Value* x) {
  Graph g("table");
  const DType xType = x->type().dtype;
  Tensor all(xType, {256});
  for (int64_t i = 0; i < 256; ++i)
    all.setFromDouble(i, double(xType == DType::U8 ? i : i - 128));
  std::unordered_map<const Value*, Value*> map;
  Value* xIn = g.addInput("x", all.type());
  auto bindOperands = [&](const std::vector<Value*>& inner) {
    for (size_t i = 0; i < node.numInputs(); ++i) {
      const Value* outer = node.input(i);
      if (!outer)
        continue;
      Value* v = outer == x ? xIn : g.addConstant(g.uniqueValueName("c"), outer->constantData());
      map[inner.empty() ? outer : inner[i]] = v;
    }
  };
  std::vector<const Node*> nodes;
  if (node.op() == OpKind::Fused) {
    bindOperands(node.body()->inputs());
    for (const auto& n : node.body()->nodes())
      nodes.push_back(n.get());
  } else {
    bindOperands({});
    nodes.push_back(&node);
  }
  for (const Node* n : nodes) {
    std::vector<Value*> ins;
    for (const Value* in : n->inputs())
      ins.push_back(in ? map.at(in) : nullptr);
    Node* copy = g.addNode(n->op(), ins, n->numOutputs(), {}, n->name());
    for (const auto& [k, v] : n->attrs())
      copy->attrs().set(k, v);
    for (size_t o = 0; o < n->numOutputs(); ++o)
      map[n->output(o)] = copy->output(o);
  }
  const Value* result = node.op() == OpKind::Fused ? node.body()->outputs()[0] : node.output(0);
  g.addOutput(map.at(result));
  FB_TRY(inferShapes(g));
  FB_ASSIGN_OR_RETURN(InterpretResult r, interpret(g, {all}));
  if (r.outputs.size() != 1 || r.outputs[0].numElements() != 256 ||
      r.outputs[0].dtype() != node.output(0)->type().dtype)
    return makeError("the table of ", node.describe(), " has another type");
  return std::move(r.outputs[0]);
}

/// `s` with `value` stored by every Store to argument `outArg`.
StmtPtr replaceStoredValue(const StmtPtr& s, int outArg, const ExprPtr& value) {
  if (!s)
    return s;
  auto c = std::make_shared<Stmt>(*s);
  c->body = replaceStoredValue(s->body, outArg, value);
  c->thenBody = replaceStoredValue(s->thenBody, outArg, value);
  c->elseBody = replaceStoredValue(s->elseBody, outArg, value);
  for (StmtPtr& t : c->stmts)
    t = replaceStoredValue(t, outArg, value);
  if (s->kind == Stmt::Kind::Store && s->buffer && s->buffer->kind == Buffer::Kind::Arg &&
      s->buffer->arg == outArg) {
    c->value = value;
    c->comment = s->comment + ", from a 256-entry table of the interpreter's results";
  }
  return c;
}

/// Every Load of argument `arg` in e.
void loadsOf(const ExprPtr& e, int arg, std::vector<ExprPtr>& out) {
  if (!e)
    return;
  if (e->kind == Expr::Kind::Load && e->buffer && e->buffer->kind == Buffer::Kind::Arg &&
      e->buffer->arg == arg)
    out.push_back(e);
  for (const ExprPtr& o : e->operands)
    loadsOf(o, arg, out);
}

} // namespace

bool tabulateByteFunction(const Node& node, Kernel& k, std::string& why) {
  if (node.numOutputs() != 1 || runsInterpreted(node)) {
    why = "not one result";
    return false;
  }
  std::vector<const Node*> members;
  if (node.op() == OpKind::Fused)
    for (const auto& n : node.body()->nodes())
      members.push_back(n.get());
  else
    members.push_back(&node);
  for (const Node* n : members) {
    const OpCategory c = n->info().category;
    if ((c != OpCategory::Elementwise && c != OpCategory::Broadcast) || n->hasBodies() ||
        n->numOutputs() != 1) {
      why = n->describe() + " is not elementwise";
      return false;
    }
  }
  const Value* x = byteOperand(node, why);
  if (!x)
    return false;
  // Small results are not worth a table (nor its 256 interpreted evaluations).
  if (*node.output(0)->type().numElements() < 1024) {
    why = "fewer than 1024 results";
    return false;
  }
  int xArg = -1, yArg = -1;
  for (size_t a = 0; a < k.args.size(); ++a) {
    if (k.args[a].role == KernelArg::Role::Input && k.args[a].name == x->name())
      xArg = int(a);
    if (k.args[a].role == KernelArg::Role::Output && k.args[a].name == node.output(0)->name())
      yArg = int(a);
  }
  if (xArg < 0 || yArg < 0) {
    why = "the operand or the result is not an argument";
    return false;
  }
  // The kernel must store the result once per element, reading the operand at one index.
  int stores = 0;
  bool other = false;
  std::vector<ExprPtr> loads;
  forEachStmt(k.body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::Alloc)
      other = true;
    if (s.kind != Stmt::Kind::Store)
      return;
    if (!s.buffer || s.buffer->kind != Buffer::Kind::Arg || s.buffer->arg != yArg) {
      other = true;
      return;
    }
    ++stores;
    loadsOf(s.value, xArg, loads);
  });
  if (other || stores != 1 || loads.empty()) {
    why = "the kernel is not one store per element";
    return false;
  }
  for (const ExprPtr& l : loads)
    if (!equal(l, loads[0])) {
      why = "the operand is read at several places";
      return false;
    }
  Expected<Tensor> table = tabulate(node, x);
  if (!table.ok()) {
    why = table.error().message();
    return false;
  }
  KernelArg t;
  t.role = KernelArg::Role::Weight;
  t.name = k.name + ".table";
  t.dtype = table->dtype();
  t.sizes = {256};
  t.bytes = int64_t(table->byteSize());
  t.data = std::move(*table);
  const int tArg = int(k.args.size());
  k.args.push_back(std::move(t));
  BufferPtr tBuf = makeArgBuffer("table", tArg, k.args.back().dtype, {256});
  const int64_t first = x->type().dtype == DType::I8 ? 128 : 0; // the table index of x = 0
  k.body = replaceStoredValue(
      k.body, yArg,
      load(tBuf, {binary(BinaryOp::Add, cast(Type::i64(), loads[0]), intImm(first))}));
  return true;
}

} // namespace lower
} // namespace fb::cg
