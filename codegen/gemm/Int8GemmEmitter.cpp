// LLVM IR of int8 GEMM-class kernels: activation packing (im2col for convolutions), the integer
// micro-kernel (vpdpbusd or vpmaddwd) and the requantizing store.
#include "codegen/gemm/Int8GemmEmitter.h"
#include "codegen/gemm/GemmIrBuilder.h"

#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>

namespace fb::cg {

using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using gemmir::emitFor;
using gemmir::loadArg;
using llvm::Value;

namespace {

constexpr int64_t kLaneBytes = 4; // bytes per lane and k-step in both forms

/// The resolved structure of one int8 kernel.
struct Int8Plan {
  int64_t group = 4; ///< k values per lane and step
  int64_t elemBytes = 1;
  int64_t kSteps = 0; ///< ceil(K / group)
  int64_t rowPanels = 0, colPanels = 0;
  int64_t rowChunk = 1; ///< row panels per compute item
  int64_t chunks = 1;   ///< ceil(rowPanels / rowChunk)
  int64_t packItems() const { return packPerSlice * slices; }
  int64_t computeItems() const { return slices * colPanels * chunks; }
  int64_t packPerSlice = 0, slices = 1;
};

Int8Plan planInt8(const Int8GemmSpec& s) {
  Int8Plan p;
  p.group = *s.isa == Int8Isa::Vnni ? 4 : 2;
  p.elemBytes = kLaneBytes / p.group;
  p.kSteps = (s.K + p.group - 1) / p.group;
  p.rowPanels = (s.M + s.mr - 1) / s.mr;
  p.colPanels = (s.N + s.nr - 1) / s.nr;
  p.slices = s.slices();
  // Enough items for two threads to balance (about 16), each reusing its column panel over
  // as many row panels as that allows.
  const int64_t outer = p.slices * p.colPanels;
  const int64_t wanted = std::clamp<int64_t>((16 + outer - 1) / outer, 1, p.rowPanels);
  p.rowChunk = (p.rowPanels + wanted - 1) / wanted;
  p.chunks = (p.rowPanels + p.rowChunk - 1) / p.rowChunk;
  // Convolutions pack one column panel of one image and group per item; matmuls one row panel.
  p.packPerSlice = s.weightsAreRows() ? p.colPanels : p.rowPanels;
  if (!s.weightsAreRows())
    p.slices = 1;
  return p;
}

struct Emitter {
  Emitter(Module& m, const Kernel& k)
      : module(m), ctx(m.getContext()), kernel(k), s(*k.int8), plan(planInt8(s)) {
    i8 = Type::getInt8Ty(ctx);
    i16 = Type::getInt16Ty(ctx);
    i32 = Type::getInt32Ty(ctx);
    i64 = Type::getInt64Ty(ctx);
    f64 = Type::getDoubleTy(ctx);
    ptr = PointerType::getUnqual(ctx);
    v8i32 = FixedVectorType::get(i32, 8);
    v16i16 = FixedVectorType::get(i16, 16);
    v8f64 = FixedVectorType::get(f64, 8);
    v8i8 = FixedVectorType::get(i8, 8);
  }

  Module& module;
  LLVMContext& ctx;
  const Kernel& kernel;
  const Int8GemmSpec& s;
  Int8Plan plan;
  Type *i8, *i16, *i32, *i64, *f64;
  PointerType* ptr;
  FixedVectorType *v8i32, *v16i16, *v8f64, *v8i8;

  Constant* c64(int64_t v) const { return ConstantInt::get(i64, uint64_t(v), /*signed=*/true); }
  bool vnni() const { return *s.isa == Int8Isa::Vnni; }

  Function* makeFunction(const std::string& suffix, Type* ret, ArrayRef<Type*> params,
                         bool internal) const {
    std::string name = suffix.empty() ? kernel.name : kernel.name + "." + suffix;
    Function* f = Function::Create(FunctionType::get(ret, params, /*isVarArg=*/false),
                                   internal ? Function::InternalLinkage : Function::ExternalLinkage,
                                   name, module);
    f->addFnAttr(Attribute::NoUnwind);
    return f;
  }

  Function* makeItems(const std::string& suffix) {
    Function* f = makeFunction(suffix, Type::getVoidTy(ctx), {ptr, i64, i64}, true);
    f->getArg(0)->setName("args");
    f->getArg(1)->setName("begin");
    f->getArg(2)->setName("end");
    return f;
  }

  Value* byteGep(IRBuilder<>& b, Value* base, Value* offset, const Twine& name = "") {
    return b.CreateInBoundsGEP(i8, base, offset, name);
  }

  /// The activation element `raw` (an i8 load) as the packed operand stores it: VNNI reads u8
  /// (i8 data biased by 128); the i16 form stores it minus the zero point. `inBounds` false
  /// gives what padding reads as (the zero point, i.e. 0 after the shift).
  Value* packedActValue(IRBuilder<>& b, Value* raw, Value* inBounds) {
    if (vnni()) {
      Value* v = s.actType == DType::I8 ? b.CreateXor(raw, ConstantInt::get(i8, 0x80)) : raw;
      const int64_t zp = s.actZeroPoint + (s.actType == DType::I8 ? 128 : 0);
      return b.CreateSelect(inBounds, v, ConstantInt::get(i8, uint64_t(zp & 0xff)));
    }
    Value* wide = s.actType == DType::I8 ? b.CreateSExt(raw, i32) : b.CreateZExt(raw, i32);
    Value* v = b.CreateSub(wide, ConstantInt::get(i32, uint64_t(int64_t(s.actZeroPoint))));
    return b.CreateTrunc(b.CreateSelect(inBounds, v, ConstantInt::get(i32, 0)), i16);
  }
  Value* zeroElement() const { return vnni() ? ConstantInt::get(i8, 0) : ConstantInt::get(i16, 0); }
  void storeElement(IRBuilder<>& b, Value* v, Value* at) { b.CreateAlignedStore(v, at, Align(1)); }

  /// `<kernel>.pack` for a convolution: item = slice * colPanels + panel; the panel holds, per
  /// k-step, nr lanes (output pixels) of `group` consecutive k of the im2col.
  /// Output rows a panel of nr consecutive output pixels touches, at most.
  int64_t panelRows() const {
    const int64_t ow = s.conv->outW;
    return std::min<int64_t>(s.nr, (s.nr - 2 + ow) / ow + 1);
  }

