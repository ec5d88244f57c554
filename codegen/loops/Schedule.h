// Schedule primitives on the loop IR (split/tile, reorder, fuse, vectorize, unroll, parallel,
// cache a value in a local), the default schedule, and per-kernel overrides. Packing operands
// into panels is done by the GEMM micro-kernel generator for kernels with Kernel::gemm; its
// blocking (mc/kc/nc/mr/nr) is set through the same override grammar.
//
// Every primitive takes a statement tree and returns a new one computing the same thing (the
// tests check this with the loop-IR evaluator); loops are addressed by variable name, and a
// primitive applies to every loop of that name (sibling nests may share names).
//
// The override grammar is in codegen/loops/ScheduleOverride.h.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/loops/Lower.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace fb::cg {

/// Splits loop `var` by `factor` into var_o (outer) and var_i (inner, extent factor). When the
/// extent is a constant not divisible by factor, a tail loop var_t follows the split loops.
Expected<StmtPtr> splitLoop(const StmtPtr& s, const std::string& var, int64_t factor);
/// Reorders the loops named in `order` that form a perfect nest (no statement between them).
Expected<StmtPtr> reorderLoops(const StmtPtr& s, const std::vector<std::string>& order);
/// Tiles the outermost perfectly nested loops of s by `factors` (split each, then reorder).
Expected<StmtPtr> tileLoops(const StmtPtr& s, const std::vector<int64_t>& factors);
/// Fuses loop `outer` with the loop `inner` directly inside it into one loop outer_inner.
Expected<StmtPtr> fuseLoops(const StmtPtr& s, const std::string& outer, const std::string& inner);
/// Splits `var` by `width` and marks the inner loop Vectorized (a tail stays scalar).
Expected<StmtPtr> vectorizeLoop(const StmtPtr& s, const std::string& var, int width);
/// Splits `var` by `factor` and marks the inner loop Unrolled.
Expected<StmtPtr> unrollLoop(const StmtPtr& s, const std::string& var, int factor);
/// Marks `var` Parallel.
Expected<StmtPtr> parallelizeLoop(const StmtPtr& s, const std::string& var);
/// Inside loop `var`, reads and writes of `buffer` at an index that does not depend on any
/// loop inside `var` go to a one-element local accumulator that is loaded before and stored
/// after the loop (cache a value in a register; the textbook "cache_write").
Expected<StmtPtr> cacheLocal(const StmtPtr& s, const std::string& var, const std::string& buffer);

/// The variable of the innermost loop of the first nest in s ("" when s has no loop).
std::string innermostLoop(const StmtPtr& s);
/// The variable of the outermost loop of s ("" when none).
std::string outermostLoop(const StmtPtr& s);

/// The default schedule of one nest: vectorize the innermost loop when its iterations write
/// distinct elements and its extent allows, cache reduction accumulators in a local, and run
/// the outermost loops (fused until there is enough parallelism) in parallel when the nest
/// does enough work. Applied to each top-level statement of a kernel body.
StmtPtr applyDefaultSchedule(const StmtPtr& body, const LowerOptions& options);

/// Applies one override to a kernel: `unscheduled` is the textbook body (for `none`), and the
/// kernel's body and GEMM blocking are replaced. Errors name the kernel and the directive.
Status applyScheduleOverride(Kernel& kernel, const StmtPtr& unscheduled,
                             const ScheduleOverride& override, const LowerOptions& options);

} // namespace fb::cg
