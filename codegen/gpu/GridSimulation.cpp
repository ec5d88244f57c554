// The GPU schedule run on the CPU: every launch of a kernel on the kernel's arguments.
#include "codegen/gpu/GridSimulation.h"
#include "codegen/loops/LoopEvaluator.h"
#include "core/Interpreter.h"

namespace fb::cg {

namespace {

/// An interpreted kernel's node on the named values.
Status interpretKernel(const Graph& graph, const Kernel& kern,
                       std::unordered_map<std::string, Tensor>& values) {
  const Node* node = kern.nodes.empty() ? nullptr : graph.findNode(kern.nodes[0]);
  if (!node)
    return makeError("kernel ", kern.name, ": its node is not in the graph");
  std::vector<Tensor> ins;
  for (const Value* in : node->inputs()) {
    if (!in) {
      ins.emplace_back();
      continue;
    }
    if (in->isConstant()) {
      ins.push_back(in->constantData());
      continue;
    }
    auto it = values.find(in->name());
    if (it == values.end())
      return makeError("kernel ", kern.name, ": input ", in->name(), " was not computed");
    ins.push_back(it->second);
  }
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluateNode(*node, std::move(ins)));
  for (size_t i = 0; i < node->numOutputs() && i < outs.size(); ++i)
    values[node->output(i)->name()] = std::move(outs[i]);
  return Status::success();
}

} // namespace

Status simulateGpuLaunches(const Graph& graph, const std::vector<Kernel>& kernels,
                           const std::vector<GpuLaunch>& launches,
                           std::unordered_map<std::string, Tensor>& values) {
  size_t next = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel& kern = kernels[k];
    if (kern.interpreted) {
      FB_TRY(interpretKernel(graph, kern, values));
      continue;
    }
    std::vector<Tensor> args;
    for (const KernelArg& a : kern.args) {
      if (a.role == KernelArg::Role::Input) {
        auto it = values.find(a.name);
        if (it == values.end())
          return makeError("kernel ", kern.name, ": input ", a.name, " was not computed");
        args.push_back(it->second);
      } else if (a.data) {
        args.push_back(*a.data);
      } else {
        FB_ASSIGN_OR_RETURN(Tensor t, Tensor::create(a.dtype, a.sizes));
        args.push_back(std::move(t));
      }
    }
    bool any = false;
    for (; next < launches.size() && launches[next].kernel == k; ++next) {
      any = true;
      Status st = evaluateBody(launches[next].code.body, args);
      if (!st.ok())
        return st.error().withContext("launch " + launches[next].code.name);
    }
    if (!any)
      return makeError("kernel ", kern.name, " has no launch");
    for (size_t i = 0; i < args.size(); ++i)
      if (kern.args[i].role == KernelArg::Role::Output)
        values[kern.args[i].name] = args[i];
  }
  return Status::success();
}

} // namespace fb::cg