  /// `<kernel>.pack` for a convolution of stride 1 or 2 whose panels touch few output rows: per
  /// k-step, each of the `group` k values is one vector of nr lanes assembled from one masked
  /// load per output row the panel touches (consecutive output pixels of a row read
  /// consecutive input bytes, or every other byte of a twice as wide load; masked-off lanes
  /// read as the zero point), converted and
  /// interleaved into the panel's lane-major k-step in one store.
  Function* emitConvPackRows() {
    const ConvGeometry& c = *s.conv;
    Function* f = makeItems("pack");
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
    Value* args = f->getArg(0);
    Value* x = loadArg(b, args, s.actArg, "X");
    Value* packed = loadArg(b, args, s.packedActArg, "packedAct");
    const int64_t cinG = c.inChannels / c.groups, plane = c.inH * c.inW, nr = s.nr;
    const int64_t taps = c.kernelH * c.kernelW, rows = panelRows();
    const int64_t panelBytes = plan.kSteps * nr * kLaneBytes;
    auto* halves = FixedVectorType::get(i16, unsigned(nr));
    std::vector<Constant*> laneIdx;
    for (int64_t l = 0; l < nr; ++l)
      laneIdx.push_back(ConstantInt::get(i64, uint64_t(l)));
    Value* lanes = ConstantVector::get(laneIdx);
    // Stride sw: lane l reads the byte at l * sw of an nr * sw wide load (the rest masked off).
    const int64_t sw = c.strideW;
    auto* wideBytes = FixedVectorType::get(i8, unsigned(nr * sw));
    std::vector<int> spread(size_t(nr * sw), int(nr)), pick;
    for (int64_t l = 0; l < nr; ++l) {
      spread[size_t(l * sw)] = int(l);
      pick.push_back(int(l * sw));
    }
    Value* padRaw = b.CreateVectorSplat(unsigned(nr * sw),
                                        ConstantInt::get(i8, uint64_t(s.actZeroPoint & 0xff)));
    emitFor(b, f->getArg(1), f->getArg(2), c64(1), "item", [&](Value* item) {
      Value* slice = b.CreateSDiv(item, c64(plan.colPanels), "slice");
      Value* panel = b.CreateSRem(item, c64(plan.colPanels), "panel");
      Value* image = b.CreateSDiv(slice, c64(c.groups), "image");
      Value* g = b.CreateSRem(slice, c64(c.groups), "g");
      Value* xBase = byteGep(
          b, x,
          b.CreateMul(b.CreateAdd(b.CreateMul(image, c64(c.inChannels)), b.CreateMul(g, c64(cinG))),
                      c64(plane)),
          "X.slice");
      Value* dst = byteGep(b, packed, b.CreateMul(item, c64(panelBytes)), "dst");
      Value* n0 = b.CreateMul(panel, c64(nr), "n0");
      Value *oh0 = b.CreateSDiv(n0, c64(c.outW)), *ow0 = b.CreateSRem(n0, c64(c.outW));
      // Lanes of output row oh0 + r: [r*OW - ow0, (r+1)*OW - ow0), and below N.
      Value* laneN = b.CreateAdd(b.CreateVectorSplat(unsigned(nr), n0), lanes);
      Value* validN = b.CreateICmpSLT(laneN, b.CreateVectorSplat(unsigned(nr), c64(s.N)));
      std::vector<Value*> rowLanes;
      for (int64_t r = 0; r < rows; ++r) {
        Value *lo = b.CreateSub(c64(r * c.outW), ow0),
              *hi = b.CreateSub(c64((r + 1) * c.outW), ow0);
        Value* in = b.CreateAnd(b.CreateICmpSGE(lanes, b.CreateVectorSplat(unsigned(nr), lo)),
                                b.CreateICmpSLT(lanes, b.CreateVectorSplat(unsigned(nr), hi)));
        rowLanes.push_back(b.CreateAnd(in, validN));
      }
      emitFor(b, c64(0), c64(plan.kSteps), c64(1), "q", [&](Value* q) {
        std::vector<Value*> vals;
        for (int64_t e = 0; e < plan.group; ++e) {
          Value* k = b.CreateAdd(b.CreateMul(q, c64(plan.group)), c64(e));
          Value* live = b.CreateICmpSLT(k, c64(s.K));
          Value* kc = b.CreateSelect(live, k, c64(0));
          Value *ci = b.CreateUDiv(kc, c64(taps)), *t = b.CreateURem(kc, c64(taps));
          Value *kh = b.CreateUDiv(t, c64(c.kernelW)), *kw = b.CreateURem(t, c64(c.kernelW));
          Value* chan = byteGep(b, xBase, b.CreateMul(ci, c64(plane)));
          Value* iwOff = b.CreateAdd(b.CreateSub(b.CreateMul(kw, c64(c.dilationW)), c64(c.padLeft)),
                                     b.CreateMul(ow0, c64(sw)));
          Value* v = padRaw;
          for (int64_t r = 0; r < rows; ++r) {
            Value* ih = b.CreateAdd(
                b.CreateSub(b.CreateMul(b.CreateAdd(oh0, c64(r)), c64(c.strideH)), c64(c.padTop)),
                b.CreateMul(kh, c64(c.dilationH)));
            Value* rowOk = b.CreateAnd(live, b.CreateICmpULT(ih, c64(c.inH)));
            // Lane l of this row reads input column base + l * sw.
            Value* base = b.CreateSub(iwOff, c64(r * c.outW * sw));
            Value* iw = b.CreateAdd(b.CreateVectorSplat(unsigned(nr), base),
                                    b.CreateMul(lanes, b.CreateVectorSplat(unsigned(nr), c64(sw))));
            Value* mask = b.CreateAnd(
                b.CreateAnd(rowLanes[size_t(r)],
                            b.CreateICmpULT(iw, b.CreateVectorSplat(unsigned(nr), c64(c.inW)))),
                b.CreateVectorSplat(unsigned(nr), rowOk));
            Value* at = b.CreateGEP(
                i8, chan,
                b.CreateAdd(b.CreateMul(b.CreateSelect(rowOk, ih, c64(0)), c64(c.inW)), base));
            if (sw > 1)
              mask = b.CreateShuffleVector(mask, Constant::getNullValue(mask->getType()), spread);
            v = b.CreateMaskedLoad(wideBytes, at, Align(1), mask, v);
          }
          if (sw > 1)
            v = b.CreateShuffleVector(v, pick);
          if (vnni()) {
            if (s.actType == DType::I8)
              v = b.CreateXor(v, b.CreateVectorSplat(unsigned(nr), ConstantInt::get(i8, 0x80)));
          } else {
            Value* wide =
                s.actType == DType::I8 ? b.CreateSExt(v, halves) : b.CreateZExt(v, halves);
            v = b.CreateSub(
                wide, b.CreateVectorSplat(
                          unsigned(nr), ConstantInt::get(i16, uint64_t(int64_t(s.actZeroPoint)))));
          }
          vals.push_back(v);
        }
        // Lane-major: element (l, e) at l * group + e.
        std::vector<int> pairMask, outMask;
        for (int64_t i = 0; i < 2 * nr; ++i)
          pairMask.push_back(int(i));
        Value* all = vnni()
                         ? b.CreateShuffleVector(b.CreateShuffleVector(vals[0], vals[1], pairMask),
                                                 b.CreateShuffleVector(vals[2], vals[3], pairMask),
                                                 [&] {
                                                   std::vector<int> m;
                                                   for (int64_t i = 0; i < 4 * nr; ++i)
                                                     m.push_back(int(i));
                                                   return m;
                                                 }())
                         : b.CreateShuffleVector(vals[0], vals[1], pairMask);
        for (int64_t l = 0; l < nr; ++l)
          for (int64_t e = 0; e < plan.group; ++e)
            outMask.push_back(int(e * nr + l));
        Value* interleaved = b.CreateShuffleVector(all, outMask);
        b.CreateAlignedStore(interleaved, byteGep(b, dst, b.CreateMul(q, c64(nr * kLaneBytes))),
                             Align(1));
      });
    });
    b.CreateRetVoid();
    return f;
  }

