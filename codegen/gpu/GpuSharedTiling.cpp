// Shared-memory tiling of matrix products and convolutions on the GPU.
#include "codegen/gpu/GpuScheduleInternal.h"

namespace fb::cg::gpu_detail {

std::optional<BlockProgram> tileThroughSharedMemory(const std::vector<const Stmt*>&, const StmtPtr&,
                                                    const GpuScheduleOptions&) {
  return std::nullopt;
}

} // namespace fb::cg::gpu_detail
