// The workbench session: model loading, pipeline editing, stepping and snapshot comparisons.
#include "app/workbench/Session.h"

#include "core/Cost.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "core/TextDiff.h"
#include "core/text/IrPrinter.h"
#include "passes/AnalysisCache.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace fb::workbench {

std::vector<PassDescription> passDescriptions() {
  std::vector<PassDescription> out;
  for (const PassEntry& entry : allPasses()) {
    std::unique_ptr<Pass> pass = entry.create();
    out.push_back(
        {entry.name, pass->summary(), pass->description(), pass->isAnalysis(), pass->options()});
  }
  return out;
}

std::vector<std::string> optionCompletions(const PassDescription& pass) {
  std::vector<std::string> out;
  for (const PassOptionSpec& o : pass.options) {
    std::vector<std::string> values = o.choices;
    if (o.type == PassOptionType::Bool)
      values = {"true", "false"};
    if (values.empty())
      values.push_back(o.defaultValue);
    // The default first, so a completion popup proposes what the pass would use anyway.
    std::stable_partition(values.begin(), values.end(),
                          [&](const std::string& v) { return v == o.defaultValue; });
    for (const std::string& v : values)
      out.push_back(o.name + "=" + v);
  }
  return out;
}

Expected<Snapshot> runStepJob(const StepJob& job) {
  assert(job.graph && "a step job needs a graph");
  PassManager pm(job.options);
  auto snap = pm.applyStep(*job.graph, job.step);
  if (!snap.ok())
    return snap.error();
  if (snap->record->analysis && !snap->record->changed) {
    // Nothing changed: share the previous graph (as PassManager::run does), so positions and
    // highlights stay put.
    snap->graph = job.graph;
  }
  return snap;
}

Expected<NumericDiff> runNumericDiffJob(const NumericDiffJob& job) {
  assert(job.graphA && job.graphB && "a numeric diff job needs two graphs");
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, makeRandomInputs(*job.graphA, job.seed));
  Tolerance tol = defaultTolerance(DType::F32);
  return fb::numericDiff(*job.graphA, *job.graphB, inputs, tol.atol, tol.rtol);
}

Session::Session() = default;

Status Session::load(const std::string& path) {
  auto graph = loadModel(path);
  if (!graph.ok())
    return graph.error();
  std::string name = std::filesystem::path(path).filename().string();
  loadGraph(std::move(graph).value(), name);
  m_path = path;
  return Status::success();
}

void Session::adoptLoadedModel(std::shared_ptr<const Graph> graph, const std::string& path) {
  assert(graph && "adoptLoadedModel needs a graph");
  m_snapshots.clear();
  Snapshot first;
  first.graph = std::move(graph);
  m_snapshots.push_back(std::move(first));
  m_current = 0;
  m_path = path;
  m_displayName = std::filesystem::path(path).filename().string();
  ++m_generation;
}

void Session::loadGraph(std::unique_ptr<Graph> graph, const std::string& displayName) {
  assert(graph && "loadGraph needs a graph");
  m_snapshots.clear();
  Snapshot first;
  first.graph = std::shared_ptr<const Graph>(std::move(graph));
  m_snapshots.push_back(std::move(first));
  m_current = 0;
  m_path.clear();
  m_displayName = displayName;
  ++m_generation;
}

std::string Session::pipelineString() const {
  std::string out;
  for (const PipelineStep& s : m_pipeline) {
    if (!out.empty())
      out += ",";
    out += s.str();
  }
  return out;
}

Status Session::setPipeline(const std::string& text) {
  if (text.empty()) {
    setPipelineSteps({});
    return Status::success();
  }
  auto steps = parsePipeline(text);
  if (!steps.ok()) {
    // A named level ("O2") is a pipeline too.
    auto named = namedPipeline(text.size() > 1 && text[0] == '-' ? text.substr(1) : text);
    if (!named.ok())
      return steps.error();
    steps = std::move(named);
  }
  setPipelineSteps(std::move(steps).value());
  return Status::success();
}

void Session::setPipelineSteps(std::vector<PipelineStep> steps) {
  // Keep the snapshots of the common prefix: they are still what those steps produce.
  size_t same = 0;
  while (same < steps.size() && same < m_pipeline.size() &&
         steps[same].str() == m_pipeline[same].str())
    ++same;
  m_pipeline = std::move(steps);
  truncateFrom(same);
}

void Session::insertStep(size_t index, PipelineStep step) {
  index = std::min(index, m_pipeline.size());
  m_pipeline.insert(m_pipeline.begin() + std::ptrdiff_t(index), std::move(step));
  truncateFrom(index);
}

