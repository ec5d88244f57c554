// Size checks of the CPU backend: checked products and the memory limit, per node and kernel.
#include "codegen/exec/SizeChecks.h"
#include "core/MemoryLimit.h"
#include "core/TensorType.h"

namespace fb::cg {

Expected<int64_t> checkedTensorBytes(DType dtype, const std::vector<int64_t>& sizes,
                                     const std::string& what) {
  const std::string type = TensorType::of(dtype, sizes).str();
  std::optional<int64_t> n = checkedProduct(sizes);
  int64_t bytes = 0;
  if (!n || __builtin_mul_overflow(*n, int64_t(dtypeSize(dtype)), &bytes))
    return makeError(what, " of ", type, " has a size that overflows 64 bits");
  FB_TRY(checkAllocation(uint64_t(bytes), what + " of " + type));
  return bytes;
}

namespace {

Status checkNodes(const Graph& graph) {
  for (const auto& node : graph.nodes()) {
    for (const Value* out : node->outputs()) {
      // Results known only at run time (control flow) are sized by the interpreter's Tensor,
      // which checks the same way.
      if (!out || !out->type().isStatic())
        continue;
      FB_TRY(checkedTensorBytes(out->type().dtype, out->type().staticSizes(),
                                node->describe() + ": result '" + out->name() + "'"));
    }
    if (node->op() == OpKind::Fused && node->body())
      FB_TRY(checkNodes(*node->body()));
  }
  return Status::success();
}

} // namespace

Status checkValueSizes(const Graph& graph) {
  for (const Value* in : graph.inputs())
    if (in->type().isStatic())
      FB_TRY(checkedTensorBytes(in->type().dtype, in->type().staticSizes(),
                                "input '" + in->name() + "'"));
  return checkNodes(graph);
}

Status checkKernelArgSizes(const std::vector<Kernel>& kernels) {
  for (const Kernel& k : kernels)
    for (const KernelArg& a : k.args) {
      if (a.dynamicShape)
        continue;
      FB_ASSIGN_OR_RETURN(
          int64_t bytes,
          checkedTensorBytes(a.dtype, a.sizes, "kernel " + k.name + ": argument '" + a.name + "'"));
      FB_TRY(checkAllocation(uint64_t(std::max(bytes, a.bytes)),
                             "kernel " + k.name + ": argument '" + a.name + "'"));
    }
  return Status::success();
}

/// Runs a kernel's index checks on its bound arguments: the first index outside [-size, size)
/// ([0, size) for nonNegative checks, [0, size] for inclusive ones; the exempt value passes)
/// gives the interpreter's error for it (the kernel would clamp it).
Status checkKernelIndices(const Kernel& kern, const std::vector<void*>& args) {
  for (const IndexCheck& c : kern.indexChecks) {
    const KernelArg& a = kern.args[size_t(c.arg)];
    int64_t count = 1;
    for (int64_t s : a.sizes)
      count *= s;
    if (count == 0 || c.sizes.empty())
      continue;
    const void* p = args[size_t(c.arg)];
    for (int64_t e = 0; e < count; ++e) {
      int64_t i = a.dtype == DType::I32 ? int64_t(static_cast<const int32_t*>(p)[e])
                                        : static_cast<const int64_t*>(p)[e];
      size_t col = size_t(e) % c.sizes.size();
      int64_t size = c.sizes[col];
      if (c.exempt && i == *c.exempt)
        continue;
      const bool outside =
          c.inclusive ? i < 0 || i > size : i < (c.nonNegative ? 0 : -size) || i >= size;
      if (!outside)
        continue;
      if (c.message)
        return makeError(c.where, ": ", c.message(e, i, size));
      return makeError(c.where, ": index ", i, " is out of range for axis ", c.axes[col],
                       " of size ", size);
    }
  }
  return Status::success();
}

} // namespace fb::cg
