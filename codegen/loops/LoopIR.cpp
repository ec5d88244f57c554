// The kernel loop IR: node builders, substitution, simplification and structural equality.
#include "codegen/loops/LoopIR.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace fb::cg {

int64_t Buffer::numElements() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

bool Buffer::isContiguous() const { return offset == 0 && strides == rowMajorStrides(sizes); }

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * sizes[d];
  return strides;
}

BufferPtr makeArgBuffer(std::string name, int arg, DType dtype, std::vector<int64_t> sizes) {
  auto b = std::make_shared<Buffer>();
  b->name = std::move(name);
  b->kind = Buffer::Kind::Arg;
  b->arg = arg;
  b->dtype = dtype;
  b->strides = rowMajorStrides(sizes);
  b->sizes = std::move(sizes);
  return b;
}

BufferPtr makeSharedBuffer(std::string name, DType dtype, std::vector<int64_t> sizes) {
  auto b =
      std::const_pointer_cast<Buffer>(makeLocalBuffer(std::move(name), dtype, std::move(sizes)));
  b->kind = Buffer::Kind::Shared;
  return b;
}

BufferPtr makeLocalBuffer(std::string name, DType dtype, std::vector<int64_t> sizes) {
  auto b = std::make_shared<Buffer>();
  b->name = std::move(name);
  b->kind = Buffer::Kind::Local;
  b->dtype = dtype;
  b->strides = rowMajorStrides(sizes);
  b->sizes = std::move(sizes);
  return b;
}

const char* unaryOpName(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "neg";
  case UnaryOp::Not: return "not";
  case UnaryOp::Abs: return "abs";
  case UnaryOp::Exp: return "exp";
  case UnaryOp::Log: return "log";
  case UnaryOp::Sqrt: return "sqrt";
  case UnaryOp::Tanh: return "tanh";
  case UnaryOp::Erf: return "erf";
  case UnaryOp::Floor: return "floor";
  case UnaryOp::Ceil: return "ceil";
  case UnaryOp::Round: return "round";
  case UnaryOp::Sigmoid: return "sigmoid";
  case UnaryOp::Log1p: return "log1p";
  case UnaryOp::Sin: return "sin";
  case UnaryOp::Cos: return "cos";
  case UnaryOp::Tan: return "tan";
  case UnaryOp::Asin: return "asin";
  case UnaryOp::Acos: return "acos";
  case UnaryOp::Atan: return "atan";
  case UnaryOp::Sinh: return "sinh";
  case UnaryOp::Cosh: return "cosh";
  case UnaryOp::Asinh: return "asinh";
  case UnaryOp::Acosh: return "acosh";
  case UnaryOp::Atanh: return "atanh";
  }
  assert(false && "unknown unary op");
  return "?";
}

const char* binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Min: return "min";
  case BinaryOp::Max: return "max";
  case BinaryOp::Pow: return "pow";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::And: return "and";
  case BinaryOp::Or: return "or";
  }
  assert(false && "unknown binary op");
  return "?";
}

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge: return true;
  default: return false;
  }
}

const char* forKindName(ForKind kind) {
  switch (kind) {
  case ForKind::Serial: return "serial";
  case ForKind::Parallel: return "parallel";
  case ForKind::Vectorized: return "vectorized";
  case ForKind::Unrolled: return "unrolled";
  case ForKind::GpuThreads:
    return "gpu_threads";
  case ForKind::GpuBlocks:
    return "gpu_blocks";
  case ForKind::GpuLanes:
    return "gpu_lanes";
  }
  assert(false && "unknown loop kind");
  return "?";
}

bool Expr::isIntConst(int64_t* v) const {
  if (kind != Kind::IntImm)
    return false;
  if (v)
    *v = intValue;
  return true;
}

// ---- expression builders ----

static std::shared_ptr<Expr> newExpr(Expr::Kind kind, Type type) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->type = type;
  return e;
}

ExprPtr intImm(int64_t v, Type type) {
  auto e = newExpr(Expr::Kind::IntImm, type);
  e->intValue = v;
  return e;
}

ExprPtr floatImm(double v) {
  auto e = newExpr(Expr::Kind::FloatImm, Type::f32());
  e->floatValue = v;
  return e;
}

