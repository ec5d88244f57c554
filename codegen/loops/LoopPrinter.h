// Prints the kernel loop IR as textbook pseudo-code (`for i, j in grid(4, 16):`), the text of
// `--emit loops`.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/loops/LoopIR.h"
#include "core/Error.h"

#include <functional>
#include <string>

namespace fb::cg {

/// One expression on one line: `X[i, k] * W[k, j]`, `max(x, 0.0)`, `exp(-x)`.
std::string printExpr(const ExprPtr& e);

/// A statement tree, one statement per line, indented by two spaces per level (starting at
/// `indent`). Perfect nests of serial loops from 0 with constant extents print as one
/// `for i, j in grid(4, 16):` line; other loops as `for i in range(lo, hi):`,
/// `for i in parallel(n):`, `for i in vectorized(8):`, `for i in unrolled(4):`. A store that
/// updates its own element prints as `Y[i] += e` / `Y[i] *= e`.
std::string printStmt(const StmtPtr& s, int indent = 0);

/// How a generator above the loop layer will compile a GEMM-class kernel ("mr=8 nr=24 ..."):
/// codegen/gemm's describeGemmBlocking, passed in so this layer does not depend on that one.
using KernelBlockingDescriber = std::function<Expected<std::string>(const Kernel&)>;

/// A kernel: a `kernel name(args...)` header naming each argument's role, dtype and sizes,
/// a comment line with the nodes, op summary, FLOPs and GEMM spec when present (and the
/// blocking, when `describeBlocking` is given), then the body.
std::string printKernel(const Kernel& kernel, const KernelBlockingDescriber& describeBlocking = {});

/// Every kernel, separated by blank lines.
std::string printKernels(const std::vector<Kernel>& kernels,
                         const KernelBlockingDescriber& describeBlocking = {});

} // namespace fb::cg
