// Delta debugging of a failing --compare down to a minimal sub-graph.
#include "app/workbench/Reduce.h"
#include "app/workbench/SubGraph.h"
#include "core/Interpreter.h"
#include "passes/PassManager.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace fb::workbench {

Expected<CheckOutcome> runFailureCheck(const Graph& graph, const std::vector<Tensor>& inputs,
                                       const FailureCheck& check, const JobControl* job) {
  FB_TRY(checkCancelled(job, "reduction"));
  CheckOutcome out;
  auto ref = interpret(graph, inputs);
  if (!ref.ok()) {
    out.error = "the interpreter fails: " + ref.error().message();
    return out;
  }
  PassManager pm;
  PipelineResult piped = pm.run(graph.clone(), check.pipeline);
  if (piped.error) {
    out.error = piped.error->message();
    return out;
  }
  RunSettings run = check.run;
  run.benchRuns = 0;
  run.profile = false;
  auto got = runGraph(piped.finalGraph(), inputs, run, job);
  if (!got.ok()) {
    FB_TRY(checkCancelled(job, "reduction"));
    out.error = got.error().message();
    return out;
  }
  auto cmp = compareOutputs(piped.finalGraph(), ref->outputs, got->outputs, check.tolerance);
  if (!cmp.ok()) {
    out.error = cmp.error().message();
    return out;
  }
  out.comparison = std::move(cmp).value();
  out.mismatch = !out.comparison.ok;
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

/// Positions (in the model's node order) of the nodes a candidate keeps, ascending.
using Selection = std::vector<size_t>;

/// Checks candidates and remembers the smallest that fails.
class Reducer {
public:
  Reducer(const Graph& graph, const std::vector<Tensor>& inputs, const ReduceSettings& settings,
          const InterpretResult& recorded, const JobControl* job, ReduceReport& report)
      : m_graph(graph), m_inputs(inputs), m_settings(settings), m_recorded(recorded), m_job(job),
        m_report(report) {}

  /// True when the sub-graph of `selection` fails the check; it then becomes the best so far.
  /// False for a selection already tried, one that cannot be cut out, one whose check does not
  /// mismatch, and every selection once the probe bound is reached.
  Expected<bool> fails(const Selection& selection, const std::string& stage) {
    if (selection.empty() || !m_tried.insert(selection).second)
      return false;
    if (m_report.probes >= m_settings.maxProbes) {
      m_report.probeLimitHit = true;
      return false;
    }
    std::vector<bool> keep(m_graph.numNodes(), false);
    for (size_t i : selection)
      keep[i] = true;
    auto sub = extractSubGraph(m_graph, keep, m_inputs, m_recorded.values);
    if (!sub.ok()) {
      ++m_report.candidates;
      return false;
    }
    FB_TRY(checkCancelled(m_job, "reduction"));
    reportProgress(m_job, std::min(0.99, double(m_report.probes) / m_settings.maxProbes),
                   stage + ": trying " + std::to_string(selection.size()) + " of " +
                       std::to_string(m_best.size()) + " nodes");
    ++m_report.probes;
    FB_ASSIGN_OR_RETURN(CheckOutcome outcome,
                        runFailureCheck(*sub->graph, sub->inputs, m_settings.check, m_job));
    if (!outcome.mismatch)
      return false;
    m_best = selection;
    m_report.outcome = std::move(outcome);
    m_report.cutValues = countCutValues(*sub->graph);
    m_report.inputs = std::move(sub->inputs);
    m_report.reduced = std::shared_ptr<const Graph>(std::move(sub->graph));
    return true;
  }

  const Selection& best() const { return m_best; }
  void setBest(Selection s) { m_best = std::move(s); }
  bool exhausted() const { return m_report.probeLimitHit; }

private:
  /// Inputs and constants of the reduced graph that stand for values the model computed.
  size_t countCutValues(const Graph& g) const {
    size_t n = 0;
    for (const Value* v : g.inputs())
      n += m_graph.findValue(v->name()) && !m_graph.findValue(v->name())->isInput();
    for (const Value* v : g.constants())
      n += m_graph.findValue(v->name()) && !m_graph.findValue(v->name())->isConstant();
    return n;
  }

  const Graph& m_graph;
  const std::vector<Tensor>& m_inputs;
  const ReduceSettings& m_settings;
  const InterpretResult& m_recorded;
  const JobControl* m_job;
  ReduceReport& m_report;
  Selection m_best;
  std::set<Selection> m_tried;
};

} // namespace

