// LLVM IR of int8 depthwise convolutions, computed directly: int32 products of the
// zero-point-shifted operands along 8 output columns, requantized by the int8 store.
#include "codegen/gemm/Int8IrBuilder.h"

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
  const bool sext = s.actType == DType::I8;
  Value* zpVec = b.CreateVectorSplat(8, ConstantInt::get(i32, uint64_t(int64_t(s.actZeroPoint))));
  Value* zero = Constant::getNullValue(v8i32);
  Value* lanes = laneIndices();
  Value* laneCols = laneIndices(sw);
  auto* wideRow = FixedVectorType::get(i8, unsigned(8 * sw));
  std::vector<int> strided;
  for (int64_t l = 0; l < 8; ++l)
    strided.push_back(int(l * sw));
  auto widen = [&](Value* v8) { return sext ? b.CreateSExt(v8, v8i32) : b.CreateZExt(v8, v8i32); };
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
          Value* to = byteGep(
              b, paddedBuf,
              b.CreateAdd(b.CreateMul(b.CreateAdd(ih, c64(c.padTop)), c64(padW)), c64(c.padLeft)));
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
            Value* at = byteGep(b, rowPtr[size_t(kh)], b.CreateAdd(iwBase, c64(kw * c.dilationW)));
            Value* v = b.CreateAlignedLoad(wide, at, Align(1));
            if (sw > 1)
              v = b.CreateShuffleVector(v, stride);
            Value* wv = b.CreateSelect(rowOk[size_t(kh)], tapW[size_t(kh * c.kernelW + kw)], zero);
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

} // namespace fb::cg::int8ir
