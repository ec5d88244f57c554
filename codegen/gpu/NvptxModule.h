// What an LLVM module for an NVIDIA GPU needs beyond the loop emitter's IR: kernel entry
// annotations and math functions from libdevice.
#pragma once

#include "core/Error.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// Marks `fn` a kernel entry point (nvvm.annotations "kernel") launched with at most
/// `maxThreadsPerBlock` threads per block ("maxntid"), so that ptxas may use that many registers;
/// with `minBlocksPerMultiprocessor` > 0 also "minctasm" (.minnctapersm), which lets ptxas give
/// a thread as many registers as that many blocks leave.
void annotateGpuKernel(llvm::Function& fn, int maxThreadsPerBlock,
                       int minBlocksPerMultiprocessor = 0);

/// The path of libdevice.10.bc (NVIDIA's math library in LLVM bitcode, part of the CUDA
/// toolkit): $FUSEBOX_LIBDEVICE, else under $CUDA_PATH / $CUDA_HOME, /usr/local/cuda or
/// Debian's nvidia-cuda-toolkit; empty when none is found.
std::string libdevicePath();

/// Replaces the C math calls and LLVM math intrinsics the NVPTX backend cannot lower (logf,
/// sinf, powf, llvm.pow, llvm.exp on doubles, ...) with libdevice's __nv_* functions, links the
/// ones used from libdevice (when some are), and makes every function that is not a kernel entry
/// internal so that the optimizer inlines and removes them. Without a libdevice, a module that
/// needs one is an error naming the function and how to provide it; a module that needs none
/// (most: exp, tanh, erf and sigmoid are emitted inline) compiles without.
Status linkDeviceMath(llvm::Module& module);

} // namespace fb::cg
