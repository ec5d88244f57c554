// Mixed execution: a kernel's node run by the interpreter on the kernel's buffers.
#include "codegen/exec/MixedExecution.h"
#include "core/Interpreter.h"

#include <cstring>

namespace fb::cg {

namespace {

/// The index of `kernel`'s argument of `role` named `name`, or -1.
int argNamed(const Kernel& kernel, KernelArg::Role role, const std::string& name) {
  for (size_t a = 0; a < kernel.args.size(); ++a)
    if (kernel.args[a].role == role && kernel.args[a].name == name)
      return int(a);
  return -1;
}

} // namespace

Status runKernelWithInterpreter(const Kernel& kernel, const Node& node,
                                const std::vector<void*>& args) {
  std::vector<Tensor> ins;
  for (const Value* in : node.inputs()) {
    if (!in) {
      ins.emplace_back();
      continue;
    }
    if (in->isConstant()) {
      ins.push_back(in->constantData()); // shares the data
      continue;
    }
    int a = argNamed(kernel, KernelArg::Role::Input, in->name());
    if (a < 0 || kernel.args[size_t(a)].dynamicShape)
      return makeError("kernel ", kernel.name, ": operand ", in->name(), " of ",
                       node.describe(), " is not an argument, so the interpreter cannot run it");
    const KernelArg& arg = kernel.args[size_t(a)];
    FB_ASSIGN_OR_RETURN(Tensor t, Tensor::create(arg.dtype, arg.sizes));
    if (t.byteSize())
      std::memcpy(t.mutableRawData(), args[size_t(a)], t.byteSize());
    ins.push_back(std::move(t));
  }
  // Every operand is copied before any result is written: the memory plan may have put a
  // result over an operand that dies here.
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluateNode(node, std::move(ins)));
  for (size_t i = 0; i < node.numOutputs() && i < outs.size(); ++i) {
    int a = argNamed(kernel, KernelArg::Role::Output, node.output(i)->name());
    if (a < 0)
      continue; // a result nobody reads is not bound
    const KernelArg& arg = kernel.args[size_t(a)];
    const Tensor& t = outs[i];
    if (!t.valid() || t.dtype() != arg.dtype || t.sizes() != arg.sizes)
      return makeError("kernel ", kernel.name, ": the interpreter's result ", i, " of ",
                       node.describe(), " is ", t.valid() ? t.type().str() : "missing",
                       " but the kernel writes ", TensorType::of(arg.dtype, arg.sizes).str());
    if (t.byteSize())
      std::memcpy(args[size_t(a)], t.rawData(), t.byteSize());
  }
  return Status::success();
}

} // namespace fb::cg
