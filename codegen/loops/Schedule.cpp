// Schedule primitives and the default schedule.
#include "codegen/loops/Schedule.h"
#include "codegen/loops/ScheduleInternal.h"
#include "core/Faults.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <set>

namespace fb::cg {

namespace schedule_detail {

using LoopFn = std::function<Expected<StmtPtr>(const StmtPtr&)>;
using LoopPred = std::function<bool(const Stmt&)>;

/// Rebuilds s with every For matching pred replaced by fn(loop); counts replacements.
Expected<StmtPtr> transformLoops(const StmtPtr& s, const LoopPred& pred, const LoopFn& fn,
                                 int* count) {
  if (!s)
    return s;
  if (s->kind == Stmt::Kind::For && pred(*s)) {
    ++*count;
    return fn(s);
  }
  auto c = std::make_shared<Stmt>(*s);
  switch (s->kind) {
  case Stmt::Kind::For:
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: {
    FB_ASSIGN_OR_RETURN(c->body, transformLoops(s->body, pred, fn, count));
    break;
  }
  case Stmt::Kind::Block:
    for (StmtPtr& x : c->stmts) {
      FB_ASSIGN_OR_RETURN(x, transformLoops(x, pred, fn, count));
    }
    break;
  case Stmt::Kind::If: {
    FB_ASSIGN_OR_RETURN(c->thenBody, transformLoops(s->thenBody, pred, fn, count));
    FB_ASSIGN_OR_RETURN(c->elseBody, transformLoops(s->elseBody, pred, fn, count));
    break;
  }
  case Stmt::Kind::Store:
  case Stmt::Kind::Barrier:
    return s;
  }
  return StmtPtr(c);
}

Expected<StmtPtr> byName(const StmtPtr& s, const std::string& v, const LoopFn& fn) {
  int count = 0;
  FB_ASSIGN_OR_RETURN(StmtPtr r, transformLoops(s, [&](const Stmt& x) { return x.var == v; }, fn, &count));
  if (count == 0)
    return makeError("no loop named '", v, "'");
  return r;
}

bool constExtent(const Stmt& loop, int64_t* e) { return loop.extent->isIntConst(e); }

/// Tail-mode split of one loop (see splitLoop).
Expected<StmtPtr> splitOne(const StmtPtr& loop, int64_t factor, ForKind innerKind) {
  int64_t e = 0;
  if (!constExtent(*loop, &e))
    return makeError("loop '", loop->var, "' has no constant extent to split");
  if (factor < 1)
    return makeError("split factor ", factor, " must be positive");
  const std::string& v = loop->var;
  std::string vo = v + "_o", vi = v + "_i", vt = v + "_t";
  int64_t nO = e / factor, tail = e % factor;
  if (tail > 0 && nO > 0 && faultEnabled(Fault::LoopTailOffByOne))
    --tail; // the remainder loop's bound is computed one short
  std::vector<StmtPtr> parts;
  if (nO > 0) {
    ExprPtr idx = add(loop->min, add(mul(var(vo), intImm(factor)), var(vi)));
    StmtPtr inner = forLoop(vi, intImm(0), intImm(factor), innerKind,
                            simplify(substitute(loop->body, v, idx)));
    parts.push_back(forLoop(vo, intImm(0), intImm(nO), loop->forKind, inner, loop->comment));
  }
  if (tail > 0) {
    ExprPtr idx = simplify(add(add(var(vt), intImm(nO * factor)), loop->min));
    // A vector split's remainder runs as one shorter vector (5 of 197 softmax columns: one
    // exp on 5 lanes instead of 5 scalar ones).
    ForKind tailKind =
        innerKind == ForKind::Vectorized && tail >= 2 ? ForKind::Vectorized : ForKind::Serial;
    parts.push_back(forLoop(vt, intImm(0), intImm(tail), tailKind,
                            simplify(substitute(loop->body, v, idx)),
                            nO > 0 ? "tail" : loop->comment));
  }
  return block(std::move(parts));
}

/// Every Store in s.
void storesOf(const StmtPtr& s, std::vector<const Stmt*>& out) {
  forEachStmt(s, [&](const Stmt& x) {
    if (x.kind == Stmt::Kind::Store)
      out.push_back(&x);
  });
}

bool containsLoop(const StmtPtr& s) {
  bool found = false;
  forEachStmt(s, [&](const Stmt& x) { found |= x.kind == Stmt::Kind::For; });
  return found;
}

/// Vars bound by loops and lets inside s (s included).
void boundVars(const StmtPtr& s, std::set<std::string>& out) {
  forEachStmt(s, [&](const Stmt& x) {
    if (x.kind == Stmt::Kind::For || x.kind == Stmt::Kind::Let)
      out.insert(x.var);
  });
}

bool usesAny(const ExprPtr& e, const std::set<std::string>& vars) {
  for (const std::string& v : vars)
    if (usesVar(e, v))
      return true;
  return false;
}

/// True when the iterations of an innermost loop write distinct elements of argument buffers
/// only, so lanes can run side by side.
bool iterationsIndependent(const Stmt& loop);

bool isVectorizable(const Stmt& loop, int width) {
  int64_t e = 0;
  if (loop.forKind != ForKind::Serial || !constExtent(loop, &e) || e < width ||
      containsLoop(loop.body))
    return false;
  std::vector<const Stmt*> stores;
  storesOf(loop.body, stores);
  if (stores.empty() || !iterationsIndependent(loop))
    return false;
  for (const Stmt* st : stores) {
    if (st->buffer->kind != Buffer::Kind::Arg || st->indices.empty())
      return false;
    if (!usesVar(st->indices.back(), loop.var))
      return false;
  }
  return true;
}

/// True when different iterations of `loop` never write the same element: every store to an
/// argument buffer has an index that uses the loop variable, and every local it writes is
/// allocated inside the loop (private to an iteration).
bool iterationsIndependent(const Stmt& loop) {
  std::set<std::string> privateLocals;
  forEachStmt(loop.body, [&](const Stmt& x) {
    if (x.kind == Stmt::Kind::Alloc)
      privateLocals.insert(x.buffer->name);
  });
  bool ok = true;
  forEachStmt(loop.body, [&](const Stmt& x) {
    if (x.kind != Stmt::Kind::Store)
      return;
    if (x.buffer->kind == Buffer::Kind::Local) {
      ok &= privateLocals.count(x.buffer->name) != 0;
      return;
    }
    bool uses = false;
    for (const ExprPtr& i : x.indices)
      uses |= usesVar(i, loop.var);
    ok &= uses;
  });
  return ok;
}

/// Visits every loop of s (outermost first); stops descending where fn returns true.
void visitLoops(const StmtPtr& s, const std::function<bool(const Stmt&)>& fn) {
  if (!s)
    return;
  if (s->kind == Stmt::Kind::For && fn(*s))
    return;
  switch (s->kind) {
  case Stmt::Kind::For:
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: visitLoops(s->body, fn); break;
  case Stmt::Kind::Block:
    for (const StmtPtr& x : s->stmts)
      visitLoops(x, fn);
    break;
  case Stmt::Kind::If:
    visitLoops(s->thenBody, fn);
    visitLoops(s->elseBody, fn);
    break;
  case Stmt::Kind::Store:
  case Stmt::Kind::Barrier:
    break;
  }
}

/// Loads or stores of `buffer` inside s go to the one-element local `acc` instead.
StmtPtr redirectAccesses(const StmtPtr& s, const std::string& buffer, const BufferPtr& acc) {
  std::vector<ExprPtr> zero{intImm(0)};
  std::function<ExprPtr(const ExprPtr&)> rew = [&](const ExprPtr& e) -> ExprPtr {
    if (!e)
      return e;
    if (e->kind == Expr::Kind::Load && e->buffer->name == buffer)
      return load(acc, zero);
    if (e->operands.empty())
      return e;
    auto c = std::make_shared<Expr>(*e);
    for (ExprPtr& o : c->operands)
      o = rew(o);
    return c;
  };
  std::function<StmtPtr(const StmtPtr&)> rs = [&](const StmtPtr& x) -> StmtPtr {
    if (!x)
      return x;
    auto c = std::make_shared<Stmt>(*x);
    c->value = rew(x->value);
    c->cond = rew(x->cond);
    for (ExprPtr& i : c->indices)
      i = rew(i);
    if (x->kind == Stmt::Kind::Store && x->buffer->name == buffer) {
      c->buffer = acc;
      c->indices = zero;
    }
    c->body = rs(x->body);
    c->thenBody = rs(x->thenBody);
    c->elseBody = rs(x->elseBody);
    for (StmtPtr& y : c->stmts)
      y = rs(y);
    return c;
  };
  return rs(s);
}

/// cacheLocal on one loop: the accesses to `buffer` (all at one index independent of the loop
/// and of everything bound inside it) go to a local accumulator.
Expected<StmtPtr> cacheOne(const StmtPtr& loop, const std::string& buffer) {
  std::set<std::string> inner;
  boundVars(loop, inner);
  std::vector<ExprPtr> idx;
  BufferPtr buf;
  bool ok = true;
  std::function<void(const ExprPtr&)> visit = [&](const ExprPtr& e) {
    if (!e)
      return;
    if (e->kind == Expr::Kind::Load && e->buffer->name == buffer) {
      if (!buf) {
        buf = e->buffer;
        idx = e->operands;
      } else {
        for (size_t d = 0; d < idx.size(); ++d)
          ok &= equal(idx[d], e->operands[d]);
      }
    }
    for (const ExprPtr& o : e->operands)
      visit(o);
  };
  forEachStmt(loop, [&](const Stmt& x) {
    visit(x.value);
    visit(x.cond);
    visit(x.min);
    visit(x.extent);
    for (const ExprPtr& i : x.indices)
      visit(i);
    if (x.kind == Stmt::Kind::Store && x.buffer->name == buffer) {
      if (!buf) {
        buf = x.buffer;
        idx = x.indices;
      } else {
        for (size_t d = 0; d < idx.size(); ++d)
          ok &= equal(idx[d], x.indices[d]);
      }
    }
  });
  if (!buf)
    return makeError("loop '", loop->var, "' does not access buffer ", buffer);
  for (const ExprPtr& i : idx)
    ok &= !usesAny(i, inner);
  if (!ok)
    return makeError("loop '", loop->var, "' accesses ", buffer,
                     " at more than one element, or at one that changes inside the loop");
  BufferPtr acc = makeLocalBuffer(buffer + "_acc", buf->dtype, {1});
  std::vector<ExprPtr> zero{intImm(0)};
  return alloc(acc, block({store(acc, zero, load(buf, idx)), redirectAccesses(loop, buffer, acc),
                           store(buf, idx, load(acc, zero))}));
}


/// True when every load of `buffer` in e is at `idx`; counts them.
bool loadsOnlyAt(const ExprPtr& e, const std::string& buffer, const std::vector<ExprPtr>& idx,
                 int* count) {
  if (!e)
    return true;
  if (e->kind == Expr::Kind::Load && e->buffer->name == buffer) {
    ++*count;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!equal(e->operands[d], idx[d]))
        return false;
    return true;
  }
  for (const ExprPtr& o : e->operands)
    if (!loadsOnlyAt(o, buffer, idx, count))
      return false;
  return true;
}

/// For a loop whose stores all go to one element of one argument buffer (an index that no
/// loop inside changes): that buffer's name and the element's index.
bool fixedElementLoop(const Stmt& loop, std::string* name, std::vector<ExprPtr>* idx) {
  std::vector<const Stmt*> stores;
  auto self = std::shared_ptr<const Stmt>(&loop, [](const Stmt*) {});
  storesOf(self, stores);
  if (stores.empty() || stores[0]->buffer->kind != Buffer::Kind::Arg)
    return false;
  std::set<std::string> inner;
  boundVars(self, inner);
  for (const Stmt* st : stores) {
    if (st->buffer->name != stores[0]->buffer->name)
      return false;
    for (size_t d = 0; d < st->indices.size(); ++d)
      if (usesAny(st->indices[d], inner) || !equal(st->indices[d], stores[0]->indices[d]))
        return false;
  }
  *name = stores[0]->buffer->name;
  *idx = stores[0]->indices;
  return true;
}

/// Default step 1: a reduction loop that keeps its output element fixed accumulates in a local
/// (a register), together with the store that initialises the element just before it and the
/// epilogue stores just after it: `acc = init; for k: acc += ...; Y[i, j] = f(acc)`.
StmtPtr cacheReductions(const StmtPtr& s, const std::string& onlyBuffer) {
  if (!s)
    return s;
  switch (s->kind) {
  case Stmt::Kind::Block: {
    std::vector<StmtPtr> out;
    for (size_t k = 0; k < s->stmts.size(); ++k) {
      const StmtPtr& x = s->stmts[k];
      std::string name;
      std::vector<ExprPtr> idx;
      if (x->kind != Stmt::Kind::For || !fixedElementLoop(*x, &name, &idx) ||
          (!onlyBuffer.empty() && name != onlyBuffer)) {
        out.push_back(cacheReductions(x, onlyBuffer));
        continue;
      }
      auto sameElement = [&](const Stmt& st) {
        if (st.kind != Stmt::Kind::Store || st.buffer->name != name)
          return false;
        for (size_t d = 0; d < idx.size(); ++d)
          if (!equal(st.indices[d], idx[d]))
            return false;
        return true;
      };
      int loads = 0;
      bool loopOk = true;
      forEachStmt(x, [&](const Stmt& st) {
        loopOk &= loadsOnlyAt(st.value, name, idx, &loads) && loadsOnlyAt(st.cond, name, idx, &loads);
        for (const ExprPtr& i : st.indices)
          loopOk &= loadsOnlyAt(i, name, idx, &loads);
      });
      if (!loopOk) {
        out.push_back(x);
        continue;
      }
      BufferPtr buf;
      forEachStmt(x, [&](const Stmt& st) {
        if (st.kind == Stmt::Kind::Store && !buf)
          buf = st.buffer;
      });
      BufferPtr acc = makeLocalBuffer(name + "_acc", buf->dtype, {1});
      std::vector<ExprPtr> zero{intImm(0)};
      std::vector<StmtPtr> seq;
      int initLoads = 0;
      if (!out.empty() && sameElement(*out.back()) &&
          loadsOnlyAt(out.back()->value, name, idx, &initLoads) && initLoads == 0) {
        seq.push_back(store(acc, zero, out.back()->value, out.back()->comment));
        out.pop_back();
      } else {
        seq.push_back(store(acc, zero, load(buf, idx)));
      }
      seq.push_back(redirectAccesses(x, name, acc));
      while (k + 1 < s->stmts.size() && sameElement(*s->stmts[k + 1])) {
        int n = 0;
        if (!loadsOnlyAt(s->stmts[k + 1]->value, name, idx, &n))
          break;
        seq.push_back(redirectAccesses(s->stmts[k + 1], name, acc));
        ++k;
      }
      seq.push_back(store(buf, idx, load(acc, zero)));
      out.push_back(alloc(acc, block(std::move(seq))));
    }
    auto c = std::make_shared<Stmt>(*s);
    c->stmts = std::move(out);
    return c;
  }
  case Stmt::Kind::For: {
    std::string name;
    std::vector<ExprPtr> idx;
    if (fixedElementLoop(*s, &name, &idx) && (onlyBuffer.empty() || name == onlyBuffer)) {
      auto r = cacheOne(s, name);
      if (r.ok())
        return *r;
    }
    auto c = std::make_shared<Stmt>(*s);
    c->body = cacheReductions(s->body, onlyBuffer);
    return c;
  }
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: {
    auto c = std::make_shared<Stmt>(*s);
    c->body = cacheReductions(s->body, onlyBuffer);
    return c;
  }
  case Stmt::Kind::If: {
    auto c = std::make_shared<Stmt>(*s);
    c->thenBody = cacheReductions(s->thenBody, onlyBuffer);
    c->elseBody = cacheReductions(s->elseBody, onlyBuffer);
    return c;
  }
  case Stmt::Kind::Store:
  case Stmt::Kind::Barrier:
    return s;
  }
  return s;
}

/// Default step 2: vectorize innermost loops whose lanes are independent.
StmtPtr vectorizeInnermost(const StmtPtr& s, int width) {
  int count = 0;
  auto r = transformLoops(
      s, [&](const Stmt& x) { return isVectorizable(x, width); },
      [&](const StmtPtr& l) -> Expected<StmtPtr> {
        int64_t e = 0;
        constExtent(*l, &e);
        if (e == width) {
          auto c = std::make_shared<Stmt>(*l);
          c->forKind = ForKind::Vectorized;
          return StmtPtr(c);
        }
        return splitOne(l, width, ForKind::Vectorized);
      },
      &count);
  return r.ok() ? *r : s;
}

int64_t workOf(const StmtPtr& s) {
  if (!s)
    return 0;
  switch (s->kind) {
  case Stmt::Kind::For: {
    int64_t e = 1;
    s->extent->isIntConst(&e);
    return e * std::max<int64_t>(1, workOf(s->body));
  }
  case Stmt::Kind::Block: {
    int64_t w = 0;
    for (const StmtPtr& x : s->stmts)
      w += workOf(x);
    return w;
  }
  case Stmt::Kind::If: return workOf(s->thenBody);
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: return workOf(s->body);
  case Stmt::Kind::Store: return 1;
  case Stmt::Kind::Barrier:
    return 0;
  }
  return 1;
}

bool fusable(const Stmt& outer) {
  int64_t a = 0, b = 0;
  const StmtPtr& in = outer.body;
  return in && in->kind == Stmt::Kind::For && in->forKind == ForKind::Serial &&
         outer.forKind == ForKind::Serial && constExtent(outer, &a) && constExtent(*in, &b) &&
         outer.min->isIntConst() && in->min->isIntConst() && !usesVar(in->extent, outer.var) &&
         !usesVar(in->min, outer.var);
}

Expected<StmtPtr> fuseOne(const StmtPtr& outer) {
  if (!fusable(*outer))
    return makeError("loops '", outer->var,
                     "' and its body cannot be fused (need two perfectly nested serial loops "
                     "with constant bounds)");
  const StmtPtr& inner = outer->body;
  int64_t eo = outer->extent->intValue, ei = inner->extent->intValue;
  std::string f = outer->var + "_" + inner->var;
  StmtPtr body = substitute(inner->body, outer->var,
                            add(outer->min, div(var(f), intImm(ei))));
  body = substitute(body, inner->var, add(inner->min, binary(BinaryOp::Mod, var(f), intImm(ei))));
  return forLoop(f, intImm(0), intImm(eo * ei), outer->forKind, body, outer->comment);
}

/// Default step 3: run the outermost loop in parallel (fusing outer loops until there are
/// enough iterations) when the nest does enough work.
StmtPtr parallelizeOutermost(const StmtPtr& s, int64_t threshold) {
  if (!s || s->kind != Stmt::Kind::For || s->forKind != ForKind::Serial)
    return s;
  if (workOf(s) < threshold)
    return s;
  StmtPtr cur = s;
  int64_t e = 0;
  while (constExtent(*cur, &e) && e < 16 && fusable(*cur)) {
    auto f = fuseOne(cur);
    if (!f.ok())
      break;
    cur = *f;
  }
  if (!constExtent(*cur, &e) || e < 2 || !iterationsIndependent(*cur))
    return s;
  auto c = std::make_shared<Stmt>(*cur);
  c->forKind = ForKind::Parallel;
  return c;
}

/// Applies fn to each top-level nest of a kernel body.
StmtPtr perNest(const StmtPtr& body, const std::function<StmtPtr(const StmtPtr&)>& fn) {
  if (body && body->kind == Stmt::Kind::Block) {
    std::vector<StmtPtr> parts;
    for (const StmtPtr& x : body->stmts)
      parts.push_back(perNest(x, fn));
    auto c = std::make_shared<Stmt>(*body);
    c->stmts = std::move(parts);
    return c;
  }
  return fn(body);
}

/// Calls fn on every expression of s (statements' operands and, recursively, sub-expressions).
void forEachExpr(const ExprPtr& e, const std::function<void(const Expr&)>& fn) {
  if (!e)
    return;
  fn(*e);
  for (const ExprPtr& o : e->operands)
    forEachExpr(o, fn);
}

/// True when every load and store in `body` that depends on `var` depends on it only through
/// its last index (contiguous across lanes), and nothing binds a Let variable from it.
bool contiguousIn(const StmtPtr& body, const std::string& var) {
  bool ok = true;
  auto checkIndices = [&](const std::vector<ExprPtr>& idx) {
    for (size_t i = 0; i + 1 < idx.size(); ++i)
      ok &= !usesVar(idx[i], var);
  };
  forEachStmt(body, [&](const Stmt& x) {
    if (x.kind == Stmt::Kind::Let && usesVar(x.value, var))
      ok = false;
    if (x.kind == Stmt::Kind::Store && x.buffer->kind == Buffer::Kind::Arg) {
      checkIndices(x.indices);
      ok &= !x.indices.empty() && usesVar(x.indices.back(), var);
    }
    for (const ExprPtr& e : {x.value, x.cond, x.min, x.extent})
      forEachExpr(e, [&](const Expr& l) {
        if (l.kind == Expr::Kind::Load && l.buffer && l.buffer->kind == Buffer::Kind::Arg)
          checkIndices(l.operands);
      });
    for (const ExprPtr& i : x.indices)
      forEachExpr(i, [&](const Expr& l) {
        if (l.kind == Expr::Kind::Load && l.buffer && l.buffer->kind == Buffer::Kind::Arg)
          checkIndices(l.operands);
      });
    // Inner loops must not depend on the lane.
    if (x.kind == Stmt::Kind::For && (usesVar(x.min, var) || usesVar(x.extent, var)))
      ok = false;
  });
  return ok;
}

} // namespace schedule_detail