  Function* emitConvPack() {
    const ConvGeometry& c = *s.conv;
    if (c.strideW <= 2 && panelRows() <= 4)
      return emitConvPackRows();
    Function* f = makeItems("pack");
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
    Value* args = f->getArg(0);
    ArrayType* laneArr = ArrayType::get(i64, uint64_t(s.nr));
    Value* ohS = b.CreateAlloca(laneArr, nullptr, "ih0");
    Value* owS = b.CreateAlloca(laneArr, nullptr, "iw0");
    Value* x = loadArg(b, args, s.actArg, "X");
    Value* packed = loadArg(b, args, s.packedActArg, "packedAct");
    const int64_t cinG = c.inChannels / c.groups, plane = c.inH * c.inW;
    const int64_t panelBytes = plan.kSteps * s.nr * kLaneBytes;
    emitFor(b, f->getArg(1), f->getArg(2), c64(1), "item", [&](Value* item) {
      Value* slice = b.CreateSDiv(item, c64(plan.colPanels), "slice");
      Value* panel = b.CreateSRem(item, c64(plan.colPanels), "panel");
      Value* image = b.CreateSDiv(slice, c64(c.groups), "image");
      Value* g = b.CreateSRem(slice, c64(c.groups), "g");
      Value* xBase = byteGep(
          b, x,
          b.CreateMul(b.CreateAdd(b.CreateMul(image, c64(c.inChannels)), b.CreateMul(g, c64(cinG))),
                      c64(plane)),
          "X.slice");
      Value* dst = byteGep(b, packed, b.CreateMul(item, c64(panelBytes)), "dst");
      emitFor(b, c64(0), c64(s.nr), c64(1), "lane", [&](Value* lane) {
        Value* n = b.CreateAdd(b.CreateMul(panel, c64(s.nr)), lane);
        Value* valid = b.CreateICmpSLT(n, c64(s.N));
        Value *oh = b.CreateSDiv(n, c64(c.outW)), *ow = b.CreateSRem(n, c64(c.outW));
        // A lane past N reads padding everywhere (its column is never stored).
        Value* ih0 =
            b.CreateSelect(valid, b.CreateSub(b.CreateMul(oh, c64(c.strideH)), c64(c.padTop)),
                           c64(-(int64_t(1) << 40)));
        Value* iw0 = b.CreateSub(b.CreateMul(ow, c64(c.strideW)), c64(c.padLeft));
        b.CreateStore(ih0, b.CreateInBoundsGEP(laneArr, ohS, {c64(0), lane}));
        b.CreateStore(iw0, b.CreateInBoundsGEP(laneArr, owS, {c64(0), lane}));
      });
      emitFor(b, c64(0), c64(cinG), c64(1), "ci", [&](Value* ci) {
        Value* chan = byteGep(b, xBase, b.CreateMul(ci, c64(plane)), "X.chan");
        emitFor(b, c64(0), c64(c.kernelH), c64(1), "kh", [&](Value* kh) {
          emitFor(b, c64(0), c64(c.kernelW), c64(1), "kw", [&](Value* kw) {
            Value* k = b.CreateAdd(
                b.CreateMul(b.CreateAdd(b.CreateMul(ci, c64(c.kernelH)), kh), c64(c.kernelW)), kw,
                "k");
            Value* row = kStepBase(b, dst, k, s.nr);
            Value *dh = b.CreateMul(kh, c64(c.dilationH)), *dw = b.CreateMul(kw, c64(c.dilationW));
            emitFor(b, c64(0), c64(s.nr), c64(1), "p", [&](Value* p) {
              Value* ih = b.CreateAdd(
                  b.CreateLoad(i64, b.CreateInBoundsGEP(laneArr, ohS, {c64(0), p})), dh);
              Value* iw = b.CreateAdd(
                  b.CreateLoad(i64, b.CreateInBoundsGEP(laneArr, owS, {c64(0), p})), dw);
              Value* in = b.CreateAnd(b.CreateICmpULT(ih, c64(c.inH)),
                                      b.CreateICmpULT(iw, c64(c.inW)), "in");
              Value* off = b.CreateSelect(in, b.CreateAdd(b.CreateMul(ih, c64(c.inW)), iw), c64(0));
              Value* raw = b.CreateLoad(i8, byteGep(b, chan, off));
              storeElement(b, packedActValue(b, raw, in),
                           byteGep(b, row, b.CreateMul(p, c64(kLaneBytes))));
            });
          });
        });
      });
      zeroKTail(b, dst, s.nr);
    });
    b.CreateRetVoid();
    return f;
  }