ExprPtr boolImm(bool v) { return intImm(v ? 1 : 0, Type::boolean()); }

ExprPtr var(std::string name, Type type) {
  auto e = newExpr(Expr::Kind::Var, type);
  e->name = std::move(name);
  return e;
}

ExprPtr load(BufferPtr buffer, std::vector<ExprPtr> indices) {
  assert(buffer && indices.size() == buffer->rank() && "load: one index per buffer dimension");
  int lanes = 1;
  for (const ExprPtr& i : indices)
    lanes = std::max(lanes, i->type.lanes);
  auto e = newExpr(Expr::Kind::Load, Type{buffer->dtype, lanes});
  e->buffer = std::move(buffer);
  e->operands = std::move(indices);
  return e;
}

ExprPtr unary(UnaryOp op, ExprPtr a) {
  auto e = newExpr(Expr::Kind::Unary, a->type);
  e->unaryOp = op;
  e->operands = {std::move(a)};
  return e;
}

static int64_t foldInt(BinaryOp op, int64_t a, int64_t b, bool* ok) {
  *ok = true;
  switch (op) {
  case BinaryOp::Add: return a + b;
  case BinaryOp::Sub: return a - b;
  case BinaryOp::Mul: return a * b;
  case BinaryOp::Div:
    if (b == 0)
      break;
    return a / b;
  case BinaryOp::Mod:
    if (b == 0)
      break;
    return a % b;
  case BinaryOp::Min: return std::min(a, b);
  case BinaryOp::Max: return std::max(a, b);
  case BinaryOp::Eq: return a == b;
  case BinaryOp::Ne: return a != b;
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  case BinaryOp::And: return a && b;
  case BinaryOp::Or: return a || b;
  default: break;
  }
  *ok = false;
  return 0;
}

ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  assert(a && b && "binary: null operand");
  const bool integer = fb::isInteger(a->type.dtype) && a->type.isScalar();
  int64_t ca = 0, cb = 0;
  const bool constA = a->isIntConst(&ca), constB = b->isIntConst(&cb);
  if (integer && constA && constB) {
    bool ok = false;
    int64_t v = foldInt(op, ca, cb, &ok);
    if (ok)
      return intImm(v, isComparison(op) ? Type::boolean() : a->type);
  }
  if (integer) {
    if (op == BinaryOp::Add && constA && ca == 0)
      return b;
    if ((op == BinaryOp::Add || op == BinaryOp::Sub) && constB && cb == 0)
      return a;
    if (op == BinaryOp::Mul && constA && ca == 1)
      return b;
    if ((op == BinaryOp::Mul || op == BinaryOp::Div) && constB && cb == 1)
      return a;
    if (op == BinaryOp::Mul && ((constA && ca == 0) || (constB && cb == 0)))
      return intImm(0, a->type);
  }
  Type t = a->type;
  if (b->type.lanes > t.lanes)
    t = t.withLanes(b->type.lanes);
  if (isComparison(op))
    t = Type::boolean(t.lanes);
  auto e = newExpr(Expr::Kind::Binary, t);
  e->binaryOp = op;
  e->operands = {std::move(a), std::move(b)};
  return e;
}

ExprPtr select(ExprPtr cond, ExprPtr a, ExprPtr b) {
  auto e = newExpr(Expr::Kind::Select, a->type);
  e->operands = {std::move(cond), std::move(a), std::move(b)};
  return e;
}

ExprPtr cast(Type type, ExprPtr a) {
  if (a->type == type)
    return a;
  auto e = newExpr(Expr::Kind::Cast, type);
  e->operands = {std::move(a)};
  return e;
}

ExprPtr ramp(ExprPtr base, ExprPtr stride, int lanes) {
  auto e = newExpr(Expr::Kind::Ramp, base->type.withLanes(lanes));
  e->operands = {std::move(base), std::move(stride)};
  return e;
}

ExprPtr broadcast(ExprPtr scalar, int lanes) {
  auto e = newExpr(Expr::Kind::Broadcast, scalar->type.withLanes(lanes));
  e->operands = {std::move(scalar)};
  return e;
}

// ---- statement builders ----

static std::shared_ptr<Stmt> newStmt(Stmt::Kind kind) {
  auto s = std::make_shared<Stmt>();
  s->kind = kind;
  return s;
}

