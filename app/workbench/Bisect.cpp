// Bisection over pass applications, rewrites and compiled kernels.
#include "app/workbench/Bisect.h"
#include "core/GraphDiff.h"
#include "core/Interpreter.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace fb::workbench {

namespace {

using Clock = std::chrono::steady_clock;

/// One comparison of a state with the reference.
struct Probe {
  bool ok = false;
  OutputComparisons comparison;
  std::string error; ///< the state failed to run (it then counts as failing)
  std::shared_ptr<cg::CompiledModel> compiled;
};

/// Runs states on the backend and compares them with the reference outputs, counting probes
/// and reporting progress; every probe first checks for cancellation.
class Prober {
public:
  Prober(const std::vector<Tensor>& inputs, const std::vector<Tensor>& reference,
         const BisectSettings& settings, const JobControl* job, int& probes)
      : m_inputs(inputs), m_reference(reference), m_settings(settings), m_job(job),
        m_probes(probes) {
    m_run = settings.run;
    m_run.benchRuns = 0;
    m_run.profile = false;
  }

  /// Runs `graph` on the backend (`backend` overrides the settings' choice) and compares; the
  /// probe keeps the compiled model (compiled backends).
  Expected<Probe> probe(const Graph& graph, const std::string& what, double fraction,
                        std::optional<Backend> backend = std::nullopt) {
    FB_TRY(checkCancelled(m_job, "bisection"));
    reportProgress(m_job, fraction, what);
    ++m_probes;
    RunSettings run = m_run;
    if (backend)
      run.backend = *backend;
    Probe p;
    auto result = runGraph(graph, m_inputs, run);
    if (!result.ok()) {
      // A backend that cannot run the graph at all has nothing to bisect; any other failure
      // (a pass left a graph the backend rejects) makes this state a failing one.
      if (result.error().isUnsupported())
        return result.error().withContext("bisect: " + what);
      p.error = result.error().message();
      return p;
    }
    p.compiled = result->compiled;
    return compare(graph, result->outputs, std::move(p));
  }

  /// Compares outputs `got` of `graph` with the reference.
  Expected<Probe> compare(const Graph& graph, const std::vector<Tensor>& got, Probe p) const {
    auto cmp = compareOutputs(graph, m_reference, got, m_settings.tolerance);
    if (!cmp.ok()) {
      p.error = cmp.error().message();
      return p;
    }
    p.comparison = std::move(cmp).value();
    p.ok = p.comparison.ok;
    return p;
  }