void Session::removeStep(size_t index) {
  if (index >= m_pipeline.size())
    return;
  m_pipeline.erase(m_pipeline.begin() + std::ptrdiff_t(index));
  truncateFrom(index);
}

void Session::moveStep(size_t from, size_t to) {
  if (from >= m_pipeline.size() || to >= m_pipeline.size() || from == to)
    return;
  PipelineStep s = m_pipeline[from];
  m_pipeline.erase(m_pipeline.begin() + std::ptrdiff_t(from));
  m_pipeline.insert(m_pipeline.begin() + std::ptrdiff_t(to), std::move(s));
  truncateFrom(std::min(from, to));
}

Status Session::setStepOptions(size_t index, const std::string& options) {
  if (index >= m_pipeline.size())
    return makeError("no pipeline step ", index + 1);
  std::string text = m_pipeline[index].passName;
  if (!options.empty())
    text += "{" + options + "}";
  auto parsed = parsePipeline(text);
  if (!parsed.ok())
    return parsed.error();
  if (parsed->size() != 1)
    return makeError("options of step ", index + 1, " must not contain a new step: ", options);
  if (parsed->front().str() == m_pipeline[index].str())
    return Status::success();
  m_pipeline[index] = parsed->front();
  truncateFrom(index);
  return Status::success();
}

void Session::truncateFrom(size_t stepIndex) {
  // Snapshot k is the result of step k-1; steps from stepIndex on are stale.
  if (m_snapshots.size() > stepIndex + 1)
    m_snapshots.resize(stepIndex + 1);
  m_current = std::min(m_current, m_snapshots.empty() ? 0 : m_snapshots.size() - 1);
  ++m_generation;
}

bool Session::canStep() const {
  if (!hasModel())
    return false;
  return canForward() || m_current < m_pipeline.size();
}

std::optional<StepJob> Session::prepareStep() const {
  if (!hasModel() || canForward() || m_current >= m_pipeline.size())
    return std::nullopt;
  StepJob job;
  job.generation = m_generation;
  job.from = m_current;
  job.graph = m_snapshots[m_current].graph;
  job.step = m_pipeline[m_current];
  job.options = m_pmOptions;
  job.options.afterPass = nullptr;
  return job;
}

bool Session::commitStep(const StepJob& job, Snapshot snapshot) {
  if (job.generation != m_generation || job.from != m_current ||
      m_snapshots.size() != m_current + 1)
    return false;
  m_snapshots.push_back(std::move(snapshot));
  m_current = m_snapshots.size() - 1;
  ++m_generation;
  return true;
}

Expected<size_t> Session::step() {
  if (!hasModel())
    return makeError("no model is loaded");
  if (canForward()) {
    forward();
    return m_current;
  }
  auto job = prepareStep();
  if (!job)
    return makeError("the pipeline has no step left to apply");
  auto snap = runStepJob(*job);
  if (!snap.ok())
    return snap.error();
  bool committed = commitStep(*job, std::move(snap).value());
  assert(committed && "a synchronous step cannot be stale");
  (void)committed;
  return m_current;
}

Status Session::bindDims(const std::map<std::string, int64_t>& sizes) {
  if (!hasModel())
    return makeError("no model is loaded");
  if (sizes.empty())
    return Status::success();
  // On a model with symbolic dims, a name that is none of them is a typo, not a no-op. A fully
  // static model ignores sizes, so scripts may pass the same --dim to every model they run.
  std::set<std::string> symbols;
  for (const Value* in : m_snapshots.front().graph->inputs())
    for (const Dim& d : in->type().dims)
      if (d.isSymbol())
        symbols.insert(d.symbolName());
  for (const auto& [name, size] : sizes) {
    if (symbols.empty() || symbols.count(name))
      continue;
    std::string known;
    for (const std::string& s : symbols)
      known += (known.empty() ? "" : ", ") + s;
    return makeError("the model's inputs have no symbolic dim '", name,
                     "' (their symbolic dims: ", known, ")");
  }
  std::unique_ptr<Graph> bound = m_snapshots.front().graph->clone();
  FB_TRY(specializeDims(*bound, sizes));
  m_snapshots.clear();
  Snapshot first;
  first.graph = std::shared_ptr<const Graph>(std::move(bound));
  m_snapshots.push_back(std::move(first));
  m_current = 0;
  ++m_generation;
  return Status::success();
}

