// Size checks of the CPU backend before it lowers or allocates anything: every tensor a model
// would hold must have a byte size that 64-bit arithmetic counts and the memory limit allows.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Error.h"
#include "core/Graph.h"

#include <cstdint>
#include <vector>

namespace fb::cg {

/// The byte size of a dtype[sizes] tensor, or an error "WHAT of TYPE has a size that overflows
/// 64 bits" / "... needs N, more than the memory limit" (core/MemoryLimit.h).
Expected<int64_t> checkedTensorBytes(DType dtype, const std::vector<int64_t>& sizes,
                                     const std::string& what);

/// Checks every static node result of `graph`, fused groups' bodies included, so that a shape
/// that does not fit (pads of 2^40, a Tile to 2^31 x 2^31) is an error naming its node before
/// lowering builds loops over it or the executor sizes buffers from a wrapped product.
Status checkValueSizes(const Graph& graph);

/// Checks the arguments lowering gave each kernel (scratch and packed buffers included).
Status checkKernelArgSizes(const std::vector<Kernel>& kernels);

/// Runs a kernel's index checks (Kernel::indexChecks) on its bound arguments `args` (host
/// memory; only the arguments the checks read need be non-null): the first index out of its
/// range gives the interpreter's error for it (the kernel itself would clamp it).
Status checkKernelIndices(const Kernel& kern, const std::vector<void*>& args);

} // namespace fb::cg
