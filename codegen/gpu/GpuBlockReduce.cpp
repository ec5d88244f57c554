// Block-level reductions on the GPU: one block of threads per row of a Softmax, LayerNorm,
// pooling or matrix-vector product, the row's loops split over the block's threads and their
// partial results combined in shared memory.
#include "codegen/gpu/GpuScheduleInternal.h"

#include <limits>
#include <map>
#include <set>

namespace fb::cg::gpu_detail {

StmtPtr unflatten(const std::vector<const Stmt*>& loops, const ExprPtr& flat, StmtPtr body) {
  int64_t stride = 1;
  for (size_t i = loops.size(); i-- > 0;) {
    int64_t lo = 0, extent = 1;
    loops[i]->min->isIntConst(&lo);
    loops[i]->extent->isIntConst(&extent);
    ExprPtr v = stride == 1 ? flat : div(flat, intImm(stride));
    if (i > 0)
      v = binary(BinaryOp::Mod, v, intImm(extent));
    body = substitute(body, loops[i]->var, add(v, intImm(lo)));
    stride *= extent;
  }
  return body;
}

namespace {

/// Rows at most this many are reduced a block per row: more rows fill a GPU one thread each.
constexpr int64_t kMaxBlockRows = 8192;
/// The widest loop of a row must have at least this many iterations to split it over threads.
constexpr int64_t kMinRowWidth = 64;

/// A perfect nest of serial loops with constant bounds: the loops, the body below them and the
/// number of iterations of the body.
struct Nest {
  std::vector<const Stmt*> loops;
  StmtPtr body;
  int64_t iterations = 1;
};

std::optional<Nest> perfectNest(const StmtPtr& s) {
  Nest n;
  StmtPtr cur = s;
  int64_t extent = 0;
  while (cur->kind == Stmt::Kind::For && cur->forKind == ForKind::Serial &&
         cur->min->isIntConst() && cur->extent->isIntConst(&extent) && extent > 0) {
    if (__builtin_mul_overflow(n.iterations, extent, &n.iterations))
      return std::nullopt;
    n.loops.push_back(cur.get());
    cur = cur->body;
  }
  if (n.loops.empty())
    return std::nullopt;
  n.body = cur;
  return n;
}

bool loadsBufferNamed(const ExprPtr& e, const std::string& name) {
  bool found = false;
  forEachLoad(e, [&](const Expr& l) { found |= l.buffer->name == name; });
  return found;
}

/// `acc[0] = acc[0] OP term` (or `term OP acc[0]`) on a one-element local, or ReduceMax's
/// NaN-propagating `term != term ? term : max(acc[0], term)`.
struct Update {
  BufferPtr acc;
  BinaryOp op = BinaryOp::Add;
  ExprPtr term;
  bool nanPropagates = false;