  /// The address of k's element in lane 0 of a panel with `lanes` lanes per k-step.
  Value* kStepBase(IRBuilder<>& b, Value* panel, Value* k, int64_t lanes) {
    Value *step = b.CreateUDiv(k, c64(plan.group)), *e = b.CreateURem(k, c64(plan.group));
    return byteGep(b, panel,
                   b.CreateAdd(b.CreateMul(step, c64(lanes * kLaneBytes)),
                               b.CreateMul(e, c64(plan.elemBytes))));
  }

  /// Zeroes the k values past K of the last k-step (their weights are zero too, but the
  /// products must be defined).
  void zeroKTail(IRBuilder<>& b, Value* panel, int64_t lanes) {
    emitFor(b, c64(s.K), c64(plan.kSteps * plan.group), c64(1), "ktail", [&](Value* k) {
      Value* row = kStepBase(b, panel, k, lanes);
      emitFor(b, c64(0), c64(lanes), c64(1), "lane", [&](Value* l) {
        storeElement(b, zeroElement(), byteGep(b, row, b.CreateMul(l, c64(kLaneBytes))));
      });
    });
  }

  /// `<kernel>.pack` for a matmul: item = row panel of A (rows of all batches), mr lanes of
  /// `group` consecutive k per k-step.
  Function* emitMatMulPack() {
    Function* f = makeItems("pack");
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
    Value* args = f->getArg(0);
    Value* a = loadArg(b, args, s.actArg, "A");
    Value* packed = loadArg(b, args, s.packedActArg, "packedAct");
    const int64_t panelBytes = plan.kSteps * s.mr * kLaneBytes;
    emitFor(b, f->getArg(1), f->getArg(2), c64(1), "item", [&](Value* item) {
      Value* dst = byteGep(b, packed, b.CreateMul(item, c64(panelBytes)), "dst");
      emitFor(b, c64(0), c64(s.mr), c64(1), "r", [&](Value* r) {
        Value* m = b.CreateAdd(b.CreateMul(item, c64(s.mr)), r);
        Value* valid = b.CreateICmpSLT(m, c64(s.M));
        Value* src =
            byteGep(b, a, b.CreateMul(b.CreateSelect(valid, m, c64(s.M - 1)), c64(s.K)), "A.row");
        Value* lane = byteGep(b, dst, b.CreateMul(r, c64(kLaneBytes)));
        emitFor(b, c64(0), c64(s.K), c64(1), "k", [&](Value* k) {
          Value* raw = b.CreateLoad(i8, byteGep(b, src, k));
          storeElement(b, packedActValue(b, raw, valid), kStepBase(b, lane, k, s.mr));
        });
      });
      zeroKTail(b, dst, s.mr);
    });
    b.CreateRetVoid();
    return f;
  }

  /// `<kernel>.ukernel(args, Rp, Cp, row0, col0, mValid, nValid, yOff, chanRow)`: the
  /// mr × nr tile at (row0, col0) of the slice whose output starts at yOff, over all k-steps
  /// of the row panel Rp and column panel Cp, requantized and stored (rows < mValid, columns
  /// < nValid). chanRow is the channel of row0 when channels are rows.
  Function* emitMicroKernel() {
    Function* f = makeFunction("ukernel", Type::getVoidTy(ctx),
                               {ptr, ptr, ptr, i64, i64, i64, i64, i64, i64}, true);
    const char* names[] = {"args",   "Rp",     "Cp",   "row0",   "col0",
                           "mValid", "nValid", "yOff", "chanRow"};
    for (unsigned i = 0; i < f->arg_size(); ++i)
      f->getArg(i)->setName(names[i]);
    for (unsigned i : {1u, 2u}) {
      f->addParamAttr(i, Attribute::NoAlias);
      f->addParamAttr(i, Attribute::ReadOnly);
    }
    Value *args = f->getArg(0), *rp = f->getArg(1), *cp = f->getArg(2);
    Value *row0 = f->getArg(3), *col0 = f->getArg(4), *mValid = f->getArg(5);
    Value *nValid = f->getArg(6), *yOff = f->getArg(7), *chanRow = f->getArg(8);
    const int64_t mr = s.mr, nv = s.nr / 8;
    BasicBlock* entry = BasicBlock::Create(ctx, "entry", f);
    BasicBlock* loop = BasicBlock::Create(ctx, "k", f);
    BasicBlock* store = BasicBlock::Create(ctx, "store", f);
    IRBuilder<> b(entry);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    PHINode* q = b.CreatePHI(i64, 2, "q");
    q->addIncoming(c64(0), entry);
    std::vector<PHINode*> accPhi;
    for (int64_t i = 0; i < mr * nv; ++i) {
      accPhi.push_back(b.CreatePHI(v8i32, 2, "acc"));
      accPhi.back()->addIncoming(Constant::getNullValue(v8i32), entry);
    }
    Function* dot = Intrinsic::getDeclaration(&module, vnni() ? Intrinsic::x86_avx512_vpdpbusd_256
                                                              : Intrinsic::x86_avx2_pmadd_wd);
    std::vector<Value*> cols;
    for (int64_t v = 0; v < nv; ++v) {
      Value* at = byteGep(b, cp, b.CreateAdd(b.CreateMul(q, c64(s.nr * kLaneBytes)), c64(v * 32)));
      cols.push_back(b.CreateAlignedLoad(v8i32, at, Align(1), "col"));
    }
    std::vector<Value*> next(size_t(mr * nv));
    for (int64_t r = 0; r < mr; ++r) {
      Value* at = byteGep(b, rp, b.CreateAdd(b.CreateMul(q, c64(mr * kLaneBytes)), c64(r * 4)));
      Value* rowv = b.CreateVectorSplat(8, b.CreateAlignedLoad(i32, at, Align(1), "row"));
      for (int64_t v = 0; v < nv; ++v) {
        PHINode* acc = accPhi[size_t(r * nv + v)];
        Value* col = cols[size_t(v)];
        Value* out;
        if (vnni()) {
          // vpdpbusd(acc, u8 operand, s8 operand): the activation is the u8 side.
          out = s.weightsAreRows() ? b.CreateCall(dot, {acc, col, rowv})
                                   : b.CreateCall(dot, {acc, rowv, col});
        } else {
          Value* prod =
              b.CreateCall(dot, {b.CreateBitCast(col, v16i16), b.CreateBitCast(rowv, v16i16)});
          out = b.CreateAdd(acc, prod);
        }
        next[size_t(r * nv + v)] = out;
      }
    }
    Value* qNext = b.CreateAdd(q, c64(1), "q.next");
    q->addIncoming(qNext, loop);
    for (size_t i = 0; i < next.size(); ++i)
      accPhi[i]->addIncoming(next[i], loop);
    b.CreateCondBr(b.CreateICmpSLT(qNext, c64(plan.kSteps)), loop, store);

    b.SetInsertPoint(store);
    emitStores(b, f, args, next, row0, col0, mValid, nValid, yOff, chanRow);
    b.CreateRetVoid();
    return f;
  }

