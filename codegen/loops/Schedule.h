// Schedule primitives on the loop IR (split/tile, reorder, fuse, vectorize, unroll, parallel,
// cache a value in a local), the default schedule, and per-kernel overrides. Packing operands
// into panels is done by the GEMM micro-kernel generator for kernels with Kernel::gemm; its
// blocking (mc/kc/nc/mr/nr) is set through the same override grammar.
//
// Every primitive takes a statement tree and returns a new one computing the same thing (the
// tests check this with the loop-IR evaluator); loops are addressed by variable name, and a
// primitive applies to every loop of that name (sibling nests may share names).
//
// Override grammar (CLI `--schedule`, LowerOptions::scheduleOverrides):
//   overrides := entry (';' entry)*
//   entry     := KERNEL ':' directive (',' directive)*       KERNEL: a kernel name, or '*'
//   directive := 'none'                 start from the unscheduled textbook nest
//              | 'default'              the default schedule
//              | 'split=' VAR '/' N     VAR -> VAR_o, VAR_i (+ tail loop VAR_t if N ∤ extent)
//              | 'tile=' N ('x' N)*     split the outermost perfectly nested loops and move the
//                                       tile loops outside: i,j -> i_o, j_o, i_i, j_i
//              | 'reorder=' VAR ('/' VAR)*   reorder a perfect nest (outermost first)
//              | 'fuse=' VAR '/' VAR    fuse an outer loop with its inner loop -> VAR_VAR
//              | 'vectorize=' N | 'vectorize=' VAR '/' N   innermost loop (or VAR), N lanes
//              | 'unroll=' N | 'unroll=' VAR '/' N         split by N and unroll the inner loop
//              | 'parallel=' VAR | 'parallel=' ('0'|'1')  mark VAR parallel / outermost / none
//              | 'cache=' BUF           accumulate BUF's element in a local in the innermost
//                                       loop that keeps the element fixed (register blocking)
//              | ('mr'|'nr'|'mc'|'kc'|'nc') '=' N   GEMM blocking (kernels with Kernel::gemm)
// Example: `k3:none,tile=32x64,vectorize=8,unroll=4,parallel=1`.
#pragma once

#include "codegen/loops/Kernel.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/loops/Lower.h"
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

/// One directive of an override: `name=value` (value empty for `none`/`default`).
struct ScheduleDirective {
  std::string name, value;
};
/// The directives for one kernel name ("*": every kernel).
struct ScheduleOverride {
  std::string kernel;
  std::vector<ScheduleDirective> directives;
};
/// Parses the override grammar above; errors name the offending text.
Expected<std::vector<ScheduleOverride>> parseScheduleOverrides(std::string_view text);
/// Applies one override to a kernel: `unscheduled` is the textbook body (for `none`), and the
/// kernel's body and GEMM blocking are replaced. Errors name the kernel and the directive.
Status applyScheduleOverride(Kernel& kernel, const StmtPtr& unscheduled,
                             const ScheduleOverride& override, const LowerOptions& options);

} // namespace fb::cg
