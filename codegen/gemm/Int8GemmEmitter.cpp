// LLVM IR of int8 GEMM-class kernels: activation packing (im2col for convolutions), the integer
// micro-kernel (vpdpbusd or vpmaddwd) and the requantizing store.
#include "codegen/gemm/Int8IrBuilder.h"

#include <llvm/IR/IntrinsicsX86.h>

namespace fb::cg {

namespace int8ir {

Value* Emitter::packedActValue(IRBuilder<>& b, Value* raw, Value* inBounds) {
  if (vnni()) {
    Value* v = s.actType == DType::I8 ? b.CreateXor(raw, ConstantInt::get(i8, 0x80)) : raw;
    const int64_t zp = s.actZeroPoint + (s.actType == DType::I8 ? 128 : 0);
    return b.CreateSelect(inBounds, v, ConstantInt::get(i8, uint64_t(zp & 0xff)));
  }
  Value* wide = s.actType == DType::I8 ? b.CreateSExt(raw, i32) : b.CreateZExt(raw, i32);
  Value* v = b.CreateSub(wide, ConstantInt::get(i32, uint64_t(int64_t(s.actZeroPoint))));
  return b.CreateTrunc(b.CreateSelect(inBounds, v, ConstantInt::get(i32, 0)), i16);
}

Value* Emitter::convPackSource(IRBuilder<>& b, Value* x, Value* item, Value*& panel) {
  const ConvGeometry& c = *s.conv;
  Value* slice = b.CreateSDiv(item, c64(plan.colPanels), "slice");
  panel = b.CreateSRem(item, c64(plan.colPanels), "panel");
  Value* image = b.CreateSDiv(slice, c64(c.groups), "image");
  Value* g = b.CreateSRem(slice, c64(c.groups), "g");
  const int64_t cinG = c.inChannels / c.groups;
  return byteGep(
      b, x,
      b.CreateMul(b.CreateAdd(b.CreateMul(image, c64(c.inChannels)), b.CreateMul(g, c64(cinG))),
                  c64(c.inH * c.inW)),
      "X.slice");
}

Function* Emitter::emitConvPackRows() {
  const ConvGeometry& c = *s.conv;
  Function* f = makeItems("pack");
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", f));
  Value* args = f->getArg(0);
  Value* x = loadArg(b, args, s.actArg, "X");
  Value* packed = loadArg(b, args, s.packedActArg, "packedAct");
  const int64_t plane = c.inH * c.inW, nr = s.nr;
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
  Value* padRaw =
      b.CreateVectorSplat(unsigned(nr * sw), ConstantInt::get(i8, uint64_t(s.actZeroPoint & 0xff)));
  emitFor(b, f->getArg(1), f->getArg(2), c64(1), "item", [&](Value* item) {
    Value* panel = nullptr;
    Value* xBase = convPackSource(b, x, item, panel);
    Value* dst = byteGep(b, packed, b.CreateMul(item, c64(panelBytes)), "dst");
    Value* n0 = b.CreateMul(panel, c64(nr), "n0");
    Value *oh0 = b.CreateSDiv(n0, c64(c.outW)), *ow0 = b.CreateSRem(n0, c64(c.outW));
    // Lanes of output row oh0 + r: [r*OW - ow0, (r+1)*OW - ow0), and below N.
    Value* laneN = b.CreateAdd(b.CreateVectorSplat(unsigned(nr), n0), lanes);
    Value* validN = b.CreateICmpSLT(laneN, b.CreateVectorSplat(unsigned(nr), c64(s.N)));
    std::vector<Value*> rowLanes;
    for (int64_t r = 0; r < rows; ++r) {
      Value *lo = b.CreateSub(c64(r * c.outW), ow0), *hi = b.CreateSub(c64((r + 1) * c.outW), ow0);
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
          Value* wide = s.actType == DType::I8 ? b.CreateSExt(v, halves) : b.CreateZExt(v, halves);
          v = b.CreateSub(
              wide, b.CreateVectorSplat(unsigned(nr),
                                        ConstantInt::get(i16, uint64_t(int64_t(s.actZeroPoint)))));
        }
        vals.push_back(v);
      }
      // Lane-major: element (l, e) at l * group + e.
      std::vector<int> pairMask, outMask;
      for (int64_t i = 0; i < 2 * nr; ++i)
        pairMask.push_back(int(i));
      Value* all = vnni() ? b.CreateShuffleVector(b.CreateShuffleVector(vals[0], vals[1], pairMask),
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

Function* Emitter::emitConvPack() {
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
    Value* panel = nullptr;
    Value* xBase = convPackSource(b, x, item, panel);
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
            Value* ih =
                b.CreateAdd(b.CreateLoad(i64, b.CreateInBoundsGEP(laneArr, ohS, {c64(0), p})), dh);
            Value* iw =
                b.CreateAdd(b.CreateLoad(i64, b.CreateInBoundsGEP(laneArr, owS, {c64(0), p})), dw);
            Value* in =
                b.CreateAnd(b.CreateICmpULT(ih, c64(c.inH)), b.CreateICmpULT(iw, c64(c.inW)), "in");
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

Value* Emitter::kStepBase(IRBuilder<>& b, Value* panel, Value* k, int64_t lanes) {
  Value *step = b.CreateUDiv(k, c64(plan.group)), *e = b.CreateURem(k, c64(plan.group));
  return byteGep(
      b, panel,
      b.CreateAdd(b.CreateMul(step, c64(lanes * kLaneBytes)), b.CreateMul(e, c64(plan.elemBytes))));
}

void Emitter::zeroKTail(IRBuilder<>& b, Value* panel, int64_t lanes) {
  emitFor(b, c64(s.K), c64(plan.kSteps * plan.group), c64(1), "ktail", [&](Value* k) {
    Value* row = kStepBase(b, panel, k, lanes);
    emitFor(b, c64(0), c64(lanes), c64(1), "lane", [&](Value* l) {
      storeElement(b, zeroElement(), byteGep(b, row, b.CreateMul(l, c64(kLaneBytes))));
    });
  });
}

Function* Emitter::emitMatMulPack() {
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

Function* Emitter::emitMicroKernel() {
  Function* f = makeFunction("ukernel", Type::getVoidTy(ctx),
                             {ptr, ptr, ptr, i64, i64, i64, i64, i64, i64}, true);
  const char* names[] = {"args", "Rp", "Cp", "row0", "col0", "mValid", "nValid", "yOff", "chanRow"};
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
  // nr = 32 is packed only for 512-bit VNNI: the loop runs on pairs of column vectors (zmm),
  // split back into 8-lane halves for the stores.
  const int64_t width = vnni() && s.nr == 32 ? 2 : 1; // 8-lane column vectors per accumulator
  const int64_t nw = nv / width;
  auto* accTy = FixedVectorType::get(i32, unsigned(8 * width));
  std::vector<PHINode*> accPhi;
  for (int64_t i = 0; i < mr * nw; ++i) {
    accPhi.push_back(b.CreatePHI(accTy, 2, "acc"));
    accPhi.back()->addIncoming(Constant::getNullValue(accTy), entry);
  }
  Function* dot =
      Intrinsic::getDeclaration(&module, !vnni()      ? Intrinsic::x86_avx2_pmadd_wd
                                         : width == 2 ? Intrinsic::x86_avx512_vpdpbusd_512
                                                      : Intrinsic::x86_avx512_vpdpbusd_256);
  std::vector<Value*> cols;
  for (int64_t v = 0; v < nw; ++v) {
    Value* at =
        byteGep(b, cp, b.CreateAdd(b.CreateMul(q, c64(s.nr * kLaneBytes)), c64(v * 32 * width)));
    cols.push_back(b.CreateAlignedLoad(accTy, at, Align(1), "col"));
  }
  std::vector<Value*> next(size_t(mr * nw));
  for (int64_t r = 0; r < mr; ++r) {
    Value* at = byteGep(b, rp, b.CreateAdd(b.CreateMul(q, c64(mr * kLaneBytes)), c64(r * 4)));
    Value* rowv =
        b.CreateVectorSplat(unsigned(8 * width), b.CreateAlignedLoad(i32, at, Align(1), "row"));
    for (int64_t v = 0; v < nw; ++v) {
      PHINode* acc = accPhi[size_t(r * nw + v)];
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
      next[size_t(r * nw + v)] = out;
    }
  }
  Value* qNext = b.CreateAdd(q, c64(1), "q.next");
  q->addIncoming(qNext, loop);
  for (size_t i = 0; i < next.size(); ++i)
    accPhi[i]->addIncoming(next[i], loop);
  b.CreateCondBr(b.CreateICmpSLT(qNext, c64(plan.kSteps)), loop, store);

  b.SetInsertPoint(store);
  if (width == 2) {
    std::vector<Value*> halves;
    for (Value* v : next) {
      halves.push_back(b.CreateShuffleVector(v, ArrayRef<int>{0, 1, 2, 3, 4, 5, 6, 7}));
      halves.push_back(b.CreateShuffleVector(v, ArrayRef<int>{8, 9, 10, 11, 12, 13, 14, 15}));
    }
    next = std::move(halves);
  }
  emitStores(b, f, args, next, row0, col0, mValid, nValid, yOff, chanRow);
  b.CreateRetVoid();
  return f;
}

void Emitter::storeSums(IRBuilder<>& b, Value* y, Value* offset, Value* sum, ArrayRef<Value*> mults,
                        Value* mask) {
  const unsigned lanes = unsigned(cast<FixedVectorType>(sum->getType())->getNumElements());
  if (s.outType == DType::I32) { // ConvInteger / MatMulInteger: the sums themselves
    b.CreateMaskedStore(sum, b.CreateInBoundsGEP(i32, y, offset), Align(4), mask);
    return;
  }
  const int32_t lo = s.outType == DType::U8 ? 0 : -128;
  const int32_t hi = s.outType == DType::U8 ? 255 : 127;
  if (s.requantFitsInt32) {
    // The product rounds half to even straight to int32 (vcvtpd2dq with the mode embedded on
    // AVX-512), then zero point and clamp in int32: one saturating narrowing per 16 lanes.
    std::vector<Value*> rounded;
    for (unsigned h = 0; h < lanes; h += 8) {
      Value* p = b.CreateFMul(b.CreateSIToFP(lanes8(b, sum, h), v8f64), mults[h / 8]);
      if (s.avx512) {
        Function* cvt = Intrinsic::getDeclaration(&module, Intrinsic::x86_avx512_mask_cvtpd2dq_512);
        rounded.push_back(
            b.CreateCall(cvt, {p, Constant::getNullValue(v8i32), ConstantInt::get(i8, 0xff),
                               ConstantInt::get(i32, 8)})); // nearest, no exc.
      } else {
        rounded.push_back(b.CreateFPToSI(b.CreateUnaryIntrinsic(Intrinsic::roundeven, p), v8i32));
      }
    }
    Value* q = lanes == 16 ? join8(b, rounded[0], rounded[1]) : rounded[0];
    auto* vq = FixedVectorType::get(i32, lanes);
    auto* vb = FixedVectorType::get(i8, lanes);
    q = b.CreateAdd(q, ConstantInt::get(vq, uint64_t(int64_t(s.outZeroPoint))));
    Value* bytes = nullptr;
    if (s.avx512 && lanes == 16) {
      // vpmovsdb saturates to [-128, 127]; vpmovusdb (after max 0) to [0, 255].
      const bool u8 = s.outType == DType::U8;
      if (u8)
        q = b.CreateBinaryIntrinsic(Intrinsic::smax, q, Constant::getNullValue(vq));
      Function* narrow =
          Intrinsic::getDeclaration(&module, u8 ? Intrinsic::x86_avx512_mask_pmovus_db_512
                                                : Intrinsic::x86_avx512_mask_pmovs_db_512);
      bytes = b.CreateCall(narrow, {q, UndefValue::get(vb), ConstantInt::get(i16, 0xffff)});
    } else {
      q = b.CreateBinaryIntrinsic(Intrinsic::smax, q, ConstantInt::get(vq, uint64_t(int64_t(lo))));
      q = b.CreateBinaryIntrinsic(Intrinsic::smin, q, ConstantInt::get(vq, uint64_t(int64_t(hi))));
      bytes = b.CreateTrunc(q, vb);
    }
    b.CreateMaskedStore(bytes, byteGep(b, y, offset), Align(1), mask);
    return;
  }
  for (unsigned h = 0; h < lanes; h += 8) {
    Value* d = b.CreateSIToFP(lanes8(b, sum, h), v8f64);
    d = b.CreateFMul(d, mults[h / 8]);
    d = b.CreateUnaryIntrinsic(Intrinsic::roundeven, d);
    d = b.CreateFAdd(d, ConstantFP::get(v8f64, double(s.outZeroPoint)));
    d = b.CreateBinaryIntrinsic(Intrinsic::maxnum, d, ConstantFP::get(v8f64, double(lo)));
    d = b.CreateBinaryIntrinsic(Intrinsic::minnum, d, ConstantFP::get(v8f64, double(hi)));
    Value* q8 = b.CreateTrunc(b.CreateFPToSI(d, v8i32), v8i8);
    b.CreateMaskedStore(q8, byteGep(b, y, b.CreateAdd(offset, c64(h))), Align(1),
                        lanes8(b, mask, h));
  }
}

void Emitter::emitStores(IRBuilder<>& b, Function* f, Value* args, const std::vector<Value*>& acc,
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
    // 16 columns per store where the sums requantize in int32 on AVX-512, else 8.
    const int64_t per = s.avx512 && s.requantFitsInt32 && nv % 2 == 0 ? 2 : 1;
    for (int64_t v = 0; v < nv; v += per) {
      std::vector<Value*> sums, mults;
      for (int64_t h = v; h < v + per; ++h) {
        sums.push_back(
            b.CreateAdd(acc[size_t(r * nv + h)], perColumn ? colCorr[size_t(h)] : rowCorr));
        mults.push_back(perColumn ? colMult[size_t(h)] : rowMult);
      }
      Value* sum = per == 2 ? join8(b, sums[0], sums[1]) : sums[0];
      const unsigned n = unsigned(8 * per);
      Value* col = b.CreateAdd(col0, c64(v * 8));
      Value* mask = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(n, col), laneIndices(1, n)),
                                    b.CreateVectorSplat(n, b.CreateAdd(col0, nValid)));
      storeSums(b, y, b.CreateAdd(rowBase, col), sum, mults, mask);
    }
    b.CreateBr(after);
    b.SetInsertPoint(after);
  }
}

Function* Emitter::emitItems(Function* ukernel) {
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

void Emitter::runItems(IRBuilder<>& b, Value* args, Function* items, int64_t count,
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

Function* Emitter::emit() {
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

} // namespace int8ir

using namespace int8ir;

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
           " items, " + std::to_string(s.nr) +
           " output columns per vector, int32 products of the shifted operands, taps unrolled";
  Int8Plan p = planInt8(s);
  return std::string("int8 ") + (*s.isa == Int8Isa::Vnni ? "vpdpbusd" : "vpmaddwd (i16)") +
         " mr=" + std::to_string(s.mr) + " nr=" + std::to_string(s.nr) +
         ", K=" + std::to_string(s.K) + " in " + std::to_string(p.kSteps) + " steps, " +
         std::to_string(p.computeItems()) + " items (" + std::to_string(p.packItems()) +
         " packing), weights packed at compile time, activation " +
         (s.weightsAreRows() ? "im2col" : "rows") + " packed per call";
}

} // namespace fb::cg