  /// <0, 1, ..., 7> as i64.
  Constant* laneIndices(int64_t step = 1) const {
    std::vector<Constant*> idx;
    for (int64_t i = 0; i < 8; ++i)
      idx.push_back(ConstantInt::get(i64, uint64_t(i * step)));
    return ConstantVector::get(idx);
  }

  /// Stores 8 int32 sums (the accumulators plus bias) at element `offset` of Y where `mask`
  /// holds: as they are for an int32 output, else requantized exactly as the interpreter does
  /// each element: double(sum) * multiplier, rounded half to even, plus the output zero
  /// point, clamped to the output type.
  void storeSums(IRBuilder<>& b, Value* y, Value* offset, Value* sum, Value* mult, Value* mask) {
    if (s.outType == DType::I32) { // ConvInteger / MatMulInteger: the sums themselves
      b.CreateMaskedStore(sum, b.CreateInBoundsGEP(i32, y, offset), Align(4), mask);
      return;
    }
    const double lo = s.outType == DType::U8 ? 0.0 : -128.0;
    const double hi = s.outType == DType::U8 ? 255.0 : 127.0;
    Value* d = b.CreateSIToFP(sum, v8f64);
    d = b.CreateFMul(d, mult);
    d = b.CreateUnaryIntrinsic(Intrinsic::roundeven, d);
    d = b.CreateFAdd(d, ConstantFP::get(v8f64, double(s.outZeroPoint)));
    d = b.CreateBinaryIntrinsic(Intrinsic::maxnum, d, ConstantFP::get(v8f64, lo));
    d = b.CreateBinaryIntrinsic(Intrinsic::minnum, d, ConstantFP::get(v8f64, hi));
    Value* q8 = b.CreateTrunc(b.CreateFPToSI(d, v8i32), v8i8);
    b.CreateMaskedStore(q8, byteGep(b, y, offset), Align(1), mask);
  }

  /// The requantizing store of the tile's accumulators, exactly as the interpreter computes
  /// each element: double(acc + bias) * multiplier, rounded half to even, plus the output zero
  /// point, clamped to the output type.
  void emitStores(IRBuilder<>& b, Function* f, Value* args, const std::vector<Value*>& acc,
                  Value* row0, Value* col0, Value* mValid, Value* nValid, Value* yOff,
                  Value* chanRow) {
    const int64_t mr = s.mr, nv = s.nr / 8;
    Value* corr = loadArg(b, args, s.correctionArg, "correction");
    Value* mult = loadArg(b, args, s.multiplierArg, "multiplier");
    Value* y = loadArg(b, args, s.outArg, "Y");
    const bool perColumn = !s.weightsAreRows();
    std::vector<Value*> colCorr, colMult;
    if (perColumn)
      for (int64_t v = 0; v < nv; ++v) {
        Value* ch = b.CreateAdd(col0, c64(v * 8));
        colCorr.push_back(b.CreateAlignedLoad(v8i32, b.CreateInBoundsGEP(i32, corr, ch), Align(4)));
        colMult.push_back(b.CreateAlignedLoad(v8f64, b.CreateInBoundsGEP(f64, mult, ch), Align(8)));
      }
    Value* lanes = laneIndices();
    for (int64_t r = 0; r < mr; ++r) {
      BasicBlock* doRow = BasicBlock::Create(ctx, "row", f);
      BasicBlock* after = BasicBlock::Create(ctx, "row.next", f);
      b.CreateCondBr(b.CreateICmpSLT(c64(r), mValid), doRow, after);
      b.SetInsertPoint(doRow);
      Value *rowCorr = nullptr, *rowMult = nullptr;
      if (!perColumn) {
        Value* ch = b.CreateAdd(chanRow, c64(r));
        rowCorr = b.CreateVectorSplat(8, b.CreateLoad(i32, b.CreateInBoundsGEP(i32, corr, ch)));
        rowMult = b.CreateVectorSplat(8, b.CreateLoad(f64, b.CreateInBoundsGEP(f64, mult, ch)));
      }
      Value* rowBase = b.CreateAdd(yOff, b.CreateMul(b.CreateAdd(row0, c64(r)), c64(s.N)));
      for (int64_t v = 0; v < nv; ++v) {
        Value* sum = b.CreateAdd(acc[size_t(r * nv + v)], perColumn ? colCorr[size_t(v)] : rowCorr);
        Value* col = b.CreateAdd(col0, c64(v * 8));
        Value* mask = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(8, col), lanes),
                                      b.CreateVectorSplat(8, b.CreateAdd(col0, nValid)));
        storeSums(b, y, b.CreateAdd(rowBase, col), sum, perColumn ? colMult[size_t(v)] : rowMult,
                  mask);
      }
      b.CreateBr(after);
      b.SetInsertPoint(after);
    }
  }

