// The GEMM kernel generator: the entry function, the blocked loop nest over one work item, and
// the run-time packing of A and B (strided and implicit im2col) into micro-panels.
#include "codegen/gemm/GemmEmitter.h"

#include "codegen/gemm/DepthwiseEmitter.h"
#include "codegen/gemm/DirectConv.h"
#include "codegen/gemm/GemmIrBuilder.h"
#include "codegen/gemm/Winograd.h"
#include "core/Faults.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <sstream>

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

/// Packing buffers live on the worker's stack; keep them well inside an 8 MiB thread stack.
constexpr int64_t kMaxStackBytes = 2 << 20;

/// `void <name>.packA(ptr args, i64 b, i64 g, i64 ic, i64 mLen, i64 pc, i64 kLen, ptr dst)`:
/// dst[(panel*kLen + k)*mr + i] = A[b, g, ic + panel*mr + i, pc + k], zero past mLen.
Function* emitPackA(GemmIrContext& c) {
  const GemmPlan& p = c.plan;
  Function* f = c.makeFunction("packA", Type::getVoidTy(c.ctx),
                               {c.ptr, c.i64, c.i64, c.i64, c.i64, c.i64, c.i64, c.ptr}, true);
  const char* names[] = {"args", "b", "g", "ic", "mLen", "pc", "kLen", "dst"};
  for (unsigned i = 0; i < f->arg_size(); ++i)
    f->getArg(i)->setName(names[i]);
  f->addParamAttr(7, Attribute::NoAlias);
  Value *argv = f->getArg(0), *bi = f->getArg(1), *g = f->getArg(2), *ic = f->getArg(3);
  Value *mLen = f->getArg(4), *pc = f->getArg(5), *kLen = f->getArg(6), *dst = f->getArg(7);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* base = loadArg(b, argv, p.a.arg, "A");
  Value* off =
      b.CreateAdd(b.CreateMul(bi, c.c64(p.a.batchStride)), b.CreateMul(g, c.c64(p.a.groupStride)));
  off = b.CreateAdd(off, b.CreateMul(pc, c.c64(p.a.colStride)));
  Value* src = floatGep(b, base, off, "A.slice");
  Value* panels = b.CreateUDiv(b.CreateAdd(mLen, c.c64(p.mr - 1)), c.c64(p.mr));
  emitFor(b, c.c64(0), panels, c.c64(1), "panel", [&](Value* panel) {
    Value* out = floatGep(b, dst, b.CreateMul(b.CreateMul(panel, kLen), c.c64(p.mr)), "dst.panel");
    emitFor(b, c.c64(0), c.c64(p.mr), c.c64(1), "i", [&](Value* i) {
      Value* local = b.CreateAdd(b.CreateMul(panel, c.c64(p.mr)), i);
      Value* live = b.CreateICmpSLT(local, mLen);
      // Dead rows read row ic (always valid) and store zero.
      Value* row = b.CreateSelect(live, b.CreateAdd(ic, local), ic);
      Value* rowSrc = floatGep(b, src, b.CreateMul(row, c.c64(p.a.rowStride)), "A.row");
      emitFor(b, c.c64(0), kLen, c.c64(1), "k", [&](Value* k) {
        Value* v = b.CreateAlignedLoad(
            c.f32, floatGep(b, rowSrc, b.CreateMul(k, c.c64(p.a.colStride))), Align(4));
        v = b.CreateSelect(live, v, c.cf(0.0f));
        b.CreateAlignedStore(v, floatGep(b, out, b.CreateAdd(b.CreateMul(k, c.c64(p.mr)), i)),
                             Align(4));
      });
    });
  });
  b.CreateRetVoid();
  return f;
}

