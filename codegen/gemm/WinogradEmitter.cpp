// The Winograd F(m×m, 3×3) kernel (see Winograd.h): per chunk of tiles, the input transform
// writes V = Bᵀ d B as the GEMMs' A panels, the alpha² GEMMs run on the generator's
// micro-kernels, and the output transform Y = Aᵀ M A applies bias and epilogue and stores.
#include "codegen/gemm/GemmIrBuilder.h"
#include "codegen/gemm/Winograd.h"

#include <llvm/IR/Intrinsics.h>

#include <algorithm>

namespace fb::cg {

using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using gemmir::emitFor;
using gemmir::emitMin;
using gemmir::floatGep;
using gemmir::GemmIrContext;
using gemmir::loadArg;
using llvm::Value;

namespace {

constexpr int kLanes = 8;
/// Input channels per work item of the input transform: neighbouring channels' values share
/// cache lines of the A panels, so one thread writes them all.
constexpr int64_t kChannelsPerItem = 8;

/// Work items of the input transform (blocks of channels) and of the output transform (runs
/// of one tile row's worth of tiles: tiles side by side write the same output cache lines).
int64_t inputItems(const ConvGeometry& cv) {
  return (cv.inChannels + kChannelsPerItem - 1) / kChannelsPerItem;
}
int64_t tilesPerOutputItem(const ConvGeometry& cv, const WinogradLayout& w) {
  return std::min<int64_t>(w.chunkTiles, std::max<int64_t>(8, (cv.outW + w.m - 1) / w.m));
}

/// L X Lᵀ on a q×q matrix of vectors (row-major) for the p×q matrix L: out[i][j] =
/// Σ_k Σ_l L[i][k] X[k][l] L[j][l], skipping zero coefficients and multiplying by ±1 as adds.
std::vector<Value*> sandwich(GemmIrContext& c, IRBuilder<>& b, const std::vector<Value*>& x, int q,
                             const std::vector<double>& l, int p) {
  auto combine = [&](auto term, auto coefficient) -> Value* {
    Value* acc = nullptr;
    for (int k = 0; k < q; ++k) {
      double w = coefficient(k);
      if (w == 0)
        continue;
      Value* v = term(k);
      if (!acc)
        acc = w == 1 ? v : w == -1 ? b.CreateFNeg(v) : b.CreateFMul(v, c.vf(float(w)));
      else if (w == 1)
        acc = b.CreateFAdd(acc, v);
      else if (w == -1)
        acc = b.CreateFSub(acc, v);
      else
        acc = b.CreateIntrinsic(Intrinsic::fmuladd, {c.v8f32}, {v, c.vf(float(w)), acc});
    }
    return acc ? acc : c.vf(0.0f);
  };
  std::vector<Value*> t(size_t(p * q)), out(size_t(p * p));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < q; ++j)
      t[size_t(i * q + j)] = combine([&](int k) { return x[size_t(k * q + j)]; },
                                     [&](int k) { return l[size_t(i * q + k)]; });
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j)
      out[size_t(i * p + j)] = combine([&](int k) { return t[size_t(i * q + k)]; },
                                       [&](int k) { return l[size_t(j * q + k)]; });
  return out;
}

Value* laneIds(Type* elem) {
  SmallVector<Constant*, kLanes> lanes;
  for (int l = 0; l < kLanes; ++l)
    lanes.push_back(ConstantInt::get(elem, l));
  return ConstantVector::get(lanes);
}

