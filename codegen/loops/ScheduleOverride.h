// Schedule overrides as typed values: which kernel, which directives. The CLI's --schedule and
// the GUI's schedule form both produce them; lowering applies them (Schedule.h).
//
// Override grammar (the text of `--schedule`):
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
//              | ('mr'|'nr'|'mc'|'kc'|'nc') '=' N   GEMM blocking (kernels with Kernel::gemm; a
//              direct
//                                       convolution takes mr as its tile's output channels)
//              | 'conv=' ('im2col'|'winograd'|'winograd2'|'winograd4'|'direct')   a GEMM-class
//                                       Conv's algorithm (winograd = F(2x2,3x3); codegen/gemm/
//                                       Winograd.h; direct: codegen/gemm/DirectConv.h)
//              | 'block=' N             GPU: threads per block (a multiple of 32, at most 256)
//              | 'regtile=' N           GPU: the most outputs per thread along each of the two
//                                       tiled loops (1 = one output per thread; default 4)
// Example: `k3:none,tile=32x64,vectorize=8,unroll=4,parallel=1`.
#pragma once

#include "core/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace fb::cg {

/// One directive of an override: `name=value` (value empty for `none`/`default`).
struct ScheduleDirective {
  std::string name, value;
  bool operator==(const ScheduleDirective&) const = default;
};

/// The directives for one kernel, named as `--emit loops` names it ("k3_conv_relu"), by its
/// position ("k3"), or "*" for every kernel.
struct ScheduleOverride {
  std::string kernel;
  std::vector<ScheduleDirective> directives;
  bool operator==(const ScheduleOverride&) const = default;
};

/// Parses the grammar above into overrides; errors name the offending text.
Expected<std::vector<ScheduleOverride>> parseScheduleOverrides(std::string_view text);

/// The text that parses back to `overrides` (what `--schedule` would say).
std::string printScheduleOverrides(const std::vector<ScheduleOverride>& overrides);

} // namespace fb::cg
