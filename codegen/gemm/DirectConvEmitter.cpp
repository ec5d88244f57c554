// The direct convolution kernel: the padding copy, the register-tile functions (one per tile
// shape the image's edges need) and the work items over them.
#include "codegen/gemm/DirectConv.h"

#include "codegen/gemm/GemmIrBuilder.h"

#include <llvm/IR/Intrinsics.h>

#include <array>
#include <map>
#include <string>

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

/// The sizes every piece of one direct kernel works with.
struct DirectShape {
  explicit DirectShape(const GemmSpec& s)
      : g(*s.conv), d(*s.direct), m(g.outChannels / g.groups), cinG(g.inChannels / g.groups),
        taps(g.kernelH * g.kernelW), lanes(d.lanes), width(int64_t(lanes) * d.ocVectors),
        plane((d.localRows > 0 ? d.localRows : d.paddedH) * d.paddedW), hw(g.outH * g.outW) {}
  const ConvGeometry& g;
  const DirectConvLayout& d;
  int64_t m, cinG, taps;
  int lanes; ///< floats per vector (16 or 8)
  int64_t width, plane, hw;
  int64_t segments() const { return (g.outW + d.tileCols - 1) / d.tileCols; }
  int64_t lastCols() const { return g.outW - (segments() - 1) * d.tileCols; }
  int64_t tileRowsTotal() const { return (g.outH + d.tileRows - 1) / d.tileRows; }
  int64_t tilesPerItem() const { return d.tileRowsPerItem * segments(); }
  /// With passes: floats of the next pass's weights each tile of a pass prefetches (the pass
  /// split among the item's tiles, in whole 16-float cache lines).
  int64_t prefetchShare() const {
    return ceilDiv(ceilDiv(d.passChannels * taps * width, tilesPerItem()), 16) * 16;
  }
  int64_t items() const { return g.batch * g.groups * d.channelBlocks * d.rowItems; }
};

/// Copies padded rows [first, first + rows) of one input channel plane `from` (unpadded) into
/// `to` (rows of paddedW floats): the image's rows with their zero border, zero rows outside.
void emitPaddedRows(GemmIrContext& c, IRBuilder<>& b, const DirectShape& sh, Value* from, Value* to,
                    Value* first, int64_t rows) {
  const ConvGeometry& g = sh.g;
  const DirectConvLayout& d = sh.d;
  const int64_t right = d.paddedW - g.padLeft - g.inW;
  emitFor(b, c.c64(0), c.c64(rows), c.c64(1), "row", [&](Value* r) {
    Value* row = floatGep(b, to, b.CreateMul(r, c.c64(d.paddedW)), "row");
    Value* ih = b.CreateSub(b.CreateAdd(first, r), c.c64(g.padTop));
    Function* fn = b.GetInsertBlock()->getParent();
    BasicBlock* inside = BasicBlock::Create(c.ctx, "row.inside", fn);
    BasicBlock* outside = BasicBlock::Create(c.ctx, "row.outside", fn);
    BasicBlock* join = BasicBlock::Create(c.ctx, "row.join", fn);
    b.CreateCondBr(b.CreateICmpULT(ih, c.c64(g.inH)), inside, outside);
    b.SetInsertPoint(inside);
    if (g.padLeft > 0)
      b.CreateMemSet(row, b.getInt8(0), c.c64(4 * g.padLeft), Align(4));
    b.CreateMemCpy(floatGep(b, row, c.c64(g.padLeft)), Align(4),
                   floatGep(b, from, b.CreateMul(ih, c.c64(g.inW))), Align(4), c.c64(4 * g.inW));
    if (right > 0)
      b.CreateMemSet(floatGep(b, row, c.c64(g.padLeft + g.inW)), b.getInt8(0), c.c64(4 * right),
                     Align(4));
    b.CreateBr(join);
    b.SetInsertPoint(outside);
    b.CreateMemSet(row, b.getInt8(0), c.c64(4 * d.paddedW), Align(4));
    b.CreateBr(join);
    b.SetInsertPoint(join);
  });
}