/// The m output pixels of one tile row, each a vector of 8 channels, as 8 vectors of m pixels,
/// one per channel (m = 2 or 4), so a whole tile row of a channel is one store: for m = 2
/// unpacks of the two rows, for m = 4 the 4×4 transposes within 128-bit halves.
std::vector<Value*> rowsToChannels(IRBuilder<>& b, const std::vector<Value*>& rows) {
  std::vector<Value*> channels(kLanes);
  if (rows.size() == 2) {
    Value* lo = b.CreateShuffleVector(rows[0], rows[1], ArrayRef<int>{0, 8, 1, 9, 4, 12, 5, 13});
    Value* hi = b.CreateShuffleVector(rows[0], rows[1], ArrayRef<int>{2, 10, 3, 11, 6, 14, 7, 15});
    // lo holds channels 0, 1, 4, 5 as pairs, hi channels 2, 3, 6, 7.
    const int order[] = {0, 1, 4, 5, 2, 3, 6, 7};
    for (int q = 0; q < 8; ++q)
      channels[size_t(order[q])] =
          b.CreateShuffleVector(q < 4 ? lo : hi, ArrayRef<int>{2 * (q % 4), 2 * (q % 4) + 1});
    return channels;
  }
  // u[k] holds channel k in its low half and channel k + 4 in its high half.
  std::array<Value*, 4> u = gemmir::transposeLanes4x4(b, {rows[0], rows[1], rows[2], rows[3]}, 8);
  for (int k = 0; k < 4; ++k) {
    channels[size_t(k)] = b.CreateShuffleVector(u[size_t(k)], ArrayRef<int>{0, 1, 2, 3});
    channels[size_t(k + 4)] = b.CreateShuffleVector(u[size_t(k)], ArrayRef<int>{4, 5, 6, 7});
  }
  return channels;
}

/// The inverse of rowsToChannels: 8 channels' m pixels as m vectors of 8 channels.
std::vector<Value*> channelsToRows(IRBuilder<>& b, const std::vector<Value*>& ch) {
  if (cast<FixedVectorType>(ch[0]->getType())->getNumElements() == 2) {
    auto pairs = [&](int a, int c) {
      return b.CreateShuffleVector(ch[size_t(a)], ch[size_t(c)], ArrayRef<int>{0, 1, 2, 3});
    };
    Value* lo = gemmir::concatLanes(b, {pairs(0, 1), pairs(4, 5)});
    Value* hi = gemmir::concatLanes(b, {pairs(2, 3), pairs(6, 7)});
    return {b.CreateShuffleVector(lo, hi, ArrayRef<int>{0, 2, 8, 10, 4, 6, 12, 14}),
            b.CreateShuffleVector(lo, hi, ArrayRef<int>{1, 3, 9, 11, 5, 7, 13, 15})};
  }
  // Channels k and k + 4 side by side; the in-half 4×4 transpose is its own inverse.
  std::array<Value*, 4> u;
  for (int k = 0; k < 4; ++k)
    u[size_t(k)] = gemmir::concatLanes(b, {ch[size_t(k)], ch[size_t(k + 4)]});
  std::array<Value*, 4> rows = gemmir::transposeLanes4x4(b, u, 8);
  return {rows.begin(), rows.end()};
}

/// The geometry both transforms share.
struct Tiling {
  int m = 4, alpha = 6;
  int64_t tilesH = 0, tilesW = 0, tiles = 0, chunkTiles = 0;
};

Tiling tilingOf(const ConvGeometry& cv, const WinogradLayout& w) {
  Tiling t;
  t.m = w.m;
  t.alpha = w.m + 2;
  t.tilesH = (cv.outH + w.m - 1) / w.m;
  t.tilesW = (cv.outW + w.m - 1) / w.m;
  t.tiles = cv.batch * t.tilesH * t.tilesW;
  t.chunkTiles = w.chunkTiles;
  return t;
}

