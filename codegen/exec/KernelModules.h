// Kernels → LLVM modules: the GEMM or depthwise generator for GEMM specs, loops otherwise.
#pragma once

#include "codegen/llvm/Jit.h"
#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace fb::cg {

/// How kernels are turned into LLVM IR.
struct KernelEmitOptions {
  /// Compile kernels that carry a GemmSpec with the BLIS-style generator (codegen/gemm);
  /// false (or a spec the generator rejects) emits their loop nest instead.
  bool useGemm = true;
  /// Outline parallel loops (fb_parallel_for); false runs them serially.
  bool parallel = true;
  /// Per kernel argument, whether it may be marked noalias (LoopEmitOptions::noAliasArgs).
  std::vector<bool> noAliasArgs;
};

/// Which generator produced a kernel's function.
enum class KernelGenerator {
  Loops,      ///< the loop-nest emitter (codegen/llvm)
  Gemm,       ///< the BLIS-style GEMM generator (codegen/gemm/GemmEmitter.h)
  Depthwise,  ///< the direct depthwise-convolution generator (codegen/gemm/DepthwiseEmitter.h)
  Winograd,   ///< a Winograd convolution on the GEMM generator (codegen/gemm/Winograd.h)
  DirectConv, ///< the direct convolution generator (codegen/gemm/DirectConv.h)
  Int8Gemm,   ///< the int8 GEMM generator (codegen/gemm/Int8GemmEmitter.h)
  Interpreted ///< no code: the executor runs the node with the interpreter (Kernel::interpreted)
};
const char* kernelGeneratorName(KernelGenerator g);

/// A module named after `kernel` in `context` holding its entry function and helpers,
/// configured for `target`. Tries the GEMM generator first when the kernel has a spec (the
/// depthwise generator when the spec is a depthwise convolution) and falls back to the loop
/// emitter when the generator fails (the reason lands in `*note`).
/// The GEMM generator needs packConstantOperands(kernel) to have run (see prepareKernels).
Expected<std::unique_ptr<llvm::Module>> buildKernelModule(llvm::LLVMContext& context,
                                                          const Kernel& kernel,
                                                          const TargetInfo& target,
                                                          const KernelEmitOptions& options,
                                                          KernelGenerator* generator = nullptr,
                                                          std::string* note = nullptr);

/// Packs the constant operands of every GEMM-class kernel (appending their Weight arguments;
/// depthwise kernels read their weights unpacked) and of every int8 kernel, for `target`
/// (whose instruction set picks the int8 kernels' inner products);
/// call once after lowering and before binding arguments or building modules. A kernel whose
/// operands cannot be packed loses its GemmSpec and is compiled from its loop nest; an int8
/// kernel the target cannot run becomes an interpreted kernel. GEMM kernels are planned for
/// `target`'s vector registers (AVX2 code has 16 of them even when the compiling host has 32).
Status prepareKernels(std::vector<Kernel>& kernels, bool useGemm,
                      const TargetInfo& target = TargetInfo::host());

/// The text of `--emit loops`: every kernel's loop nest, with the blocking the GEMM or
/// depthwise generator compiles it with (describeGemmBlocking) under GEMM-class kernels.
std::string kernelLoopsText(const std::vector<Kernel>& kernels);
/// One kernel's part of kernelLoopsText.
std::string kernelLoopText(const Kernel& kernel);

/// All kernels in one module (for `--emit llvm` and `--emit obj`), in a fresh context owned by
/// the result. With `optLevel` >= 0 the module is optimized at that level.
Expected<JitModule> buildModelModule(const std::vector<Kernel>& kernels, const std::string& name,
                                     const TargetInfo& target, const KernelEmitOptions& options,
                                     int optLevel = -1);

/// The text of `--emit llvm` (the GUI's LLVM view): every kernel in one module, as emitted
/// (`optLevel` < 0) or after LLVM's pipeline at `optLevel`, under a comment line naming the
/// kernel count, the target and the stage.
Expected<std::string> modelLlvmText(const std::vector<Kernel>& kernels, const std::string& name,
                                    const TargetInfo& target, const KernelEmitOptions& options,
                                    int optLevel);

} // namespace fb::cg