/// `void <name>.pad(ptr args, i64 begin, i64 end)`: image channels [begin, end) copied into
/// the Scratch plane with their zero border (written every call: the workspace is shared).
Function* emitPadItems(GemmIrContext& c, const DirectShape& sh) {
  const ConvGeometry& g = sh.g;
  const DirectConvLayout& d = sh.d;
  Function* f = gemmir::makeItemsFunction(c, "pad");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* src = loadArg(b, argv, c.spec.bArg, "X");
  Value* dst = loadArg(b, argv, d.paddedArg, "X.padded");
  emitFor(b, f->getArg(1), f->getArg(2), c.c64(1), "channel", [&](Value* ch) {
    Value* from = floatGep(b, src, b.CreateMul(ch, c.c64(g.inH * g.inW)), "from");
    Value* to = floatGep(b, dst, b.CreateMul(ch, c.c64(sh.plane)), "to");
    emitPaddedRows(c, b, sh, from, to, c.c64(0), d.paddedH);
  });
  b.CreateRetVoid();
  return f;
}

/// The flags of one pass (DirectConvLayout::passChannels): the tile starts from zero, or ends
/// with the bias, epilogue and store; between them it keeps its sums in the partial buffer.
constexpr int64_t kFirstPass = 1, kLastPass = 2;

/// `void <name>.tile<R>x<C>(ptr args, ptr x, ptr w, i64 cOff, i64 ocAbs, i64 mValid)`: one
/// register tile of R output rows by C output columns and the block's lanes·vectors channels.
/// Before the channel loop of a tile whose store reads a residual (the last pass, with
/// passes): prefetch the tile's residual rows (every channel's run of `cols` pixels per row),
/// which the store would otherwise wait for — the tensor was written long before (ResNet-50's
/// 1x1 expand layers with their Add). Leaves the builder in the block that computes the tile.
void prefetchResidualTile(GemmIrContext& c, IRBuilder<>& b, const DirectShape& sh, int64_t rows,
                          int64_t cols, Value* cOff, Value* passFlags) {
  const GemmSpec& s = c.spec;
  Function* f = b.GetInsertBlock()->getParent();
  Value* argv = f->getArg(0);
  std::vector<Value*> bases;
  bool any = false;
  for (const EpilogueOp& op : s.epilogue)
    any |= (op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) &&
           !op.perRow;
  if (!any)
    return;
  BasicBlock* start = BasicBlock::Create(c.ctx, "tile.start", f);
  if (passFlags) {
    BasicBlock* prefetch = BasicBlock::Create(c.ctx, "residual.prefetch", f);
    b.CreateCondBr(b.CreateICmpNE(b.CreateAnd(passFlags, c.c64(kLastPass)), c.c64(0)), prefetch,
                   start);
    b.SetInsertPoint(prefetch);
  }
  bases = gemmir::residualTileBases(c, b, argv, cOff);
  const int64_t channels = int64_t(sh.d.ocVectors) * sh.lanes;
  for (size_t arg = 0; arg < bases.size(); ++arg) {
    if (!bases[arg] || gemmir::isPerRowOperand(s, int(arg)))
      continue;
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t col = 0;; col += 16) { // one per 64-byte line, and the run's last float
          const int64_t px = std::min(col, cols - 1);
          b.CreateIntrinsic(Intrinsic::prefetch, {c.ptr},
                            {floatGep(b, bases[arg], c.c64(ch * sh.hw + r * sh.g.outW + px)),
                             b.getInt32(0), b.getInt32(3), b.getInt32(1)});
          if (px == cols - 1)
            break;
        }
  }
  b.CreateBr(start);
  b.SetInsertPoint(start);
}