/// `void <name>.packB(ptr args, i64 b, i64 g, i64 n0, i64 nLen, i64 pc, i64 kLen, ptr dst,
/// i64 panelStride)`: dst[panel*panelStride + k*nr + j] = B[b, g, pc + k, n0 + panel*nr + j],
/// zero past nLen; for a convolution B is the implicit im2col of the input. panelStride is
/// kLen*nr for the per-item block, K*nr for the shared buffer (the pre-packed layout).
Function* emitPackB(GemmIrContext& c) {
  const GemmPlan& p = c.plan;
  Function* f =
      c.makeFunction("packB", Type::getVoidTy(c.ctx),
                     {c.ptr, c.i64, c.i64, c.i64, c.i64, c.i64, c.i64, c.ptr, c.i64}, true);
  const char* names[] = {"args", "b", "g", "n0", "nLen", "pc", "kLen", "dst", "panelStride"};
  for (unsigned i = 0; i < f->arg_size(); ++i)
    f->getArg(i)->setName(names[i]);
  f->addParamAttr(7, Attribute::NoAlias);
  Value *argv = f->getArg(0), *bi = f->getArg(1), *g = f->getArg(2), *n0 = f->getArg(3);
  Value *nLen = f->getArg(4), *pc = f->getArg(5), *kLen = f->getArg(6), *dst = f->getArg(7);
  Value* panelStride = f->getArg(8);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* base = loadArg(b, argv, p.b.arg, "B");
  Value* src = floatGep(
      b, base,
      b.CreateAdd(b.CreateMul(bi, c.c64(p.b.batchStride)), b.CreateMul(g, c.c64(p.b.groupStride))),
      "B.slice");
  Value* panels = b.CreateUDiv(b.CreateAdd(nLen, c.c64(p.nr - 1)), c.c64(p.nr));
  auto dstAt = [&](Value* panel, Value* k, Value* j) {
    return floatGep(
        b, dst,
        b.CreateAdd(b.CreateAdd(b.CreateMul(panel, panelStride), b.CreateMul(k, c.c64(p.nr))), j));
  };

  if (p.b.source == OperandSource::Strided && p.b.colStride == 1) {
    // Contiguous rows: masked 8-wide copies.
    Value* src0 =
        floatGep(b, src, b.CreateAdd(n0, b.CreateMul(pc, c.c64(p.b.rowStride))), "B.block");
    emitFor(b, c.c64(0), panels, c.c64(1), "panel", [&](Value* panel) {
      Value* left = b.CreateTrunc(b.CreateSub(nLen, b.CreateMul(panel, c.c64(p.nr))), c.i32);
      Value* leftSplat = b.CreateVectorSplat(8, left);
      std::vector<Value*> masks;
      for (int64_t j = 0; j < p.nr / 8; ++j) {
        SmallVector<Constant*, 8> lanes;
        for (int l = 0; l < 8; ++l)
          lanes.push_back(ConstantInt::get(c.i32, 8 * j + l));
        masks.push_back(b.CreateICmpSLT(ConstantVector::get(lanes), leftSplat, "colmask"));
      }
      Value* colBase = floatGep(b, src0, b.CreateMul(panel, c.c64(p.nr)));
      emitFor(b, c.c64(0), kLen, c.c64(1), "k", [&](Value* k) {
        Value* row = floatGep(b, colBase, b.CreateMul(k, c.c64(p.b.rowStride)));
        for (int64_t j = 0; j < p.nr / 8; ++j) {
          Value* v = b.CreateMaskedLoad(c.v8f32, floatGep(b, row, c.c64(8 * j)), Align(4),
                                        masks[size_t(j)], c.vf(0.0f));
          b.CreateAlignedStore(v, dstAt(panel, k, c.c64(8 * j)), Align(4));
        }
      });
    });
  } else if (p.b.source == OperandSource::Strided) {
    // Transposed or strided B: element by element, reading along k.
    emitFor(b, c.c64(0), panels, c.c64(1), "panel", [&](Value* panel) {
      emitFor(b, c.c64(0), c.c64(p.nr), c.c64(1), "j", [&](Value* j) {
        Value* local = b.CreateAdd(b.CreateMul(panel, c.c64(p.nr)), j);
        Value* live = b.CreateICmpSLT(local, nLen);
        Value* col = b.CreateSelect(live, b.CreateAdd(n0, local), n0);
        Value* colSrc = floatGep(b, src,
                                 b.CreateAdd(b.CreateMul(col, c.c64(p.b.colStride)),
                                             b.CreateMul(pc, c.c64(p.b.rowStride))));
        emitFor(b, c.c64(0), kLen, c.c64(1), "k", [&](Value* k) {
          Value* v = b.CreateAlignedLoad(
              c.f32, floatGep(b, colSrc, b.CreateMul(k, c.c64(p.b.rowStride))), Align(4));
          b.CreateAlignedStore(b.CreateSelect(live, v, c.cf(0.0f)), dstAt(panel, k, j), Align(4));
        });
      });
    });
  } else {
    // Implicit im2col, 8 columns at a time. Per column: the input row/column of the kernel's
    // top-left tap (dead columns get a row that fails every bounds check); per group of 8
    // columns: whether they are 8 consecutive input pixels of one row (stride 1), which then
    // load with one masked vector load instead of a gather; per k: channel and tap.
    const ConvGeometry& cv = *c.spec.conv;
    int64_t padded = (p.nc + p.nr - 1) / p.nr * p.nr;
    Value* ihBase = b.CreateAlloca(c.i32, c.c64(padded), "ih.base");
    Value* iwBase = b.CreateAlloca(c.i32, c.c64(padded), "iw.base");
    Value* rowRun = b.CreateAlloca(c.i1, c.c64(padded / 8), "row.run");
    cast<AllocaInst>(ihBase)->setAlignment(Align(32));
    cast<AllocaInst>(iwBase)->setAlignment(Align(32));
    emitFor(b, c.c64(0), b.CreateMul(panels, c.c64(p.nr)), c.c64(1), "col", [&](Value* col) {
      Value* live = b.CreateICmpSLT(col, nLen);
      Value* pix = b.CreateAdd(n0, col);
      Value* oh = b.CreateUDiv(pix, c.c64(cv.outW));
      Value* ow = b.CreateURem(pix, c.c64(cv.outW));
      Value* ih = b.CreateSub(b.CreateMul(oh, c.c64(cv.strideH)), c.c64(cv.padTop));
      Value* iw = b.CreateSub(b.CreateMul(ow, c.c64(cv.strideW)), c.c64(cv.padLeft));
      b.CreateStore(b.CreateTrunc(b.CreateSelect(live, ih, c.c64(int64_t(1) << 30)), c.i32),
                    b.CreateGEP(c.i32, ihBase, col));
      b.CreateStore(b.CreateTrunc(iw, c.i32), b.CreateGEP(c.i32, iwBase, col));
    });
    emitFor(b, c.c64(0), b.CreateMul(panels, c.c64(p.nr / 8)), c.c64(1), "group",
            [&](Value* group) {
              Value* first = b.CreateMul(group, c.c64(8));
              Value* last = b.CreateAdd(first, c.c64(7));
              auto at = [&](Value* table, Value* i) {
                return b.CreateLoad(c.i32, b.CreateGEP(c.i32, table, i));
              };
              Value* sameRow = b.CreateICmpEQ(at(ihBase, first), at(ihBase, last));
              Value* consecutive = b.CreateICmpEQ(
                  b.CreateAdd(at(iwBase, first), ConstantInt::get(c.i32, 7 * cv.strideW)),
                  at(iwBase, last));
              Value* run = cv.strideW <= 2 ? b.CreateAnd(sameRow, consecutive) : b.getFalse();
              b.CreateStore(run, b.CreateGEP(c.i1, rowRun, group));
            });
    int64_t taps = cv.kernelH * cv.kernelW;
    auto splat = [&](Value* v) { return b.CreateVectorSplat(8, v); };
    Value* hVec = splat(ConstantInt::get(c.i32, cv.inH));
    Value* wVec = splat(ConstantInt::get(c.i32, cv.inW));
    emitFor(b, c.c64(0), kLen, c.c64(1), "k", [&](Value* k) {
      Value* kk = b.CreateAdd(pc, k);
      Value* ci = b.CreateUDiv(kk, c.c64(taps));
      Value* tap = b.CreateURem(kk, c.c64(taps));
      Value* dh = b.CreateTrunc(
          b.CreateMul(b.CreateUDiv(tap, c.c64(cv.kernelW)), c.c64(cv.dilationH)), c.i32);
      Value* dw = b.CreateTrunc(
          b.CreateMul(b.CreateURem(tap, c.c64(cv.kernelW)), c.c64(cv.dilationW)), c.i32);
      Value* chan = floatGep(b, src, b.CreateMul(ci, c.c64(cv.inH * cv.inW)), "X.chan");
      Value* dhVec = splat(dh);
      Value* dwVec = splat(dw);
      emitFor(b, c.c64(0), panels, c.c64(1), "panel", [&](Value* panel) {
        for (int64_t jv = 0; jv < p.nr / 8; ++jv) {
          Value* group = b.CreateAdd(b.CreateMul(panel, c.c64(p.nr / 8)), c.c64(jv));
          Value* col = b.CreateMul(group, c.c64(8));
          Value* ih = b.CreateAdd(
              b.CreateAlignedLoad(c.v8i32, b.CreateGEP(c.i32, ihBase, col), Align(32)), dhVec);
          Value* iw = b.CreateAdd(
              b.CreateAlignedLoad(c.v8i32, b.CreateGEP(c.i32, iwBase, col), Align(32)), dwVec);
          Value* ok = b.CreateAnd(b.CreateICmpULT(ih, hVec), b.CreateICmpULT(iw, wVec), "inside");
          Value* run = b.CreateLoad(c.i1, b.CreateGEP(c.i1, rowRun, group));
          Function* fn = b.GetInsertBlock()->getParent();
          BasicBlock* loadBlock = BasicBlock::Create(c.ctx, "im2col.load", fn);
          BasicBlock* zeroBlock = BasicBlock::Create(c.ctx, "im2col.zero", fn);
          BasicBlock* runBlock = BasicBlock::Create(c.ctx, "im2col.run", fn);
          BasicBlock* gatherBlock = BasicBlock::Create(c.ctx, "im2col.gather", fn);
          BasicBlock* join = BasicBlock::Create(c.ctx, "im2col.join", fn);
          // Columns wholly in the padding (or past N) read nothing: a masked load whose lanes
          // are all off still costs a microcode assist on AMD CPUs when its address is not
          // mapped (a dead column's row is far outside the image), about as long as a whole
          // panel's FMAs.
          b.CreateCondBr(b.CreateOrReduce(ok), loadBlock, zeroBlock);
          b.SetInsertPoint(zeroBlock);
          b.CreateBr(join);
          b.SetInsertPoint(loadBlock);
          b.CreateCondBr(run, runBlock, gatherBlock);
          // 8 pixels of one input row, consecutive (stride 1: one vector) or every other one
          // (stride 2: two vectors, then the even lanes): elements outside the image are
          // masked off and never touched, so the (possibly out-of-image) address is fine.
          b.SetInsertPoint(runBlock);
          Value* ih0 = b.CreateSExt(b.CreateExtractElement(ih, uint64_t(0)), c.i64);
          Value* iw0 = b.CreateSExt(b.CreateExtractElement(iw, uint64_t(0)), c.i64);
          Value* rowPtr =
              b.CreateGEP(c.f32, chan, b.CreateAdd(b.CreateMul(ih0, c.c64(cv.inW)), iw0));
          Value* vRun;
          if (cv.strideW == 1) {
            vRun = b.CreateMaskedLoad(c.v8f32, rowPtr, Align(4), ok, c.vf(0.0f));
          } else {
            Value* rowOk =
                b.CreateVectorSplat(8, b.CreateICmpULT(b.CreateExtractElement(ih, uint64_t(0)),
                                                       ConstantInt::get(c.i32, cv.inH)));
            Value* iwFirst = splat(b.CreateExtractElement(iw, uint64_t(0)));
            Value* halves[2];
            for (int h = 0; h < 2; ++h) {
              SmallVector<Constant*, 8> lanes;
              for (int l = 0; l < 8; ++l)
                lanes.push_back(ConstantInt::get(c.i32, 8 * h + l));
              Value* cols = b.CreateAdd(iwFirst, ConstantVector::get(lanes));
              Value* mask = b.CreateAnd(rowOk, b.CreateICmpULT(cols, wVec));
              halves[h] = b.CreateMaskedLoad(c.v8f32, floatGep(b, rowPtr, c.c64(8 * h)), Align(4),
                                             mask, c.vf(0.0f));
            }
            vRun = b.CreateShuffleVector(halves[0], halves[1],
                                         ArrayRef<int>{0, 2, 4, 6, 8, 10, 12, 14}, "even");
          }
          b.CreateBr(join);
          b.SetInsertPoint(gatherBlock);
          Value* idx = b.CreateSelect(ok, b.CreateAdd(b.CreateMul(ih, wVec), iw),
                                      splat(ConstantInt::get(c.i32, 0)));
          Value* ptrs = b.CreateGEP(c.f32, chan, b.CreateSExt(idx, FixedVectorType::get(c.i64, 8)));
          Value* vGather = b.CreateMaskedGather(c.v8f32, ptrs, Align(4), ok, c.vf(0.0f));
          b.CreateBr(join);
          b.SetInsertPoint(join);
          PHINode* v = b.CreatePHI(c.v8f32, 3, "im2col");
          v->addIncoming(vRun, runBlock);
          v->addIncoming(vGather, gatherBlock);
          v->addIncoming(c.vf(0.0f), zeroBlock);
          b.CreateAlignedStore(v, dstAt(panel, k, c.c64(8 * jv)), Align(4));
        }
      });
    });
  }
  b.CreateRetVoid();
  return f;
}