Expected<ReduceReport> reduceFailure(const Graph& graph, const std::vector<Tensor>& inputs,
                                     const ReduceSettings& settings, const JobControl* job) {
  const auto start = Clock::now();
  ReduceReport report;
  report.nodesBefore = graph.numNodes();
  if (graph.numNodes() == 0)
    return makeError("nothing to reduce: the model has no nodes");
  // Every candidate must have static shapes, and its cut values' types come from the model.
  for (const Value* in : graph.inputs())
    if (!in->type().isStatic())
      return Error("reduce needs static shapes: input '" + in->name() + "' is " +
                       in->type().str(),
                   ErrorKind::SymbolicShape);

  // 1. The whole model must fail, by a mismatch.
  reportProgress(job, 0.0, "checking the whole model");
  report.probes = 1;
  FB_ASSIGN_OR_RETURN(report.original, runFailureCheck(graph, inputs, settings.check, job));
  if (!report.original.error.empty())
    return makeError("reduce: the check cannot compare the model: ", report.original.error);
  if (!report.original.mismatch)
    return makeError("nothing to reduce: the check passes (the pipeline's result on ",
                     backendName(settings.check.run.backend),
                     " agrees with the interpreter on these inputs)");
  report.outcome = report.original;
  report.reduced = graph.clone();
  report.inputs = inputs;

  // 2. The recorded tensors of every value.
  reportProgress(job, 0.01, "recording every value on the interpreter");
  InterpretOptions keepAll;
  keepAll.keepIntermediates = true;
  auto recordedRun = interpret(graph, inputs, keepAll);
  if (!recordedRun.ok())
    return recordedRun.error().withContext("reduce: recording the model's values");
  const InterpretResult recorded = std::move(recordedRun).value();

  Reducer reducer(graph, inputs, settings, recorded, job, report);
  Selection all(graph.numNodes());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  reducer.setBest(all);

  // 3. Bisection: a contiguous half, the later one first (it holds the outputs).
  while (reducer.best().size() > 1 && !reducer.exhausted()) {
    const Selection cur = reducer.best();
    const size_t half = cur.size() / 2;
    Selection early(cur.begin(), cur.begin() + long(half));
    Selection late(cur.begin() + long(half), cur.end());
    FB_ASSIGN_OR_RETURN(bool lateFails, reducer.fails(late, "bisect"));
    if (lateFails)
      continue;
    FB_ASSIGN_OR_RETURN(bool earlyFails, reducer.fails(early, "bisect"));
    if (!earlyFails)
      break;
  }

  // 4. Linear passes: one node at a time, last to first, until a pass drops nothing.
  bool dropped = true;
  while (dropped && reducer.best().size() > 1 && !reducer.exhausted()) {
    dropped = false;
    for (size_t k = reducer.best().size(); k-- > 0;) {
      if (reducer.best().size() <= 1 || k >= reducer.best().size())
        continue;
      Selection without = reducer.best();
      without.erase(without.begin() + long(k));
      FB_ASSIGN_OR_RETURN(bool fails, reducer.fails(without, "linear pass"));
      dropped = dropped || fails;
    }
  }

  report.nodesAfter = report.reduced->numNodes();
  reportProgress(job, 1.0, "reduction done");
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

} // namespace fb::workbench
