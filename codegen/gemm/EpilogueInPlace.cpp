// The in-place test of a fused epilogue operand (EpilogueInPlace.h).
#include "codegen/gemm/EpilogueInPlace.h"
#include "codegen/gemm/GemmPlan.h"

namespace fb::cg {

bool epilogueMayOverwrite(const Kernel& kernel, const std::string& value) {
  if (!kernel.gemm || kernel.int8 || kernel.interpreted)
    return false;
  const GemmSpec& s = *kernel.gemm;
  if (s.pooling != GemmSpec::Pooling::None || isDepthwise(s) || s.cArg < 0 ||
      size_t(s.cArg) >= kernel.args.size())
    return false;
  int operand = -1;
  for (const EpilogueOp& e : s.epilogue) {
    const bool tensor =
        e.kind == EpilogueOp::Kind::AddTensor || e.kind == EpilogueOp::Kind::MulTensor;
    if (!tensor || e.arg < 0 || size_t(e.arg) >= kernel.args.size() ||
        kernel.args[size_t(e.arg)].name != value)
      continue;
    if (operand >= 0 || e.perRow || e.batchMod != 0)
      return false; // read twice, or not element by element
    operand = e.arg;
  }
  if (operand < 0)
    return false;
  // The convolution's own input (Add(Conv(x), x) binds one argument to both), or any other
  // argument bound to the same value, is read across many outputs: storing over it would
  // change what later outputs read.
  if (operand == s.bArg || operand == s.aArg || operand == s.biasArg)
    return false;
  for (size_t a = 0; a < kernel.args.size(); ++a)
    if (int(a) != operand && kernel.args[a].name == value)
      return false;
  const KernelArg &out = kernel.args[size_t(s.cArg)], &in = kernel.args[size_t(operand)];
  if (out.bytes != in.bytes || out.dtype != in.dtype || out.sizes != in.sizes)
    return false;
  if (s.direct || s.winograd)
    return true;
  auto plan = planGemm(kernel);
  return plan.ok() && plan->K > 0 && plan->kc >= plan->K;
}

} // namespace fb::cg