/// x: the input plane of the group's first channel at the tile's top-left tap;/// x: the input
/// plane of the group's first channel at the tile's top-left tap; w: the channel block's packed
/// weights; cOff: the output offset of the tile's first channel and pixel; ocAbs: that channel's
/// index among all output channels; mValid: the block's live channels. With passes it takes (i64
/// ciBegin, i64 ciEnd, ptr partial, i64 flags, ptr prefetch) too: the input channels of this pass,
/// the tile's partial sums (vectors·pixels vectors), kFirstPass / kLastPass, and its share of the
/// next pass's weights to prefetch.
Function* emitTile(GemmIrContext& c, const DirectShape& sh, int64_t rows, int64_t cols) {
  const ConvGeometry& g = sh.g;
  const DirectConvLayout& d = sh.d;
  const GemmSpec& s = c.spec;
  const bool passes = d.passChannels > 0;
  std::vector<Type*> params = {c.ptr, c.ptr, c.ptr, c.i64, c.i64, c.i64};
  if (passes)
    params.insert(params.end(), {c.i64, c.i64, c.ptr, c.i64, c.ptr});
  Function* f = c.makeFunction("tile" + std::to_string(rows) + "x" + std::to_string(cols),
                               Type::getVoidTy(c.ctx), params, /*internal=*/true);
  const char* names[] = {"args",    "x",     "w",       "cOff",  "ocAbs",   "mValid",
                         "ciBegin", "ciEnd", "partial", "flags", "prefetch"};
  for (unsigned i = 0; i < f->arg_size(); ++i)
    f->getArg(i)->setName(names[i]);
  for (unsigned i : {1u, 2u}) {
    f->addParamAttr(i, Attribute::NoAlias);
    f->addParamAttr(i, Attribute::ReadOnly);
  }
  if (passes)
    f->addParamAttr(8, Attribute::NoAlias);
  Value *argv = f->getArg(0), *x = f->getArg(1), *w = f->getArg(2), *cOff = f->getArg(3);
  Value *ocAbs = f->getArg(4), *mValid = f->getArg(5);
  Value* ciBegin = passes ? static_cast<Value*>(f->getArg(6)) : c.c64(0);
  Value* ciEnd = passes ? static_cast<Value*>(f->getArg(7)) : c.c64(sh.cinG);
  Value* partialSums = passes ? f->getArg(8) : nullptr;
  Value* flags = passes ? f->getArg(9) : nullptr;
  Value* prefetch = passes ? f->getArg(10) : nullptr;
  const int vectors = d.ocVectors;
  const int64_t pixels = rows * cols;
  const int kLanes = sh.lanes;
  auto* vt = FixedVectorType::get(c.f32, kLanes);
  std::vector<int64_t> inOff(static_cast<size_t>(pixels)), outOff(static_cast<size_t>(pixels));
  for (int64_t j = 0; j < pixels; ++j) {
    inOff[size_t(j)] = (j / cols) * g.strideH * d.paddedW + (j % cols) * g.strideW;
    outOff[size_t(j)] = (j / cols) * g.outW + (j % cols);
  }
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  auto at = [](int v, int64_t j, int64_t p) { return size_t(int64_t(v) * p + j); };
  prefetchResidualTile(c, b, sh, rows, cols, cOff, passes ? flags : nullptr);

  // acc[v·pixels + j] += W[ci, tap, vector v] · X[ci, pixel j + tap] over ci and the taps.
  auto channel = [&](Value* ci, std::vector<Value*>& acc) {
    Value* xc = floatGep(b, x, b.CreateMul(ci, c.c64(sh.plane)), "x.chan");
    Value* wc = floatGep(b, w, b.CreateMul(ci, c.c64(sh.taps * sh.width)), "w.chan");
    for (int64_t kh = 0; kh < g.kernelH; ++kh)
      for (int64_t kw = 0; kw < g.kernelW; ++kw) {
        const int64_t tap = kh * g.kernelW + kw;
        const int64_t tapOff = kh * g.dilationH * d.paddedW + kw * g.dilationW;
        std::vector<Value*> wv(static_cast<size_t>(vectors));
        for (int v = 0; v < vectors; ++v)
          wv[size_t(v)] = b.CreateAlignedLoad(
              vt, floatGep(b, wc, c.c64(tap * sh.width + int64_t(v) * kLanes)), Align(4), "w");
        for (int64_t j = 0; j < pixels; ++j) {
          Value* xs = b.CreateAlignedLoad(c.f32, floatGep(b, xc, c.c64(tapOff + inOff[size_t(j)])),
                                          Align(4), "x");
          Value* xv = b.CreateVectorSplat(kLanes, xs);
          for (int v = 0; v < vectors; ++v) {
            Value*& a = acc[at(v, j, pixels)];
            a = b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {wv[size_t(v)], xv, a});
          }
        }
      }
  };
  // A 1×1 or 1×3 filter has few FMAs per channel: unroll channels so the loop's overhead and
  // its loads of the next channel's weights overlap the FMAs.
  const int64_t unroll = sh.taps >= 4 ? 1 : sh.taps >= 2 ? 2 : 4;
  // With passes, each tile of a pass asks for its share of the next pass's weights, a few cache
  // lines per iteration, so that they stream in while this pass computes: the first tile of a
  // pass would otherwise wait for its block from memory, and the memory sit idle meanwhile.
  const int64_t prefetchLines =
      passes ? ceilDiv(sh.prefetchShare() / 16, d.passChannels / unroll) : 0;
  // A channel of many taps (a 7×7 stem: 784 FMAs per channel) is body enough: LLVM would only
  // spend compile time unrolling it. Smaller bodies keep LLVM's unrolling, which pays (a 3×3
  // layer's 1×7 tile on 14×14 ran 5% slower rolled).
  const bool keepRolled = sh.taps * pixels * vectors >= 256;
  // Channels ci .. ci+step-1 per iteration, carrying acc.
  auto loop = [&](const std::string& name, Value* begin, int64_t step, std::vector<Value*>& acc) {
    return gemmir::emitCarriedLoop(
        c, b, name, begin, ciEnd, step, acc,
        [&](Value* ci) {
          if (prefetch && step == unroll) {
            Value* iteration = b.CreateUDiv(b.CreateSub(ci, ciBegin), c.c64(step));
            for (int64_t l = 0; l < prefetchLines; ++l) {
              Value* line = b.CreateAdd(b.CreateMul(iteration, c.c64(prefetchLines)), c.c64(l));
              b.CreateIntrinsic(Intrinsic::prefetch, {c.ptr},
                                {floatGep(b, prefetch, b.CreateMul(line, c.c64(16))), b.getInt32(0),
                                 b.getInt32(2), b.getInt32(1)});
            }
          }
          for (int64_t u = 0; u < step; ++u)
            channel(b.CreateAdd(ci, c.c64(u)), acc);
        },
        keepRolled);
  };
  std::vector<Value*> acc(static_cast<size_t>(vectors * pixels), ConstantFP::get(vt, 0.0));
  auto partialAt = [&](size_t i) { return floatGep(b, partialSums, c.c64(int64_t(i) * kLanes)); };
  if (passes) {
    // A later pass resumes from the sums the previous one left.
    BasicBlock* from = b.GetInsertBlock();
    BasicBlock* resume = BasicBlock::Create(c.ctx, "pass.resume", f);
    BasicBlock* start = BasicBlock::Create(c.ctx, "pass.start", f);
    b.CreateCondBr(b.CreateICmpNE(b.CreateAnd(flags, c.c64(kFirstPass)), c.c64(0)), start, resume);
    b.SetInsertPoint(resume);
    std::vector<Value*> resumed(acc.size());
    for (size_t i = 0; i < acc.size(); ++i)
      resumed[i] = b.CreateAlignedLoad(vt, partialAt(i), Align(4 * uint64_t(kLanes)), "partial");
    b.CreateBr(start);
    b.SetInsertPoint(start);
    for (size_t i = 0; i < acc.size(); ++i) {
      PHINode* phi = b.CreatePHI(vt, 2, "acc.start");
      phi->addIncoming(acc[i], from);
      phi->addIncoming(resumed[i], resume);
      acc[i] = phi;
    }
  }
  Value* rest = unroll > 1
                    ? static_cast<Value*>(loop("ci" + std::to_string(unroll), ciBegin, unroll, acc))
                    : ciBegin;
  loop("ci", rest, 1, acc);
  if (passes) {
    // Not the last pass: the sums wait in the partial buffer.
    BasicBlock* keep = BasicBlock::Create(c.ctx, "pass.keep", f);
    BasicBlock* finish = BasicBlock::Create(c.ctx, "pass.finish", f);
    b.CreateCondBr(b.CreateICmpNE(b.CreateAnd(flags, c.c64(kLastPass)), c.c64(0)), finish, keep);
    b.SetInsertPoint(keep);
    for (size_t i = 0; i < acc.size(); ++i)
      b.CreateAlignedStore(acc[i], partialAt(i), Align(4 * uint64_t(kLanes)));
    b.CreateRetVoid();
    b.SetInsertPoint(finish);
  }

  // The fused store: per pixel and vector, bias, epilogue, and a scatter down the channels.
  Value* cTile = floatGep(b, loadArg(b, argv, s.cArg, "C"), cOff, "C.tile");
  Value* bias = s.bias == GemmSpec::Bias::PerRow ? loadArg(b, argv, s.biasArg, "bias") : nullptr;
  std::vector<Value*> residualBase = gemmir::residualTileBases(c, b, argv, cOff);
  Value* live = b.CreateVectorSplat(kLanes, mValid);
  std::vector<Value*> masks(static_cast<size_t>(vectors)), offsets(static_cast<size_t>(vectors)),
      biasVec(static_cast<size_t>(vectors));
  for (int v = 0; v < vectors; ++v) {
    SmallVector<Constant*, 16> lanes, rowOffsets;
    for (int l = 0; l < kLanes; ++l) {
      lanes.push_back(ConstantInt::get(c.i64, v * kLanes + l));
      rowOffsets.push_back(ConstantInt::get(c.i64, (v * kLanes + l) * sh.hw));
    }
    masks[size_t(v)] = b.CreateICmpSLT(ConstantVector::get(lanes), live, "live");
    offsets[size_t(v)] = ConstantVector::get(rowOffsets);
    if (bias)
      biasVec[size_t(v)] =
          b.CreateMaskedLoad(vt, floatGep(b, bias, b.CreateAdd(ocAbs, c.c64(v * kLanes))), Align(4),
                             masks[size_t(v)], ConstantFP::get(vt, 0.0), "bias");
  }
  // Scatters down the channels: the path for a block with dead channels (its last).
  auto scatterPixel = [&](int64_t j) {
    for (int v = 0; v < vectors; ++v) {
      Value* result = gemmir::finishAccumulator(
          c, b, acc[at(v, j, pixels)], biasVec[size_t(v)], [&](int arg) -> Value* {
            if (gemmir::isPerRowOperand(s, arg))
              return b.CreateMaskedLoad(
                  vt, floatGep(b, residualBase[size_t(arg)], b.CreateAdd(ocAbs, c.c64(v * kLanes))),
                  Align(4), masks[size_t(v)], ConstantFP::get(vt, 0.0), "row.operand");
            Value* ptrs =
                b.CreateGEP(c.f32, floatGep(b, residualBase[size_t(arg)], c.c64(outOff[size_t(j)])),
                            offsets[size_t(v)]);
            return b.CreateMaskedGather(vt, ptrs, Align(4), masks[size_t(v)],
                                        ConstantFP::get(vt, 0.0), "operand");
          });
      Value* ptrs =
          b.CreateGEP(c.f32, floatGep(b, cTile, c.c64(outOff[size_t(j)])), offsets[size_t(v)]);
      b.CreateMaskedScatter(result, ptrs, Align(4), masks[size_t(v)]);
    }
  };
  // All channels live: the pixels of a tile row go in runs of up to 4, each run's vectors
  // transposed 4×4 within their 128-bit lanes so that every channel's run leaves as one 16-byte
  // store (64 stores for 4 pixels of 64 channels, where 16 scatters of 16 lanes took 14% of a
  // 64→64 3×3 layer on 16×16). Per-element epilogue operands come in the same way, transposed
  // back.
  auto transposedRuns = [&] {
    const int64_t runs = (cols + 3) / 4;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t run = 0; run < runs; ++run) {
        const int64_t j0 = r * cols + run * 4, q = std::min<int64_t>(4, cols - run * 4);
        Value* runMask = nullptr;
        if (q < 4) {
          SmallVector<Constant*, 4> bits;
          for (int64_t l = 0; l < 4; ++l)
            bits.push_back(ConstantInt::get(c.i1, l < q));
          runMask = ConstantVector::get(bits);
        }
        auto* v4 = FixedVectorType::get(c.f32, 4);
        for (int v = 0; v < vectors; ++v) {
          // Channel ch of vector v: its run of q pixels at base + (v·lanes + ch)·hw + outOff[j0].
          auto channelRun = [&](Value* base, int64_t ch) {
            return floatGep(b, base,
                            c.c64((int64_t(v) * kLanes + ch) * sh.hw + outOff[size_t(j0)]));
          };
          std::map<int, std::array<Value*, 4>> operands;
          auto operandPixel = [&](int arg, int64_t p) -> Value* {
            auto found = operands.find(arg);
            if (found == operands.end()) {
              std::array<Value*, 4> byChannel{};
              for (int k = 0; k < 4; ++k) {
                SmallVector<Value*, 4> parts(size_t(kLanes / 4));
                for (int lane = 0; lane < kLanes / 4; ++lane) {
                  Value* at = channelRun(residualBase[size_t(arg)], 4 * lane + k);
                  parts[lane] =
                      runMask ? static_cast<Value*>(b.CreateMaskedLoad(
                                    v4, at, Align(4), runMask, ConstantFP::get(v4, 0.0), "operand"))
                              : b.CreateAlignedLoad(v4, at, Align(4), "operand");
                }
                byChannel[size_t(k)] = gemmir::concatLanes(b, parts);
              }
              found = operands.emplace(arg, gemmir::transposeLanes4x4(b, byChannel, kLanes)).first;
            }
            return found->second[size_t(p)];
          };
          std::array<Value*, 4> results{};
          for (int64_t p = 0; p < 4; ++p)
            results[size_t(p)] = p >= q
                                     ? PoisonValue::get(vt)
                                     : gemmir::finishAccumulator(
                                           c, b, acc[at(v, j0 + p, pixels)], biasVec[size_t(v)],
                                           [&](int arg) -> Value* {
                                             if (gemmir::isPerRowOperand(s, arg))
                                               return b.CreateAlignedLoad(
                                                   vt,
                                                   floatGep(b, residualBase[size_t(arg)],
                                                            b.CreateAdd(ocAbs, c.c64(v * kLanes))),
                                                   Align(4), "row.operand");
                                             return operandPixel(arg, p);
                                           });
          std::array<Value*, 4> byChannel = gemmir::transposeLanes4x4(b, results, kLanes);
          for (int k = 0; k < 4; ++k)
            for (int lane = 0; lane < kLanes / 4; ++lane) {
              Value* part = b.CreateShuffleVector(
                  byChannel[size_t(k)],
                  ArrayRef<int>{4 * lane, 4 * lane + 1, 4 * lane + 2, 4 * lane + 3});
              Value* to = channelRun(cTile, 4 * lane + k);
              if (runMask)
                b.CreateMaskedStore(part, to, Align(4), runMask);
              else
                b.CreateAlignedStore(part, to, Align(4));
            }
        }
      }
  };
  BasicBlock* whole = BasicBlock::Create(c.ctx, "store.runs", f);
  BasicBlock* partial = BasicBlock::Create(c.ctx, "store.scatter", f);
  BasicBlock* done = BasicBlock::Create(c.ctx, "store.done", f);
  b.CreateCondBr(b.CreateICmpEQ(mValid, c.c64(sh.width)), whole, partial);
  b.SetInsertPoint(whole);
  transposedRuns();
  b.CreateBr(done);
  b.SetInsertPoint(partial);
  for (int64_t j = 0; j < pixels; ++j)
    scatterPixel(j);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return f;
}

