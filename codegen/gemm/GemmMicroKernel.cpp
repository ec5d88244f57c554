// The GEMM register-blocked micro-kernel with its fused store (alpha, bias, epilogue), and the
// IR helpers the generator shares.
#include "codegen/gemm/GemmIrBuilder.h"

#include <llvm/IR/Intrinsics.h>

#include <functional>
#include <llvm/TargetParser/Host.h>

namespace fb::cg::gemmir {

using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using llvm::Value;

GemmIrContext::GemmIrContext(Module& m, const Kernel& k, const GemmPlan& p)
    : module(m), ctx(m.getContext()), kernel(k), spec(*k.gemm), plan(p) {
  f32 = Type::getFloatTy(ctx);
  i32 = Type::getInt32Ty(ctx);
  i64 = Type::getInt64Ty(ctx);
  i1 = Type::getInt1Ty(ctx);
  ptr = PointerType::getUnqual(ctx);
  v8f32 = FixedVectorType::get(f32, 8);
  v8i32 = FixedVectorType::get(i32, 8);
  v8i1 = FixedVectorType::get(i1, 8);
}

Function* GemmIrContext::makeFunction(const std::string& suffix, Type* ret, ArrayRef<Type*> params,
                                      bool internal) const {
  std::string name = suffix.empty() ? kernel.name : kernel.name + "." + suffix;
  auto* fnTy = FunctionType::get(ret, params, /*isVarArg=*/false);
  Function* f = Function::Create(
      fnTy, internal ? Function::InternalLinkage : Function::ExternalLinkage, name, module);
  f->addFnAttr(Attribute::NoUnwind);
  // The micro-kernel is written for the host's vector unit; the module-level optimizer may
  // override these when it targets another CPU.
  if (!f->hasFnAttribute("target-cpu")) {
    f->addFnAttr("target-cpu", sys::getHostCPUName());
    std::string features;
    for (const auto& feature : sys::getHostCPUFeatures())
      features += (features.empty() ? "" : ",") + std::string(feature.second ? "+" : "-") +
                  feature.first().str();
    f->addFnAttr("target-features", features);
  }
  return f;
}

void emitFor(IRBuilder<>& b, Value* begin, Value* end, Value* step, const Twine& name,
             function_ref<void(Value*)> body) {
  Function* f = b.GetInsertBlock()->getParent();
  LLVMContext& ctx = f->getContext();
  BasicBlock* pre = b.GetInsertBlock();
  BasicBlock* header = BasicBlock::Create(ctx, name + ".header", f);
  BasicBlock* bodyBlock = BasicBlock::Create(ctx, name + ".body", f);
  BasicBlock* exit = BasicBlock::Create(ctx, name + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  PHINode* iv = b.CreatePHI(begin->getType(), 2, name);
  iv->addIncoming(begin, pre);
  b.CreateCondBr(b.CreateICmpSLT(iv, end, name + ".cond"), bodyBlock, exit);
  b.SetInsertPoint(bodyBlock);
  body(iv);
  Value* next = b.CreateAdd(iv, step, name + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
}

Value* loadArg(IRBuilder<>& b, Value* args, int index, const Twine& name) {
  Value* slot = b.CreateConstInBoundsGEP1_64(b.getPtrTy(), args, uint64_t(index), name + ".slot");
  auto* load = b.CreateAlignedLoad(b.getPtrTy(), slot, Align(8), name);
  load->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(b.getContext(), {}));
  return load;
}

Value* floatGep(IRBuilder<>& b, Value* base, Value* offset, const Twine& name) {
  return b.CreateInBoundsGEP(b.getFloatTy(), base, offset, name);
}

Value* emitMin(IRBuilder<>& b, Value* a, Value* x) {
  return b.CreateSelect(b.CreateICmpSLT(a, x), a, x);
}

Value* emitVectorExp(GemmIrContext& c, IRBuilder<>& b, Value* x) {
  auto* vt = cast<FixedVectorType>(x->getType());
  auto vf = [&](float v) { return ConstantFP::get(vt, v); };
  auto* vi = FixedVectorType::get(c.i32, vt->getNumElements());
  auto fmin = [&](Value* a, Value* v) { return b.CreateSelect(b.CreateFCmpOLT(a, v), a, v); };
  auto fmax = [&](Value* a, Value* v) { return b.CreateSelect(b.CreateFCmpOGT(a, v), a, v); };
  auto fma = [&](Value* a, Value* m, Value* add) {
    return b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {a, m, add});
  };
  Value* in = x;
  x = fmax(fmin(x, vf(88.3762626647949f)), vf(-87.3365447504f));
  // n = round(x / ln2); r = x - n*ln2 in two parts so r is exact.
  Value* fx =
      b.CreateIntrinsic(Intrinsic::floor, {vt}, {fma(x, vf(1.44269504088896341f), vf(0.5f))});
  Value* r = fma(fx, vf(-0.693359375f), x);
  r = fma(fx, vf(2.12194440e-4f), r);
  Value* z = b.CreateFMul(r, r);
  Value* y = vf(1.9875691500E-4f);
  for (float coef :
       {1.3981999507E-3f, 8.3334519073E-3f, 4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f})
    y = fma(y, r, vf(coef));
  y = fma(y, z, r);
  y = b.CreateFAdd(y, vf(1.0f));
  // 2^n by building the exponent bits.
  Value* n = b.CreateFPToSI(fx, vi);
  Value* bits = b.CreateShl(b.CreateAdd(n, ConstantInt::get(vi, 127)), ConstantInt::get(vi, 23));
  Value* e = b.CreateFMul(y, b.CreateBitCast(bits, vt));
  // The clamp turned NaN into 88.38 (an unordered compare is false); NaN stays NaN, as in the
  // interpreter, so that a NaN accumulator is not a sigmoid of 0.
  return b.CreateSelect(b.CreateFCmpUNO(in, in), in, e, "exp");
}

Value* applyEpilogueOp(GemmIrContext& c, IRBuilder<>& b, const EpilogueOp& op, Value* x,
                       function_ref<Value*(int arg)> residual) {
  auto* vt = cast<FixedVectorType>(x->getType());
  auto vf = [&](float v) { return ConstantFP::get(vt, v); };
  auto sel = [&](Value* cond, Value* t, Value* f) { return b.CreateSelect(cond, t, f); };
  Value* zero = vf(0.0f);
  Value* one = vf(1.0f);
  switch (op.kind) {
  case EpilogueOp::Kind::Relu: // the interpreter's x < 0 ? 0 : x (NaN and -0 pass through)
    return b.CreateSelect(b.CreateFCmpOLT(x, zero), zero, x, "relu");
  case EpilogueOp::Kind::Clip: {
    Value* lo = vf(op.lo);
    Value* hi = vf(op.hi);
    x = sel(b.CreateFCmpOLT(x, lo), lo, x);
    return sel(b.CreateFCmpOGT(x, hi), hi, x);
  }
  case EpilogueOp::Kind::LeakyRelu:
    return sel(b.CreateFCmpOLT(x, zero), b.CreateFMul(x, vf(op.alpha)), x);
  case EpilogueOp::Kind::Sigmoid: {
    Value* e = emitVectorExp(c, b, b.CreateFNeg(x));
    return b.CreateFDiv(one, b.CreateFAdd(one, e), "sigmoid");
  }
  case EpilogueOp::Kind::Silu: {
    Value* e = emitVectorExp(c, b, b.CreateFNeg(x));
    return b.CreateFDiv(x, b.CreateFAdd(one, e), "silu");
  }
  case EpilogueOp::Kind::Gelu: {
    // erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7), odd-extended:
    // erf(|z|) = 1 - t (a1 + t (a2 + ... + t a5)) e^(-z^2), t = 1 / (1 + p |z|).
    Value* z = b.CreateFMul(x, vf(0.70710678118654752f));
    Value* az = b.CreateIntrinsic(Intrinsic::fabs, {vt}, {z});
    Value* t =
        b.CreateFDiv(one, b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {az, vf(0.3275911f), one}));
    Value* poly = vf(1.061405429f);
    for (float coef : {-1.453152027f, 1.421413741f, -0.284496736f, 0.254829592f})
      poly = b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {poly, t, vf(coef)});
    poly = b.CreateFMul(poly, t);
    Value* e = emitVectorExp(c, b, b.CreateFNeg(b.CreateFMul(az, az)));
    Value* erfAbs = b.CreateFSub(one, b.CreateFMul(poly, e));
    Value* erf = b.CreateIntrinsic(Intrinsic::copysign, {vt}, {erfAbs, z});
    return b.CreateFMul(b.CreateFMul(x, vf(0.5f)), b.CreateFAdd(one, erf), "gelu");
  }
  case EpilogueOp::Kind::GeluTanh: {
    // tanh(u) = 1 - 2 / (1 + e^(2u)); e^(2u) saturates at the clamp, so the ends are +-1.
    Value* x3 = b.CreateFMul(b.CreateFMul(x, x), x);
    Value* u = b.CreateFMul(b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {x3, vf(0.044715f), x}),
                            vf(0.79788456080286536f));
    Value* e = emitVectorExp(c, b, b.CreateFAdd(u, u));
    Value* th = b.CreateFSub(one, b.CreateFDiv(vf(2.0f), b.CreateFAdd(one, e)));
    return b.CreateFMul(b.CreateFMul(x, vf(0.5f)), b.CreateFAdd(one, th), "gelu_tanh");
  }
  case EpilogueOp::Kind::HardSigmoid: {
    Value* t = b.CreateIntrinsic(Intrinsic::fmuladd, {vt}, {x, vf(op.alpha), vf(op.beta)});
    t = sel(b.CreateFCmpOLT(t, one), t, one);
    return sel(b.CreateFCmpOGT(t, zero), t, zero);
  }
  case EpilogueOp::Kind::HardSwish: {
    Value* t = b.CreateFAdd(b.CreateFDiv(x, vf(6.0f)), vf(0.5f));
    t = sel(b.CreateFCmpOLT(t, one), t, one);
    t = sel(b.CreateFCmpOGT(t, zero), t, zero);
    return b.CreateFMul(x, t, "hardswish");
  }
  case EpilogueOp::Kind::AddTensor:
    return b.CreateFAdd(x, residual(op.arg), "add");
  case EpilogueOp::Kind::MulTensor:
    return b.CreateFMul(x, residual(op.arg), "mul");
  }
  return x;
}