  /// `<kernel>.items`: item = (slice, column panel, row chunk); the chunk's row panels run
  /// against the one column panel, which stays in cache.
  Function* emitItems(Function* ukernel) {
    Function* f = makeItems("items");
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
    Value* args = f->getArg(0);
    Value* w = loadArg(b, args, s.packedArg, "packedW");
    Value* act = loadArg(b, args, s.packedActArg, "packedAct");
    const int64_t rowPanelBytes = plan.kSteps * s.mr * kLaneBytes;
    const int64_t colPanelBytes = plan.kSteps * s.nr * kLaneBytes;
    emitFor(b, f->getArg(1), f->getArg(2), c64(1), "item", [&](Value* item) {
      const int64_t perSlice = plan.colPanels * plan.chunks;
      Value* slice = b.CreateSDiv(item, c64(perSlice), "slice");
      Value* rest = b.CreateSRem(item, c64(perSlice));
      Value* j = b.CreateSDiv(rest, c64(plan.chunks), "colPanel");
      Value* chunk = b.CreateSRem(rest, c64(plan.chunks), "chunk");
      Value* g = b.CreateSRem(slice, c64(s.groups), "g");
      Value* col0 = b.CreateMul(j, c64(s.nr), "col0");
      Value* nValid = gemmir::emitMin(b, c64(s.nr), b.CreateSub(c64(s.N), col0));
      Value* yOff = b.CreateMul(slice, c64(s.M * s.N), "yOff");
      Value* cp = s.weightsAreRows()
                      ? byteGep(b, act,
                                b.CreateMul(b.CreateAdd(b.CreateMul(slice, c64(plan.colPanels)), j),
                                            c64(colPanelBytes)))
                      : byteGep(b, w, b.CreateMul(j, c64(colPanelBytes)));
      Value* first = b.CreateMul(chunk, c64(plan.rowChunk));
      Value* last = gemmir::emitMin(b, b.CreateAdd(first, c64(plan.rowChunk)), c64(plan.rowPanels));
      emitFor(b, first, last, c64(1), "rowPanel", [&](Value* rpanel) {
        Value* row0 = b.CreateMul(rpanel, c64(s.mr), "row0");
        Value* mValid = gemmir::emitMin(b, c64(s.mr), b.CreateSub(c64(s.M), row0));
        Value* rp =
            s.weightsAreRows()
                ? byteGep(b, w,
                          b.CreateMul(b.CreateAdd(b.CreateMul(g, c64(plan.rowPanels)), rpanel),
                                      c64(rowPanelBytes)))
                : byteGep(b, act, b.CreateMul(rpanel, c64(rowPanelBytes)));
        Value* chanRow = s.weightsAreRows() ? b.CreateAdd(b.CreateMul(g, c64(s.M)), row0) : c64(0);
        b.CreateCall(ukernel, {args, rp, cp, row0, col0, mValid, nValid, yOff, chanRow});
      });
    });
    b.CreateRetVoid();
    return f;
  }

  /// Runs `items` over [0, count): directly, or through fb_parallel_for with a worker that
  /// claims one item at a time from a shared counter.
  void runItems(IRBuilder<>& b, Value* args, Function* items, int64_t count,
                const std::string& suffix) {
    if (!s.parallel || count <= 1) {
      b.CreateCall(items, {args, c64(0), c64(count)});
      return;
    }
    StructType* ctxTy = StructType::get(ctx, {ptr, i64});
    Function* worker = makeFunction(suffix, Type::getVoidTy(ctx), {ptr, i64, i64}, true);
    {
      BasicBlock* entry = BasicBlock::Create(ctx, "entry", worker);
      BasicBlock* claim = BasicBlock::Create(ctx, "claim", worker);
      BasicBlock* run = BasicBlock::Create(ctx, "run", worker);
      BasicBlock* done = BasicBlock::Create(ctx, "done", worker);
      IRBuilder<> w(entry);
      Value* wargs = w.CreateLoad(ptr, w.CreateStructGEP(ctxTy, worker->getArg(0), 0), "args");
      Value* nextItem = w.CreateStructGEP(ctxTy, worker->getArg(0), 1, "next");
      w.CreateBr(claim);
      w.SetInsertPoint(claim);
      Value* item = w.CreateAtomicRMW(AtomicRMWInst::Add, nextItem, c64(1), Align(8),
                                      AtomicOrdering::Monotonic);
      w.CreateCondBr(w.CreateICmpSLT(item, c64(count)), run, done);
      w.SetInsertPoint(run);
      w.CreateCall(items, {wargs, item, w.CreateAdd(item, c64(1))});
      w.CreateBr(claim);
      w.SetInsertPoint(done);
      w.CreateRetVoid();
    }
    FunctionCallee parallelFor = module.getOrInsertFunction(
        "fb_parallel_for", FunctionType::get(Type::getVoidTy(ctx), {ptr, ptr, i64}, false));
    Value* state = b.CreateAlloca(ctxTy, nullptr, suffix + ".ctx");
    b.CreateStore(args, b.CreateStructGEP(ctxTy, state, 0));
    b.CreateStore(c64(0), b.CreateStructGEP(ctxTy, state, 1));
    b.CreateCall(parallelFor, {worker, state, c64(count)});
  }

  /// `<kernel>.dw`: a depthwise convolution computed directly, item = image * C + channel:
  /// per output row, 8 output columns at a time, the zero-point-shifted input times each
  /// shifted tap weight summed in int32 (exactly the interpreter's sum), then stored through
  /// storeSums. A plane that fits 64 KiB with its padding is first copied into a buffer filled
  /// with the zero point, so every vector loads its inputs at once (a strided shuffle for
  /// stride > 1); in larger planes, vectors whose taps all lie inside the row do so and edge
  /// vectors load the same bytes under a mask (padding reads as 0).
  /// Planes (image × channel) per work item of a depthwise kernel: about 32 items in all.
  int64_t depthwiseBlock() const { return std::max<int64_t>(1, s.batch * s.conv->inChannels / 32); }
  int64_t depthwiseItems() const { return depthwiseItemsOf(s); }
  static int64_t depthwiseItemsOf(const Int8GemmSpec& spec) {
    const int64_t planes = spec.batch * spec.conv->inChannels;
    const int64_t block = std::max<int64_t>(1, planes / 32);
    return (planes + block - 1) / block;
  }