/// `<kernel>.wgInput(args, begin, end)`: for blocks [begin, end) of kChannelsPerItem input
/// channels, every 8 tiles of the
/// chunk: gather the alpha×alpha patches (zero outside the image and past the last tile),
/// transform, and store each ξ's 8 values into the A panels of GEMM ξ (K-block-major, as
/// emitItems reads a pre-packed A).
Function* emitInputTransform(GemmIrContext& c, const WinogradLayout& w, const GemmPlan& gp) {
  const ConvGeometry& cv = *c.spec.conv;
  const WinogradMatrices& mats = winogradMatrices(w.m);
  const Tiling tl = tilingOf(cv, w);
  const int alpha = tl.alpha;
  Function* f = gemmir::makeItemsFunction(c, "wgInput");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* x = loadArg(b, argv, c.spec.bArg, "X");
  Value* v = loadArg(b, argv, w.vArg, "V");
  Value* chunk = b.CreateLoad(c.i64, loadArg(b, argv, w.chunkArg, "chunk.at"), "chunk");
  Value* tile0 = b.CreateTrunc(b.CreateMul(chunk, c.c64(tl.chunkTiles)), c.i32, "tile0");
  auto splat = [&](int64_t k) { return b.CreateVectorSplat(kLanes, ConstantInt::get(c.i32, k)); };
  const int64_t sliceFloats = gp.aPanels * gp.K * gp.mr;
  Value* ciBegin = b.CreateMul(f->getArg(1), c.c64(kChannelsPerItem));
  Value* ciEnd =
      emitMin(b, c.c64(cv.inChannels), b.CreateMul(f->getArg(2), c.c64(kChannelsPerItem)));
  // Tiles outer, the item's channels inner: the channels' values of one panel row are adjacent
  // (K-block-major panels), so the item fills whole cache lines of V in quick succession (with
  // channels outer, each 32-byte store met a line evicted since its other half was written),
  // and the tiles' patch offsets and masks are computed once for all channels.
  emitFor(b, c.c64(0), c.c64(tl.chunkTiles / kLanes), c.c64(1), "group", [&](Value* group) {
    Value* t0 = b.CreateMul(group, c.c64(kLanes), "t0");
    Value* tile =
        b.CreateAdd(b.CreateVectorSplat(kLanes, b.CreateAdd(tile0, b.CreateTrunc(t0, c.i32))),
                    laneIds(c.i32), "tile");
    Value* valid = b.CreateICmpULT(tile, splat(tl.tiles), "valid");
    Value* image = b.CreateUDiv(tile, splat(tl.tilesH * tl.tilesW));
    Value* inImage = b.CreateURem(tile, splat(tl.tilesH * tl.tilesW));
    Value* ty = b.CreateUDiv(inImage, splat(tl.tilesW));
    Value* tx = b.CreateURem(inImage, splat(tl.tilesW));
    Value* ih0 = b.CreateSub(b.CreateMul(ty, splat(tl.m)), splat(cv.padTop), "ih0");
    Value* iw0 = b.CreateSub(b.CreateMul(tx, splat(tl.m)), splat(cv.padLeft), "iw0");
    Value* base = b.CreateMul(image, splat(cv.inChannels * cv.inH * cv.inW), "base");
    // Per patch element: its offset in channel 0 and whether it lies inside the image. Lanes
    // outside read element 0 of the channel (always mapped) with their mask off.
    std::vector<Value*> offsets(size_t(alpha * alpha)), inside(size_t(alpha * alpha));
    for (int r = 0; r < alpha; ++r) {
      Value* ih = b.CreateAdd(ih0, splat(r));
      Value* rowOk = b.CreateAnd(valid, b.CreateICmpULT(ih, splat(cv.inH)));
      Value* row = b.CreateAdd(base, b.CreateMul(ih, splat(cv.inW)));
      for (int q = 0; q < alpha; ++q) {
        Value* iw = b.CreateAdd(iw0, splat(q));
        Value* ok = b.CreateAnd(rowOk, b.CreateICmpULT(iw, splat(cv.inW)), "inside");
        inside[size_t(r * alpha + q)] = ok;
        offsets[size_t(r * alpha + q)] =
            b.CreateSExt(b.CreateSelect(ok, b.CreateAdd(row, iw), splat(0)),
                         FixedVectorType::get(c.i64, kLanes));
      }
    }
    emitFor(b, ciBegin, ciEnd, c.c64(1), "ci", [&](Value* ci) {
      Value* pc = b.CreateMul(b.CreateUDiv(ci, c.c64(gp.kc)), c.c64(gp.kc), "pc");
      Value* kLen = emitMin(b, c.c64(gp.kc), b.CreateSub(c.c64(gp.K), pc));
      Value* vBase = b.CreateAdd(b.CreateMul(pc, c.c64(gp.aPanels * gp.mr)),
                                 b.CreateMul(b.CreateSub(ci, pc), c.c64(gp.mr)), "v.base");
      Value* plane = floatGep(b, x, b.CreateMul(ci, c.c64(cv.inH * cv.inW)));
      std::vector<Value*> d(size_t(alpha * alpha));
      for (int e = 0; e < alpha * alpha; ++e)
        d[size_t(e)] = b.CreateMaskedGather(c.v8f32, b.CreateGEP(c.f32, plane, offsets[size_t(e)]),
                                            Align(4), inside[size_t(e)], c.vf(0.0f), "d");
      std::vector<Value*> transformed = sandwich(c, b, d, alpha, mats.bt, alpha);
      // Tiles t0 .. t0+7 of the chunk: one whole A panel (mr = 8) or two (mr = 4).
      Value* panel = b.CreateUDiv(t0, c.c64(gp.mr));
      Value* at = b.CreateAdd(vBase, b.CreateMul(panel, b.CreateMul(kLen, c.c64(gp.mr))));
      Value* nextPanel = b.CreateMul(kLen, c.c64(gp.mr));
      for (int xi = 0; xi < alpha * alpha; ++xi) {
        Value* dst = floatGep(b, v, b.CreateAdd(at, c.c64(xi * sliceFloats)));
        Value* val = transformed[size_t(xi)];
        if (gp.mr == kLanes) {
          b.CreateAlignedStore(val, dst, Align(4));
        } else {
          b.CreateAlignedStore(b.CreateShuffleVector(val, ArrayRef<int>{0, 1, 2, 3}), dst,
                               Align(4));
          b.CreateAlignedStore(b.CreateShuffleVector(val, ArrayRef<int>{4, 5, 6, 7}),
                               floatGep(b, dst, nextPanel), Align(4));
        }
      }
    });
  });
  b.CreateRetVoid();
  return f;
}