using namespace schedule_detail;

Expected<StmtPtr> splitLoop(const StmtPtr& s, const std::string& v, int64_t factor) {
  return byName(s, v, [&](const StmtPtr& l) { return splitOne(l, factor, ForKind::Serial); });
}

Expected<StmtPtr> reorderLoops(const StmtPtr& s, const std::vector<std::string>& order) {
  std::set<std::string> names(order.begin(), order.end());
  if (names.size() != order.size())
    return makeError("reorder names a loop twice");
  int count = 0;
  FB_ASSIGN_OR_RETURN(
      StmtPtr r,
      transformLoops(
          s, [&](const Stmt& x) { return names.count(x.var) != 0; },
          [&](const StmtPtr& top) -> Expected<StmtPtr> {
            std::vector<StmtPtr> chain{top};
            size_t found = 1;
            while (found < order.size()) {
              const StmtPtr& b = chain.back()->body;
              if (!b || b->kind != Stmt::Kind::For)
                return makeError("reorder: loops ", chain.back()->var,
                                 " and the next named loop are not perfectly nested");
              chain.push_back(b);
              found += names.count(b->var);
            }
            std::vector<size_t> slots;
            for (size_t i = 0; i < chain.size(); ++i)
              if (names.count(chain[i]->var))
                slots.push_back(i);
            std::vector<StmtPtr> loops(chain);
            for (size_t k = 0; k < slots.size(); ++k)
              for (const StmtPtr& c : chain)
                if (c->var == order[k])
                  loops[slots[k]] = c;
            // Bounds must not depend on a loop that moves inside them.
            for (size_t i = 0; i < loops.size(); ++i)
              for (size_t j = i + 1; j < loops.size(); ++j)
                if (usesVar(loops[i]->min, loops[j]->var) || usesVar(loops[i]->extent, loops[j]->var))
                  return makeError("reorder: bounds of ", loops[i]->var, " depend on ",
                                   loops[j]->var);
            StmtPtr body = chain.back()->body;
            for (size_t i = loops.size(); i-- > 0;)
              body = forLoop(loops[i]->var, loops[i]->min, loops[i]->extent, loops[i]->forKind,
                             body, loops[i]->comment);
            return body;
          },
          &count));
  if (count == 0)
    return makeError("reorder: no loop named ", order.front());
  return r;
}

