// Prints the kernel loop IR as textbook pseudo-code (`for i, j in grid(4, 16):`), the text of
// `--emit loops`.
#pragma once

#include "codegen/loops/Kernel.h"
#include "codegen/loops/LoopIR.h"

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

/// A kernel: a `kernel name(args...)` header naming each argument's role, dtype and sizes,
/// a comment line with the nodes, op summary, FLOPs and GEMM spec when present, then the body.
std::string printKernel(const Kernel& kernel);

/// Every kernel, separated by blank lines.
std::string printKernels(const std::vector<Kernel>& kernels);

} // namespace fb::cg
