// Shared state and small IR-building helpers of the GEMM generator (internal to codegen/gemm).
#pragma once

#include "codegen/gemm/GemmPlan.h"
#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <array>

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

/// Emits `for (iv = begin; iv + step <= end; iv += step) body(iv)` carrying the values in
/// `carried` (accumulators) through phis of their own types: `body` reads and updates them, and
/// after the loop they hold the exit values. The builder is left in the loop's exit block; the
/// result is iv's phi (the first iteration not run). With `keepRolled` the loop carries
/// llvm.loop.unroll.disable: its body is already unrolled by the generator, and LLVM's unrollers
/// only spend compile time on it (ResNet-18's 7×7 stem, whose three input channels O3 unrolled:
/// 243 → 118 ms of optimization).
llvm::Value* emitCarriedLoop(GemmIrContext& c, llvm::IRBuilder<>& b, const llvm::Twine& name,
                             llvm::Value* begin, llvm::Value* end, int64_t step,
                             std::vector<llvm::Value*>& carried,
                             llvm::function_ref<void(llvm::Value* iv)> body,
                             bool keepRolled = false);

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

/// Applies one epilogue op to an accumulator vector (<8 x float>). `residual` loads the tensor
/// operand of AddTensor/MulTensor at this vector's position. Shared by the GEMM micro-kernel
/// and the depthwise generator.
llvm::Value* applyEpilogueOp(GemmIrContext& c, llvm::IRBuilder<>& b, const EpilogueOp& op,
                             llvm::Value* x, llvm::function_ref<llvm::Value*(int arg)> residual);

/// Emits the mr × nr micro-kernel `<kernel>.ukernel` (or `.ukernel.edge` when `edge`, whose
/// memory accesses are masked to mValid rows and nValid columns). It computes the first
/// `vectors` 8-column vectors of the tile (nr/8 for the whole tile; fewer for a narrow edge
/// tile, named `.nv<vectors>`), reading B panels of nr columns:
///   void uk(ptr args, i64 kLen, ptr Ap, ptr Bp, i64 cOff, i1 accumulate, i1 last,
///           i64 mAbs, i64 nAbs, i64 mValid, i64 nValid)
/// It accumulates kLen rank-1 updates of the packed micro-panels, adds the C tile when
/// `accumulate`, and when `last` applies alpha, bias and the epilogue before storing.
llvm::Function* emitMicroKernel(GemmIrContext& c, bool edge, int vectors);

/// Runs `items` (`void(ptr args, i64 begin, i64 end)`) over [0, count) from the builder's
/// position: directly, or — when `parallel` and count > 1 — through fb_parallel_for with a
/// worker `<kernel>.<suffix>` that claims items one at a time (a thread on a busy core simply
/// takes fewer). Returns the worker, or null when it calls `items` directly.
llvm::Function* emitRunItems(GemmIrContext& c, llvm::IRBuilder<>& b, llvm::Value* args,
                             llvm::Function* items, int64_t count, bool parallel,
                             const std::string& suffix);

/// Creates `<kernel>.<suffix>`, `void(ptr args, i64 begin, i64 end)`: the body of a range of
/// work items, with its arguments named.
llvm::Function* makeItemsFunction(GemmIrContext& c, const std::string& suffix);

/// Per kernel argument, the base of the C tile at `cOff` in each AddTensor/MulTensor operand of
/// the spec's epilogue — for a per-row operand (EpilogueOp::perRow), the operand itself, read
/// at the row's index — and null for the other arguments.
std::vector<llvm::Value*> residualTileBases(GemmIrContext& c, llvm::IRBuilder<>& b,
                                            llvm::Value* args, llvm::Value* cOff);

/// Whether argument `arg` is a per-row epilogue operand of the spec (one value per row).
bool isPerRowOperand(const GemmSpec& spec, int arg);

/// The fused store's arithmetic on one accumulator vector: alpha, then `bias` (a vector, or
/// null) times beta, then the spec's epilogue ops in order; `residual` loads an epilogue
/// tensor operand at this vector's position.
llvm::Value* finishAccumulator(GemmIrContext& c, llvm::IRBuilder<>& b, llvm::Value* x,
                               llvm::Value* bias,
                               llvm::function_ref<llvm::Value*(int arg)> residual);

/// Creates `<kernel>.<suffix>` with the micro-kernel signature (see emitMicroKernel), its
/// arguments named and the A/B panels marked noalias readonly.
llvm::Function* makeMicroKernelFunction(GemmIrContext& c, const std::string& suffix);

/// Emits `<kernel>.ukernel.cols<columns>`, a micro-kernel at most `columns` (≤ nr) columns
/// wide whose vectors run along M, with the same signature and semantics as emitMicroKernel:
/// each k loads the A micro-panel's mr rows as vectors and broadcasts B's columns, and C is
/// gathered and scattered column by column. It is the whole register tile of a plan with
/// GemmPlan::mVectors (mr = 16, 32 or 48 rows: few pixels, many channels), and otherwise the
/// edge tile of an N remainder of at most kColumnEdge columns (mr ≤ 8), so that a 1-column
/// remainder (N = 49) costs about one FMA per k instead of a whole mr × 8 tile.
llvm::Function* emitColumnMicroKernel(GemmIrContext& c, int columns);

/// Emits the micro-kernels the plan needs (the full tile, its edge rows, the N remainder) and
/// `<kernel>.items`, the blocked loop nest of work items over them, packing A and B with
/// `packA` / `packB` where given (else reading them pre-packed). In GemmEmitter.cpp.
llvm::Function* emitWorkItems(GemmIrContext& c, llvm::Function* packA, llvm::Function* packB);

/// Verifies every function of `module` defined under `kernelName` (the entry and its
/// `<kernelName>.*` helpers): an error naming the kernel and what is invalid.
Status verifyKernelFunctions(llvm::Module& module, const std::string& kernelName);

/// Transposes 4×4 blocks within each 128-bit lane of four vectors of `lanes` floats (16 or 8):
/// element e of lane L of result k is element k of lane L of input e (vunpck{l,h}ps, then
/// vunpck{l,h}pd). Its own inverse. Used where a tile's vectors run along one dimension and
/// memory along the other (the direct convolution's and Winograd's output stores).
std::array<llvm::Value*, 4> transposeLanes4x4(llvm::IRBuilder<>& b,
                                              const std::array<llvm::Value*, 4>& in, int lanes);

/// One vector of `parts.size()` (4 or 2) 4-float parts, part L as 128-bit lane L.
llvm::Value* concatLanes(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> parts);

} // namespace fb::cg::gemmir