  Function* emitDepthwiseItems() {
    const ConvGeometry& c = *s.conv;
    Function* f = makeItems("dw");
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
    Value* args = f->getArg(0);
    Value* x = loadArg(b, args, s.actArg, "X");
    Value* y = loadArg(b, args, s.outArg, "Y");
    Value* w = loadArg(b, args, s.packedArg, "taps");
    Value* corr = loadArg(b, args, s.correctionArg, "correction");
    Value* mult = loadArg(b, args, s.multiplierArg, "multiplier");
    const int64_t taps = c.kernelH * c.kernelW, sw = c.strideW;
    const bool sext = s.actType == DType::I8;
    Value* zpVec = b.CreateVectorSplat(8, ConstantInt::get(i32, uint64_t(int64_t(s.actZeroPoint))));
    Value* zero = Constant::getNullValue(v8i32);
    Value* lanes = laneIndices();
    Value* laneCols = laneIndices(sw);
    auto* wideRow = FixedVectorType::get(i8, unsigned(8 * sw));
    std::vector<int> strided;
    for (int64_t l = 0; l < 8; ++l)
      strided.push_back(int(l * sw));
    auto widen = [&](Value* v8) {
      return sext ? b.CreateSExt(v8, v8i32) : b.CreateZExt(v8, v8i32);
    };
    // An item is a block of planes: one claim per plane costs more than a small plane's work.
    const int64_t planes = s.batch * c.inChannels, block = depthwiseBlock();
    Value* first = b.CreateMul(f->getArg(1), c64(block));
    Value* last = gemmir::emitMin(b, b.CreateMul(f->getArg(2), c64(block)), c64(planes));
    // A plane copied into a zero-point-filled buffer with its padding (and room for the last
    // vector's loads) needs no bounds checks at all; planes too large for that use the masks.
    const int64_t lastOw0 = (c.outW - 1) / 8 * 8;
    const int64_t padH = (c.outH - 1) * c.strideH + (c.kernelH - 1) * c.dilationH + 1;
    const int64_t padW = lastOw0 * sw + (c.kernelW - 1) * c.dilationW + 8 * sw;
    const bool usePadded = padH * padW <= (int64_t(1) << 16);
    Value* paddedBuf =
        usePadded ? b.CreateAlloca(ArrayType::get(i8, uint64_t(padH * padW)), nullptr, "padded")
                  : nullptr;
    emitFor(b, first, last, c64(1), "plane", [&](Value* item) {
      Value* ch = b.CreateSRem(item, c64(c.inChannels), "ch");
      Value* xPlane = byteGep(b, x, b.CreateMul(item, c64(c.inH * c.inW)), "X.plane");
      Value* yPlane = b.CreateMul(item, c64(c.outH * c.outW), "Y.plane");
      Value* corrV = b.CreateVectorSplat(8, b.CreateLoad(i32, b.CreateInBoundsGEP(i32, corr, ch)));
      Value* multV = b.CreateVectorSplat(8, b.CreateLoad(f64, b.CreateInBoundsGEP(f64, mult, ch)));
      std::vector<Value*> tapW;
      for (int64_t t = 0; t < taps; ++t)
        tapW.push_back(b.CreateVectorSplat(
            8, b.CreateLoad(i32, b.CreateInBoundsGEP(
                                     i32, w, b.CreateAdd(b.CreateMul(ch, c64(taps)), c64(t))))));
      if (usePadded) {
        b.CreateMemSet(paddedBuf, ConstantInt::get(i8, uint64_t(s.actZeroPoint & 0xff)),
                       c64(padH * padW), MaybeAlign(1));
        const int64_t copyRows = std::min(c.inH, padH - c.padTop);
        const int64_t copyCols = std::min(c.inW, padW - c.padLeft);
        if (copyRows > 0 && copyCols > 0)
          emitFor(b, c64(0), c64(copyRows), c64(1), "ih", [&](Value* ih) {
            Value* to = byteGep(b, paddedBuf,
                                b.CreateAdd(b.CreateMul(b.CreateAdd(ih, c64(c.padTop)), c64(padW)),
                                            c64(c.padLeft)));
            b.CreateMemCpy(to, MaybeAlign(1), byteGep(b, xPlane, b.CreateMul(ih, c64(c.inW))),
                           MaybeAlign(1), c64(copyCols));
          });
        emitFor(b, c64(0), c64(c.outH), c64(1), "oh", [&](Value* oh) {
          emitFor(b, c64(0), c64(c.outW), c64(8), "ow", [&](Value* ow0) {
            Value* acc = zero;
            for (int64_t kh = 0; kh < c.kernelH; ++kh) {
              Value* row = byteGep(
                  b, paddedBuf,
                  b.CreateMul(b.CreateAdd(b.CreateMul(oh, c64(c.strideH)), c64(kh * c.dilationH)),
                              c64(padW)));
              for (int64_t kw = 0; kw < c.kernelW; ++kw) {
                Value* at =
                    byteGep(b, row, b.CreateAdd(b.CreateMul(ow0, c64(sw)), c64(kw * c.dilationW)));
                Value* v = b.CreateAlignedLoad(wideRow, at, Align(1));
                if (sw > 1)
                  v = b.CreateShuffleVector(v, strided);
                acc = b.CreateAdd(acc, b.CreateMul(b.CreateSub(widen(v), zpVec),
                                                   tapW[size_t(kh * c.kernelW + kw)]));
              }
            }
            Value* mask = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(8, ow0), lanes),
                                          b.CreateVectorSplat(8, c64(c.outW)));
            storeSums(b, y, b.CreateAdd(yPlane, b.CreateAdd(b.CreateMul(oh, c64(c.outW)), ow0)),
                      b.CreateAdd(acc, corrV), multV, mask);
          });
        });
        return;
      }
      emitFor(b, c64(0), c64(c.outH), c64(1), "oh", [&](Value* oh) {
        Value* ihBase = b.CreateSub(b.CreateMul(oh, c64(c.strideH)), c64(c.padTop));
        std::vector<Value*> rowOk, rowPtr;
        for (int64_t kh = 0; kh < c.kernelH; ++kh) {
          Value* ih = b.CreateAdd(ihBase, c64(kh * c.dilationH));
          Value* ok = b.CreateICmpULT(ih, c64(c.inH));
          rowOk.push_back(ok);
          rowPtr.push_back(
              byteGep(b, xPlane, b.CreateMul(b.CreateSelect(ok, ih, c64(0)), c64(c.inW))));
        }
        emitFor(b, c64(0), c64(c.outW), c64(8), "ow", [&](Value* ow0) {
          Value* iwBase = b.CreateSub(b.CreateMul(ow0, c64(sw)), c64(c.padLeft));
          Value* interior = b.CreateAnd(
              b.CreateICmpSGE(iwBase, c64(0)),
              b.CreateICmpSLE(b.CreateAdd(iwBase, c64((c.kernelW - 1) * c.dilationW + 8 * sw)),
                              c64(c.inW)));
          Function* fn = b.GetInsertBlock()->getParent();
          BasicBlock* fast = BasicBlock::Create(ctx, "dw.interior", fn);
          BasicBlock* edge = BasicBlock::Create(ctx, "dw.edge", fn);
          BasicBlock* join = BasicBlock::Create(ctx, "dw.store", fn);
          b.CreateCondBr(interior, fast, edge);

          std::vector<int> stride;
          for (int64_t l = 0; l < 8; ++l)
            stride.push_back(int(l * sw));
          auto* wide = FixedVectorType::get(i8, unsigned(8 * sw));
          b.SetInsertPoint(fast);
          Value* accF = zero;
          for (int64_t kh = 0; kh < c.kernelH; ++kh)
            for (int64_t kw = 0; kw < c.kernelW; ++kw) {
              Value* at =
                  byteGep(b, rowPtr[size_t(kh)], b.CreateAdd(iwBase, c64(kw * c.dilationW)));
              Value* v = b.CreateAlignedLoad(wide, at, Align(1));
              if (sw > 1)
                v = b.CreateShuffleVector(v, stride);
              Value* wv =
                  b.CreateSelect(rowOk[size_t(kh)], tapW[size_t(kh * c.kernelW + kw)], zero);
              accF = b.CreateAdd(accF, b.CreateMul(b.CreateSub(widen(v), zpVec), wv));
            }
          BasicBlock* fastEnd = b.GetInsertBlock();
          b.CreateBr(join);

          b.SetInsertPoint(edge);
          Value* accE = zero;
          Value* laneValid = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(8, ow0), lanes),
                                             b.CreateVectorSplat(8, c64(c.outW)));
          for (int64_t kh = 0; kh < c.kernelH; ++kh)
            for (int64_t kw = 0; kw < c.kernelW; ++kw) {
              Value* iw = b.CreateAdd(
                  b.CreateVectorSplat(8, b.CreateAdd(iwBase, c64(kw * c.dilationW))), laneCols);
              Value* in = b.CreateAnd(
                  b.CreateAnd(b.CreateICmpULT(iw, b.CreateVectorSplat(8, c64(c.inW))), laneValid),
                  b.CreateVectorSplat(8, rowOk[size_t(kh)]));
              // The lanes' inputs lie at l * stride from the first: one masked load of the
              // 8 * stride bytes (masked-off bytes are not read), then the strided shuffle.
              Value* at =
                  b.CreateGEP(i8, rowPtr[size_t(kh)], b.CreateAdd(iwBase, c64(kw * c.dilationW)));
              Value* wideMask = in;
              if (sw > 1) {
                std::vector<int> spread(size_t(8 * sw), 8); // lane 8: the false of `falses`
                for (int64_t l = 0; l < 8; ++l)
                  spread[size_t(l * sw)] = int(l);
                wideMask = b.CreateShuffleVector(in, Constant::getNullValue(in->getType()), spread);
              }
              Value* v = b.CreateMaskedLoad(wide, at, Align(1), wideMask);
              if (sw > 1)
                v = b.CreateShuffleVector(v, stride);
              Value* d = b.CreateSelect(in, b.CreateSub(widen(v), zpVec), zero);
              accE = b.CreateAdd(accE, b.CreateMul(d, tapW[size_t(kh * c.kernelW + kw)]));
            }
          BasicBlock* edgeEnd = b.GetInsertBlock();
          b.CreateBr(join);

          b.SetInsertPoint(join);
          PHINode* acc = b.CreatePHI(v8i32, 2, "acc");
          acc->addIncoming(accF, fastEnd);
          acc->addIncoming(accE, edgeEnd);
          Value* mask = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(8, ow0), lanes),
                                        b.CreateVectorSplat(8, c64(c.outW)));
          storeSums(b, y, b.CreateAdd(yPlane, b.CreateAdd(b.CreateMul(oh, c64(c.outW)), ow0)),
                    b.CreateAdd(acc, corrV), multV, mask);
        });
      });
    });
    b.CreateRetVoid();
    return f;
  }

  Function* emit() {
    if (*s.isa == Int8Isa::Depthwise) {
      Function* items = emitDepthwiseItems();
      Function* f = makeFunction("", Type::getVoidTy(ctx), {ptr}, /*internal=*/false);
      f->getArg(0)->setName("args");
      f->addParamAttr(0, Attribute::NoAlias);
      IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
      runItems(b, f->getArg(0), items, depthwiseItems(), "dw.worker");
      b.CreateRetVoid();
      return f;
    }
    Function* pack = s.weightsAreRows() ? emitConvPack() : emitMatMulPack();
    Function* ukernel = emitMicroKernel();
    Function* items = emitItems(ukernel);
    Function* f = makeFunction("", Type::getVoidTy(ctx), {ptr}, /*internal=*/false);
    f->getArg(0)->setName("args");
    f->addParamAttr(0, Attribute::NoAlias);
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
    runItems(b, f->getArg(0), pack, plan.packItems(), "pack.worker");
    runItems(b, f->getArg(0), items, plan.computeItems(), "items.worker");
    b.CreateRetVoid();
    return f;
  }
};

} // namespace

