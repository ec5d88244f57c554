// Shared-memory tiling of matrix products and convolutions on the GPU: a block computes a
// 64x64 tile of outputs, each of its 256 threads a 4x4 register tile, and the two operands
// pass through shared memory 16 reduction steps at a time, loaded cooperatively (neighbouring
// threads load neighbouring elements) between two barriers.
#include "codegen/gpu/GpuScheduleInternal.h"

#include <algorithm>

namespace fb::cg::gpu_detail {

namespace {

constexpr int64_t kTile = 64;                  ///< outputs per block along each side
constexpr int64_t kStep = 16;                  ///< reduction steps staged per round
constexpr int64_t kThreadTile = 4;             ///< outputs per thread along each side
constexpr int64_t kSide = kTile / kThreadTile; ///< threads per block along each side (16)
constexpr int64_t kThreads = kSide * kSide;    ///< 256
/// Fewer output tiles than this leave most of a GPU's multiprocessors idle: such a product runs
/// as threads over outputs instead (a deep layer on an 8x8 image is 2 tiles, 8,192 outputs).
constexpr int64_t kMinTiles = 16;
/// A convolution with a window (3x3 and the like) stages its input tile through an im2col index
/// per element, and its reduction is long (9 Cin): such a tile program pays for its few blocks
/// unless they fill a large GPU's multiprocessors (132 on an H100/H200). Measured on an H200
/// (2026-11-27, torchvision ResNet-18/50 at 224x224, kernel times by CUDA events), tiles against
/// one output per thread: 196 tiles (the 7x7 stem) 35 vs 55 us; 49 tiles (56x56x64, 3x3) 65 vs
/// 49; 26 tiles 122 vs 60; 16 tiles 242 vs 97. 1x1 convolutions and matrix products keep tiles
/// from kMinTiles on (16 tiles of a 1x1 1024->256 layer: 84 vs 98 us).
constexpr int64_t kMinWindowedTiles = 128;

bool usesAny(const ExprPtr& e, const std::vector<const Stmt*>& loops) {
  for (const Stmt* l : loops)
    if (usesVar(e, l->var))
      return true;
  return false;
}

/// The loops of `loops` whose variables e uses.
std::vector<const Stmt*> usedBy(const ExprPtr& e, const std::vector<const Stmt*>& loops) {
  std::vector<const Stmt*> out;
  for (const Stmt* l : loops)
    if (usesVar(e, l->var))
      out.push_back(l);
  return out;
}

int64_t extentOf(const std::vector<const Stmt*>& loops) {
  int64_t n = 1;
  for (const Stmt* l : loops) {
    int64_t e = 1;
    l->extent->isIntConst(&e);
    n *= e;
  }
  return n;
}

bool hasLoad(const ExprPtr& e) {
  bool found = false;
  forEachLoad(e, [&](const Expr&) { found = true; });
  return found;
}

/// The body below the chain taken apart: `acc[0] = init; for r...: [if cond:] acc[0] += a * b;
/// epilogue...` with `a` depending on the rows' loops and `b` on the columns' loops (and both on
/// the reduction loops).
struct Product {
  BufferPtr acc;
  ExprPtr init;
  std::vector<const Stmt*> reduction; ///< the reduction's loops, outermost first
  ExprPtr a, b;                       ///< the factors
  ExprPtr condA, condB; ///< where a factor is defined (a convolution's padding), or null
  std::vector<const Stmt*> rows, cols; ///< the chain's loops only a, only b depends on
  std::vector<StmtPtr> epilogue;       ///< what follows the reduction (reads acc)
};

std::optional<Product> productOf(const StmtPtr& body, const std::vector<const Stmt*>& chain) {
  StmtPtr cur = body;
  while (cur->kind == Stmt::Kind::Block && cur->stmts.size() == 1)
    cur = cur->stmts[0];
  if (cur->kind != Stmt::Kind::Alloc || cur->buffer->kind != Buffer::Kind::Local ||
      cur->buffer->numElements() != 1 || cur->buffer->dtype != DType::F32)
    return std::nullopt;
  Product p;
  p.acc = cur->buffer;
  const std::string& acc = p.acc->name;
  StmtPtr inner = cur->body;
  if (inner->kind != Stmt::Kind::Block || inner->stmts.size() < 3)
    return std::nullopt;
  const std::vector<StmtPtr>& stmts = inner->stmts;
  // acc[0] = init, not reading acc.
  const Stmt& init = *stmts[0];
  if (init.kind != Stmt::Kind::Store || init.buffer->name != acc)
    return std::nullopt;
  bool readsAcc = false;
  forEachLoad(init.value, [&](const Expr& l) { readsAcc |= l.buffer->name == acc; });
  if (readsAcc)
    return std::nullopt;
  p.init = init.value;
  // The reduction: a perfect nest of constant loops.
  StmtPtr nest = stmts[1];
  while (nest->kind == Stmt::Kind::For && nest->forKind == ForKind::Serial &&
         nest->min->isIntConst() && nest->extent->isIntConst()) {
    p.reduction.push_back(nest.get());
    nest = nest->body;
  }
  if (p.reduction.empty())
    return std::nullopt;
  ExprPtr cond;
  if (nest->kind == Stmt::Kind::If && !nest->elseBody) {
    cond = nest->cond;
    nest = nest->thenBody;
  }
  if (nest->kind != Stmt::Kind::Store || nest->buffer->name != acc)
    return std::nullopt;
  const Expr& v = *nest->value;
  if (v.kind != Expr::Kind::Binary || v.binaryOp != BinaryOp::Add)
    return std::nullopt;
  ExprPtr prod;
  for (int s = 0; s < 2; ++s)
    if (v.operands[size_t(s)]->kind == Expr::Kind::Load &&
        v.operands[size_t(s)]->buffer->name == acc)
      prod = v.operands[size_t(1 - s)];
  if (!prod || prod->kind != Expr::Kind::Binary || prod->binaryOp != BinaryOp::Mul)
    return std::nullopt;
  ExprPtr f0 = prod->operands[0], f1 = prod->operands[1];
  // Each factor reads memory, depends on the reduction and on one side of the outputs.
  // Loops both factors use (a batch) are not a side: each block has one value of them.
  std::vector<const Stmt*> s0 = usedBy(f0, chain), s1 = usedBy(f1, chain), only0, only1;
  for (const Stmt* l : s0)
    if (std::find(s1.begin(), s1.end(), l) == s1.end())
      only0.push_back(l);
  for (const Stmt* l : s1)
    if (std::find(s0.begin(), s0.end(), l) == s0.end())
      only1.push_back(l);
  if (!hasLoad(f0) || !hasLoad(f1) || !usesAny(f0, p.reduction) || !usesAny(f1, p.reduction) ||
      only0.empty() || only1.empty())
    return std::nullopt;
  // The columns are the side with the chain's innermost loop (stores along it are contiguous).
  const bool f0IsColumns = std::find(only0.begin(), only0.end(), chain.back()) != only0.end();
  p.a = f0IsColumns ? f1 : f0;
  p.b = f0IsColumns ? f0 : f1;
  p.rows = f0IsColumns ? only1 : only0;
  p.cols = f0IsColumns ? only0 : only1;
  if (cond) {
    // A bounds condition (a convolution's padding) goes with the one side it depends on.
    const bool onA = !usesAny(cond, p.cols);
    const bool onB = !usesAny(cond, p.rows);
    if (onB)
      p.condB = cond;
    else if (onA)
      p.condA = cond;
    else
      return std::nullopt;
  }
  for (size_t i = 2; i < stmts.size(); ++i) {
    bool loop = false;
    forEachStmt(stmts[i], [&](const Stmt& x) { loop |= x.kind == Stmt::Kind::For; });
    if (loop || stmts[i]->kind != Stmt::Kind::Store)
      return std::nullopt;
    p.epilogue.push_back(stmts[i]);
  }
  return p;
}

ExprPtr lt(const ExprPtr& a, int64_t b) {
  return binary(BinaryOp::Lt, a, intImm(b));
}
ExprPtr both(const ExprPtr& a, const ExprPtr& b) {
  if (!a)
    return b;
  return b ? binary(BinaryOp::And, a, b) : a;
}
ExprPtr divC(const ExprPtr& a, int64_t b) {
  return b == 1 ? a : div(a, intImm(b));
}
ExprPtr modC(const ExprPtr& a, int64_t b) {
  return binary(BinaryOp::Mod, a, intImm(b));
}

} // namespace

std::optional<BlockProgram> tileThroughSharedMemory(const std::vector<const Stmt*>& chain,
                                                    const StmtPtr& body,
                                                    const GpuScheduleOptions& options) {
  if (options.registerTileForced || options.blockSize < kThreads)
    return std::nullopt;
  auto p = productOf(body, chain);
  if (!p)
    return std::nullopt;
  const std::vector<const Stmt*>& rows = p->rows;
  const std::vector<const Stmt*>& cols = p->cols;
  std::vector<const Stmt*> outer; // in both factors or neither (a batch): a block each
  for (const Stmt* l : chain)
    if (std::find(rows.begin(), rows.end(), l) == rows.end() &&
        std::find(cols.begin(), cols.end(), l) == cols.end())
      outer.push_back(l);
  const int64_t m = extentOf(rows), n = extentOf(cols), k = extentOf(p->reduction);
  const int64_t batch = extentOf(outer);
  if (m < kTile || n < kTile || k < kStep)
    return std::nullopt;
  const int64_t tilesM = (m + kTile - 1) / kTile, tilesN = (n + kTile - 1) / kTile;
  const int64_t steps = (k + kStep - 1) / kStep;
  int64_t windowLoops = 0; // reduction loops besides the channels' (a kernel window's)
  for (const Stmt* l : p->reduction)
    windowLoops += extentOf({l}) > 1 ? 1 : 0;
  const bool windowed = windowLoops > 1;
  if (batch * tilesM * tilesN < (windowed ? kMinWindowedTiles : kMinTiles))
    return std::nullopt;

  const ExprPtr blk = var("gpu_blk"), t = var("gpu_t"), k0 = var(kSharedTileRoundVar);
  const ExprPtr m0 = mul(modC(divC(blk, tilesN), tilesM), intImm(kTile));
  const ExprPtr n0 = mul(modC(blk, tilesN), intImm(kTile));
  const ExprPtr ty = divC(t, kSide), tx = modC(t, kSide);
  BufferPtr as = makeSharedBuffer("A_tile", DType::F32, {kStep, kTile});
  BufferPtr bs = makeSharedBuffer("B_tile", DType::F32, {kStep, kTile});
  BufferPtr acc = makeLocalBuffer("acc", DType::F32, {kThreadTile, kThreadTile});

  // One operand's tile, loaded by all threads: element e = t + 256 v of the tile.
  // Where `guard` is false the value is not read (it may lie outside its tensor) and 0 stored.
  auto guarded = [](const BufferPtr& buf, std::vector<ExprPtr> idx, const ExprPtr& value,
                    const ExprPtr& guard) {
    if (!guard)
      return store(buf, idx, value);
    return ifThen(guard, store(buf, idx, value), store(buf, idx, floatImm(0)));
  };
  auto stage = [&](const BufferPtr& tile, const ExprPtr& factor, const ExprPtr& cond,
                   const std::vector<const Stmt*>& side, int64_t sideExtent, bool stepFastest) {
    // Element e = t + 256 v, split as (t + 256 v) % 16 = t % 16 (or % 64) since 256 is a
    // multiple of both: one of the two coordinates is the same for all of a thread's four
    // elements, so their index arithmetic (a convolution's pixel and padding test, or a weight
    // row's reduction index) is computed once per round, not four times, and holds fewer
    // registers across the reduction loop.
    static_assert(kThreads % kStep == 0 && kThreads % kTile == 0);
    const ExprPtr v = var("gpu_v");
    const ExprPtr kk =
        stepFastest ? modC(t, kStep) : add(divC(t, kTile), mul(v, intImm(kThreads / kTile)));
    const ExprPtr xx =
        stepFastest ? add(divC(t, kStep), mul(v, intImm(kThreads / kStep))) : modC(t, kTile);
    // Rows (columns) of a partial tile past the operand's edge only feed outputs that are not
    // stored: they load the last row (column) again rather than test a condition, which LLVM
    // would hoist out of the reduction loop and keep alive in a predicate register for all of it
    // (ptxas then spills predicates).
    ExprPtr x = add(tile == as ? m0 : n0, var("gpu_xx"));
    if (sideExtent % kTile != 0)
      x = min(x, intImm(sideExtent - 1));
    const ExprPtr kr = add(mul(k0, intImm(kStep)), var("gpu_kk"));
    ExprPtr guard;
    if (k % kStep != 0)
      guard = lt(kr, k);
    // Past the reduction's end (or in a convolution's padding) the tile holds 0: its products
    // are 0.
    StmtPtr put = guarded(tile, {var("gpu_kk"), var("gpu_xx")}, factor, both(guard, cond));
    put = unflatten(side, x, put);
    put = unflatten(p->reduction, kr, put);
    return forRange("gpu_v", kStep * kTile / kThreads, let("gpu_kk", kk, let("gpu_xx", xx, put)),
                    ForKind::Unrolled);
  };
  // Each thread's 4x4 outputs: rows ty*4 + r, columns tx*4 + c of the block's tile.
  const ExprPtr r = var("gpu_i"), c = var("gpu_j");
  auto perOutput = [&](StmtPtr s) {
    return forRange("gpu_i", kThreadTile, forRange("gpu_j", kThreadTile, s, ForKind::Unrolled),
                    ForKind::Unrolled);
  };
  const ExprPtr row = add(m0, add(mul(ty, intImm(kThreadTile)), r));
  const ExprPtr col = add(n0, add(mul(tx, intImm(kThreadTile)), c));
  ExprPtr inside;
  if (m % kTile != 0)
    inside = lt(row, m);
  if (n % kTile != 0)
    inside = both(inside, lt(col, n));
  auto atOutput = [&](StmtPtr s, const ExprPtr& atRow, const ExprPtr& atCol) {
    s = unflatten(rows, atRow, s);
    s = unflatten(cols, atCol, s);
    return s;
  };
  // acc = the reduction's initial value (a bias); outside the output at the nearest output
  // (never stored, and no condition kept alive in a register across the reduction).
  StmtPtr initOne = atOutput(store(acc, {r, c}, p->init), m % kTile ? min(row, intImm(m - 1)) : row,
                             n % kTile ? min(col, intImm(n - 1)) : col);
  const ExprPtr aVal = load(as, {var("gpu_kk"), add(mul(ty, intImm(kThreadTile)), r)});
  const ExprPtr bVal = load(bs, {var("gpu_kk"), add(mul(tx, intImm(kThreadTile)), c)});
  StmtPtr compute = forRange(
      "gpu_kk", kStep, perOutput(store(acc, {r, c}, add(load(acc, {r, c}), mul(aVal, bVal)))));
  StmtPtr round = block({stage(as, p->a, p->condA, rows, m, true),
                         stage(bs, p->b, p->condB, cols, n, false), barrier(), compute, barrier()});
  // The epilogue of each output through its own one-element accumulator, as lowered.
  std::vector<StmtPtr> epi{store(p->acc, {intImm(0)}, load(acc, {r, c}))};
  for (const StmtPtr& s : p->epilogue)
    epi.push_back(s);
  StmtPtr finish = atOutput(alloc(p->acc, block(std::move(epi))), row, col);
  if (inside)
    finish = ifThen(inside, finish);
  StmtPtr thread = alloc(
      acc,
      block({perOutput(initOne), forRange(kSharedTileRoundVar, steps, round), perOutput(finish)}));
  StmtPtr lanes = forLoop("gpu_t", intImm(0), intImm(kThreads), ForKind::GpuLanes, thread,
                          "16x16 threads, 4x4 outputs each");
  StmtPtr blockBody = alloc(as, alloc(bs, lanes));
  blockBody = unflatten(outer, divC(blk, tilesM * tilesN), blockBody);
  return BlockProgram{forLoop("gpu_blk", intImm(0), intImm(batch * tilesM * tilesN),
                              ForKind::GpuBlocks, blockBody, kSharedTileComment),
                      int(kThreads)};
}

} // namespace fb::cg::gpu_detail
