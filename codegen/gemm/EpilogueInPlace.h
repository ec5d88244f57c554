// Whether a GEMM-class kernel may store its result over one of its epilogue's operands: the
// memory plan then gives the two one buffer (a residual Add after a convolution writes over the
// residual), so the kernel reads and writes each cache line once instead of reading the
// operand, and then reading the output's line for ownership before writing it.
#pragma once

#include "codegen/kernel/Kernel.h"

#include <string>

namespace fb::cg {

/// True when `kernel` reads argument `value` only as a per-element epilogue operand (AddTensor
/// or MulTensor with the output's layout) and stores every output element exactly once, right
/// after reading that element of the operand in the same thread: a direct convolution, a
/// Winograd convolution (its output transform), or a GEMM whose reduction is one K block (with
/// more, partial sums would be stored over the operand before the last block reads it). Never
/// when the value is also the kernel's input or another operand.
bool epilogueMayOverwrite(const Kernel& kernel, const std::string& value);

} // namespace fb::cg