/// `void <name>.items(ptr args, i64 begin, i64 end)`: the blocked loop nest of work items
/// [begin, end) — the body fb_parallel_for runs.
Function* emitItems(GemmIrContext& c, Function* packA, Function* packB, Function* uk,
                    Function* ukRows, Function* ukRemainder) {
  const GemmPlan& p = c.plan;
  Function* f = gemmir::makeItemsFunction(c, "items");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* aLocal = packA ? b.CreateAlloca(c.f32, c.c64(p.mc * p.kc), "A.packed") : nullptr;
  Value* bLocal = packB ? b.CreateAlloca(c.f32, c.c64(p.kc * p.nc), "B.packed") : nullptr;
  if (aLocal)
    cast<AllocaInst>(aLocal)->setAlignment(Align(64));
  if (bLocal)
    cast<AllocaInst>(bLocal)->setAlignment(Align(64));
  Value* aConst = packA ? nullptr : loadArg(b, argv, p.a.arg, "A.panels");
  Value* bConst =
      packB ? nullptr : loadArg(b, argv, p.sharedB ? p.sharedBArg : p.b.arg, "B.panels");
  int64_t kBlocks = std::max<int64_t>(1, (p.K + p.kc - 1) / p.kc);

  emitFor(b, f->getArg(1), f->getArg(2), c.c64(1), "item", [&](Value* item) {
    Value* np = b.CreateURem(item, c.c64(p.nParts), "npart");
    Value* t = b.CreateUDiv(item, c.c64(p.nParts));
    Value* mp = b.CreateURem(t, c.c64(p.mParts), "mpart");
    t = b.CreateUDiv(t, c.c64(p.mParts));
    Value* g = b.CreateURem(t, c.c64(p.groups), "group");
    Value* bi = b.CreateUDiv(t, c.c64(p.groups), "batch");
    Value* nStart = b.CreateMul(np, c.c64(p.nPart), "n.start");
    Value* nEnd = emitMin(b, c.c64(p.N), b.CreateAdd(nStart, c.c64(p.nPart)));
    Value* mStart = b.CreateMul(mp, c.c64(p.mPart), "m.start");
    Value* mEnd = emitMin(b, c.c64(p.M), b.CreateAdd(mStart, c.c64(p.mPart)));
    Value* cItem =
        b.CreateAdd(b.CreateMul(bi, c.c64(p.cBatchStride)), b.CreateMul(g, c.c64(p.cGroupStride)));
    Value* aSlice =
        b.CreateAdd(b.CreateMul(p.a.batchStride != 0 ? bi : c.c64(0), c.c64(p.groups)), g);
    Value* bSlice = p.sharedB              ? b.CreateAdd(b.CreateMul(bi, c.c64(p.groups)), g)
                    : p.b.batchStride != 0 ? bi
                                           : c.c64(0);

    emitFor(b, nStart, nEnd, c.c64(p.nc), "jc", [&](Value* n0) {
      Value* nLen = emitMin(b, c.c64(p.nc), b.CreateSub(nEnd, n0));
      emitFor(b, c.c64(0), c.c64(kBlocks), c.c64(1), "kblock", [&](Value* kb) {
        Value* pc = b.CreateMul(kb, c.c64(p.kc), "pc");
        Value* kLen = emitMin(b, c.c64(p.kc), b.CreateSub(c.c64(p.K), pc));
        Value* accumulate = b.CreateICmpSGT(kb, c.c64(0), "accumulate");
        Value* last = b.CreateICmpEQ(kb, c.c64(kBlocks - 1), "last");
        Value *bBase, *bPanelStride;
        if (packB) {
          b.CreateCall(packB,
                       {argv, bi, g, n0, nLen, pc, kLen, bLocal, b.CreateMul(kLen, c.c64(p.nr))});
          bBase = bLocal;
          bPanelStride = b.CreateMul(kLen, c.c64(p.nr));
        } else {
          Value* panel0 =
              b.CreateAdd(b.CreateMul(bSlice, c.c64(p.bPanels)), b.CreateUDiv(n0, c.c64(p.nr)));
          bBase = floatGep(b, bConst,
                           b.CreateAdd(b.CreateMul(panel0, c.c64(p.bPanelFloats())),
                                       b.CreateMul(pc, c.c64(p.nr))));
          bPanelStride = c.c64(p.bPanelFloats());
        }
        emitFor(b, mStart, mEnd, c.c64(p.mc), "ic", [&](Value* ic) {
          Value* mLen = emitMin(b, c.c64(p.mc), b.CreateSub(mEnd, ic));
          Value *aBase, *aPanelStride;
          if (packA) {
            b.CreateCall(packA, {argv, bi, g, ic, mLen, pc, kLen, aLocal});
            aBase = aLocal;
            aPanelStride = b.CreateMul(kLen, c.c64(p.mr));
          } else {
            // K-block-major (packConstantOperands): slice, K block, panel, k, row.
            Value* sliceBase = b.CreateMul(aSlice, c.c64(p.aPanels * p.K * p.mr));
            Value* blockBase = b.CreateMul(pc, c.c64(p.aPanels * p.mr));
            aPanelStride = b.CreateMul(kLen, c.c64(p.mr));
            Value* panel0 = b.CreateUDiv(ic, c.c64(p.mr));
            aBase = floatGep(
                b, aConst,
                b.CreateAdd(b.CreateAdd(sliceBase, blockBase), b.CreateMul(panel0, aPanelStride)));
          }
          emitFor(b, c.c64(0), nLen, c.c64(p.nr), "jr", [&](Value* jr) {
            Value* nValid = emitMin(b, c.c64(p.nr), b.CreateSub(nLen, jr));
            Value* bp =
                floatGep(b, bBase, b.CreateMul(b.CreateUDiv(jr, c.c64(p.nr)), bPanelStride), "Bp");
            emitFor(b, c.c64(0), mLen, c.c64(p.mr), "ir", [&](Value* ir) {
              Value* mValid = emitMin(b, c.c64(p.mr), b.CreateSub(mLen, ir));
              Value* ap = floatGep(b, aBase,
                                   b.CreateMul(b.CreateUDiv(ir, c.c64(p.mr)), aPanelStride), "Ap");
              Value* row = b.CreateAdd(ic, ir);
              Value* cOff = b.CreateAdd(b.CreateAdd(cItem, b.CreateMul(row, c.c64(p.cRowStride))),
                                        b.CreateAdd(n0, jr), "c.off");
              Value* mAbs = b.CreateAdd(b.CreateMul(g, c.c64(p.M)), row);
              Value* nAbs = b.CreateAdd(n0, jr);
              Value* full = b.CreateAnd(b.CreateICmpEQ(mValid, c.c64(p.mr)),
                                        b.CreateICmpEQ(nValid, c.c64(p.nr)));
              Function* parent = b.GetInsertBlock()->getParent();
              BasicBlock* fullBlock = BasicBlock::Create(c.ctx, "tile.full", parent);
              BasicBlock* edgeBlock = BasicBlock::Create(c.ctx, "tile.edge", parent);
              BasicBlock* next = BasicBlock::Create(c.ctx, "tile.next", parent);
              b.CreateCondBr(full, fullBlock, edgeBlock);
              SmallVector<Value*, 11> callArgs = {argv, kLen, ap,   bp,     cOff,  accumulate,
                                                  last, mAbs, nAbs, mValid, nValid};
              b.SetInsertPoint(fullBlock);
              b.CreateCall(uk, callArgs);
              b.CreateBr(next);
              // Edge tiles. Parts and blocks are whole tiles, so the only partial ones are the
              // last rows (M mod mr, full width) and the last columns (N mod nr, any rows).
              b.SetInsertPoint(edgeBlock);
              if (faultEnabled(Fault::GemmEdgeLastColumn)) {
                // The faulty edge: a column remainder is passed one column short.
                callArgs[10] = b.CreateSelect(b.CreateICmpEQ(nValid, c.c64(p.nr)), nValid,
                                              b.CreateSub(nValid, c.c64(1)));
              }
              if (ukRows && ukRemainder) {
                BasicBlock* rows = BasicBlock::Create(c.ctx, "tile.edge.rows", parent);
                BasicBlock* cols = BasicBlock::Create(c.ctx, "tile.edge.remainder", parent);
                b.CreateCondBr(b.CreateICmpEQ(nValid, c.c64(p.nr)), rows, cols);
                b.SetInsertPoint(rows);
                b.CreateCall(ukRows, callArgs);
                b.CreateBr(next);
                b.SetInsertPoint(cols);
                b.CreateCall(ukRemainder, callArgs);
              } else if (ukRows || ukRemainder) {
                b.CreateCall(ukRows ? ukRows : ukRemainder, callArgs);
              }
              b.CreateBr(next);
              b.SetInsertPoint(next);
            });
          });
        });
      });
    });
  });
  b.CreateRetVoid();
  return f;
}