Expected<StmtPtr> tileLoops(const StmtPtr& s, const std::vector<int64_t>& factors) {
  if (!s || s->kind != Stmt::Kind::For)
    return makeError("tile: the nest does not start with a loop");
  std::vector<StmtPtr> chain{s};
  while (chain.size() < factors.size()) {
    const StmtPtr& b = chain.back()->body;
    if (!b || b->kind != Stmt::Kind::For)
      return makeError("tile: only ", chain.size(), " perfectly nested loops, ", factors.size(),
                       " tile sizes");
    chain.push_back(b);
  }
  StmtPtr body = chain.back()->body;
  ExprPtr guard;
  std::vector<StmtPtr> outer, inner;
  for (size_t i = 0; i < chain.size(); ++i) {
    const Stmt& l = *chain[i];
    int64_t e = 0;
    if (!constExtent(l, &e))
      return makeError("tile: loop ", l.var, " has no constant extent");
    int64_t f = factors[i];
    if (f < 1)
      return makeError("tile: size ", f, " must be positive");
    if (f >= e) {
      inner.push_back(chain[i]);
      continue;
    }
    std::string vo = l.var + "_o", vi = l.var + "_i";
    ExprPtr pos = add(mul(var(vo), intImm(f)), var(vi));
    body = substitute(body, l.var, simplify(add(l.min, pos)));
    if (e % f) {
      ExprPtr g = binary(BinaryOp::Lt, pos, intImm(e));
      guard = guard ? binary(BinaryOp::And, guard, g) : g;
    }
    outer.push_back(forLoop(vo, intImm(0), intImm((e + f - 1) / f), l.forKind, nullptr, l.comment));
    inner.push_back(forLoop(vi, intImm(0), intImm(f), ForKind::Serial, nullptr));
  }
  if (guard)
    body = ifThen(guard, body);
  std::vector<StmtPtr> all = outer;
  all.insert(all.end(), inner.begin(), inner.end());
  for (size_t i = all.size(); i-- > 0;)
    body = forLoop(all[i]->var, all[i]->min, all[i]->extent, all[i]->forKind, body, all[i]->comment);
  return body;
}