/// `<kernel>.wgOutput(args, begin, end)`: for runs [begin, end) of tilesPerOutputItem tiles of
/// the chunk, every 8 output
/// channels: load the alpha² products, transform to the m×m outputs, apply alpha, bias and the
/// epilogue, and store (a whole tile: each channel's tile rows as vectors, transposed in
/// registers; at the image's right and bottom edges and in a partial channel block: a masked
/// scatter of each pixel's channels).
Function* emitOutputTransform(GemmIrContext& c, const WinogradLayout& w) {
  const GemmSpec& s = c.spec;
  const ConvGeometry& cv = *s.conv;
  const WinogradMatrices& mats = winogradMatrices(w.m);
  const Tiling tl = tilingOf(cv, w);
  const int alpha = tl.alpha, m = tl.m;
  const int64_t cout = cv.outChannels, hw = cv.outH * cv.outW;
  Function* f = gemmir::makeItemsFunction(c, "wgOutput");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* products = loadArg(b, argv, w.mArg, "M");
  Value* y = loadArg(b, argv, s.cArg, "Y");
  Value* bias = s.bias == GemmSpec::Bias::PerRow ? loadArg(b, argv, s.biasArg, "bias") : nullptr;
  std::vector<Value*> residual(c.kernel.args.size(), nullptr);
  for (const EpilogueOp& op : s.epilogue)
    if ((op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) &&
        !residual[size_t(op.arg)])
      residual[size_t(op.arg)] = loadArg(b, argv, op.arg, "residual");
  Value* chunk = b.CreateLoad(c.i64, loadArg(b, argv, w.chunkArg, "chunk.at"), "chunk");
  Value* tile0 = b.CreateMul(chunk, c.c64(tl.chunkTiles), "tile0");
  Value* laneOffsets =
      b.CreateMul(laneIds(c.i64), b.CreateVectorSplat(kLanes, c.c64(hw)), "lane.offsets");
  const int64_t productStride = tl.chunkTiles * cout; // from one ξ to the next

  const int64_t perItem = tilesPerOutputItem(cv, w);
  Value* tBegin = b.CreateMul(f->getArg(1), c.c64(perItem));
  Value* tEnd = emitMin(b, c.c64(tl.chunkTiles), b.CreateMul(f->getArg(2), c.c64(perItem)));
  emitFor(b, tBegin, tEnd, c.c64(1), "t", [&](Value* t) {
    Value* tile = b.CreateAdd(tile0, t, "tile");
    BasicBlock* live = BasicBlock::Create(c.ctx, "tile.live", f);
    BasicBlock* next = BasicBlock::Create(c.ctx, "tile.next", f);
    b.CreateCondBr(b.CreateICmpULT(tile, c.c64(tl.tiles)), live, next);
    b.SetInsertPoint(live);
    Value* image = b.CreateUDiv(tile, c.c64(tl.tilesH * tl.tilesW));
    Value* inImage = b.CreateURem(tile, c.c64(tl.tilesH * tl.tilesW));
    Value* oh0 = b.CreateMul(b.CreateUDiv(inImage, c.c64(tl.tilesW)), c.c64(m), "oh0");
    Value* ow0 = b.CreateMul(b.CreateURem(inImage, c.c64(tl.tilesW)), c.c64(m), "ow0");
    Value* whole = b.CreateAnd(b.CreateICmpSLE(b.CreateAdd(oh0, c.c64(m)), c.c64(cv.outH)),
                               b.CreateICmpSLE(b.CreateAdd(ow0, c.c64(m)), c.c64(cv.outW)));
    Value* pixel0 = b.CreateAdd(b.CreateMul(image, c.c64(cout * hw)),
                                b.CreateAdd(b.CreateMul(oh0, c.c64(cv.outW)), ow0), "pixel0");
    Value* rowOfTile = b.CreateMul(t, c.c64(cout), "row.of.tile");

    // One block of 8 output channels from co0; `masked`: the last, partial block.
    auto emitBlock = [&](Value* co0, bool masked, bool edge) {
      Value* coMask = nullptr;
      if (masked)
        coMask = b.CreateICmpSLT(laneIds(c.i32),
                                 b.CreateVectorSplat(kLanes, ConstantInt::get(c.i32, cout % 8)));
      std::vector<Value*> mv(size_t(alpha * alpha));
      for (int xi = 0; xi < alpha * alpha; ++xi) {
        Value* at = floatGep(b, products,
                             b.CreateAdd(b.CreateAdd(rowOfTile, co0), c.c64(xi * productStride)));
        mv[size_t(xi)] =
            masked
                ? static_cast<Value*>(b.CreateMaskedLoad(c.v8f32, at, Align(4), coMask, c.vf(0.0f)))
                : b.CreateAlignedLoad(c.v8f32, at, Align(4));
      }
      std::vector<Value*> out = sandwich(c, b, mv, alpha, mats.at, m);
      Value* biasVec = nullptr;
      if (bias) {
        Value* at = floatGep(b, bias, co0);
        biasVec =
            masked
                ? static_cast<Value*>(b.CreateMaskedLoad(c.v8f32, at, Align(4), coMask, c.vf(0.0f)))
                : b.CreateAlignedLoad(c.v8f32, at, Align(4));
      }
      auto perRowOperand = [&](int arg) -> Value* { // lanes are output channels
        Value* at = floatGep(b, residual[size_t(arg)], co0);
        return masked ? static_cast<Value*>(
                            b.CreateMaskedLoad(c.v8f32, at, Align(4), coMask, c.vf(0.0f)))
                      : b.CreateAlignedLoad(c.v8f32, at, Align(4));
      };
      if (!masked && !edge && (m == 2 || m == 4)) {
        // A whole tile of 8 whole channels: each tile row of a channel is m contiguous floats,
        // stored (and its residual loaded) as one vector, transposed in registers.
        auto* rowType = FixedVectorType::get(c.f32, unsigned(m));
        for (int i = 0; i < m; ++i) {
          Value* rowAt = b.CreateAdd(b.CreateAdd(pixel0, c.c64(int64_t(i) * cv.outW)),
                                     b.CreateMul(co0, c.c64(hw)), "row.at");
          std::vector<std::vector<Value*>> residualRows(c.kernel.args.size());
          auto residualRow = [&](int arg) -> const std::vector<Value*>& {
            std::vector<Value*>& rows = residualRows[size_t(arg)];
            if (rows.empty()) {
              std::vector<Value*> ch(kLanes);
              for (int l = 0; l < kLanes; ++l)
                ch[size_t(l)] = b.CreateAlignedLoad(
                    rowType, floatGep(b, residual[size_t(arg)], b.CreateAdd(rowAt, c.c64(l * hw))),
                    Align(4));
              rows = channelsToRows(b, ch);
            }
            return rows;
          };
          std::vector<Value*> vals(static_cast<size_t>(m));
          for (int j = 0; j < m; ++j)
            vals[size_t(j)] = gemmir::finishAccumulator(
                c, b, out[size_t(i * m + j)], biasVec, [&](int arg) -> Value* {
                  return gemmir::isPerRowOperand(s, arg) ? perRowOperand(arg)
                                                         : residualRow(arg)[size_t(j)];
                });
          std::vector<Value*> ch = rowsToChannels(b, vals);
          for (int l = 0; l < kLanes; ++l)
            b.CreateAlignedStore(ch[size_t(l)], floatGep(b, y, b.CreateAdd(rowAt, c.c64(l * hw))),
                                 Align(4));
        }
        return;
      }
      Value* channelOffsets =
          b.CreateAdd(laneOffsets, b.CreateVectorSplat(kLanes, b.CreateMul(co0, c.c64(hw))));
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
          Value* pixel = b.CreateAdd(pixel0, c.c64(int64_t(i) * cv.outW + j));
          Value* offsets = b.CreateAdd(channelOffsets, b.CreateVectorSplat(kLanes, pixel));
          Value* mask = coMask;
          if (edge) {
            Value* inside =
                b.CreateAnd(b.CreateICmpSLT(b.CreateAdd(oh0, c.c64(i)), c.c64(cv.outH)),
                            b.CreateICmpSLT(b.CreateAdd(ow0, c.c64(j)), c.c64(cv.outW)));
            Value* insideVec = b.CreateVectorSplat(kLanes, inside);
            mask = mask ? b.CreateAnd(mask, insideVec) : insideVec;
          }
          auto readAt = [&](Value* base) -> Value* {
            if (mask)
              return b.CreateMaskedGather(c.v8f32, b.CreateGEP(c.f32, base, offsets), Align(4),
                                          mask, c.vf(0.0f));
            Value* r = PoisonValue::get(c.v8f32);
            for (int l = 0; l < kLanes; ++l) {
              Value* e = b.CreateAlignedLoad(
                  c.f32, floatGep(b, base, b.CreateExtractElement(offsets, uint64_t(l))), Align(4));
              r = b.CreateInsertElement(r, e, uint64_t(l));
            }
            return r;
          };
          Value* val = gemmir::finishAccumulator(
              c, b, out[size_t(i * m + j)], biasVec, [&](int arg) -> Value* {
                return gemmir::isPerRowOperand(s, arg) ? perRowOperand(arg)
                                                       : readAt(residual[size_t(arg)]);
              });
          if (mask) {
            b.CreateMaskedScatter(val, b.CreateGEP(c.f32, y, offsets), Align(4), mask);
          } else {
            for (int l = 0; l < kLanes; ++l)
              b.CreateAlignedStore(b.CreateExtractElement(val, uint64_t(l)),
                                   floatGep(b, y, b.CreateExtractElement(offsets, uint64_t(l))),
                                   Align(4));
          }
        }
    };
    auto emitChannels = [&](bool edge) {
      if (cout / 8 > 0)
        emitFor(b, c.c64(0), c.c64(cout / 8 * 8), c.c64(8), "co0",
                [&](Value* co0) { emitBlock(co0, false, edge); });
      if (cout % 8)
        emitBlock(c.c64(cout / 8 * 8), true, edge);
    };
    BasicBlock* wholeBlock = BasicBlock::Create(c.ctx, "tile.whole", f);
    BasicBlock* edgeBlock = BasicBlock::Create(c.ctx, "tile.edge", f);
    b.CreateCondBr(whole, wholeBlock, edgeBlock);
    b.SetInsertPoint(wholeBlock);
    emitChannels(false);
    b.CreateBr(next);
    b.SetInsertPoint(edgeBlock);
    emitChannels(true);
    b.CreateBr(next);
    b.SetInsertPoint(next);
  });
  b.CreateRetVoid();
  return f;
}

