// Shared state and small IR-building helpers of the GEMM generator (internal to codegen/gemm).
#pragma once

#include "codegen/gemm/GemmPlan.h"
#include "codegen/loops/Kernel.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace fb::cg::gemmir {

/// Everything the pieces of one GEMM kernel's IR need: the module, the kernel and its plan,
/// and the types used throughout.
struct GemmIrContext {
  GemmIrContext(llvm::Module& module, const Kernel& kernel, const GemmPlan& plan);

  llvm::Module& module;
  llvm::LLVMContext& ctx;
  const Kernel& kernel;
  const GemmSpec& spec;
  const GemmPlan& plan;
  llvm::Type* f32;
  llvm::Type* i32;
  llvm::Type* i64;
  llvm::Type* i1;
  llvm::PointerType* ptr;
  llvm::FixedVectorType* v8f32;
  llvm::FixedVectorType* v8i32;
  llvm::FixedVectorType* v8i1;

  llvm::Constant* c64(int64_t v) const { return llvm::ConstantInt::get(i64, v); }
  llvm::Constant* cf(float v) const { return llvm::ConstantFP::get(f32, v); }
  llvm::Constant* vf(float v) const { return llvm::ConstantFP::get(v8f32, v); }

  /// Creates an internal helper function `<kernel>.<suffix>` with host target attributes.
  llvm::Function* makeFunction(const std::string& suffix, llvm::Type* ret,
                               llvm::ArrayRef<llvm::Type*> params, bool internal) const;
};

/// Emits `for (iv = begin; iv < end; iv += step) body(iv)` named `name`; the builder is left
/// in the loop's exit block.
void emitFor(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, llvm::Value* step,
             const llvm::Twine& name, llvm::function_ref<void(llvm::Value*)> body);

/// Loads the pointer to kernel argument `index` from the `args` array.
llvm::Value* loadArg(llvm::IRBuilder<>& b, llvm::Value* args, int index, const llvm::Twine& name);

/// `base + offset` floats.
llvm::Value* floatGep(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* offset,
                      const llvm::Twine& name = "");

/// Emits `min(a, b)` for signed i64 values.
llvm::Value* emitMin(llvm::IRBuilder<>& b, llvm::Value* a, llvm::Value* x);

/// exp(x) on <8 x float> with a Cephes-style range reduction and degree-6 polynomial
/// (about 2 ulp on [-87, 88]; inputs are clamped to that range).
llvm::Value* emitVectorExp(GemmIrContext& c, llvm::IRBuilder<>& b, llvm::Value* x);

/// Emits the mr × nr micro-kernel `<kernel>.ukernel` (or `.ukernel.edge` when `edge`, whose
/// memory accesses are masked to mValid rows and nValid columns):
///   void uk(ptr args, i64 kLen, ptr Ap, ptr Bp, i64 cOff, i1 accumulate, i1 last,
///           i64 mAbs, i64 nAbs, i64 mValid, i64 nValid)
/// It accumulates kLen rank-1 updates of the packed micro-panels, adds the C tile when
/// `accumulate`, and when `last` applies alpha, bias and the epilogue before storing.
llvm::Function* emitMicroKernel(GemmIrContext& c, bool edge);

} // namespace fb::cg::gemmir
