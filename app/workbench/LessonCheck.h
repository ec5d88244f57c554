// Playing and checking lessons on a session: the faults a step needs, its focus node, the
// metrics its claims name, and `fusebox --lesson FILE --check`, which walks every step on a
// fresh session so a lesson that no longer matches the build fails loudly instead of rotting.
#pragma once

#include "app/workbench/Lesson.h"
#include "app/workbench/Session.h"

namespace fb::workbench {

/// Turns exactly `faults` on (every other built-in fault off). Returns true when that changed
/// the set, so snapshots computed before were computed under other faults.
bool setLessonFaults(const std::vector<Fault>& faults);

/// The node a step focuses in `graph`: the node named `focus`, else the fused group whose body
/// holds a node of that name (the group it became), else the node with id N for "#N". An error
/// names what was looked for.
Expected<NodeId> resolveLessonFocus(const Graph& graph, const std::string& focus);

/// The value of `metric` (lessonMetricNames(), or ops.OPNAME) at `step`: statistics and the
/// memory plan of snapshot step.snapshot, the numeric diff of the step's compare pair.
Expected<double> lessonMetric(const Session& session, const LessonStep& step,
                              const std::string& metric);

/// True when `value` satisfies `claim` (==, != with a relative tolerance of 1e-9).
bool claimHolds(const LessonClaim& claim, double value);

/// Computes the snapshots `step` shows (its snapshot and its compare pair) on `session`, which
/// holds the lesson's model and pipeline, and selects the step's snapshot. The caller sets the
/// step's faults first (and resets the session when they changed).
Status computeLessonSnapshots(Session& session, const LessonStep& step);

/// What a passing check saw.
struct LessonCheckReport {
  size_t steps = 0;
  size_t claims = 0;
};

/// Walks every step of `lesson` on a fresh session: the model loads, every pass runs, every
/// focus node exists, every schedule parses for its snapshot, every claim holds. The first
/// failure is an error naming the lesson file, the line, the step and the claim. The process's
/// fault set is restored afterwards.
Expected<LessonCheckReport> checkLesson(const Lesson& lesson);

} // namespace fb::workbench
