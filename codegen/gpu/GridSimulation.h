// Running GPU-scheduled kernels on the CPU with the loop evaluator, to check a GPU schedule
// (thread mapping, launch splitting) against the reference interpreter without a GPU.
#pragma once

#include "codegen/gpu/GpuSchedule.h"
#include "core/Error.h"
#include "core/Graph.h"
#include "core/Tensor.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace fb::cg {

/// Runs each kernel's launches in order on one set of arguments per kernel (so a launch sees
/// what the launches before it wrote to scratch buffers and outputs), as evaluateKernels does
/// for unscheduled kernels: `values` maps graph value names to tensors (the graph inputs on
/// entry) and receives every kernel's outputs. Each launch's GPU-thread loop runs its iterations
/// in reverse order (codegen/loops/LoopEvaluator.h), so an iteration that depends on another
/// gives a wrong result here as it might on a GPU. An interpreted kernel (control flow, no
/// launches) runs its node of `graph` with the reference interpreter, as the GPU backend does on
/// the host.
Status simulateGpuLaunches(const Graph& graph, const std::vector<Kernel>& kernels,
                           const std::vector<GpuLaunch>& launches,
                           std::unordered_map<std::string, Tensor>& values);

} // namespace fb::cg
