// The find-the-bug flow: bisect, numeric diff, reduce, reproducer.
#include "app/workbench/FindBug.h"

#include "app/workbench/ErrorHeat.h"
#include "app/workbench/Reproducer.h"
#include "core/Faults.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace fb::workbench {

namespace {

/// A JobControl for one stage: its progress maps onto [lo, hi] of `parent`'s and never goes
/// back (a bisection's own estimate may), and a cancel of the parent reaches it at its next
/// progress report.
class StageJob {
public:
  StageJob(const JobControl* parent, double lo, double hi)
      : m_done(lo), m_job([this, parent, lo, hi](double f, const std::string& what) {
          if (parent && parent->cancelled())
            m_job.cancel();
          m_done = std::max(m_done, lo + (hi - lo) * std::clamp(f, 0.0, 1.0));
          reportProgress(parent, m_done, what);
        }) {
    if (parent && parent->cancelled())
      m_job.cancel();
  }
  const JobControl* get() const { return &m_job; }

private:
  double m_done;
  JobControl m_job;
};

/// Heat of a numeric diff on the nodes of its later graph: diverging values on a log scale of
/// 1 - cosine over four decades below the worst; agreeing values 0.
std::map<NodeId, double> divergenceHeat(const NumericDiff& d) {
  double top = 0;
  for (const ValueComparison& c : d.values)
    if (!c.ok)
      top = std::max(top, 1.0 - c.cosine);
  std::map<NodeId, double> heat;
  for (const ValueComparison& c : d.values) {
    double h = 0;
    if (!c.ok) {
      // A value off by a scale keeps its cosine: it still diverges, shown mid-scale.
      const double e = errorHeat(1.0 - c.cosine, top);
      h = e > 0 ? std::max(0.15, e) : 0.5;
    }
    double& at = heat[c.producer];
    at = std::max(at, h);
  }
  return heat;
}

std::string summaryOf(const FindBugReport& r) {
  const BisectReport& b = r.bisect;
  std::ostringstream os;
  if (!b.mismatch) {
    os << "No bug to find: after all " << (b.snapshots ? b.snapshots - 1 : 0)
       << " pass applications the backend's outputs agree with the imported model on the "
          "interpreter.";
    return os.str();
  }
  if (b.kernel) {
    os << "The graph is right (the interpreter agrees) but kernel " << b.kernel->index << " "
       << b.kernel->name << " (" << b.kernel->opSummary << ", " << b.kernel->generator
       << ") computes something else";
    if (!b.kernel->nodeNames.empty())
      os << ": it covers " << b.kernel->nodeNames;
    os << ".";
  } else if (b.index == 0) {
    os << "The imported model already disagrees on this backend: its code is wrong before any "
          "pass.";
  } else {
    os << "Pass application " << b.index << " (" << b.step << ") breaks the model";
    if (b.rewrite)
      os << ", at rewrite " << *b.rewrite << " of " << b.rewrites;
    os << ".";
    if (!b.nodes.empty()) {
      os << " It touched ";
      for (size_t i = 0; i < b.nodes.size() && i < 6; ++i)
        os << (i ? ", " : "") << b.nodes[i].name;
      if (b.nodes.size() > 6)
        os << " and " << b.nodes.size() - 6 << " more";
      os << ".";
    }
  }
  if (!b.firstDivergentName.empty())
    os << " Values first diverge at " << b.firstDivergentName << ".";
  if (r.reduce)
    os << " Reduced from " << r.reduce->nodesBefore << " to " << r.reduce->nodesAfter
       << (r.reduce->nodesAfter == 1 ? " node" : " nodes") << " in " << r.reduce->probes
       << " checks: " << r.reproducerPath << ".";
  else if (!r.reduceError.empty())
    os << " No reproducer: " << r.reduceError;
  return os.str();
}

} // namespace

Expected<FindBugReport> findBug(const std::vector<Snapshot>& snapshots,
                                const std::vector<Tensor>& inputs, const FindBugSettings& settings,
                                const JobControl* job) {
  if (snapshots.empty())
    return makeError("find the bug: no model is loaded");
  FindBugReport report;
  {
    StageJob stage(job, 0.0, 0.5);
    FB_ASSIGN_OR_RETURN(report.bisect,
                        bisectSnapshots(snapshots, inputs, settings.bisect, stage.get()));
  }
  FB_TRY(checkCancelled(job, "find the bug"));
  const BisectReport& b = report.bisect;
  if (!b.mismatch) {
    report.summary = summaryOf(report);
    reportProgress(job, 1.0, "done");
    return report;
  }

  // Where the guilty snapshot's values leave the reference's.
  if (b.kernel) {
    for (NodeId id : b.kernel->nodes)
      report.heat[id] = 1.0;
  } else if (b.index > 0 && b.index < snapshots.size()) {
    reportProgress(job, 0.5, "numeric diff of the guilty snapshot");
    Expected<NumericDiff> d = numericDiffGraphs(*snapshots[0].graph, *snapshots[b.index].graph,
                                                inputs, settings.bisect.tolerance);
    if (d.ok()) {
      report.heat = divergenceHeat(d.value());
      report.diff = std::move(d).value();
    }
  }

  // The smallest graph that still fails under the same pipeline, backend and tolerance.
  if (!settings.reproducerPath.empty()) {
    ReduceSettings reduce;
    reduce.maxProbes = settings.maxProbes;
    reduce.check.run = settings.bisect.run;
    reduce.check.tolerance = settings.bisect.tolerance;
    for (const Snapshot& s : snapshots) {
      if (!s.record)
        continue;
      FB_ASSIGN_OR_RETURN(std::vector<PipelineStep> step, parsePipeline(s.record->step));
      reduce.check.pipeline.insert(reduce.check.pipeline.end(), step.begin(), step.end());
    }
    StageJob stage(job, 0.5, 1.0);
    Expected<ReduceReport> reduced =
        reduceFailure(*snapshots[0].graph, inputs, reduce, stage.get());
    FB_TRY(checkCancelled(job, "find the bug"));
    if (!reduced.ok()) {
      report.reduceError = reduced.error().message();
    } else {
      Reproducer repro;
      repro.graph = reduced->reduced;
      repro.inputs = reduced->inputs;
      repro.check = reduce.check;
      repro.faults = enabledFaults();
      repro.origin = "reduced from " + settings.modelName + ": " +
                     std::to_string(reduced->nodesBefore) + " -> " +
                     std::to_string(reduced->nodesAfter) + " nodes";
      Expected<std::vector<std::string>> files = writeReproducer(settings.reproducerPath, repro);
      if (!files.ok()) {
        report.reduceError = files.error().message();
      } else {
        report.inputFiles = std::move(files).value();
        report.reproducerPath = settings.reproducerPath;
        report.reduce = std::move(reduced).value();
      }
    }
  }
  report.summary = summaryOf(report);
  reportProgress(job, 1.0, "done");
  return report;
}

} // namespace fb::workbench