/// `void <name>.packItems(ptr args, i64 begin, i64 end)`: the first phase of a shared-B plan —
/// pack items [begin, end) of (slice, N block of nc, K block of kc) into the Scratch argument
/// in the pre-packed layout (slice × panels × K × nr), which the work items then read.
Function* emitSharedPackItems(GemmIrContext& c, Function* packB) {
  const GemmPlan& p = c.plan;
  Function* f = gemmir::makeItemsFunction(c, "packItems");
  Value* argv = f->getArg(0);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* shared = loadArg(b, argv, p.sharedBArg, "B.shared");
  int64_t kBlocks = std::max<int64_t>(1, (p.K + p.packKc() - 1) / p.packKc());
  int64_t nBlocks = (p.N + p.nc - 1) / p.nc;
  emitFor(b, f->getArg(1), f->getArg(2), c.c64(1), "item", [&](Value* item) {
    Value* kb = b.CreateURem(item, c.c64(kBlocks), "kblock");
    Value* t = b.CreateUDiv(item, c.c64(kBlocks));
    Value* nb = b.CreateURem(t, c.c64(nBlocks), "nblock");
    Value* slice = b.CreateUDiv(t, c.c64(nBlocks), "slice");
    Value* g = b.CreateURem(slice, c.c64(p.groups), "group");
    Value* bi = b.CreateUDiv(slice, c.c64(p.groups), "batch");
    Value* n0 = b.CreateMul(nb, c.c64(p.nc), "n0");
    Value* nLen = emitMin(b, c.c64(p.nc), b.CreateSub(c.c64(p.N), n0));
    Value* pc = b.CreateMul(kb, c.c64(p.packKc()), "pc");
    Value* kLen = emitMin(b, c.c64(p.packKc()), b.CreateSub(c.c64(p.K), pc));
    Value* panel0 =
        b.CreateAdd(b.CreateMul(slice, c.c64(p.bPanels)), b.CreateUDiv(n0, c.c64(p.nr)));
    Value* dst = floatGep(
        b, shared,
        b.CreateAdd(b.CreateMul(panel0, c.c64(p.bPanelFloats())), b.CreateMul(pc, c.c64(p.nr))),
        "dst");
    b.CreateCall(packB, {argv, bi, g, n0, nLen, pc, kLen, dst, c.c64(p.bPanelFloats())});
  });
  b.CreateRetVoid();
  return f;
}

} // namespace

