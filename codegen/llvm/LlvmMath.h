// Vectorizable f32 math in LLVM IR (exp, tanh, erf, sigmoid) for generated kernels.
#pragma once

#include <llvm/IR/IRBuilder.h>

namespace fb::cg {

/// e^x for a float or <N x float> value: range reduction to 2^n * e^r with a degree-6
/// polynomial (Cephes' expf), about 2 ulp; inputs are clamped to [-88.38, 88.72]. NaN stays
/// NaN. With `ieeeEnds` (the Exp op) e^x is also inf beyond ln(FLT_MAX) and 0 below the lower
/// clamp; the functions built on it, where those ends make no difference, skip the two selects.
/// Unlike llvm.exp it stays in vector registers instead of becoming N calls to expf.
llvm::Value* emitFastExp(llvm::IRBuilderBase& b, llvm::Value* x, bool ieeeEnds = true);

/// 1 / (1 + e^-x).
llvm::Value* emitFastSigmoid(llvm::IRBuilderBase& b, llvm::Value* x);

/// tanh(x) = sign(x) (1 - e^-2|x|) / (1 + e^-2|x|); absolute error below 1e-6.
llvm::Value* emitFastTanh(llvm::IRBuilderBase& b, llvm::Value* x);

/// erf(x) by Abramowitz & Stegun 7.1.26 (absolute error below 2e-7), odd-extended.
llvm::Value* emitFastErf(llvm::IRBuilderBase& b, llvm::Value* x);

/// Applies a scalar libm function `name` (float(float)) to each lane of x.
llvm::Value* emitScalarizedCall(llvm::IRBuilderBase& b, llvm::Module& module, const char* name,
                                llvm::Value* x);

} // namespace fb::cg