Expected<Function*> emitInt8GemmKernel(Module& module, const Kernel& kernel) {
  if (!kernel.int8 || !kernel.int8->isa)
    return makeError(kernel.name, ": int8 kernel emitted before packInt8Operands");
  return Emitter(module, kernel).emit();
}

std::string describeInt8Blocking(const Kernel& kernel) {
  if (!kernel.int8 || !kernel.int8->isa)
    return "int8 (not packed yet)";
  const Int8GemmSpec& s = *kernel.int8;
  if (*s.isa == Int8Isa::Depthwise)
    return "int8 depthwise, direct: " + std::to_string(s.batch * s.conv->inChannels) +
           " planes (image × channel) in " + std::to_string(Emitter::depthwiseItemsOf(s)) +
           " items, 8 output columns per vector, int32 products of the shifted operands, taps "
           "unrolled";
  Int8Plan p = planInt8(s);
  return std::string("int8 ") + (*s.isa == Int8Isa::Vnni ? "vpdpbusd" : "vpmaddwd (i16)") +
         " mr=" + std::to_string(s.mr) + " nr=" + std::to_string(s.nr) +
         ", K=" + std::to_string(s.K) + " in " + std::to_string(p.kSteps) + " steps, " +
         std::to_string(p.computeItems()) + " items (" + std::to_string(p.packItems()) +
         " packing), weights packed at compile time, activation " +
         (s.weightsAreRows() ? "im2col" : "rows") + " packed per call";
}

} // namespace fb::cg