namespace gemmir {

Function* emitWorkItems(GemmIrContext& c, Function* packA, Function* packB) {
  const GemmPlan& plan = c.plan;
  if (plan.mVectors) {
    // The column tile: one kernel for whole and short (masked) rows, one for the N remainder.
    Function* uk = emitColumnMicroKernel(c, int(plan.nr));
    Function* ukRemainder =
        plan.N % plan.nr != 0 ? emitColumnMicroKernel(c, int(plan.N % plan.nr)) : nullptr;
    return emitItems(c, packA, packB, uk, plan.M % plan.mr != 0 ? uk : nullptr, ukRemainder);
  }
  Function* uk = emitMicroKernel(c, /*edge=*/false, int(plan.nr / 8));
  // Edge micro-kernels only for the edges this GEMM has (each carries the whole epilogue, and
  // compile time grows with them): the last rows at full width, and the N remainder with just
  // enough vectors for it — or, when it is at most kColumnEdge columns, vectors along M
  // (mr ≤ 8), so a 1-column remainder (N = 49) costs about one FMA per k, not a whole tile.
  const int fullVectors = int(plan.nr / 8);
  const int64_t remainder = plan.N % plan.nr;
  Function* ukRows =
      plan.M % plan.mr != 0 ? emitMicroKernel(c, /*edge=*/true, fullVectors) : nullptr;
  Function* ukRemainder = nullptr;
  if (remainder > 0 && plan.mr <= 8 && remainder <= kColumnEdge) {
    ukRemainder = emitColumnMicroKernel(c, int(remainder));
  } else if (remainder > 0) {
    int vectors = int((remainder + 7) / 8);
    ukRemainder =
        vectors == fullVectors && ukRows ? ukRows : emitMicroKernel(c, /*edge=*/true, vectors);
  }
  return emitItems(c, packA, packB, uk, ukRows, ukRemainder);
}

} // namespace gemmir

