// What a kernel computes, as a key that does not depend on where it sits: the signature a
// tuning log files a kernel's schedule under, so the same layer in another model (or another
// snapshot) finds it, and the CPU the schedule was measured on.
#pragma once

#include "codegen/llvm/Target.h"
#include "core/Graph.h"

#include <string>

namespace fb::workbench {

/// The kernel of `node` (a single op or a fused group) as text: op names, attributes, input and
/// output types (constant operands marked, their data left out), and for a fused group its body
/// in order with operands by position. Names, node ids and provenance are left out, so the same
/// layer in two graphs has the same signature and a different shape or attribute does not.
/// Example: "Conv{dilations=[1,1],group=1,...}(f32[1,3,32,32],const
/// f32[16,3,3,3])->f32[1,16,32,32]".
std::string kernelSignature(const Node& node);

/// The widest vector extension `target` enables: "avx512", "avx2", "sse", or "default" when
/// the target names a CPU without listing features.
std::string targetIsa(const cg::TargetInfo& target);

} // namespace fb::workbench