StmtPtr forLoop(std::string v, ExprPtr min, ExprPtr extent, ForKind kind, StmtPtr body,
                std::string comment) {
  auto s = newStmt(Stmt::Kind::For);
  s->var = std::move(v);
  s->min = std::move(min);
  s->extent = std::move(extent);
  s->forKind = kind;
  s->body = std::move(body);
  s->comment = std::move(comment);
  return s;
}

StmtPtr forRange(std::string v, int64_t extent, StmtPtr body, ForKind kind) {
  return forLoop(std::move(v), intImm(0), intImm(extent), kind, std::move(body));
}

StmtPtr store(BufferPtr buffer, std::vector<ExprPtr> indices, ExprPtr value, std::string comment) {
  assert(buffer && indices.size() == buffer->rank() && "store: one index per buffer dimension");
  auto s = newStmt(Stmt::Kind::Store);
  s->buffer = std::move(buffer);
  s->indices = std::move(indices);
  s->value = std::move(value);
  s->comment = std::move(comment);
  return s;
}

StmtPtr block(std::vector<StmtPtr> stmts) {
  std::vector<StmtPtr> flat;
  for (StmtPtr& s : stmts) {
    if (!s)
      continue;
    if (s->kind == Stmt::Kind::Block && s->comment.empty())
      flat.insert(flat.end(), s->stmts.begin(), s->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1)
    return flat[0];
  auto b = newStmt(Stmt::Kind::Block);
  b->stmts = std::move(flat);
  return b;
}

StmtPtr ifThen(ExprPtr cond, StmtPtr thenBody, StmtPtr elseBody) {
  auto s = newStmt(Stmt::Kind::If);
  s->cond = std::move(cond);
  s->thenBody = std::move(thenBody);
  s->elseBody = std::move(elseBody);
  return s;
}

StmtPtr let(std::string v, ExprPtr value, StmtPtr body) {
  auto s = newStmt(Stmt::Kind::Let);
  s->var = std::move(v);
  s->value = std::move(value);
  s->body = std::move(body);
  return s;
}

StmtPtr alloc(BufferPtr localBuffer, StmtPtr body) {
  assert(localBuffer->kind != Buffer::Kind::Arg && "alloc of an argument");
  auto s = newStmt(Stmt::Kind::Alloc);
  s->buffer = std::move(localBuffer);
  s->body = std::move(body);
  return s;
}

StmtPtr barrier() {
  return newStmt(Stmt::Kind::Barrier);
}

StmtPtr withComment(const StmtPtr& s, std::string comment) {
  auto c = std::make_shared<Stmt>(*s);
  c->comment = std::move(comment);
  return c;
}

// ---- utilities ----

/// Rebuilds e with new operands through the folding builders.
static ExprPtr rebuild(const ExprPtr& e, std::vector<ExprPtr> ops) {
  switch (e->kind) {
  case Expr::Kind::IntImm:
  case Expr::Kind::FloatImm:
  case Expr::Kind::Var: return e;
  case Expr::Kind::Load: return load(e->buffer, std::move(ops));
  case Expr::Kind::Unary: return unary(e->unaryOp, ops[0]);
  case Expr::Kind::Binary: return binary(e->binaryOp, ops[0], ops[1]);
  case Expr::Kind::Select: return select(ops[0], ops[1], ops[2]);
  case Expr::Kind::Cast: return cast(e->type, ops[0]);
  case Expr::Kind::Ramp: return ramp(ops[0], ops[1], e->type.lanes);
  case Expr::Kind::Broadcast: return broadcast(ops[0], e->type.lanes);
  }
  assert(false && "unknown expression kind");
  return e;
}

ExprPtr substitute(const ExprPtr& e, const std::string& name, const ExprPtr& replacement) {
  if (!e)
    return e;
  if (e->kind == Expr::Kind::Var)
    return e->name == name ? replacement : e;
  if (e->operands.empty())
    return e;
  std::vector<ExprPtr> ops;
  bool changed = false;
  for (const ExprPtr& o : e->operands) {
    ops.push_back(substitute(o, name, replacement));
    changed |= ops.back() != o;
  }
  return changed ? rebuild(e, std::move(ops)) : e;
}

StmtPtr substitute(const StmtPtr& s, const std::string& name, const ExprPtr& replacement) {
  if (!s)
    return s;
  auto c = std::make_shared<Stmt>(*s);
  switch (s->kind) {
  case Stmt::Kind::For:
    c->min = substitute(s->min, name, replacement);
    c->extent = substitute(s->extent, name, replacement);
    if (s->var != name)
      c->body = substitute(s->body, name, replacement);
    break;
  case Stmt::Kind::Store:
    for (ExprPtr& i : c->indices)
      i = substitute(i, name, replacement);
    c->value = substitute(s->value, name, replacement);
    break;
  case Stmt::Kind::Block:
    for (StmtPtr& x : c->stmts)
      x = substitute(x, name, replacement);
    break;
  case Stmt::Kind::If:
    c->cond = substitute(s->cond, name, replacement);
    c->thenBody = substitute(s->thenBody, name, replacement);
    c->elseBody = substitute(s->elseBody, name, replacement);
    break;
  case Stmt::Kind::Let:
    c->value = substitute(s->value, name, replacement);
    if (s->var != name)
      c->body = substitute(s->body, name, replacement);
    break;
  case Stmt::Kind::Alloc: c->body = substitute(s->body, name, replacement); break;
  case Stmt::Kind::Barrier:
    break;
  }
  return c;
}

/// Collects an integer sum as terms (with signs) and a constant.
static void collectSum(const ExprPtr& e, int64_t sign, std::vector<std::pair<ExprPtr, int64_t>>& terms,
                       int64_t& constant) {
  int64_t c = 0;
  if (e->isIntConst(&c)) {
    constant += sign * c;
    return;
  }
  if (e->kind == Expr::Kind::Binary &&
      (e->binaryOp == BinaryOp::Add || e->binaryOp == BinaryOp::Sub)) {
    collectSum(e->operands[0], sign, terms, constant);
    collectSum(e->operands[1], e->binaryOp == BinaryOp::Add ? sign : -sign, terms, constant);
    return;
  }
  terms.push_back({e, sign});
}

ExprPtr simplify(const ExprPtr& e) {
  if (!e || e->operands.empty())
    return e;
  std::vector<ExprPtr> ops;
  for (const ExprPtr& o : e->operands)
    ops.push_back(simplify(o));
  ExprPtr r = rebuild(e, std::move(ops));
  // Integer sums: non-constant terms in order, then one constant (`i + 1 + j - 1` -> `i + j`).
  if (r->kind == Expr::Kind::Binary &&
      (r->binaryOp == BinaryOp::Add || r->binaryOp == BinaryOp::Sub) &&
      fb::isInteger(r->type.dtype) && r->type.isScalar()) {
    std::vector<std::pair<ExprPtr, int64_t>> terms;
    int64_t constant = 0;
    collectSum(r, 1, terms, constant);
    ExprPtr sum;
    for (auto& [t, sign] : terms) {
      if (!sum)
        sum = sign > 0 ? t : binary(BinaryOp::Sub, intImm(0, r->type), t);
      else
        sum = binary(sign > 0 ? BinaryOp::Add : BinaryOp::Sub, sum, t);
    }
    if (!sum)
      return intImm(constant, r->type);
    if (constant > 0)
      sum = binary(BinaryOp::Add, sum, intImm(constant, r->type));
    else if (constant < 0)
      sum = binary(BinaryOp::Sub, sum, intImm(-constant, r->type));
    return sum;
  }
  return r;
}

StmtPtr simplify(const StmtPtr& s) {
  if (!s)
    return s;
  auto c = std::make_shared<Stmt>(*s);
  c->min = simplify(s->min);
  c->extent = simplify(s->extent);
  c->value = simplify(s->value);
  c->cond = simplify(s->cond);
  for (ExprPtr& i : c->indices)
    i = simplify(i);
  c->body = simplify(s->body);
  c->thenBody = simplify(s->thenBody);
  c->elseBody = simplify(s->elseBody);
  for (StmtPtr& x : c->stmts)
    x = simplify(x);
  return c;
}

bool usesVar(const ExprPtr& e, const std::string& name) {
  if (!e)
    return false;
  if (e->kind == Expr::Kind::Var)
    return e->name == name;
  for (const ExprPtr& o : e->operands)
    if (usesVar(o, name))
      return true;
  return false;
}

bool usesVar(const StmtPtr& s, const std::string& name) {
  if (!s)
    return false;
  switch (s->kind) {
  case Stmt::Kind::For:
    return usesVar(s->min, name) || usesVar(s->extent, name) ||
           (s->var != name && usesVar(s->body, name));
  case Stmt::Kind::Store:
    for (const ExprPtr& i : s->indices)
      if (usesVar(i, name))
        return true;
    return usesVar(s->value, name);
  case Stmt::Kind::Block:
    for (const StmtPtr& x : s->stmts)
      if (usesVar(x, name))
        return true;
    return false;
  case Stmt::Kind::If:
    return usesVar(s->cond, name) || usesVar(s->thenBody, name) || usesVar(s->elseBody, name);
  case Stmt::Kind::Let: return usesVar(s->value, name) || (s->var != name && usesVar(s->body, name));
  case Stmt::Kind::Alloc: return usesVar(s->body, name);
  case Stmt::Kind::Barrier:
    return false;
  }
  return false;
}

void forEachStmt(const StmtPtr& s, const std::function<void(const Stmt&)>& fn) {
  if (!s)
    return;
  fn(*s);
  switch (s->kind) {
  case Stmt::Kind::For:
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: forEachStmt(s->body, fn); break;
  case Stmt::Kind::Block:
    for (const StmtPtr& x : s->stmts)
      forEachStmt(x, fn);
    break;
  case Stmt::Kind::If:
    forEachStmt(s->thenBody, fn);
    forEachStmt(s->elseBody, fn);
    break;
  case Stmt::Kind::Store:
  case Stmt::Kind::Barrier:
    break;
  }
}

static bool sameBuffer(const BufferPtr& a, const BufferPtr& b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  return a->name == b->name && a->kind == b->kind && a->arg == b->arg && a->dtype == b->dtype &&
         a->sizes == b->sizes && a->strides == b->strides && a->offset == b->offset;
}

bool equal(const ExprPtr& a, const ExprPtr& b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  if (a->kind != b->kind || !(a->type == b->type) || a->intValue != b->intValue ||
      a->floatValue != b->floatValue || a->name != b->name || a->unaryOp != b->unaryOp ||
      a->binaryOp != b->binaryOp || !sameBuffer(a->buffer, b->buffer) ||
      a->operands.size() != b->operands.size())
    return false;
  for (size_t i = 0; i < a->operands.size(); ++i)
    if (!equal(a->operands[i], b->operands[i]))
      return false;
  return true;
}

ExprPtr nanPropagating(const ExprPtr& x, ExprPtr step) {
  return select(binary(BinaryOp::Ne, x, x), x, std::move(step));
}

const Expr* nanPropagatingStep(const Expr& value, ExprPtr* x) {
  if (value.kind != Expr::Kind::Select || value.operands.size() != 3)
    return nullptr;
  const ExprPtr& cond = value.operands[0];
  if (cond->kind != Expr::Kind::Binary || cond->binaryOp != BinaryOp::Ne ||
      !equal(cond->operands[0], value.operands[1]) || !equal(cond->operands[1], value.operands[1]))
    return nullptr;
  *x = value.operands[1];
  return value.operands[2].get();
}

bool equal(const StmtPtr& a, const StmtPtr& b) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  if (a->kind != b->kind || a->var != b->var || a->forKind != b->forKind ||
      !equal(a->min, b->min) || !equal(a->extent, b->extent) || !equal(a->body, b->body) ||
      !sameBuffer(a->buffer, b->buffer) || !equal(a->value, b->value) ||
      !equal(a->cond, b->cond) || !equal(a->thenBody, b->thenBody) ||
      !equal(a->elseBody, b->elseBody) || a->indices.size() != b->indices.size() ||
      a->stmts.size() != b->stmts.size())
    return false;
  for (size_t i = 0; i < a->indices.size(); ++i)
    if (!equal(a->indices[i], b->indices[i]))
      return false;
  for (size_t i = 0; i < a->stmts.size(); ++i)
    if (!equal(a->stmts[i], b->stmts[i]))
      return false;
  return true;
}

} // namespace fb::cg