  /// a OP b, propagating a NaN of either side when the update does.
  ExprPtr combine(ExprPtr a, const ExprPtr& b) const {
    ExprPtr step = binary(op, std::move(a), b);
    return nanPropagates ? nanPropagating(b, std::move(step)) : step;
  }
};

std::optional<Update> reductionUpdate(const Stmt& st, const std::set<std::string>& scalars) {
  if (st.kind != Stmt::Kind::Store || st.buffer->kind != Buffer::Kind::Local ||
      !scalars.count(st.buffer->name))
    return std::nullopt;
  ExprPtr nanTerm;
  const Expr* value = nanPropagatingStep(*st.value, &nanTerm);
  if (value && (value->kind != Expr::Kind::Binary ||
                (value->binaryOp != BinaryOp::Max && value->binaryOp != BinaryOp::Min)))
    return std::nullopt;
  if (!value)
    value = st.value.get();
  const Expr& v = *value;
  if (v.kind != Expr::Kind::Binary || (v.binaryOp != BinaryOp::Add && v.binaryOp != BinaryOp::Mul &&
                                       v.binaryOp != BinaryOp::Max && v.binaryOp != BinaryOp::Min))
    return std::nullopt;
  const DType dt = st.buffer->dtype;
  if (dt != DType::F32 && dt != DType::I32 && dt != DType::I64)
    return std::nullopt;
  for (int a = 0; a < 2; ++a) {
    const ExprPtr& acc = v.operands[size_t(a)];
    const ExprPtr& term = v.operands[size_t(1 - a)];
    if (acc->kind == Expr::Kind::Load && acc->buffer->name == st.buffer->name &&
        !loadsBufferNamed(term, st.buffer->name) && (!nanTerm || equal(term, nanTerm)))
      return Update{st.buffer, v.binaryOp, term, nanTerm != nullptr};
  }
  return std::nullopt;
}

/// The value that leaves any x unchanged under op: 0, 1, -inf or the lowest integer, ...
ExprPtr identityOf(BinaryOp op, DType dt) {
  const bool isF = dt == DType::F32;
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t lo =
      dt == DType::I32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  const int64_t hi =
      dt == DType::I32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  switch (op) {
  case BinaryOp::Mul:
    return isF ? floatImm(1) : intImm(1, Type{dt, 1});
  case BinaryOp::Max:
    return isF ? floatImm(-inf) : intImm(lo, Type{dt, 1});
  case BinaryOp::Min:
    return isF ? floatImm(inf) : intImm(hi, Type{dt, 1});
  default:
    return isF ? floatImm(0) : intImm(0, Type{dt, 1});
  }
}

/// e with loads of the named locals going to their shared copies.
ExprPtr toSharedExpr(const ExprPtr& e, const std::map<std::string, BufferPtr>& shared) {
  if (!e)
    return e;
  std::vector<ExprPtr> ops;
  for (const ExprPtr& o : e->operands)
    ops.push_back(toSharedExpr(o, shared));
  auto c = std::make_shared<Expr>(*e);
  c->operands = std::move(ops);
  if (e->kind == Expr::Kind::Load && e->buffer->kind == Buffer::Kind::Local)
    if (auto it = shared.find(e->buffer->name); it != shared.end())
      c->buffer = it->second;
  return c;
}

StmtPtr toShared(const StmtPtr& s, const std::map<std::string, BufferPtr>& shared) {
  if (!s)
    return s;
  auto c = std::make_shared<Stmt>(*s);
  auto ex = [&](const ExprPtr& e) { return toSharedExpr(e, shared); };
  c->min = ex(s->min);
  c->extent = ex(s->extent);
  c->value = ex(s->value);
  c->cond = ex(s->cond);
  for (ExprPtr& i : c->indices)
    i = ex(i);
  if (s->kind == Stmt::Kind::Store && s->buffer->kind == Buffer::Kind::Local)
    if (auto it = shared.find(s->buffer->name); it != shared.end())
      c->buffer = it->second;
  c->body = toShared(s->body, shared);
  c->thenBody = toShared(s->thenBody, shared);
  c->elseBody = toShared(s->elseBody, shared);
  for (StmtPtr& x : c->stmts)
    x = toShared(x, shared);
  return c;
}

/// One step of a row's program.
struct Step {
  enum class Kind { Scalar, Spread, Reduce } kind = Kind::Scalar;
  StmtPtr stmt;
  Nest nest;
  Update update;
};

/// The steps of a row's body, or nullopt when one is not a scalar statement, a loop nest over
/// the row's elements whose iterations are independent, or a reduction into a scalar.
std::optional<std::vector<Step>> stepsOf(const std::vector<StmtPtr>& stmts,
                                         const std::set<std::string>& scalars) {
  std::vector<Step> steps;
  for (const StmtPtr& st : stmts) {
    Step step;
    step.stmt = st;
    if (st->kind == Stmt::Kind::Store) {
      step.kind = Step::Kind::Scalar;
    } else if (st->kind == Stmt::Kind::For) {
      auto nest = perfectNest(st);
      if (!nest)
        return std::nullopt;
      step.nest = *nest;
      if (auto u = reductionUpdate(*nest->body, scalars)) {
        step.kind = Step::Kind::Reduce;
        step.update = *u;
      } else {
        step.kind = Step::Kind::Spread;
        bool writesLocal = false;
        forEachStmt(nest->body, [&](const Stmt& x) {
          writesLocal |= x.kind == Stmt::Kind::Store && x.buffer->kind != Buffer::Kind::Arg &&
                         scalars.count(x.buffer->name);
        });
        std::vector<std::string> vars;
        for (const Stmt* l : nest->loops) {
          if (!threadsIndependent(*l))
            return std::nullopt;
          vars.push_back(l->var);
        }
        if (writesLocal || !writesThroughPlainIndices(nest->body, vars))
          return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

/// The statements of a block's threads in order, with a barrier inserted only where a
/// statement touches what one since the last barrier touched and one of them writes it — unless
/// both run on thread 0 alone, or both spread the same iterations over the threads and access
/// the argument at the same index (each thread then reads its own writes).
class BlockProgramBuilder {
public:
  static constexpr int64_t kThread0 = -1;   ///< runs on thread 0 only
  static constexpr int64_t kAllThreads = 0; ///< every thread, in no pattern known here

  /// `spread`: kThread0, kAllThreads, or the iterations spread over the threads by gpu_r.
  void add(StmtPtr s, int64_t spread) {
    Touches touches = touchesOf(s);
    touches.spread = spread;
    for (const Touches& earlier : m_sinceBarrier)
      if (conflict(earlier, touches)) {
        m_stmts.push_back(barrier());
        m_sinceBarrier.clear();
        break;
      }
    m_sinceBarrier.push_back(std::move(touches));
    m_stmts.push_back(std::move(s));
  }
  /// The statements; with `trailingBarrier`, a barrier after them (a block that goes on to
  /// another row must not overwrite what a slower thread of it still reads).
  StmtPtr take(bool trailingBarrier) {
    if (trailingBarrier && !m_stmts.empty())
      m_stmts.push_back(barrier());
    return block(std::move(m_stmts));
  }

private:
  struct Access {
    std::string buffer; ///< a shared buffer's name, or "#N" for argument N
    const std::vector<ExprPtr>* indices = nullptr;
    bool write = false;
  };
  struct Touches {
    std::vector<Access> accesses;
    int64_t spread = kAllThreads;
  };

  static Touches touchesOf(const StmtPtr& s) {
    Touches t;
    auto key = [](const Buffer& b) {
      return b.kind == Buffer::Kind::Arg ? "#" + std::to_string(b.arg) : b.name;
    };
    auto onLoad = [&](const Expr& l) {
      if (l.buffer->kind != Buffer::Kind::Local)
        t.accesses.push_back({key(*l.buffer), &l.operands, false});
    };
    forEachStmt(s, [&](const Stmt& x) {
      forEachLoad(x.value, onLoad);
      forEachLoad(x.cond, onLoad);
      for (const ExprPtr& i : x.indices)
        forEachLoad(i, onLoad);
      if (x.kind == Stmt::Kind::Store && x.buffer->kind != Buffer::Kind::Local)
        t.accesses.push_back({key(*x.buffer), &x.indices, true});
    });
    return t;
  }

  static bool conflict(const Touches& a, const Touches& b) {
    if (a.spread == kThread0 && b.spread == kThread0)
      return false;
    const bool sameSpread = a.spread > 0 && a.spread == b.spread;
    for (const Access& x : a.accesses)
      for (const Access& y : b.accesses) {
        if (x.buffer != y.buffer || (!x.write && !y.write))
          continue;
        bool sameIndex = sameSpread && x.buffer[0] == '#' && x.indices->size() == y.indices->size();
        for (size_t d = 0; sameIndex && d < x.indices->size(); ++d)
          sameIndex = equal((*x.indices)[d], (*y.indices)[d]);
        if (!sameIndex)
          return true;
      }
    return false;
  }

  std::vector<StmtPtr> m_stmts;
  std::vector<Touches> m_sinceBarrier;
};

} // namespace

std::optional<BlockProgram> blockReduceRows(const std::vector<const Stmt*>& chain,
                                            const StmtPtr& body,
                                            const GpuScheduleOptions& options) {
  if (options.registerTileForced)
    return std::nullopt;
  int64_t rows = 1;
  for (const Stmt* l : chain) {
    int64_t e = 0;
    l->extent->isIntConst(&e);
    rows *= e;
  }
  if (rows < 1 || rows > kMaxBlockRows)
    return std::nullopt;
  std::vector<BufferPtr> scalars;
  std::set<std::string> names;
  StmtPtr cur = body;
  while (true) {
    if (cur->kind == Stmt::Kind::Block && cur->stmts.size() == 1) {
      cur = cur->stmts[0];
      continue;
    }
    if (cur->kind != Stmt::Kind::Alloc || cur->buffer->kind != Buffer::Kind::Local ||
        cur->buffer->numElements() != 1)
      break;
    scalars.push_back(cur->buffer);
    names.insert(cur->buffer->name);
    cur = cur->body;
  }
  auto steps =
      stepsOf(cur->kind == Stmt::Kind::Block ? cur->stmts : std::vector<StmtPtr>{cur}, names);
  if (!steps)
    return std::nullopt;
  int64_t widest = 0;
  bool reduces = false;
  for (const Step& s : *steps) {
    reduces |= s.kind == Step::Kind::Reduce;
    if (s.kind != Step::Kind::Scalar)
      widest = std::max(widest, s.nest.iterations);
  }
  if (!reduces || widest < kMinRowWidth)
    return std::nullopt;
  int64_t threads = 32;
  while (threads < widest && threads * 2 <= options.blockSize)
    threads *= 2;

  std::map<std::string, BufferPtr> shared;
  for (const BufferPtr& b : scalars)
    shared[b->name] = makeSharedBuffer(b->name, b->dtype, {1});
  const ExprPtr t = var("gpu_t");
  BlockProgramBuilder program;
  std::vector<BufferPtr> sharedArrays;
  const ExprPtr isThread0 = binary(BinaryOp::Eq, t, intImm(0));
  for (size_t i = 0; i < steps->size(); ++i) {
    const Step& step = (*steps)[i];
    if (step.kind == Step::Kind::Scalar) {
      program.add(ifThen(isThread0, toShared(step.stmt, shared)), BlockProgramBuilder::kThread0);
      continue;
    }
    // Thread t runs the flattened iterations t, t + threads, ... (neighbouring threads read
    // neighbouring elements). Every spread loop uses the same variables, so that a later step
    // reading what an earlier one wrote at the same index is seen to read its own thread's
    // writes (BlockProgramBuilder).
    const int64_t n = step.nest.iterations;
    auto spread = [&](const StmtPtr& one) {
      StmtPtr inner = unflatten(step.nest.loops, var("gpu_r"), one);
      if (n % threads != 0)
        inner = ifThen(binary(BinaryOp::Lt, var("gpu_r"), intImm(n)), inner);
      if (n <= threads)
        return let("gpu_r", t, inner);
      return forRange("gpu_q", (n + threads - 1) / threads,
                      let("gpu_r", add(mul(var("gpu_q"), intImm(threads)), t), inner));
    };
    if (step.kind == Step::Kind::Spread) {
      program.add(spread(toShared(step.nest.body, shared)), n);
      continue;
    }
    // A reduction: each thread's partial result in a register, then a tree over shared memory
    // whose last level thread 0 folds into the result.
    const Update& u = step.update;
    const DType dt = u.acc->dtype;
    BufferPtr part = makeLocalBuffer("part" + std::to_string(i), dt, {1});
    BufferPtr red = makeSharedBuffer("red" + std::to_string(i), dt, {threads});
    sharedArrays.push_back(red);
    StmtPtr update =
        store(part, {intImm(0)}, u.combine(load(part, {intImm(0)}), toSharedExpr(u.term, shared)),
              step.nest.body->comment);
    program.add(alloc(part, block({store(part, {intImm(0)}, identityOf(u.op, dt)), spread(update),
                                   store(red, {t}, load(part, {intImm(0)}))})),
                n);
    for (int64_t half = threads / 2; half >= 2; half /= 2)
      program.add(
          ifThen(binary(BinaryOp::Lt, t, intImm(half)),
                 store(red, {t}, u.combine(load(red, {t}), load(red, {add(t, intImm(half))})))),
          BlockProgramBuilder::kAllThreads);
    const BufferPtr& acc = shared.at(u.acc->name);
    program.add(ifThen(isThread0,
                       store(acc, {intImm(0)},
                             u.combine(load(acc, {intImm(0)}),
                                       u.combine(load(red, {intImm(0)}), load(red, {intImm(1)}))))),
                BlockProgramBuilder::kThread0);
  }
  StmtPtr blockBody = forLoop("gpu_t", intImm(0), intImm(threads), ForKind::GpuLanes,
                              program.take(rows > options.maxBlocks), "the threads of a block");
  for (const BufferPtr& b : sharedArrays)
    blockBody = alloc(b, blockBody);
  for (size_t i = scalars.size(); i-- > 0;)
    blockBody = alloc(shared.at(scalars[i]->name), blockBody);
  blockBody = unflatten(chain, var("gpu_row"), blockBody);
  return BlockProgram{
      forLoop("gpu_row", intImm(0), intImm(rows), ForKind::GpuBlocks, blockBody, "a block per row"),
      int(threads)};
}

} // namespace fb::cg::gpu_detail