Expected<StmtPtr> fuseLoops(const StmtPtr& s, const std::string& outer, const std::string& inner) {
  return byName(s, outer, [&](const StmtPtr& l) -> Expected<StmtPtr> {
    if (!l->body || l->body->kind != Stmt::Kind::For || l->body->var != inner)
      return makeError("fuse: loop ", inner, " is not directly inside ", outer);
    return fuseOne(l);
  });
}

Expected<StmtPtr> vectorizeLoop(const StmtPtr& s, const std::string& v, int width) {
  return byName(s, v, [&](const StmtPtr& l) -> Expected<StmtPtr> {
    if (!iterationsIndependent(*l))
      return makeError("iterations of loop '", v,
                       "' write the same element (a reduction): it cannot be vectorized");
    int64_t e = 0;
    if (constExtent(*l, &e) && e == width) {
      auto c = std::make_shared<Stmt>(*l);
      c->forKind = ForKind::Vectorized;
      return StmtPtr(c);
    }
    return splitOne(l, width, ForKind::Vectorized);
  });
}

Expected<StmtPtr> unrollLoop(const StmtPtr& s, const std::string& v, int factor) {
  return byName(s, v, [&](const StmtPtr& l) -> Expected<StmtPtr> {
    int64_t e = 0;
    if (constExtent(*l, &e) && e <= factor) {
      auto c = std::make_shared<Stmt>(*l);
      c->forKind = ForKind::Unrolled;
      return StmtPtr(c);
    }
    return splitOne(l, factor, ForKind::Unrolled);
  });
}

