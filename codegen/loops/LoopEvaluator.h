// A slow, obviously correct interpreter of the kernel loop IR: the oracle for schedules and for
// lowering (compare with core/Interpreter.h), and a way to run a kernel without LLVM.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/loops/LoopIR.h"
#include "core/Error.h"
#include "core/Tensor.h"

#include <unordered_map>
#include <vector>

namespace fb::cg {

/// Runs `body` with `args[i]` as the storage of Kernel argument i (written in place). Every
/// access is bounds-checked against its tensor: an out-of-bounds index is an error naming the
/// buffer and the index, not a crash. f32 arithmetic rounds to float after every operation, as
/// compiled code does. Vector expressions (lanes > 1) are evaluated lane by lane.
Status evaluateBody(const StmtPtr& body, std::vector<Tensor>& args);

/// Runs a kernel: `args` has one tensor per Kernel::args entry; an invalid (default) tensor is
/// replaced by the argument's bound data (Weight) or a zero tensor of its sizes (Output,
/// Scratch) before running.
Status evaluateKernel(const Kernel& kernel, std::vector<Tensor>& args);

/// Runs lowered kernels in order on named values: `values` maps graph value names to tensors
/// (the graph inputs on entry); each kernel reads its Input args from it and adds its Output
/// args to it.
Status evaluateKernels(const std::vector<Kernel>& kernels,
                       std::unordered_map<std::string, Tensor>& values);

} // namespace fb::cg