/// `void <name>.items(ptr args, i64 begin, i64 end)`: items of (image, group, channel block,
/// block of tile rows), the block fastest so that consecutive items share their weights.
Function* emitItems(GemmIrContext& c, const DirectShape& sh) {
  const ConvGeometry& g = sh.g;
  const DirectConvLayout& d = sh.d;
  const int64_t rows = d.tileRows, cols = d.tileCols;
  const int64_t lastRows = g.outH % rows, lastCols = sh.lastCols();
  const int64_t fullSegments = lastCols == cols ? sh.segments() : sh.segments() - 1;
  // The tile functions, by (rows, cols), for the shapes the image's edges need.
  Function* tiles[2][2] = {{emitTile(c, sh, rows, cols), nullptr}, {nullptr, nullptr}};
  if (lastCols != cols)
    tiles[0][1] = emitTile(c, sh, rows, lastCols);
  if (lastRows != 0) {
    tiles[1][0] = emitTile(c, sh, lastRows, cols);
    if (lastCols != cols)
      tiles[1][1] = emitTile(c, sh, lastRows, lastCols);
  }

  Function* f = gemmir::makeItemsFunction(c, "items");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* xBase = loadArg(b, argv, d.paddedArg >= 0 ? d.paddedArg : c.spec.bArg, "X");
  Value* wBase = loadArg(b, argv, d.weightArg, "W.packed");
  // Local padding: each item copies the padded input rows its tiles read, for the group's
  // channels, into a buffer on the worker's stack.
  Value* local = nullptr;
  if (d.localRows > 0) {
    local = b.CreateAlloca(c.f32, c.c64(sh.cinG * sh.plane), "X.local");
    cast<AllocaInst>(local)->setAlignment(Align(64));
  }
  // Passes: every tile's partial sums, on the worker's stack, by tile of the item.
  const int64_t segments = sh.segments();
  const int64_t tileFloats = int64_t(d.ocVectors) * sh.lanes * rows * cols;
  Value* partials = nullptr;
  if (d.passChannels > 0) {
    partials = b.CreateAlloca(c.f32, c.c64(sh.tilesPerItem() * tileFloats), "partials");
    cast<AllocaInst>(partials)->setAlignment(Align(64));
  }
  emitFor(b, f->getArg(1), f->getArg(2), c.c64(1), "item", [&](Value* item) {
    Value* ri = b.CreateURem(item, c.c64(d.rowItems), "rowblock");
    Value* t = b.CreateUDiv(item, c.c64(d.rowItems));
    Value* blk = b.CreateURem(t, c.c64(d.channelBlocks), "chanblock");
    t = b.CreateUDiv(t, c.c64(d.channelBlocks));
    Value* grp = b.CreateURem(t, c.c64(g.groups), "group");
    Value* bi = b.CreateUDiv(t, c.c64(g.groups), "image");
    Value* oc0 = b.CreateMul(blk, c.c64(sh.width));
    Value* ocAbs = b.CreateAdd(b.CreateMul(grp, c.c64(sh.m)), oc0, "oc");
    Value* mValid = emitMin(b, c.c64(sh.width), b.CreateSub(c.c64(sh.m), oc0));
    Value* channel0 =
        b.CreateAdd(b.CreateMul(bi, c.c64(g.inChannels)), b.CreateMul(grp, c.c64(sh.cinG)));
    Value* trBegin = b.CreateMul(ri, c.c64(d.tileRowsPerItem));
    Value* xImg;
    // The output row the plane's first row belongs to: the item's first with local padding.
    Value* rowBase = c.c64(0);
    if (local) {
      // The item's first padded row; its tiles' rows are then relative to it.
      Value* first = b.CreateMul(trBegin, c.c64(rows * g.strideH), "row.first");
      Value* from = floatGep(b, xBase, b.CreateMul(channel0, c.c64(g.inH * g.inW)), "x.from");
      emitFor(b, c.c64(0), c.c64(sh.cinG), c.c64(1), "pad.channel", [&](Value* ci) {
        emitPaddedRows(c, b, sh, floatGep(b, from, b.CreateMul(ci, c.c64(g.inH * g.inW))),
                       floatGep(b, local, b.CreateMul(ci, c.c64(sh.plane))), first, d.localRows);
      });
      xImg = local;
      rowBase = b.CreateMul(trBegin, c.c64(rows));
    } else {
      xImg = floatGep(b, xBase, b.CreateMul(channel0, c.c64(sh.plane)), "x.image");
    }
    Value* wBlk = floatGep(b, wBase,
                           b.CreateMul(b.CreateAdd(b.CreateMul(grp, c.c64(d.channelBlocks)), blk),
                                       c.c64(sh.cinG * sh.taps * sh.width)),
                           "w.block");
    Value* cImg = b.CreateAdd(b.CreateMul(bi, c.c64(g.outChannels * sh.hw)),
                              b.CreateMul(ocAbs, c.c64(sh.hw)), "c.image");
    Value* trEnd =
        emitMin(b, c.c64(sh.tileRowsTotal()), b.CreateAdd(trBegin, c.c64(d.tileRowsPerItem)));
    // The item's tiles over input channels [ciBegin, ciEnd) (all of them without passes).
    auto tilesOfPass = [&](Value* ciBegin, Value* ciEnd, Value* flags) {
      emitFor(b, trBegin, trEnd, c.c64(1), "tilerow", [&](Value* tr) {
        Value* oh0 = b.CreateMul(tr, c.c64(rows), "oh0");
        Value* xRow =
            floatGep(b, xImg, b.CreateMul(b.CreateSub(oh0, rowBase), c.c64(g.strideH * d.paddedW)));
        Value* cRow = b.CreateAdd(cImg, b.CreateMul(oh0, c.c64(g.outW)));
        auto rowOfTiles = [&](Function* full, Function* last) {
          auto call = [&](Function* tile, Value* seg) {
            Value* ow0 = b.CreateMul(seg, c.c64(cols));
            std::vector<Value*> callArgs = {
                argv,  floatGep(b, xRow, b.CreateMul(ow0, c.c64(g.strideW))),
                wBlk,  b.CreateAdd(cRow, ow0),
                ocAbs, mValid};
            if (partials) {
              Value* index =
                  b.CreateAdd(b.CreateMul(b.CreateSub(tr, trBegin), c.c64(segments)), seg);
              // This tile's share of the next pass's weights (past the block after the last
              // pass: the next block's, which a prefetch may touch harmlessly).
              Value* share = floatGep(b, wBlk,
                                      b.CreateAdd(b.CreateMul(ciEnd, c.c64(sh.taps * sh.width)),
                                                  b.CreateMul(index, c.c64(sh.prefetchShare()))),
                                      "prefetch");
              callArgs.insert(
                  callArgs.end(),
                  {ciBegin, ciEnd,
                   floatGep(b, partials, b.CreateMul(index, c.c64(tileFloats)), "partial"), flags,
                   share});
            }
            b.CreateCall(tile, callArgs);
          };
          emitFor(b, c.c64(0), c.c64(fullSegments), c.c64(1), "segment",
                  [&](Value* seg) { call(full, seg); });
          if (last)
            call(last, c.c64(fullSegments));
        };
        if (lastRows == 0) {
          rowOfTiles(tiles[0][0], tiles[0][1]);
          return;
        }
        Function* fn = b.GetInsertBlock()->getParent();
        BasicBlock* whole = BasicBlock::Create(c.ctx, "rows.whole", fn);
        BasicBlock* partial = BasicBlock::Create(c.ctx, "rows.last", fn);
        BasicBlock* join = BasicBlock::Create(c.ctx, "rows.join", fn);
        b.CreateCondBr(b.CreateICmpSLE(b.CreateAdd(oh0, c.c64(rows)), c.c64(g.outH)), whole,
                       partial);
        b.SetInsertPoint(whole);
        rowOfTiles(tiles[0][0], tiles[0][1]);
        b.CreateBr(join);
        b.SetInsertPoint(partial);
        rowOfTiles(tiles[1][0], tiles[1][1]);
        b.CreateBr(join);
        b.SetInsertPoint(join);
      });
    };
    if (!partials) {
      tilesOfPass(nullptr, nullptr, nullptr);
      return;
    }
    emitFor(b, c.c64(0), c.c64(sh.cinG), c.c64(d.passChannels), "pass", [&](Value* ci0) {
      Value* ci1 = emitMin(b, c.c64(sh.cinG), b.CreateAdd(ci0, c.c64(d.passChannels)));
      Value* first = b.CreateSelect(b.CreateICmpEQ(ci0, c.c64(0)), c.c64(kFirstPass), c.c64(0));
      Value* last = b.CreateSelect(b.CreateICmpEQ(ci1, c.c64(sh.cinG)), c.c64(kLastPass), c.c64(0));
      tilesOfPass(ci0, ci1, b.CreateOr(first, last, "pass.flags"));
    });
  });
  b.CreateRetVoid();
  return f;
}

} // namespace