Status Session::runPipeline() {
  if (!hasModel())
    return makeError("no model is loaded");
  PipelineResult result = PassManager(m_pmOptions).run(m_snapshots.front().graph->clone(),
                                                       m_pipeline);
  // Snapshot 0 stays the session's own (the pass manager ran on a copy of it).
  result.snapshots.front() = m_snapshots.front();
  m_snapshots = std::move(result.snapshots);
  m_current = m_snapshots.size() - 1;
  ++m_generation;
  m_reproducerPath = result.reproducerPath;
  if (result.error)
    return *result.error;
  return Status::success();
}

Status Session::runToEnd() {
  while (canStep()) {
    auto r = step();
    if (!r.ok())
      return r.error();
  }
  return Status::success();
}

bool Session::back() {
  if (!canBack())
    return false;
  --m_current;
  return true;
}

bool Session::forward() {
  if (!canForward())
    return false;
  ++m_current;
  return true;
}

void Session::dropHistory() {
  if (!hasModel())
    return;
  Snapshot kept = std::move(m_snapshots[m_current]);
  m_snapshots.clear();
  m_snapshots.push_back(std::move(kept));
  m_pipeline.clear();
  m_current = 0;
  ++m_generation;
  m_schedules.prune({m_snapshots.front().graph});
}

void Session::reset() {
  if (!hasModel())
    return;
  m_snapshots.resize(1);
  m_current = 0;
  ++m_generation;
}

void Session::select(size_t index) {
  if (index < m_snapshots.size())
    m_current = index;
}

SnapshotSummary Session::summary(size_t index) const {
  const Snapshot& snap = m_snapshots.at(index);
  SnapshotSummary s;
  s.index = index;
  s.stats = snapshotStats(snap);
  if (snap.record) {
    s.label = snap.record->step;
    s.summary = describeRecord(*snap.record);
    s.passMilliseconds = snap.record->milliseconds;
    s.changed = snap.record->changed;
  } else {
    s.label = "imported";
    s.changed = true;
  }
  return s;
}

GraphDiff Session::structuralDiff(size_t a, size_t b) const {
  return diffGraphs(*m_snapshots.at(a).graph, *m_snapshots.at(b).graph);
}

std::vector<NodeId> Session::changedByStep(size_t index) const {
  if (index == 0 || index >= m_snapshots.size())
    return {};
  return changedNodeIds(structuralDiff(index - 1, index));
}

std::string Session::textDiff(size_t a, size_t b) const {
  UnifiedDiffOptions opts;
  opts.labelA = "snapshot " + std::to_string(a);
  opts.labelB = "snapshot " + std::to_string(b);
  return unifiedDiff(printGraph(*m_snapshots.at(a).graph), printGraph(*m_snapshots.at(b).graph),
                     opts);
}

Expected<NumericDiff> Session::numericDiff(size_t a, size_t b, uint64_t seed) const {
  if (a >= m_snapshots.size() || b >= m_snapshots.size())
    return makeError("no snapshot ", std::max(a, b));
  NumericDiffJob job;
  job.generation = m_generation;
  job.a = a;
  job.b = b;
  job.graphA = m_snapshots[a].graph;
  job.graphB = m_snapshots[b].graph;
  job.seed = seed;
  return runNumericDiffJob(job);
}

std::optional<size_t> Session::snapshotWithNode(NodeId id, size_t before) const {
  if (m_snapshots.empty())
    return std::nullopt;
  for (size_t i = std::min(before, m_snapshots.size() - 1) + 1; i-- > 0;)
    if (m_snapshots[i].graph->findNode(id))
      return i;
  return std::nullopt;
}

const std::vector<cg::ScheduleOverride>& Session::scheduleOverrides(size_t index) const {
  static const std::vector<cg::ScheduleOverride> kNone;
  return index < m_snapshots.size() ? m_schedules.overrides(m_snapshots[index].graph) : kNone;
}

void Session::setScheduleOverrides(size_t index, std::vector<cg::ScheduleOverride> overrides) {
  if (index >= m_snapshots.size())
    return;
  // Snapshots dropped since (a new model, an edited pipeline) take their overrides with them.
  std::vector<std::shared_ptr<const Graph>> alive;
  for (const Snapshot& s : m_snapshots)
    alive.push_back(s.graph);
  m_schedules.prune(alive);
  m_schedules.setOverrides(m_snapshots[index].graph, std::move(overrides));
}

std::string Session::scheduleText(size_t index) const {
  return cg::printScheduleOverrides(scheduleOverrides(index));
}

} // namespace fb::workbench
