// Playing a lesson's steps on a session and checking its claims against the build.
#include "app/workbench/LessonCheck.h"

#include "app/workbench/FindBug.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/KernelSchedule.h"
#include "codegen/loops/ScheduleOverride.h"
#include "passes/AnalysisCache.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>

namespace fb::workbench {

namespace {

/// "FILE:LINE: step 3 'Title'" for messages.
std::string stepWhere(const Lesson& lesson, size_t index, int line) {
  return lesson.path + ":" + std::to_string(line) + ": step " + std::to_string(index + 1) + " '" +
         lesson.steps[index].title + "'";
}

std::string formatNumber(double v) {
  std::ostringstream os;
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    os << int64_t(v);
  else
    os << v;
  return os.str();
}

/// Every override of `step` names a kernel of the snapshot and is applied to it.
Status checkSchedule(const Session& session, const LessonStep& step) {
  auto overrides = cg::parseScheduleOverrides(step.schedule);
  if (!overrides.ok())
    return overrides.error();
  CompileSettings settings;
  settings.schedule = *overrides;
  auto kernels = describeSchedules(*session.graph(step.snapshot), settings);
  if (!kernels.ok())
    return kernels.error().withContext("schedule '" + step.schedule + "'");
  for (const cg::ScheduleOverride& o : *overrides) {
    auto it = std::find_if(kernels->begin(), kernels->end(),
                           [&](const KernelSchedule& k) { return k.kernel == o.kernel; });
    if (it == kernels->end()) {
      std::string names;
      for (const KernelSchedule& k : *kernels)
        names += (names.empty() ? "" : ", ") + k.kernel;
      return makeError("schedule: no kernel '", o.kernel, "' in snapshot ", step.snapshot,
                       " (kernels: ", names, ")");
    }
  }
  return Status::success();
}

} // namespace

bool setLessonFaults(const std::vector<Fault>& faults) {
  const std::set<Fault> want(faults.begin(), faults.end());
  const std::vector<Fault> now = enabledFaults();
  if (std::set<Fault>(now.begin(), now.end()) == want)
    return false;
  disableAllFaults();
  for (Fault f : want)
    setFaultEnabled(f, true);
  return true;
}

Expected<NodeId> resolveLessonFocus(const Graph& graph, const std::string& focus) {
  for (const auto& n : graph.nodes())
    if (n->name() == focus)
      return n->id();
  for (const auto& n : graph.nodes())
    if (const Graph* body = n->body())
      for (const auto& inner : body->nodes())
        if (inner->name() == focus)
          return n->id();
  if (focus.size() > 1 && focus[0] == '#') {
    char* end = nullptr;
    const unsigned long long id = std::strtoull(focus.c_str() + 1, &end, 10);
    if (end == focus.c_str() + focus.size() && graph.findNode(NodeId(id)))
      return NodeId(id);
  }
  std::string names;
  size_t listed = 0;
  for (const auto& n : graph.nodes())
    if (!n->name().empty() && listed++ < 12)
      names += (names.empty() ? "" : ", ") + n->name();
  return makeError("no node '", focus, "' in this snapshot",
                   names.empty() ? std::string() : " (its nodes include: " + names + ")");
}

namespace {

/// Find the bug on every snapshot the session holds, as Debug > Find the Bug runs it (on the
/// interpreter, inputs from gatherInputs, the reproducer in a temporary folder); the last
/// report is kept for the step's other claims, keyed by the snapshots' graphs (held, so that a
/// freed graph's address cannot match a new one).
Expected<FindBugReport> findBugFor(const Session& session) {
  static std::mutex mutex;
  static std::vector<std::shared_ptr<const Graph>> lastKey;
  static std::optional<FindBugReport> last;
  std::vector<std::shared_ptr<const Graph>> key;
  for (const Snapshot& s : session.snapshots())
    key.push_back(s.graph);
  std::lock_guard lock(mutex);
  if (last && key == lastKey)
    return *last;
  const std::vector<Snapshot>& snapshots = session.snapshots();
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                      gatherInputs(*snapshots.front().graph, {}, 1, {}));
  std::error_code ec;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path(ec) / ("fusebox-lesson-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir, ec);
  FindBugSettings settings;
  settings.reproducerPath = (dir / "reproducer.fbir").string();
  settings.modelName = session.displayName();
  auto report = findBug(snapshots, inputs, settings);
  std::filesystem::remove_all(dir, ec); // also when the search failed
  if (!report.ok())
    return report.error();
  lastKey = std::move(key);
  last = *report;
  return std::move(report).value();
}

} // namespace

Expected<double> lessonMetric(const Session& session, const LessonStep& step,
                              const std::string& metric) {
  const Snapshot& snap = session.snapshot(step.snapshot);
  if (metric.rfind("findbug.", 0) == 0) {
    FB_ASSIGN_OR_RETURN(FindBugReport report, findBugFor(session));
    if (!report.bisect.mismatch)
      return makeError("Find the bug found nothing wrong: every snapshot matches the reference");
    if (metric == "findbug.guilty_snapshot")
      return double(report.bisect.index);
    if (!report.reduce)
      return makeError("Find the bug did not reduce the model: ", report.reduceError);
    return double(report.reduce->nodesAfter);
  }
  if (metric.rfind("numeric.", 0) == 0) {
    FB_ASSIGN_OR_RETURN(NumericDiff diff,
                        session.numericDiff(step.compare.first, step.compare.second));
    if (metric == "numeric.ok")
      return diff.ok() ? 1.0 : 0.0;
    double maxAbs = 0, minCosine = 1;
    for (const ValueComparison& v : diff.values) {
      maxAbs = std::max(maxAbs, v.maxAbs);
      minCosine = std::min(minCosine, v.cosine);
    }
    return metric == "numeric.max_abs" ? maxAbs : minCosine;
  }
  if (metric == "arena_bytes" || metric == "naive_bytes" || metric == "lower_bound_bytes") {
    const MemoryPlan& plan = snapshotMemoryPlan(snap);
    if (!plan.error.empty())
      return makeError("no memory plan: ", plan.error);
    if (metric == "arena_bytes")
      return double(plan.arenaBytes);
    if (metric == "naive_bytes")
      return double(plan.naiveBytes);
    return double(plan.lowerBoundBytes);
  }
  if (metric == "fused_groups") {
    size_t groups = 0;
    for (const auto& n : snap.graph->nodes())
      groups += n->body() ? 1 : 0;
    return double(groups);
  }
  const ModelStats& stats = snapshotStats(snap);
  if (metric.rfind("ops.", 0) == 0) {
    auto it = stats.ops.find(metric.substr(4));
    return it == stats.ops.end() ? 0.0 : double(it->second);
  }
  if (metric == "nodes")
    return double(stats.nodes);
  if (metric == "params")
    return double(stats.params);
  if (metric == "flops")
    return stats.flops;
  if (metric == "bytes_moved")
    return stats.bytesMoved;
  if (metric == "weight_bytes")
    return double(stats.weightBytes);
  if (metric == "peak_activation_bytes")
    return double(stats.peakActivationBytes);
  return makeError("unknown metric '", metric, "'");
}

bool claimHolds(const LessonClaim& claim, double value) {
  const double tolerance = 1e-9 * std::max(1.0, std::fabs(claim.value));
  const bool equal = std::fabs(value - claim.value) <= tolerance;
  switch (claim.op) {
  case ClaimOp::Eq:
    return equal;
  case ClaimOp::Ne:
    return !equal;
  case ClaimOp::Lt:
    return value < claim.value;
  case ClaimOp::Le:
    return value <= claim.value || equal;
  case ClaimOp::Gt:
    return value > claim.value;
  case ClaimOp::Ge:
    return value >= claim.value || equal;
  }
  assert(false && "unknown claim comparison");
  return false;
}

Status computeLessonSnapshots(Session& session, const LessonStep& step) {
  const size_t last = std::max({step.snapshot, step.compare.first, step.compare.second});
  while (session.snapshotCount() <= last) {
    if (!session.canStep())
      return makeError("the pipeline ends at snapshot ", session.snapshotCount() - 1,
                       " but the step shows snapshot ", last);
    const size_t next = session.snapshotCount();
    Expected<size_t> at = session.step();
    if (!at.ok())
      return at.error().withContext("pass '" + session.pipeline()[next - 1].str() + "' (snapshot " +
                                    std::to_string(next) + ") failed");
  }
  session.select(step.snapshot);
  return Status::success();
}

Expected<LessonCheckReport> checkLesson(const Lesson& lesson) {
  const std::vector<Fault> previous = enabledFaults();
  struct RestoreFaults {
    const std::vector<Fault>& faults;
    ~RestoreFaults() { setLessonFaults(faults); }
  } restore{previous};

  Session session;
  if (Status st = session.load(lesson.modelPath); !st.ok())
    return makeError(lesson.path, ": the model does not load: ", st.error().message());
  session.setPipelineSteps(lesson.pipeline);
  setLessonFaults({});
  std::vector<Fault> inForce;
  LessonCheckReport report;
  for (size_t i = 0; i < lesson.steps.size(); ++i) {
    const LessonStep& step = lesson.steps[i];
    if (setLessonFaults(step.faults) || step.faults != inForce)
      session.reset(); // snapshots computed under other faults are not this step's
    inForce = step.faults;
    if (Status st = computeLessonSnapshots(session, step); !st.ok())
      return makeError(stepWhere(lesson, i, step.line), ": ", st.error().message());
    if (!step.focus.empty())
      if (auto id = resolveLessonFocus(*session.graph(step.snapshot), step.focus); !id.ok())
        return makeError(stepWhere(lesson, i, step.focusLine), ": focus: ", id.error().message(),
                         " (snapshot ", step.snapshot, ")");
    if (!step.schedule.empty())
      if (Status st = checkSchedule(session, step); !st.ok())
        return makeError(stepWhere(lesson, i, step.line), ": ", st.error().message());
    for (const LessonClaim& claim : step.claims) {
      auto value = lessonMetric(session, step, claim.metric);
      if (!value.ok())
        return makeError(stepWhere(lesson, i, claim.line), ": claim '", claim.text,
                         "' cannot be measured: ", value.error().message());
      if (!claimHolds(claim, *value))
        return makeError(stepWhere(lesson, i, claim.line), ": claim '", claim.text,
                         "' does not hold: ", claim.metric, " is ", formatNumber(*value),
                         " at snapshot ", step.snapshot);
      ++report.claims;
    }
    ++report.steps;
  }
  return report;
}

} // namespace fb::workbench
