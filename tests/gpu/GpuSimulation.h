// Shared by the GPU tests: the GPU schedule of a graph run on the CPU (grid simulation) and
// small builders of loop-IR kernels.
#pragma once

#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/gpu/GpuSchedule.h"
#include "codegen/gpu/GridSimulation.h"
#include "codegen/loops/Lower.h"
#include "core/Graph.h"
#include "core/TensorCompare.h"

#include <string>
#include <vector>

namespace fb::cg::gpu_test {

/// "" when every output matches the reference, else what differs.
inline std::string compareOutputs(const std::vector<Tensor>& reference,
                                  const std::vector<Tensor>& got) {
  if (got.size() != reference.size())
    return "output count " + std::to_string(got.size()) + " != " + std::to_string(reference.size());
  for (size_t o = 0; o < got.size(); ++o) {
    TensorComparison c =
        compareTensors(reference[o], got[o], defaultTolerance(reference[o].dtype()));
    if (!c.ok)
      return "output " + std::to_string(o) + ": " + c.reason;
  }
  return "";
}

/// The GPU-scheduled kernels of `graph` run on the CPU (grid simulation), outputs in order.
inline Expected<std::vector<Tensor>> simulate(const Graph& graph, const std::vector<Tensor>& inputs,
                                              size_t* launchCount = nullptr) {
  std::vector<std::vector<int64_t>> sizes;
  for (const Tensor& t : inputs)
    sizes.push_back(t.sizes());
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> bound, bindStaticShapes(graph, sizes, {}, inputs));
  LowerOptions lo;
  lo.defaultSchedules = false;
  lo.gemmSpecs = false;
  FB_ASSIGN_OR_RETURN(std::vector<Kernel> kernels, lowerGraph(*bound, lo));
  FB_TRY(prepareKernels(kernels, false, TargetInfo::host()));
  std::vector<GpuLaunch> launches;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].interpreted)
      continue; // control flow: the interpreter, on the host
    FB_ASSIGN_OR_RETURN(std::vector<GpuLaunch> mine, gpuLaunchesOf(kernels[k], k));
    for (GpuLaunch& l : mine)
      launches.push_back(std::move(l));
  }
  if (launchCount)
    *launchCount = launches.size();
  std::unordered_map<std::string, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i)
    values[bound->inputs()[i]->name()] = inputs[i];
  FB_TRY(simulateGpuLaunches(*bound, kernels, launches, values));
  std::vector<Tensor> outs;
  for (const Value* v : bound->outputs()) {
    if (v->isConstant()) {
      outs.push_back(v->constantData());
      continue;
    }
    auto it = values.find(v->name());
    if (it == values.end())
      return makeError("output ", v->name(), " was not computed");
    outs.push_back(it->second);
  }
  return outs;
}

inline BufferPtr argBuffer(const std::string& name, int arg, std::vector<int64_t> sizes) {
  return makeArgBuffer(name, arg, DType::F32, std::move(sizes));
}

inline KernelArg arg(KernelArg::Role role, const std::string& name, std::vector<int64_t> sizes) {
  KernelArg a;
  a.role = role;
  a.name = name;
  a.sizes = std::move(sizes);
  a.bytes = 4;
  for (int64_t s : a.sizes)
    a.bytes *= s;
  return a;
}

} // namespace fb::cg::gpu_test
