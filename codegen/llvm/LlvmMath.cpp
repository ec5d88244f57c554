// Vectorizable f32 math in LLVM IR: polynomial exp and the functions built on it.
#include "codegen/llvm/LlvmMath.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <cmath>

namespace fb::cg {

namespace {

llvm::Value* splatLike(llvm::IRBuilderBase& b, llvm::Value* like, llvm::Value* scalar) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
    return b.CreateVectorSplat(vt->getNumElements(), scalar);
  return scalar;
}

llvm::Value* fconst(llvm::IRBuilderBase& b, llvm::Value* like, double v) {
  return splatLike(b, like, llvm::ConstantFP::get(b.getFloatTy(), v));
}

llvm::Value* iconst(llvm::IRBuilderBase& b, llvm::Value* like, int64_t v) {
  return splatLike(b, like, llvm::ConstantInt::get(b.getInt32Ty(), uint64_t(v), true));
}

llvm::Type* intTypeLike(llvm::IRBuilderBase& b, llvm::Value* like) {
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType()))
    return llvm::FixedVectorType::get(b.getInt32Ty(), vt->getNumElements());
  return b.getInt32Ty();
}

llvm::Value* fma(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, llvm::Value* z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {x, y, z});
}

} // namespace

llvm::Value* emitFastExp(llvm::IRBuilderBase& b, llvm::Value* x, bool ieeeEnds) {
  llvm::Type* t = x->getType();
  llvm::Value* in = x;
  // The largest x whose e^x f32 holds is 88.7228391 (ln FLT_MAX); the clamp stops just below
  // it, so that n <= 128 (split in two below) and the result stays finite.
  x = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, fconst(b, x, 88.72283172607422));
  x = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, fconst(b, x, -88.3762626647949));
  // n = round(x / ln 2); r = x - n ln 2 (ln 2 split in two for precision).
  llvm::Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                          b.CreateFMul(x, fconst(b, x, 1.44269504088896341)));
  llvm::Value* r = fma(b, n, fconst(b, x, -0.693359375), x);
  r = fma(b, n, fconst(b, x, 2.12194440e-4), r);
  llvm::Value* y = fconst(b, x, 1.9875691500e-4);
  for (double c : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
                   5.0000001201e-1})
    y = fma(b, y, r, fconst(b, x, c));
  llvm::Value* r2 = b.CreateFMul(r, r);
  y = fma(b, y, r2, b.CreateFAdd(r, fconst(b, x, 1.0)));
  // 2^n through the exponent bits; n is in [-127, 128] after clamping, and the two ends are
  // split as 2^(n/2) * 2^(n - n/2) so neither factor overflows the exponent field.
  llvm::Type* it = intTypeLike(b, x);
  llvm::Value* ni = b.CreateFPToSI(n, it);
  llvm::Value* n1 = b.CreateAShr(ni, iconst(b, x, 1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, iconst(b, x, 127)), iconst(b, x, 23)), t);
  };
  llvm::Value* e = b.CreateFMul(b.CreateFMul(y, pow2(n1)), pow2(n2));
  // The clamps map NaN to a number (minnum and maxnum return the other operand) and every x
  // beyond them to the ends' values; give IEEE's answers there instead: NaN stays NaN, e^x
  // overflows to inf from 88.72283935546875 on, and is 0 below the lower clamp (where it is at
  // most 4e-39, a denormal).
  if (ieeeEnds) {
    e = b.CreateSelect(b.CreateFCmpOGE(in, fconst(b, x, 88.72283935546875)), fconst(b, x, INFINITY),
                       e);
    e = b.CreateSelect(b.CreateFCmpOLT(in, fconst(b, x, -88.3762626647949)), fconst(b, x, 0.0), e);
  }
  return b.CreateSelect(b.CreateFCmpUNO(in, in), in, e);
}

llvm::Value* emitFastSigmoid(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Value* e = emitFastExp(b, b.CreateFNeg(x), /*ieeeEnds=*/false);
  return b.CreateFDiv(fconst(b, x, 1.0), b.CreateFAdd(fconst(b, x, 1.0), e));
}

llvm::Value* emitFastTanh(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* e = emitFastExp(b, b.CreateFMul(ax, fconst(b, x, -2.0)), /*ieeeEnds=*/false);
  llvm::Value* t =
      b.CreateFDiv(b.CreateFSub(fconst(b, x, 1.0), e), b.CreateFAdd(fconst(b, x, 1.0), e));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, x);
}

llvm::Value* emitFastErf(llvm::IRBuilderBase& b, llvm::Value* x) {
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* t =
      b.CreateFDiv(fconst(b, x, 1.0), fma(b, ax, fconst(b, x, 0.3275911), fconst(b, x, 1.0)));
  llvm::Value* p = fconst(b, x, 1.061405429);
  for (double c : {-1.453152027, 1.421413741, -0.284496736, 0.254829592})
    p = fma(b, p, t, fconst(b, x, c));
  p = b.CreateFMul(p, t);
  llvm::Value* e = emitFastExp(b, b.CreateFNeg(b.CreateFMul(ax, ax)), /*ieeeEnds=*/false);
  llvm::Value* y = b.CreateFSub(fconst(b, x, 1.0), b.CreateFMul(p, e));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, y, x);
}

llvm::Value* emitScalarizedCall(llvm::IRBuilderBase& b, llvm::Module& module, const char* name,
                                llvm::Value* x) {
  llvm::FunctionCallee fn = module.getOrInsertFunction(
      name, llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee()))
    f->setDoesNotThrow();
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vt)
    return b.CreateCall(fn, {x});
  llvm::Value* out = llvm::PoisonValue::get(vt);
  for (unsigned i = 0; i < vt->getNumElements(); ++i)
    out = b.CreateInsertElement(out, b.CreateCall(fn, {b.CreateExtractElement(x, uint64_t(i))}),
                                uint64_t(i));
  return out;
}

} // namespace fb::cg
