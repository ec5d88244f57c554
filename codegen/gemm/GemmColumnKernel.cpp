// The column micro-kernel of the GEMM generator: the last few columns of an N that is not a
// multiple of 8 (N = 49 for a 7×7 output), computed with vectors along M instead of N.
#include "codegen/gemm/GemmIrBuilder.h"

#include <llvm/IR/Intrinsics.h>

namespace fb::cg::gemmir {

using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using llvm::Value;

namespace {

/// Independent partial sums per column: the k loop is unrolled this many times so that one
/// column is not bound by the FMA latency.
constexpr int kChains = 4;

} // namespace

Function* emitColumnMicroKernel(GemmIrContext& c, int columns) {
  const GemmPlan& p = c.plan;
  const GemmSpec& s = c.spec;
  Function* f = makeMicroKernelFunction(c, "ukernel.cols" + std::to_string(columns));
  Value *argv = f->getArg(0), *kLen = f->getArg(1), *ap = f->getArg(2), *bp = f->getArg(3);
  Value *cOff = f->getArg(4), *accumulate = f->getArg(5), *last = f->getArg(6);
  Value *mAbs = f->getArg(7), *nAbs = f->getArg(8), *mValid = f->getArg(9), *nValid = f->getArg(10);

  // The k loop's vectors: `width` rows each (16 in zmm when whole vectors tile mr), `vectors`
  // of them down the A micro-panel; the fused store works on 8-row pieces of them.
  const int width = p.columnWidth();
  const int vectors = int((p.mr + width - 1) / width);
  const int pieces = vectors * width / 8;
  auto* vt = FixedVectorType::get(c.f32, unsigned(width));
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  auto laneVector = [&](int n, int first) {
    SmallVector<Constant*, 16> ids;
    for (int l = 0; l < n; ++l)
      ids.push_back(ConstantInt::get(c.i32, first + l));
    return ConstantVector::get(ids);
  };
  // A's micro-panel holds mr floats per k; lanes past mr would read the next k's values.
  const bool partialA = p.mr % width != 0;
  Value* aMask =
      partialA
          ? b.CreateICmpSLT(laneVector(width, (vectors - 1) * width),
                            b.CreateVectorSplat(unsigned(width), ConstantInt::get(c.i32, p.mr)))
          : nullptr;
  Value* mValid32 = b.CreateVectorSplat(8, b.CreateTrunc(mValid, c.i32));
  std::vector<Value*> rowMask(static_cast<size_t>(pieces)), rowLanes(static_cast<size_t>(pieces));
  for (int q = 0; q < pieces; ++q) {
    rowLanes[size_t(q)] = laneVector(8, 8 * q);
    rowMask[size_t(q)] = b.CreateICmpSLT(rowLanes[size_t(q)], mValid32, "rowmask");
  }

  auto fma = [&](Value* x, Value* y, Value* acc) {
    return b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {x, y, acc});
  };
  // acc[u][v·columns + j] += A[v-th vector, k] * B[k, j] for k ≡ u (mod chains).
  auto rank1 = [&](Value* k, std::vector<Value*>& acc) {
    Value* aCol = floatGep(b, ap, b.CreateMul(k, c.c64(p.mr)), "a.col");
    std::vector<Value*> a(static_cast<size_t>(vectors));
    for (int v = 0; v < vectors; ++v) {
      Value* at = floatGep(b, aCol, c.c64(int64_t(v) * width));
      a[size_t(v)] = partialA && v == vectors - 1
                         ? static_cast<Value*>(b.CreateMaskedLoad(
                               vt, at, Align(4), aMask, ConstantFP::get(vt, 0.0), "a.part"))
                         : b.CreateAlignedLoad(vt, at, Align(4), "a");
    }
    Value* bRow = floatGep(b, bp, b.CreateMul(k, c.c64(p.nr)), "b.row");
    for (int j = 0; j < columns; ++j) {
      Value* bj = b.CreateVectorSplat(
          unsigned(width), b.CreateAlignedLoad(c.f32, floatGep(b, bRow, c.c64(j)), Align(4), "b"));
      for (int v = 0; v < vectors; ++v) {
        Value*& x = acc[size_t(v * columns + j)];
        x = fma(a[size_t(v)], bj, x);
      }
    }
  };
  // Unrolled main loop over k in steps of `chains`, then the remaining k one at a time: chain u
  // takes k ≡ u (mod step).
  auto loop = [&](const Twine& name, Value* begin, Value* end, int step,
                  std::vector<std::vector<Value*>>& chains) {
    std::vector<Value*> carried;
    for (const std::vector<Value*>& chain : chains)
      carried.insert(carried.end(), chain.begin(), chain.end());
    auto unflatten = [&] {
      size_t at = 0;
      for (std::vector<Value*>& chain : chains)
        for (Value*& v : chain)
          v = carried[at++];
    };
    Value* k = emitCarriedLoop(c, b, name, begin, end, step, carried, [&](Value* k) {
      unflatten();
      for (int u = 0; u < step; ++u)
        rank1(b.CreateAdd(k, c.c64(u)), chains[size_t(u)]);
      carried.clear();
      for (const std::vector<Value*>& chain : chains)
        carried.insert(carried.end(), chain.begin(), chain.end());
    });
    unflatten();
    return k;
  };
  // A tile of fewer than 8 accumulators is bound by the FMA latency: independent partial sums
  // over k ≡ u (mod kChains) hide it.
  const int tileVectors = vectors * columns;
  const int chainCount = tileVectors >= 8 ? 1 : kChains;
  std::vector<std::vector<Value*>> chains(
      size_t(chainCount),
      std::vector<Value*>(static_cast<size_t>(tileVectors), ConstantFP::get(vt, 0.0)));
  Value* kMain =
      chainCount > 1
          ? static_cast<Value*>(loop("k" + Twine(chainCount), c.c64(0), kLen, chainCount, chains))
          : c.c64(0);
  std::vector<std::vector<Value*>> tail(1, chains[0]);
  loop("k1", kMain, kLen, 1, tail);
  chains[0] = tail[0];
  // acc[q][j]: the 8-row piece q of column j.
  std::vector<std::vector<Value*>> acc(static_cast<size_t>(pieces),
                                       std::vector<Value*>(static_cast<size_t>(columns)));
  for (int v = 0; v < vectors; ++v)
    for (int j = 0; j < columns; ++j) {
      Value* sum = chains[0][size_t(v * columns + j)];
      for (int u = 1; u < chainCount; ++u)
        sum = b.CreateFAdd(sum, chains[size_t(u)][size_t(v * columns + j)]);
      for (int h = 0; h < width / 8; ++h) {
        SmallVector<int, 8> half;
        for (int l = 0; l < 8; ++l)
          half.push_back(8 * h + l);
        acc[size_t(v * (width / 8) + h)][size_t(j)] =
            width == 8 ? sum : b.CreateShuffleVector(sum, half, "piece");
      }
    }

