// Mixed execution: running a compiled kernel's node with the reference interpreter on the
// kernel's bound buffers, so that any subset of a compiled model's kernels can be replaced by
// the oracle (kernel bisection, in the manner of XLA's hlo_isolation_test).
#pragma once

#include "codegen/kernel/Kernel.h"
#include "core/Graph.h"

#include <vector>

namespace fb::cg {

/// Evaluates `node` (the top-level node, or fused group, that `kernel` computes) with the
/// interpreter: its operands are read from the kernel's Input arguments (matched by value
/// name; constants from the graph), its results written to the Output arguments, whose sizes
/// must match. `args` are the kernel's bound argument pointers, as the compiled code gets them.
/// Fails, changing nothing, when an operand has no argument (a kernel that reads what its
/// node does not, which lowering never makes).
Status runKernelWithInterpreter(const Kernel& kernel, const Node& node,
                                const std::vector<void*>& args);

} // namespace fb::cg