Expected<Function*> emitGemmKernel(Module& module, const Kernel& kernel) {
  if (kernel.gemm && kernel.gemm->winograd)
    return emitWinogradKernel(module, kernel);
  if (kernel.gemm && kernel.gemm->direct)
    return emitDirectConvKernel(module, kernel);
  FB_ASSIGN_OR_RETURN(GemmPlan plan, planGemm(kernel));
  int64_t stackBytes = 4 * ((plan.a.source == OperandSource::Packed ? 0 : plan.mc * plan.kc) +
                            (plan.b.source == OperandSource::Packed ? 0
                             : plan.sharedB                         ? 4 * plan.nc
                                            : plan.kc * plan.nc + 4 * plan.nc));
  if (stackBytes > kMaxStackBytes)
    return makeError("kernel ", kernel.name, ": packing buffers of ", stackBytes,
                     " bytes exceed the limit of ", kMaxStackBytes, "; use smaller mc/kc/nc");
  if (module.getFunction(kernel.name))
    return makeError("kernel ", kernel.name,
                     ": a function of that name already exists in the module");
  GemmIrContext c(module, kernel, plan);
  Function* packA = plan.a.source == OperandSource::Packed ? nullptr : emitPackA(c);
  Function* packB = plan.b.source == OperandSource::Packed ? nullptr : emitPackB(c);
  Function* packItems = plan.sharedB ? emitSharedPackItems(c, packB) : nullptr;
  Function* items = gemmir::emitWorkItems(c, packA, plan.sharedB ? nullptr : packB);

  Function* entry = c.makeFunction("", Type::getVoidTy(c.ctx), {c.ptr}, /*internal=*/false);
  entry->getArg(0)->setName("args");
  entry->addParamAttr(0, Attribute::NoAlias);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", entry));
  if (packItems)
    gemmir::emitRunItems(c, b, entry->getArg(0), packItems, plan.packItems(), plan.parallel,
                         "packWorker");
  gemmir::emitRunItems(c, b, entry->getArg(0), items, plan.items(), plan.parallel, "worker");
  b.CreateRetVoid();

  if (Status st = gemmir::verifyKernelFunctions(module, kernel.name); !st.ok())
    return st.error();
  return entry;
}

