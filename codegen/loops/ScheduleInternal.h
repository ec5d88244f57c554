// Internal to the schedule files: the per-nest building blocks of the default schedule, shared
// by Schedule.cpp and ScheduleOverride.cpp.
#pragma once

#include "codegen/loops/LoopIR.h"
#include "core/Error.h"

#include <functional>
#include <string>

namespace fb::cg::schedule_detail {

/// Caches reductions that keep their output element fixed in a local (optionally only those
/// writing `onlyBuffer`).
StmtPtr cacheReductions(const StmtPtr& s, const std::string& onlyBuffer = "");
/// Vectorizes the innermost loops whose lanes are independent.
StmtPtr vectorizeInnermost(const StmtPtr& s, int width);
/// Marks the outermost loop parallel (fusing small outer loops) when s does at least
/// `threshold` work and its iterations are independent.
StmtPtr parallelizeOutermost(const StmtPtr& s, int64_t threshold);
/// Applies fn to each top-level nest of a kernel body.
StmtPtr perNest(const StmtPtr& body, const std::function<StmtPtr(const StmtPtr&)>& fn);
/// True when different iterations of `loop` never write the same element (every store to an
/// argument uses the loop variable; every local it writes is allocated inside it).
bool iterationsIndependent(const Stmt& loop);
/// True when `outer` and the loop that is its whole body are serial with constant bounds that
/// do not depend on each other (fuseOne can merge them).
bool fusable(const Stmt& outer);
/// Merges `outer` with the loop that is its whole body into one loop outer_inner.
Expected<StmtPtr> fuseOne(const StmtPtr& outer);
/// Calls fn on every node of the expression tree e.
void forEachExpr(const ExprPtr& e, const std::function<void(const Expr&)>& fn);
/// True when every load and store in `body` that depends on `var` depends on it only through
/// its last index (contiguous across lanes), and nothing binds a Let variable from it.
bool contiguousIn(const StmtPtr& body, const std::string& var);
/// Float max/min reductions over at least 2·width iterations keep `width` partial results in
/// a vector local (ScheduleMinMax.cpp): the same value as the serial loop, NaN included.
StmtPtr vectorizeMinMaxReductions(const StmtPtr& s, int width);
/// Visits every loop of s (outermost first); stops descending where fn returns true.
void visitLoops(const StmtPtr& s, const std::function<bool(const Stmt&)>& fn);

} // namespace fb::cg::schedule_detail