Expected<Function*> emitDirectConvKernel(Module& module, const Kernel& kernel) {
  if (!kernel.gemm || !kernel.gemm->direct || !kernel.gemm->conv)
    return makeError("kernel ", kernel.name, ": not a direct convolution");
  if (module.getFunction(kernel.name))
    return makeError("kernel ", kernel.name,
                     ": a function of that name already exists in the module");
  const GemmSpec& s = *kernel.gemm;
  const DirectConvLayout& d = *s.direct;
  auto validArg = [&](int arg) { return arg >= 0 && size_t(arg) < kernel.args.size(); };
  if (!validArg(s.bArg) || !validArg(s.cArg) || !validArg(d.weightArg) ||
      (d.paddedArg >= 0 && !validArg(d.paddedArg)) ||
      (s.bias == GemmSpec::Bias::PerRow && !validArg(s.biasArg)))
    return makeError("kernel ", kernel.name, ": a direct convolution argument is out of range");
  // GemmIrContext carries a GEMM plan for the GEMM pieces; none of the helpers used here read it.
  GemmPlan unusedGemmPlan;
  GemmIrContext c(module, kernel, unusedGemmPlan);
  DirectShape sh(s);
  Function* pad = d.paddedArg >= 0 ? emitPadItems(c, sh) : nullptr;
  Function* items = emitItems(c, sh);

  Function* entry = c.makeFunction("", Type::getVoidTy(c.ctx), {c.ptr}, /*internal=*/false);
  entry->getArg(0)->setName("args");
  entry->addParamAttr(0, Attribute::NoAlias);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", entry));
  if (pad)
    gemmir::emitRunItems(c, b, entry->getArg(0), pad, sh.g.batch * sh.g.inChannels, s.parallel,
                         "padWorker");
  gemmir::emitRunItems(c, b, entry->getArg(0), items, sh.items(), s.parallel, "worker");
  b.CreateRetVoid();
  if (Status st = gemmir::verifyKernelFunctions(module, kernel.name); !st.ok())
    return st.error();
  return entry;
}

} // namespace fb::cg