/// `void <name>.chunks(ptr args, i64 begin, i64 end)`: chunks [begin, end), each through the
/// input transform, the GEMMs and the output transform on one thread, with a copy of the
/// argument array whose V and M point at the chunk's own slices and whose chunk slot is local.
Function* emitParallelChunks(GemmIrContext& c, const WinogradLayout& w, Function* input,
                             Function* items, Function* output, const GemmPlan& plan) {
  const ConvGeometry& cv = *c.spec.conv;
  const int64_t points = int64_t(w.m + 2) * (w.m + 2);
  const int64_t nargs = int64_t(c.kernel.args.size());
  const int64_t perItem = tilesPerOutputItem(cv, w);
  Function* f = gemmir::makeItemsFunction(c, "chunks");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* local = b.CreateAlloca(c.ptr, c.c64(nargs), "args.chunk");
  cast<AllocaInst>(local)->setAlignment(Align(8));
  Value* chunkSlot = b.CreateAlloca(c.i64, nullptr, "chunk.slot");
  Value* v = loadArg(b, argv, w.vArg, "V");
  Value* m = loadArg(b, argv, w.mArg, "M");
  auto slot = [&](int index) {
    return b.CreateConstInBoundsGEP1_64(c.ptr, local, uint64_t(index));
  };
  emitFor(b, f->getArg(1), f->getArg(2), c.c64(1), "chunk", [&](Value* chunk) {
    b.CreateMemCpy(local, Align(8), argv, Align(8), c.c64(8 * nargs));
    b.CreateStore(chunk, chunkSlot);
    b.CreateStore(chunkSlot, slot(w.chunkArg));
    b.CreateStore(floatGep(b, v, b.CreateMul(chunk, c.c64(points * w.chunkTiles * cv.inChannels))),
                  slot(w.vArg));
    b.CreateStore(floatGep(b, m, b.CreateMul(chunk, c.c64(points * w.chunkTiles * cv.outChannels))),
                  slot(w.mArg));
    // Not inlined: the phases load their arguments as invariant (loadArg), which holds within
    // one call but not across this loop's chunks.
    b.CreateCall(input, {local, c.c64(0), c.c64(inputItems(cv))})->setIsNoInline();
    b.CreateCall(items, {local, c.c64(0), c.c64(plan.items())})->setIsNoInline();
    b.CreateCall(output, {local, c.c64(0), c.c64((w.chunkTiles + perItem - 1) / perItem)})
        ->setIsNoInline();
  });
  b.CreateRetVoid();
  return f;
}

} // namespace