Expected<std::string> describeGemmBlocking(const Kernel& kernel) {
  if (kernel.gemm && isDepthwise(*kernel.gemm))
    return describeDepthwise(kernel);
  if (kernel.gemm && kernel.gemm->winograd)
    return describeWinograd(kernel);
  if (kernel.gemm && kernel.gemm->direct)
    return describeDirectConv(kernel);
  FB_ASSIGN_OR_RETURN(GemmPlan p, planGemm(kernel));
  auto source = [](OperandSource s) {
    switch (s) {
    case OperandSource::Strided:
      return "packed at run time";
    case OperandSource::Packed:
      return "packed at compile time";
    case OperandSource::Im2col:
      return "im2col at run time";
    }
    return "";
  };
  std::ostringstream os;
  os << (p.mVectors ? "column tile (vectors along M) " : "") << "mr=" << p.mr << " nr=" << p.nr
     << " mc=" << p.mc << " kc=" << p.kc << " nc=" << p.nc << ", " << p.items() << " items ("
     << p.batch * p.groups << " batch·group × " << p.mParts << " M parts × " << p.nParts
     << " N parts)" << (p.parallel ? ", parallel" : ", serial") << ", A " << source(p.a.source)
     << ", B " << source(p.b.source) << (p.sharedB ? " once, shared by the M parts" : "");
  return os.str();
}

} // namespace fb::cg