  // Column j of the tile: rows are cRowStride apart, so C is read and written by masked
  // gathers and scatters (a few per K block).
  Value* cTile = floatGep(b, loadArg(b, argv, p.cArg, "C"), cOff, "C.tile");
  auto* v8i64 = FixedVectorType::get(c.i64, 8);
  std::vector<Value*> rowOffsets(static_cast<size_t>(pieces));
  std::vector<std::vector<Value*>> masks(static_cast<size_t>(pieces),
                                         std::vector<Value*>(static_cast<size_t>(columns)));
  for (int q = 0; q < pieces; ++q) {
    rowOffsets[size_t(q)] = b.CreateMul(b.CreateSExt(rowLanes[size_t(q)], v8i64),
                                        b.CreateVectorSplat(8, c.c64(p.cRowStride)));
    for (int j = 0; j < columns; ++j)
      masks[size_t(q)][size_t(j)] = b.CreateAnd(
          rowMask[size_t(q)], b.CreateVectorSplat(8, b.CreateICmpSLT(c.c64(j), nValid)), "mask");
  }
  auto columnPtrs = [&](Value* base, int q, int j) {
    return b.CreateGEP(c.f32, floatGep(b, base, c.c64(j)), rowOffsets[size_t(q)]);
  };
  auto gather = [&](Value* base, int q, int j) {
    return b.CreateMaskedGather(c.v8f32, columnPtrs(base, q, j), Align(4),
                                masks[size_t(q)][size_t(j)], c.vf(0.0f));
  };
  // AVX2 has gathers but no scatter: LLVM would store each lane behind a branch of its own.
  // There the tile is transposed in registers and stored row by row, `columns` floats at a
  // time with one masked store each.
  const bool hasScatter = p.registers >= 32;
  auto storeTile = [&](const std::vector<std::vector<Value*>>& tile, Value* base) {
    for (int q = 0; q < pieces; ++q) {
      const std::vector<Value*>& cols = tile[size_t(q)];
      if (hasScatter) {
        for (int j = 0; j < columns; ++j)
          b.CreateMaskedScatter(cols[size_t(j)], columnPtrs(base, q, j), Align(4),
                                masks[size_t(q)][size_t(j)]);
        continue;
      }
      auto* rowType = FixedVectorType::get(c.f32, unsigned(columns));
      for (int r = 0; r < 8; ++r) {
        Value* row = PoisonValue::get(rowType);
        Value* mask = PoisonValue::get(FixedVectorType::get(c.i1, unsigned(columns)));
        Value* rowOk = b.CreateExtractElement(rowMask[size_t(q)], uint64_t(r));
        for (int j = 0; j < columns; ++j) {
          row = b.CreateInsertElement(row, b.CreateExtractElement(cols[size_t(j)], uint64_t(r)),
                                      uint64_t(j));
          mask = b.CreateInsertElement(mask, b.CreateAnd(rowOk, b.CreateICmpSLT(c.c64(j), nValid)),
                                       uint64_t(j));
        }
        b.CreateMaskedStore(row, floatGep(b, base, c.c64((8 * q + r) * p.cRowStride)), Align(4),
                            mask);
      }
    }
  };