Expected<Function*> emitWinogradKernel(Module& module, const Kernel& kernel) {
  FB_ASSIGN_OR_RETURN(WinogradGemm gemm, winogradGemm(kernel));
  if (module.getFunction(kernel.name))
    return makeError("kernel ", kernel.name,
                     ": a function of that name already exists in the module");
  const WinogradLayout& w = *kernel.gemm->winograd;
  const GemmPlan& plan = gemm.plan;
  GemmIrContext conv(module, kernel, plan);
  GemmIrContext products(module, gemm.kernel, plan);
  Function* items = gemmir::emitWorkItems(products, nullptr, nullptr);
  Function* input = emitInputTransform(conv, w, plan);
  Function* output = emitOutputTransform(conv, w);

  Function* entry = conv.makeFunction("", Type::getVoidTy(conv.ctx), {conv.ptr}, false);
  Value* argv = entry->getArg(0);
  argv->setName("args");
  entry->addParamAttr(0, Attribute::NoAlias);
  IRBuilder<> b(BasicBlock::Create(conv.ctx, "entry", entry));
  Value* chunkAt = loadArg(b, argv, w.chunkArg, "chunk.at");
  const bool parallel = kernel.gemm->parallel;
  const ConvGeometry& cv = *kernel.gemm->conv;
  const int64_t perItem = tilesPerOutputItem(cv, w);
  const int64_t outputItems = (w.chunkTiles + perItem - 1) / perItem;
  if (w.chunkParallel) {
    gemmir::emitRunItems(conv, b, argv, emitParallelChunks(conv, w, input, items, output, plan),
                         w.chunks, parallel, "wgChunkWorker");
    b.CreateRetVoid();
    if (Status st = gemmir::verifyKernelFunctions(module, kernel.name); !st.ok())
      return st.error();
    return entry;
  }
  emitFor(b, conv.c64(0), conv.c64(w.chunks), conv.c64(1), "chunk", [&](Value* chunk) {
    b.CreateStore(chunk, chunkAt);
    gemmir::emitRunItems(conv, b, argv, input, inputItems(cv), parallel, "wgInputWorker");
    gemmir::emitRunItems(products, b, argv, items, plan.items(), plan.parallel, "worker");
    gemmir::emitRunItems(conv, b, argv, output, outputItems, parallel, "wgOutputWorker");
  });
  b.CreateRetVoid();
  if (Status st = gemmir::verifyKernelFunctions(module, kernel.name); !st.ok())
    return st.error();
  return entry;
}

} // namespace fb::cg
