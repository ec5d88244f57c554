// Default schedule step: float max/min reductions over a row (a Softmax's row maximum, a
// ReduceMax) keep one partial result per vector lane. LLVM vectorizes the sums itself (the
// emitter lets reductions reassociate), but not `acc < x ? x : acc`, the interpreter's max,
// without assuming that no input is NaN; here the lanes compute exactly that select, so the
// result is the serial loop's for every input, NaN included (a NaN element is skipped by
// both, or with ReduceMax's `x != x ? x : max(acc, x)` taken by both; a NaN start value stays
// in every lane).
#include "codegen/loops/ScheduleInternal.h"

#include <optional>

namespace fb::cg::schedule_detail {

namespace {

/// The reduction `acc[c] = op(acc[c], f(j))` that is the whole body of a loop, with op Max or
/// Min on a float scalar local at constant indices and f not reading acc, or its NaN-propagating
/// form `f != f ? f : op(acc[c], f)` (ReduceMax's).
struct MinMaxUpdate {
  ExprPtr f;
  BinaryOp op = BinaryOp::Max;
  bool accFirst = true;       ///< op(acc, f), not op(f, acc): the select's operands keep it
  bool nanPropagates = false; ///< the NaN-propagating form
};

std::optional<MinMaxUpdate> minMaxUpdate(const Stmt& loop) {
  const StmtPtr& st = loop.body;
  if (!st || st->kind != Stmt::Kind::Store || !st->buffer ||
      st->buffer->kind != Buffer::Kind::Local || !st->value)
    return std::nullopt;
  for (const ExprPtr& i : st->indices)
    if (!i->isIntConst())
      return std::nullopt;
  ExprPtr nanTerm;
  const Expr* value = nanPropagatingStep(*st->value, &nanTerm);
  if (!value)
    value = st->value.get();
  const Expr& v = *value;
  if (v.kind != Expr::Kind::Binary ||
      (v.binaryOp != BinaryOp::Max && v.binaryOp != BinaryOp::Min) || !v.type.isFloat() ||
      !v.type.isScalar() || v.operands.size() != 2)
    return std::nullopt;
  auto isAcc = [&](const ExprPtr& e) {
    if (e->kind != Expr::Kind::Load || !e->buffer || e->buffer->name != st->buffer->name ||
        e->operands.size() != st->indices.size())
      return false;
    for (size_t d = 0; d < st->indices.size(); ++d)
      if (!equal(e->operands[d], st->indices[d]))
        return false;
    return true;
  };
  auto readsAcc = [&](const ExprPtr& e) {
    bool reads = false;
    forEachExpr(e, [&](const Expr& x) {
      reads |= x.kind == Expr::Kind::Load && x.buffer && x.buffer->name == st->buffer->name;
    });
    return reads;
  };
  for (int a = 0; a < 2; ++a)
    if (isAcc(v.operands[size_t(a)]) && !readsAcc(v.operands[size_t(1 - a)])) {
      const ExprPtr& f = v.operands[size_t(1 - a)];
      if (nanTerm && !equal(f, nanTerm))
        return std::nullopt;
      return MinMaxUpdate{f, v.binaryOp, a == 0, nanTerm != nullptr};
    }
  return std::nullopt;
}

/// The rewrite of one reduction loop over [min, min + extent):
///   local acc_lanes[W]
///   for l in vectorized(W): acc_lanes[l] = acc[c]
///   for j_o in range(extent / W):
///     for l in vectorized(W): acc_lanes[l] = op(acc_lanes[l], f(min + j_o*W + l))
///   for l in range(W): acc[c] = op(acc[c], acc_lanes[l])
///   for j_t in range(extent % W): acc[c] = op(acc[c], f(min + extent/W*W + j_t))
/// Max and min are exact and idempotent, so starting every lane from acc[c] and folding the
/// lanes and the tail in afterwards gives the serial loop's value.
StmtPtr rewrite(const StmtPtr& loop, int64_t extent, int width, const MinMaxUpdate& u,
                int* counter) {
  const Stmt& st = *loop->body;
  const ExprPtr& f = u.f;
  const std::string& j = loop->var;
  BufferPtr lanes = makeLocalBuffer(st.buffer->name + "_lanes" + std::to_string((*counter)++),
                                    st.buffer->dtype, {width});
  std::string l = j + "_l", jo = j + "_o", jt = j + "_t";
  auto combine = [&](ExprPtr acc, const ExprPtr& x) {
    ExprPtr step = u.accFirst ? binary(u.op, std::move(acc), x) : binary(u.op, x, std::move(acc));
    return u.nanPropagates ? nanPropagating(x, std::move(step)) : step;
  };
  ExprPtr accLoad = load(st.buffer, st.indices);
  std::vector<ExprPtr> lane{var(l)};
  int64_t whole = extent / width, tail = extent % width;
  std::vector<StmtPtr> seq;
  seq.push_back(forLoop(l, intImm(0), intImm(width), ForKind::Vectorized,
                        store(lanes, lane, accLoad), loop->comment));
  ExprPtr at = simplify(add(loop->min, add(mul(var(jo), intImm(width)), var(l))));
  seq.push_back(forLoop(
      jo, intImm(0), intImm(whole), ForKind::Serial,
      forLoop(l, intImm(0), intImm(width), ForKind::Vectorized,
              store(lanes, lane, combine(load(lanes, lane), simplify(substitute(f, j, at)))))));
  seq.push_back(forLoop(l, intImm(0), intImm(width), ForKind::Serial,
                        store(st.buffer, st.indices, combine(accLoad, load(lanes, lane)))));
  if (tail > 0) {
    ExprPtr t = simplify(add(loop->min, add(var(jt), intImm(whole * width))));
    seq.push_back(forLoop(
        jt, intImm(0), intImm(tail), ForKind::Serial,
        store(st.buffer, st.indices, combine(accLoad, simplify(substitute(f, j, t)))), "tail"));
  }
  return alloc(lanes, block(std::move(seq)));
}

StmtPtr walk(const StmtPtr& s, int width, int* counter) {
  if (!s)
    return s;
  switch (s->kind) {
  case Stmt::Kind::For: {
    if (s->forKind != ForKind::Serial && s->forKind != ForKind::Parallel)
      return s; // vector lanes or GPU threads already: leave it
    int64_t extent = 0;
    if (s->forKind == ForKind::Serial && s->extent->isIntConst(&extent) && extent >= 2 * width &&
        s->min && !usesVar(s->min, s->var))
      if (auto u = minMaxUpdate(*s); u && contiguousIn(s->body, s->var))
        return rewrite(s, extent, width, *u, counter);
    auto c = std::make_shared<Stmt>(*s);
    c->body = walk(s->body, width, counter);
    return c;
  }
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: {
    auto c = std::make_shared<Stmt>(*s);
    c->body = walk(s->body, width, counter);
    return c;
  }
  case Stmt::Kind::Block: {
    auto c = std::make_shared<Stmt>(*s);
    for (StmtPtr& x : c->stmts)
      x = walk(x, width, counter);
    return c;
  }
  case Stmt::Kind::If: {
    auto c = std::make_shared<Stmt>(*s);
    c->thenBody = walk(s->thenBody, width, counter);
    c->elseBody = walk(s->elseBody, width, counter);
    return c;
  }
  case Stmt::Kind::Store:
  case Stmt::Kind::Barrier:
    return s;
  }
  return s;
}

} // namespace

StmtPtr vectorizeMinMaxReductions(const StmtPtr& s, int width) {
  if (width < 2)
    return s;
  int counter = 0;
  return walk(s, width, &counter);
}

} // namespace fb::cg::schedule_detail