Expected<StmtPtr> parallelizeLoop(const StmtPtr& s, const std::string& v) {
  return byName(s, v, [&](const StmtPtr& l) -> Expected<StmtPtr> {
    if (!iterationsIndependent(*l))
      return makeError("iterations of loop '", v,
                       "' write the same element (a reduction): it cannot run in parallel");
    auto c = std::make_shared<Stmt>(*l);
    c->forKind = ForKind::Parallel;
    return StmtPtr(c);
  });
}

Expected<StmtPtr> cacheLocal(const StmtPtr& s, const std::string& v, const std::string& buffer) {
  return byName(s, v, [&](const StmtPtr& l) { return cacheOne(l, buffer); });
}

std::string innermostLoop(const StmtPtr& s) {
  std::string found;
  visitLoops(s, [&](const Stmt& l) {
    if (found.empty() && !containsLoop(l.body))
      found = l.var;
    return !found.empty();
  });
  return found;
}

std::string outermostLoop(const StmtPtr& s) {
  std::string found;
  visitLoops(s, [&](const Stmt& l) {
    if (found.empty())
      found = l.var;
    return true;
  });
  return found;
}

namespace {
bool containsVectorized(const StmtPtr& s) {
  bool found = false;
  forEachStmt(s, [&](const Stmt& x) {
    found |= x.kind == Stmt::Kind::For && x.forKind == ForKind::Vectorized;
  });
  return found;
}

/// When a nest's innermost loop is a reduction (a MatMul whose tail is not a GEMM epilogue:
/// `for i, j: acc = 0; for k: acc += x[i,k]*w[k,j]; y[i,j] = gelu(acc)`), vectorizes the
/// innermost loop around it whose iterations are independent and contiguous (j): 8 outputs are
/// accumulated at once in a privatized vector local.
StmtPtr vectorizeAroundReduction(const StmtPtr& s, int width) {
  if (containsVectorized(s))
    return s;
  std::string chosen;
  forEachStmt(s, [&](const Stmt& x) {
    int64_t e = 0;
    if (x.kind == Stmt::Kind::For && x.forKind == ForKind::Serial && constExtent(x, &e) &&
        e >= width && e % width == 0 && containsLoop(x.body) && iterationsIndependent(x) &&
        contiguousIn(x.body, x.var))
      chosen = x.var; // forEachStmt visits outer loops first: the last match is the innermost
  });
  if (chosen.empty())
    return s;
  auto r = vectorizeLoop(s, chosen, width);
  return r.ok() ? *r : s;
}

} // namespace

StmtPtr applyDefaultSchedule(const StmtPtr& body, const LowerOptions& options) {
  return perNest(body, [&](const StmtPtr& nest) {
    StmtPtr s = cacheReductions(nest);
    s = vectorizeInnermost(s, options.vectorWidth);
    s = vectorizeAroundReduction(s, options.vectorWidth);
    s = vectorizeMinMaxReductions(s, options.vectorWidth);
    return parallelizeOutermost(s, options.parallelThreshold);
  });
}

} // namespace fb::cg