Function* emitMicroKernel(GemmIrContext& c, bool edge, int vectors) {
  const GemmPlan& p = c.plan;
  const GemmSpec& s = c.spec;
  const int mr = int(p.mr), nv = vectors;
  std::string name = edge ? "ukernel.edge" : "ukernel";
  if (vectors != int(p.nr / 8))
    name += ".nv" + std::to_string(vectors);
  Function* f = makeMicroKernelFunction(c, name);
  Argument* argv = f->getArg(0);
  Value *kLen = f->getArg(1), *ap = f->getArg(2), *bp = f->getArg(3), *cOff = f->getArg(4);
  Value *accumulate = f->getArg(5), *last = f->getArg(6), *mAbs = f->getArg(7),
        *nAbs = f->getArg(8);
  Value *mValid = f->getArg(9), *nValid = f->getArg(10);

  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
  Value* cBase = loadArg(b, argv, p.cArg, "C");
  Value* cTile = floatGep(b, cBase, cOff, "C.tile");

  // Masks of the edge variant: row i and column block j are live when inside the tile.
  std::vector<std::vector<Value*>> masks(mr, std::vector<Value*>(nv, nullptr));
  std::vector<Value*> rowLive(mr, nullptr);
  if (edge) {
    Value* nv32 = b.CreateVectorSplat(8, b.CreateTrunc(nValid, c.i32));
    for (int j = 0; j < nv; ++j) {
      SmallVector<Constant*, 8> lanes;
      for (int l = 0; l < 8; ++l)
        lanes.push_back(ConstantInt::get(c.i32, 8 * j + l));
      Value* colMask = b.CreateICmpSLT(ConstantVector::get(lanes), nv32, "colmask");
      for (int i = 0; i < mr; ++i) {
        rowLive[i] = b.CreateICmpSLT(c.c64(i), mValid, "rowlive");
        masks[i][j] = b.CreateAnd(colMask, b.CreateVectorSplat(8, rowLive[i]));
      }
    }
  }
  auto rowPtr = [&](Value* base, int i, int j) {
    return floatGep(b, base, c.c64(int64_t(i) * p.cRowStride + 8 * j));
  };
  auto loadTile = [&](Value* base, int i, int j) -> Value* {
    Value* at = rowPtr(base, i, j);
    if (edge)
      return b.CreateMaskedLoad(c.v8f32, at, Align(4), masks[i][j], c.vf(0.0f));
    return b.CreateAlignedLoad(c.v8f32, at, Align(4));
  };
  auto storeTile = [&](Value* v, Value* base, int i, int j) {
    Value* at = rowPtr(base, i, j);
    if (edge)
      b.CreateMaskedStore(v, at, Align(4), masks[i][j]);
    else
      b.CreateAlignedStore(v, at, Align(4));
  };

  // The k loop: acc[i][s] += splat(Ap[k*mr + i]) * Bp[k*nr + slot s's columns]. A slot is
  // 16 columns (one zmm) when the plan's lanes allow and two 8-column vectors remain, else 8.
  struct Slot {
    int first; ///< the first 8-column vector it covers
    int width; ///< 8 or 16 floats
  };
  std::vector<Slot> slots;
  for (int j = 0; j < nv;) {
    int width = p.lanes() >= 16 && j + 1 < nv ? 16 : 8;
    slots.push_back({j, width});
    j += width / 8;
  }
  const int ns = int(slots.size());
  auto vecTy = [&](int width) { return FixedVectorType::get(c.f32, unsigned(width)); };
  // The last K block of a whole tile first prefetches the residual tile its store will read:
  // the tensor was written long before (a block's input), and its demand loads after the K
  // loop stalled the store (ResNet-50's 1x1 expand with Add: 378 us, without the Add 262).
  bool hasResidual = false;
  for (const EpilogueOp& op : s.epilogue)
    hasResidual |=
        (op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) &&
        !op.perRow;
  if (hasResidual && !edge) {
    BasicBlock* prefetch = BasicBlock::Create(c.ctx, "residual.prefetch", f);
    BasicBlock* start = BasicBlock::Create(c.ctx, "k.start", f);
    b.CreateCondBr(last, prefetch, start);
    b.SetInsertPoint(prefetch);
    std::vector<Value*> bases = residualTileBases(c, b, argv, cOff);
    for (size_t arg = 0; arg < bases.size(); ++arg) {
      Value* base = bases[arg];
      if (!base || isPerRowOperand(s, int(arg)))
        continue;
      for (int i = 0; i < mr; ++i)
        for (int col = 0;; col += 16) { // one per 64-byte line, and the row's last float
          const int at = std::min(col, 8 * nv - 1);
          b.CreateIntrinsic(Intrinsic::prefetch, {c.ptr},
                            {floatGep(b, base, c.c64(int64_t(i) * p.cRowStride + at)),
                             b.getInt32(0), b.getInt32(3), b.getInt32(1)});
          if (at == 8 * nv - 1)
            break;
        }
    }
    b.CreateBr(start);
    b.SetInsertPoint(start);
  }
  BasicBlock* entry = b.GetInsertBlock();
  BasicBlock* header = BasicBlock::Create(c.ctx, "k.header", f);
  BasicBlock* body = BasicBlock::Create(c.ctx, "k.body", f);
  BasicBlock* done = BasicBlock::Create(c.ctx, "k.exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  PHINode* k = b.CreatePHI(c.i64, 2, "k");
  k->addIncoming(c.c64(0), entry);
  std::vector<PHINode*> slotPhi;
  for (int i = 0; i < mr; ++i)
    for (int t = 0; t < ns; ++t) {
      Type* ty = vecTy(slots[size_t(t)].width);
      PHINode* phi = b.CreatePHI(ty, 2, "acc" + std::to_string(i) + "_" + std::to_string(t));
      phi->addIncoming(ConstantFP::get(ty, 0.0), entry);
      slotPhi.push_back(phi);
    }
  b.CreateCondBr(b.CreateICmpSLT(k, kLen), body, done);
  b.SetInsertPoint(body);
  Value* bRow = floatGep(b, bp, b.CreateMul(k, c.c64(p.nr)), "b.row");
  Value* aCol = floatGep(b, ap, b.CreateMul(k, c.c64(p.mr)), "a.col");
  std::vector<Value*> bVec;
  for (const Slot& slot : slots)
    bVec.push_back(b.CreateAlignedLoad(vecTy(slot.width), floatGep(b, bRow, c.c64(8 * slot.first)),
                                       Align(4), "b"));
  for (int i = 0; i < mr; ++i) {
    Value* a = b.CreateAlignedLoad(c.f32, floatGep(b, aCol, c.c64(i)), Align(4), "a");
    Value* aSplat[2] = {b.CreateVectorSplat(8, a),
                        p.lanes() >= 16 ? b.CreateVectorSplat(16, a) : nullptr};
    for (int t = 0; t < ns; ++t) {
      PHINode* phi = slotPhi[size_t(i * ns + t)];
      Value* splat = aSplat[slots[size_t(t)].width == 16 ? 1 : 0];
      phi->addIncoming(
          b.CreateIntrinsic(Intrinsic::fmuladd, {phi->getType()}, {splat, bVec[size_t(t)], phi}),
          body);
    }
  }
  k->addIncoming(b.CreateAdd(k, c.c64(1), "k.next", true, true), body);
  b.CreateBr(header);

  // From here on the tile is handled in 8-column vectors: a 16-float slot splits in halves
  // (the upper half of a zmm is a free ymm view).
  b.SetInsertPoint(done);
  std::vector<Value*> accPhi;
  for (int i = 0; i < mr; ++i)
    for (int t = 0; t < ns; ++t) {
      Value* v = slotPhi[size_t(i * ns + t)];
      if (slots[size_t(t)].width == 8) {
        accPhi.push_back(v);
        continue;
      }
      accPhi.push_back(b.CreateShuffleVector(v, ArrayRef<int>{0, 1, 2, 3, 4, 5, 6, 7}, "lo"));
      accPhi.push_back(b.CreateShuffleVector(v, ArrayRef<int>{8, 9, 10, 11, 12, 13, 14, 15}, "hi"));
    }
  BasicBlock* kExit = b.GetInsertBlock();

  // Add the partial sums of earlier K blocks.
  BasicBlock* addC = BasicBlock::Create(c.ctx, "add.c", f);
  BasicBlock* join = BasicBlock::Create(c.ctx, "join", f);
  b.CreateCondBr(accumulate, addC, join);
  b.SetInsertPoint(addC);
  std::vector<Value*> summed;
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nv; ++j)
      summed.push_back(b.CreateFAdd(accPhi[i * nv + j], loadTile(cTile, i, j)));
  b.CreateBr(join);
  b.SetInsertPoint(join);
  std::vector<Value*> acc;
  for (size_t t = 0; t < accPhi.size(); ++t) {
    PHINode* phi = b.CreatePHI(c.v8f32, 2, "sum");
    phi->addIncoming(accPhi[t], kExit);
    phi->addIncoming(summed[t], addC);
    acc.push_back(phi);
  }
  BasicBlock* partial = BasicBlock::Create(c.ctx, "store.partial", f);
  BasicBlock* final = BasicBlock::Create(c.ctx, "store.final", f);
  b.CreateCondBr(last, final, partial);

  b.SetInsertPoint(partial);
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nv; ++j)
      storeTile(acc[i * nv + j], cTile, i, j);
  b.CreateRetVoid();

  // The fused store: alpha, bias, epilogue ops, in the order of the spec — computed per slot
  // (a zmm's 16 columns at once: an exp costs the same per vector whichever its width), and
  // stored in 8-column halves with the edge masks.
  b.SetInsertPoint(final);
  Value* bias = s.bias != GemmSpec::Bias::None ? loadArg(b, argv, s.biasArg, "bias") : nullptr;
  std::vector<Value*> residualBase = residualTileBases(c, b, argv, cOff);
  // The 8-column vectors of slot t joined into one of its width.
  auto joined = [&](const Slot& slot, const std::function<Value*(int j)>& part) -> Value* {
    if (slot.width == 8)
      return part(slot.first);
    Value* lo = part(slot.first);
    Value* hi = part(slot.first + 1);
    SmallVector<int, 16> all;
    for (int l = 0; l < 16; ++l)
      all.push_back(l);
    return b.CreateShuffleVector(lo, hi, all, "joined");
  };
  for (int i = 0; i < mr; ++i) {
    // Rows past the edge read row 0 of the tile, which always exists.
    Value* liveRow = edge ? b.CreateSelect(rowLive[i], c.c64(i), c.c64(0)) : c.c64(i);
    Value* rowBias = nullptr;
    if (s.bias == GemmSpec::Bias::PerRow)
      rowBias = b.CreateAlignedLoad(c.f32, floatGep(b, bias, b.CreateAdd(mAbs, liveRow)), Align(4),
                                    "bias.row");
    for (const Slot& slot : slots) {
      Value* bv = nullptr;
      if (rowBias) {
        bv = b.CreateVectorSplat(unsigned(slot.width), rowBias);
      } else if (s.bias == GemmSpec::Bias::PerColumn || s.bias == GemmSpec::Bias::Full) {
        bv = joined(slot, [&](int j) -> Value* {
          Value* off = b.CreateAdd(nAbs, c.c64(8 * j));
          if (s.bias == GemmSpec::Bias::Full)
            off = b.CreateAdd(off, b.CreateMul(b.CreateAdd(mAbs, c.c64(i)), c.c64(p.N)));
          Value* at = floatGep(b, bias, off);
          return edge ? static_cast<Value*>(
                            b.CreateMaskedLoad(c.v8f32, at, Align(4), masks[i][j], c.vf(0.0f)))
                      : b.CreateAlignedLoad(c.v8f32, at, Align(4));
        });
      }
      Value* sum = joined(slot, [&](int j) { return acc[size_t(i * nv + j)]; });
      Value* x = finishAccumulator(c, b, sum, bv, [&](int arg) -> Value* {
        if (isPerRowOperand(s, arg))
          return b.CreateVectorSplat(unsigned(slot.width),
                                     b.CreateAlignedLoad(c.f32,
                                                         floatGep(b, residualBase[size_t(arg)],
                                                                  b.CreateAdd(mAbs, liveRow)),
                                                         Align(4), "row.operand"));
        return joined(slot, [&](int j) { return loadTile(residualBase[size_t(arg)], i, j); });
      });
      if (slot.width == 8) {
        storeTile(x, cTile, i, slot.first);
        continue;
      }
      storeTile(b.CreateShuffleVector(x, ArrayRef<int>{0, 1, 2, 3, 4, 5, 6, 7}, "lo"), cTile, i,
                slot.first);
      storeTile(b.CreateShuffleVector(x, ArrayRef<int>{8, 9, 10, 11, 12, 13, 14, 15}, "hi"), cTile,
                i, slot.first + 1);
    }
  }
  b.CreateRetVoid();
  return f;
}

} // namespace fb::cg::gemmir
