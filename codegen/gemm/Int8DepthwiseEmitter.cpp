// LLVM IR of int8 depthwise convolutions, computed directly: int32 products of the
// zero-point-shifted operands along 16 (AVX-512) or 8 output columns, or with VNNI and VBMI
// vpdpbusd on each kernel row's bytes gathered by vpermb; requantized by the int8 store.
#include "codegen/gemm/Int8IrBuilder.h"

#include <llvm/IR/IntrinsicsX86.h>

namespace fb::cg::int8ir {

Function* Emitter::emitDepthwiseItems() {
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
  // Output columns per vector: 16 (zmm) where the target has AVX-512, else 8.
  const unsigned L = unsigned(s.nr);
  auto* vL32 = FixedVectorType::get(i32, L);
  const bool sext = s.actType == DType::I8;
  Value* zpVec = b.CreateVectorSplat(L, ConstantInt::get(i32, uint64_t(int64_t(s.actZeroPoint))));
  Value* zero = Constant::getNullValue(vL32);
  Value* lanes = laneIndices(1, L);
  Value* laneCols = laneIndices(sw, L);
  auto* wideRow = FixedVectorType::get(i8, unsigned(L * sw));
  std::vector<int> strided;
  for (unsigned l = 0; l < L; ++l)
    strided.push_back(int(l * sw));
  auto widen = [&](Value* v) { return sext ? b.CreateSExt(v, vL32) : b.CreateZExt(v, vL32); };
  // The sums of L columns through storeSums, one multiplier vector per 8 lanes.
  auto store = [&](Value* offset, Value* sum, Value* multV, Value* mask) {
    std::vector<Value*> mults(L / 8, multV);
    storeSums(b, y, offset, sum, mults, mask);
  };
  // An item is a block of planes: one claim per plane costs more than a small plane's work.
  const int64_t planes = s.batch * c.inChannels, block = depthwiseBlock();
  Value* first = b.CreateMul(f->getArg(1), c64(block));
  Value* last = gemmir::emitMin(b, b.CreateMul(f->getArg(2), c64(block)), c64(planes));
  // A plane copied into a zero-point-filled buffer with its padding (and room for the last
  // vector's loads) needs no bounds checks at all; planes too large for that use the masks.
  const int64_t lastOw0 = (c.outW - 1) / L * L;
  const int64_t padH = (c.outH - 1) * c.strideH + (c.kernelH - 1) * c.dilationH + 1;
  const int64_t padW = lastOw0 * sw + (c.kernelW - 1) * c.dilationW + int64_t(L) * sw;
  const bool usePadded = padH * padW <= (int64_t(1) << 16);
  Value* paddedBuf =
      usePadded ? b.CreateAlloca(ArrayType::get(i8, uint64_t(padH * padW + 64)), nullptr, "padded")
                : nullptr; // + 64: the row form's last 64-byte load may pass the plane's end
  // The vpdpbusd row form (s.tapQuadsArg): per kernel row one 64-byte load, per 4 taps one
  // vpermb putting lane j's 4 input bytes (columns j * sw + t * dilation) side by side and one
  // vpdpbusd adding their products with the taps into lane j.
  const bool rowForm = usePadded && s.tapQuadsArg >= 0;
  const int64_t quads = (c.kernelW + 3) / 4;
  Value* tapQuads = rowForm ? loadArg(b, args, s.tapQuadsArg, "tapQuads") : nullptr;
  auto* v64i8 = FixedVectorType::get(i8, 64);
  auto* v16i32 = FixedVectorType::get(i32, 16);
  std::vector<Value*> gather; // per quad: the vpermb indices
  for (int64_t q = 0; rowForm && q < quads; ++q) {
    std::vector<Constant*> idx;
    for (int64_t j = 0; j < 16; ++j)
      for (int64_t e = 0; e < 4; ++e) {
        const int64_t t = 4 * q + e;
        idx.push_back(ConstantInt::get(i8, uint64_t(t < c.kernelW ? j * sw + t * c.dilationW : 0)));
      }
    gather.push_back(ConstantVector::get(idx));
  }
  emitFor(b, first, last, c64(1), "plane", [&](Value* item) {
    Value* ch = b.CreateSRem(item, c64(c.inChannels), "ch");
    Value* xPlane = byteGep(b, x, b.CreateMul(item, c64(c.inH * c.inW)), "X.plane");
    Value* yPlane = b.CreateMul(item, c64(c.outH * c.outW), "Y.plane");
    Value* corrS = b.CreateLoad(i32, b.CreateInBoundsGEP(i32, corr, ch));
    Value* multV = b.CreateVectorSplat(8, b.CreateLoad(f64, b.CreateInBoundsGEP(f64, mult, ch)));
    std::vector<Value*> tapW;
    Value* tapSum = ConstantInt::get(i32, 0);
    for (int64_t t = 0; t < taps; ++t) {
      Value* tap = b.CreateLoad(
          i32, b.CreateInBoundsGEP(i32, w, b.CreateAdd(b.CreateMul(ch, c64(taps)), c64(t))));
      tapSum = b.CreateAdd(tapSum, tap);
      tapW.push_back(b.CreateVectorSplat(L, tap));
    }
    Value* corrV = b.CreateVectorSplat(L, corrS);
    if (usePadded) {
      // (The 64 bytes past the plane too: the row form loads, but never selects, them.)
      b.CreateMemSet(paddedBuf, ConstantInt::get(i8, uint64_t(s.actZeroPoint & 0xff)),
                     c64(padH * padW + (rowForm ? 64 : 0)), MaybeAlign(1));
      const int64_t copyRows = std::min(c.inH, padH - c.padTop);
      const int64_t copyCols = std::min(c.inW, padW - c.padLeft);
      if (copyRows > 0 && copyCols > 0)
        emitFor(b, c64(0), c64(copyRows), c64(1), "ih", [&](Value* ih) {
          Value* to = byteGep(
              b, paddedBuf,
              b.CreateAdd(b.CreateMul(b.CreateAdd(ih, c64(c.padTop)), c64(padW)), c64(c.padLeft)));
          b.CreateMemCpy(to, MaybeAlign(1), byteGep(b, xPlane, b.CreateMul(ih, c64(c.inW))),
                         MaybeAlign(1), c64(copyCols));
        });
      // Every input the padded plane holds is x or the zero point, so sum (x - zp) * w =
      // sum x * w - zp * sum w: the zero point leaves the taps' loop for the plane's correction.
      // The row form reads an i8 activation as u8 with its sign bit flipped (x + 128): 128 times
      // the taps' sum comes off too.
      const int64_t shift = s.actZeroPoint + (rowForm && sext ? 128 : 0);
      Value* corrPadded = b.CreateVectorSplat(
          L, b.CreateSub(corrS, b.CreateMul(ConstantInt::get(i32, uint64_t(shift)), tapSum)));
      std::vector<Value*> quadW; // per kernel row and quad: the 4 taps in every lane
      for (int64_t kh = 0; rowForm && kh < c.kernelH; ++kh)
        for (int64_t q = 0; q < quads; ++q)
          quadW.push_back(b.CreateVectorSplat(
              16, b.CreateLoad(
                      i32, b.CreateInBoundsGEP(i32, tapQuads,
                                               b.CreateAdd(b.CreateMul(ch, c64(c.kernelH * quads)),
                                                           c64(kh * quads + q))))));
      Function* permb =
          rowForm ? Intrinsic::getDeclaration(&module, Intrinsic::x86_avx512_permvar_qi_512)
                  : nullptr;
      Function* dot = rowForm
                          ? Intrinsic::getDeclaration(&module, Intrinsic::x86_avx512_vpdpbusd_512)
                          : nullptr;
      emitFor(b, c64(0), c64(c.outH), c64(1), "oh", [&](Value* oh) {
        emitFor(b, c64(0), c64(c.outW), c64(L), "ow", [&](Value* ow0) {
          Value* acc = zero;
          for (int64_t kh = 0; rowForm && kh < c.kernelH; ++kh) {
            Value* at = byteGep(b, paddedBuf,
                                b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(oh, c64(c.strideH)),
                                                                    c64(kh * c.dilationH)),
                                                        c64(padW)),
                                            b.CreateMul(ow0, c64(sw))));
            Value* row = b.CreateAlignedLoad(v64i8, at, Align(1));
            if (sext)
              row = b.CreateXor(row, ConstantInt::get(v64i8, 0x80));
            for (int64_t q = 0; q < quads; ++q) {
              Value* bytes = b.CreateCall(permb, {row, gather[size_t(q)]});
              acc = b.CreateCall(
                  dot, {acc, b.CreateBitCast(bytes, v16i32), quadW[size_t(kh * quads + q)]});
            }
          }
          for (int64_t kh = 0; !rowForm && kh < c.kernelH; ++kh) {
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
              acc = b.CreateAdd(acc, b.CreateMul(widen(v), tapW[size_t(kh * c.kernelW + kw)]));
            }
          }
          Value* mask = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(L, ow0), lanes),
                                        b.CreateVectorSplat(L, c64(c.outW)));
          store(b.CreateAdd(yPlane, b.CreateAdd(b.CreateMul(oh, c64(c.outW)), ow0)),
                b.CreateAdd(acc, corrPadded), multV, mask);
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
      emitFor(b, c64(0), c64(c.outW), c64(L), "ow", [&](Value* ow0) {
        Value* iwBase = b.CreateSub(b.CreateMul(ow0, c64(sw)), c64(c.padLeft));
        Value* interior =
            b.CreateAnd(b.CreateICmpSGE(iwBase, c64(0)),
                        b.CreateICmpSLE(b.CreateAdd(iwBase, c64((c.kernelW - 1) * c.dilationW +
                                                                int64_t(L) * sw)),
                                        c64(c.inW)));
        Function* fn = b.GetInsertBlock()->getParent();
        BasicBlock* fast = BasicBlock::Create(ctx, "dw.interior", fn);
        BasicBlock* edge = BasicBlock::Create(ctx, "dw.edge", fn);
        BasicBlock* join = BasicBlock::Create(ctx, "dw.store", fn);
        b.CreateCondBr(interior, fast, edge);

        b.SetInsertPoint(fast);
        Value* accF = zero;
        for (int64_t kh = 0; kh < c.kernelH; ++kh)
          for (int64_t kw = 0; kw < c.kernelW; ++kw) {
            Value* at = byteGep(b, rowPtr[size_t(kh)], b.CreateAdd(iwBase, c64(kw * c.dilationW)));
            Value* v = b.CreateAlignedLoad(wideRow, at, Align(1));
            if (sw > 1)
              v = b.CreateShuffleVector(v, strided);
            Value* wv = b.CreateSelect(rowOk[size_t(kh)], tapW[size_t(kh * c.kernelW + kw)], zero);
            accF = b.CreateAdd(accF, b.CreateMul(b.CreateSub(widen(v), zpVec), wv));
          }
        BasicBlock* fastEnd = b.GetInsertBlock();
        b.CreateBr(join);

        b.SetInsertPoint(edge);
        Value* accE = zero;
        Value* laneValid = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(L, ow0), lanes),
                                           b.CreateVectorSplat(L, c64(c.outW)));
        for (int64_t kh = 0; kh < c.kernelH; ++kh)
          for (int64_t kw = 0; kw < c.kernelW; ++kw) {
            Value* iw = b.CreateAdd(
                b.CreateVectorSplat(L, b.CreateAdd(iwBase, c64(kw * c.dilationW))), laneCols);
            Value* in = b.CreateAnd(
                b.CreateAnd(b.CreateICmpULT(iw, b.CreateVectorSplat(L, c64(c.inW))), laneValid),
                b.CreateVectorSplat(L, rowOk[size_t(kh)]));
            // The lanes' inputs lie at l * stride from the first: one masked load of the
            // L * stride bytes (masked-off bytes are not read), then the strided shuffle.
            Value* at =
                b.CreateGEP(i8, rowPtr[size_t(kh)], b.CreateAdd(iwBase, c64(kw * c.dilationW)));
            Value* wideMask = in;
            if (sw > 1) {
              std::vector<int> spread(size_t(L * sw), int(L)); // lane L: a false of the zeros
              for (unsigned l = 0; l < L; ++l)
                spread[size_t(l * sw)] = int(l);
              wideMask = b.CreateShuffleVector(in, Constant::getNullValue(in->getType()), spread);
            }
            Value* v = b.CreateMaskedLoad(wideRow, at, Align(1), wideMask);
            if (sw > 1)
              v = b.CreateShuffleVector(v, strided);
            Value* d = b.CreateSelect(in, b.CreateSub(widen(v), zpVec), zero);
            accE = b.CreateAdd(accE, b.CreateMul(d, tapW[size_t(kh * c.kernelW + kw)]));
          }
        BasicBlock* edgeEnd = b.GetInsertBlock();
        b.CreateBr(join);

        b.SetInsertPoint(join);
        PHINode* acc = b.CreatePHI(vL32, 2, "acc");
        acc->addIncoming(accF, fastEnd);
        acc->addIncoming(accE, edgeEnd);
        Value* mask = b.CreateICmpSLT(b.CreateAdd(b.CreateVectorSplat(L, ow0), lanes),
                                      b.CreateVectorSplat(L, c64(c.outW)));
        store(b.CreateAdd(yPlane, b.CreateAdd(b.CreateMul(oh, c64(c.outW)), ow0)),
              b.CreateAdd(acc, corrV), multV, mask);
      });
    });
  });
  b.CreateRetVoid();
  return f;
}

} // namespace fb::cg::int8ir