  BasicBlock* addC = BasicBlock::Create(c.ctx, "add.c", f);
  BasicBlock* join = BasicBlock::Create(c.ctx, "join", f);
  BasicBlock* before = b.GetInsertBlock();
  b.CreateCondBr(accumulate, addC, join);
  b.SetInsertPoint(addC);
  std::vector<std::vector<Value*>> summed = acc;
  for (int q = 0; q < pieces; ++q)
    for (int j = 0; j < columns; ++j)
      summed[size_t(q)][size_t(j)] = b.CreateFAdd(acc[size_t(q)][size_t(j)], gather(cTile, q, j));
  b.CreateBr(join);
  b.SetInsertPoint(join);
  for (int q = 0; q < pieces; ++q)
    for (int j = 0; j < columns; ++j) {
      PHINode* phi = b.CreatePHI(c.v8f32, 2, "sum");
      phi->addIncoming(acc[size_t(q)][size_t(j)], before);
      phi->addIncoming(summed[size_t(q)][size_t(j)], addC);
      acc[size_t(q)][size_t(j)] = phi;
    }
  BasicBlock* partial = BasicBlock::Create(c.ctx, "store.partial", f);
  BasicBlock* final = BasicBlock::Create(c.ctx, "store.final", f);
  b.CreateCondBr(last, final, partial);
  b.SetInsertPoint(partial);
  storeTile(acc, cTile);
  b.CreateRetVoid();

  // The fused store, as in the row micro-kernel but transposed: a row bias is a vector, a
  // column bias a scalar.
  b.SetInsertPoint(final);
  Value* bias = s.bias != GemmSpec::Bias::None ? loadArg(b, argv, s.biasArg, "bias") : nullptr;
  std::vector<Value*> residualBase = residualTileBases(c, b, argv, cOff);
  std::vector<std::vector<Value*>> finished = acc;
  for (int q = 0; q < pieces; ++q) {
    Value* mRows = b.CreateAdd(mAbs, c.c64(8 * q));
    Value* rowBias = nullptr;
    if (s.bias == GemmSpec::Bias::PerRow)
      rowBias = b.CreateMaskedLoad(c.v8f32, floatGep(b, bias, mRows), Align(4), rowMask[size_t(q)],
                                   c.vf(0.0f), "bias.rows");
    for (int j = 0; j < columns; ++j) {
      Value* bv = rowBias;
      if (s.bias == GemmSpec::Bias::PerColumn) {
        // Dead columns read column nAbs, which always exists.
        Value* col = b.CreateSelect(b.CreateICmpSLT(c.c64(j), nValid), c.c64(j), c.c64(0));
        bv = b.CreateVectorSplat(
            8, b.CreateAlignedLoad(c.f32, floatGep(b, bias, b.CreateAdd(nAbs, col)), Align(4)));
      } else if (s.bias == GemmSpec::Bias::Full) {
        Value* base = floatGep(b, bias, b.CreateAdd(b.CreateMul(mRows, c.c64(p.N)), nAbs));
        Value* ptrs = b.CreateGEP(
            c.f32, floatGep(b, base, c.c64(j)),
            b.CreateMul(b.CreateSExt(laneVector(8, 0), v8i64), b.CreateVectorSplat(8, c.c64(p.N))));
        bv = b.CreateMaskedGather(c.v8f32, ptrs, Align(4), masks[size_t(q)][size_t(j)], c.vf(0.0f));
      }
      finished[size_t(q)][size_t(j)] =
          finishAccumulator(c, b, acc[size_t(q)][size_t(j)], bv, [&](int arg) -> Value* {
            if (isPerRowOperand(s, arg)) // lanes are rows: the operand's values at the rows
              return b.CreateMaskedLoad(c.v8f32, floatGep(b, residualBase[size_t(arg)], mRows),
                                        Align(4), rowMask[size_t(q)], c.vf(0.0f), "row.operand");
            return gather(residualBase[size_t(arg)], q, j);
          });
    }
  }
  storeTile(finished, cTile);
  b.CreateRetVoid();
  return f;
}

} // namespace fb::cg::gemmir