  /// Runs an already compiled model with its first `compiledKernels` kernels as code and the
  /// rest through the interpreter, and compares.
  Expected<Probe> probeMixed(cg::CompiledModel& model, size_t compiledKernels, double fraction) {
    FB_TRY(checkCancelled(m_job, "bisection"));
    reportProgress(m_job, fraction,
                   "kernels 0.." + std::to_string(compiledKernels) + " as code, the rest interpreted");
    ++m_probes;
    std::vector<bool> interpreted(model.kernels().size(), false);
    for (size_t k = compiledKernels; k < interpreted.size(); ++k)
      interpreted[k] = true;
    model.setInterpretedKernels(std::move(interpreted));
    auto got = model.run(m_inputs);
    model.setInterpretedKernels({});
    Probe p;
    if (!got.ok()) {
      p.error = got.error().message();
      return p;
    }
    return compare(model.graph(), *got, std::move(p));
  }

private:
  const std::vector<Tensor>& m_inputs;
  const std::vector<Tensor>& m_reference;
  const BisectSettings& m_settings;
  const JobControl* m_job;
  int& m_probes;
  RunSettings m_run;
};

/// The smallest x in (lo, hi] with bad(x), given that lo is good and hi bad (the classic
/// bisection invariant; a non-monotone predicate still yields a good/bad boundary).
Expected<int64_t> firstBad(int64_t lo, int64_t hi, const std::function<Expected<bool>(int64_t)>& bad) {
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    FB_ASSIGN_OR_RETURN(bool b, bad(mid));
    if (b)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

std::string nodeLabel(NodeId id, const Graph& a, const Graph* b) {
  const Node* n = a.findNode(id);
  if (!n && b)
    n = b->findNode(id);
  if (!n)
    return "#" + std::to_string(id);
  if (!n->name().empty())
    return n->name();
  return std::string(opName(n->op())) + "#" + std::to_string(id);
}

/// The nodes rewrite `rewrite` touched according to the provenance events of `record`.
std::vector<NodeId> touchedByEvents(const PassRecord& record, int64_t rewrite) {
  std::vector<NodeId> ids;
  std::set<NodeId> seen;
  auto add = [&](NodeId id) {
    if (seen.insert(id).second)
      ids.push_back(id);
  };
  for (const ProvenanceEvent& e : record.events) {
    if (e.rewrite != rewrite)
      continue;
    add(e.node);
    for (NodeId f : e.from)
      add(f);
  }
  return ids;
}

/// Added, removed and changed nodes from `before` to `after`.
std::vector<NodeId> touchedByDiff(const Graph& before, const Graph& after) {
  GraphDiff d = diffGraphs(before, after);
  std::vector<NodeId> ids = d.removed;
  ids.insert(ids.end(), d.added.begin(), d.added.end());
  for (const NodeChange& c : d.changed)
    ids.push_back(c.id);
  return ids;
}

/// Step 6 of bisectSnapshots: on a compiled backend, when the interpreter finds the bad state
/// right, the first kernel whose code disagrees (mixed execution over `compiled`, the bad
/// state's compiled model when its probe kept one).
Status blameKernel(BisectReport& report, Prober& prober, const BisectSettings& settings,
                   const std::vector<Tensor>& inputs,
                   std::shared_ptr<cg::CompiledModel> compiled, const JobControl* job);

double largestMaxAbs(const OutputComparisons& c) {
  double worst = 0;
  for (const OutputComparison& o : c.outputs)
    worst = std::max(worst, o.result.maxAbs);
  return worst;
}

} // namespace

Expected<BisectReport> bisectSnapshots(const std::vector<Snapshot>& snapshots,
                                       const std::vector<Tensor>& inputs,
                                       const BisectSettings& settings, const JobControl* job) {
  if (snapshots.empty())
    return makeError("bisect: no model");
  const auto start = Clock::now();
  BisectReport report;
  report.snapshots = snapshots.size();
  const Graph& model = *snapshots.front().graph;

  reportProgress(job, 0.0, "reference run of the imported model on the interpreter");
  FB_ASSIGN_OR_RETURN(InterpretResult ref, interpret(model, inputs));
  Prober prober(inputs, ref.outputs, settings, job, report.probes);

  // 2. Does the pipeline fail at all?
  const int64_t last = int64_t(snapshots.size()) - 1;
  std::map<int64_t, Probe> bySnapshot;
  auto snapshotBad = [&](int64_t k) -> Expected<bool> {
    if (auto it = bySnapshot.find(k); it != bySnapshot.end())
      return !it->second.ok;
    FB_ASSIGN_OR_RETURN(Probe p, prober.probe(*snapshots[size_t(k)].graph,
                                              "snapshot " + std::to_string(k), 0.1));
    bool bad = !p.ok;
    p.compiled.reset(); // JIT-compiled code is big; step 6 recompiles the one it needs (cached)
    bySnapshot[k] = std::move(p);
    return bad;
  };
  FB_ASSIGN_OR_RETURN(bool lastBad, snapshotBad(last));
  if (!lastBad) {
    report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return report;
  }
  report.mismatch = true;

  // 3. The first failing snapshot.
  FB_ASSIGN_OR_RETURN(bool importedBad, last == 0 ? Expected<bool>(true) : snapshotBad(0));
  int64_t index = 0;
  if (!importedBad) {
    FB_ASSIGN_OR_RETURN(index, firstBad(0, last, snapshotBad));
  }
  report.index = size_t(index);
  Probe badProbe = bySnapshot.at(index);
  report.badGraph = snapshots[size_t(index)].graph;

  // 4. The first failing rewrite inside that pass application.
  if (index > 0) {
    const PassRecord& record = *snapshots[size_t(index)].record;
    report.pass = record.pass;
    report.step = record.step;
    report.rewrites = record.rewrites;
    auto parsed = parsePipeline(record.step);
    if (settings.rewrites && record.rewrites > 0 && parsed.ok() && parsed->size() == 1) {
      const PipelineStep step = parsed->front();
      const Graph& before = *snapshots[size_t(index - 1)].graph;
      PassManager pm;
      std::map<int64_t, Snapshot> states;
      std::map<int64_t, Probe> byLimit;
      auto stateAt = [&](int64_t r) -> Expected<const Snapshot*> {
        if (auto it = states.find(r); it != states.end())
          return &it->second;
        FB_ASSIGN_OR_RETURN(Snapshot s, pm.applyStep(before, step, r));
        return &states.emplace(r, std::move(s)).first->second;
      };
      auto limitBad = [&](int64_t r) -> Expected<bool> {
        if (auto it = byLimit.find(r); it != byLimit.end())
          return !it->second.ok;
        auto s = stateAt(r);
        Probe p;
        if (!s.ok()) {
          p.error = s.error().message(); // the pass failed under the limit: counts as bad
        } else {
          FB_ASSIGN_OR_RETURN(p, prober.probe(*(*s)->graph,
                                              record.pass + " stopped after " +
                                                  std::to_string(r) + " rewrites",
                                              0.4));
        }
        bool bad = !p.ok;
        p.compiled.reset();
        byLimit[r] = std::move(p);
        return bad;
      };
      byLimit[record.rewrites] = badProbe; // the snapshot is the pass with every rewrite
      FB_ASSIGN_OR_RETURN(int64_t r, firstBad(0, record.rewrites, limitBad));
      // The search assumed the state before any rewrite is good; check it when it decides.
      bool blameable = true;
      if (r == 1) {
        FB_ASSIGN_OR_RETURN(bool zeroBad, limitBad(0));
        blameable = !zeroBad;
      }
      if (blameable) {
        report.rewrite = r;
        FB_ASSIGN_OR_RETURN(const Snapshot* bad, stateAt(r));
        report.badGraph = bad->graph;
        badProbe = byLimit.at(r);
        std::vector<NodeId> ids = touchedByEvents(*bad->record, r);
        report.nodesFrom = "provenance";
        if (ids.empty()) {
          FB_ASSIGN_OR_RETURN(const Snapshot* prev, stateAt(r - 1));
          ids = touchedByDiff(*prev->graph, *bad->graph);
          report.nodesFrom = "structural diff";
        }
        for (NodeId id : ids)
          report.nodes.push_back({id, nodeLabel(id, *bad->graph, &before)});
      }
    }
  }
  report.comparison = badProbe.comparison;
  report.runError = badProbe.error;
  report.maxAbs = badProbe.error.empty() ? largestMaxAbs(badProbe.comparison)
                                         : std::numeric_limits<double>::infinity();

  // 5. Where the bad state starts to compute something else (interpreter against interpreter).
  FB_TRY(checkCancelled(job, "bisection"));
  reportProgress(job, 0.7, "numeric diff of the imported model and the failing state");
  const Graph& badGraph = *report.badGraph;
  Tolerance tol = settings.tolerance.value_or(defaultTolerance(DType::F32));
  auto diff = numericDiff(model, badGraph, inputs, tol.atol, tol.rtol);
  if (diff.ok() && diff->firstDivergent) {
    report.firstDivergent = diff->firstDivergent;
    report.firstDivergentName = nodeLabel(*diff->firstDivergent, badGraph, nullptr);
  }

  // 6. A compiled backend: is the graph right and the code wrong?
  if (settings.run.backend != Backend::Interpreter)
    FB_TRY(blameKernel(report, prober, settings, inputs, badProbe.compiled, job));
  reportProgress(job, 1.0, "bisection done");
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

namespace {

Status blameKernel(BisectReport& report, Prober& prober, const BisectSettings& settings,
                   const std::vector<Tensor>& inputs,
                   std::shared_ptr<cg::CompiledModel> compiled, const JobControl* job) {
  const Graph& badGraph = *report.badGraph;
  FB_ASSIGN_OR_RETURN(Probe onInterp, prober.probe(badGraph, "the failing state on the interpreter",
                                                   0.75, Backend::Interpreter));
  report.interpreterAgrees = onInterp.ok;
  if (report.interpreterAgrees && settings.kernels) {
    if (!compiled) {
      auto c = compileGraph(badGraph, settings.run.compile, inputs, job);
      if (c.ok())
        compiled = *c;
    }
    if (compiled && compiled->runnable()) {
      const int64_t kernels = int64_t(compiled->kernels().size());
      auto mixedBad = [&](int64_t m) -> Expected<bool> {
        FB_ASSIGN_OR_RETURN(Probe p, prober.probeMixed(*compiled, size_t(m),
                                                       0.8 + 0.2 * double(m) / double(kernels)));
        return !p.ok;
      };
      // All interpreted must pass (else mixed execution cannot blame a kernel) and all as code
      // must fail (it did, unless the failure was a compile error).
      FB_ASSIGN_OR_RETURN(bool noneBad, mixedBad(0));
      FB_ASSIGN_OR_RETURN(bool allBad, mixedBad(kernels));
      if (!noneBad && allBad && kernels > 0) {
        FB_ASSIGN_OR_RETURN(int64_t m, firstBad(0, kernels, mixedBad));
        const size_t k = size_t(m - 1);
        const cg::Kernel& kern = compiled->kernels()[k];
        cg::Profile info = compiled->newProfile();
        KernelBlame blame;
        blame.index = k;
        blame.name = kern.name;
        blame.opSummary = kern.opSummary;
        blame.generator = info.kernels[k].generator;
        blame.schedule = kern.schedule;
        blame.nodes = kern.nodes;
        blame.nodeNames = info.kernels[k].nodeNames;
        report.kernel = std::move(blame);
      }
    }
  }
  return Status::success();
}

} // namespace

} // namespace fb::workbench
