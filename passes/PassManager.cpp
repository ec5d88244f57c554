// Pass manager: copy, run, verify, snapshot, time, and write reproducers on failure.
#include "passes/PassManager.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "core/text/IrPrinter.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace fb {

namespace {

int64_t countNodes(const Graph& g) { return int64_t(g.numNodes()); }

std::optional<double> maxAbsDiff(const Graph& before, const Graph& after, uint64_t seed) {
  auto inputs = makeRandomInputs(before, seed);
  if (!inputs.ok())
    return std::nullopt;
  auto a = interpret(before, *inputs);
  auto b = interpret(after, *inputs);
  if (!a.ok() || !b.ok() || a->outputs.size() != b->outputs.size())
    return std::nullopt;
  double worst = 0;
  for (size_t i = 0; i < a->outputs.size(); ++i) {
    const Tensor& x = a->outputs[i];
    const Tensor& y = b->outputs[i];
    if (x.numElements() != y.numElements())
      return std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < x.numElements(); ++k) {
      double d = std::fabs(x.getAsDouble(k) - y.getAsDouble(k));
      if (std::isnan(d))
        d = std::numeric_limits<double>::infinity();
      worst = std::max(worst, d);
    }
  }
  return worst;
}

/// Writes every line of `text` as a `//` comment, so multi-line error messages keep the file
/// parseable.
void writeComment(std::ostream& out, const std::string& label, const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    out << "// " << (first ? label : std::string(label.size(), ' ')) << line << "\n";
    first = false;
  }
  if (first)
    out << "// " << label << "\n";
}

std::string pipelineString(const std::vector<PipelineStep>& steps) {
  std::string s;
  for (const PipelineStep& st : steps)
    s += (s.empty() ? "" : ",") + st.str();
  return s;
}

/// Writes the graph the failing pass received, with the pipeline and the error as `//` comments
/// (which the text IR parser skips), so `fusebox-opt FILE --passes STEP` reproduces the failure.
std::string writeReproducer(const std::string& dir, const Graph& input,
                            const std::vector<PipelineStep>& steps, size_t failed,
                            const Error& error) {
  const PipelineStep& step = steps[failed];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path =
      (std::filesystem::path(dir) / ("reproducer-" + step.passName + ".fbir")).string();
  std::ofstream out(path);
  if (!out)
    return "";
  PrintOptions opts;
  opts.withResourceData = true;
  out << "// Reproducer: pass '" << step.str() << "' (step " << failed + 1 << " of "
      << steps.size() << ") failed on this graph, which is its input.\n";
  writeComment(out, "pipeline: ", pipelineString(steps));
  writeComment(out, "error: ", error.message());
  out << "// RUN: fusebox-opt %s --passes '" << step.str() << "'\n";
  out << printGraph(input, opts);
  out.flush();
  return out ? path : "";
}

} // namespace

std::string describeRecord(const PassRecord& r) {
  std::ostringstream os;
  os << r.pass << ": ";
  if (!r.summary.empty()) {
    os << r.summary;
  } else if (!r.statistics.empty()) {
    bool first = true;
    for (const auto& [k, v] : r.statistics) {
      os << (first ? "" : ", ") << k << " " << v;
      first = false;
    }
  } else {
    os << (r.changed ? "changed" : "no change");
  }
  int64_t delta = r.nodesAfter - r.nodesBefore;
  if (delta != 0)
    os << "; " << (delta > 0 ? "+" : "") << delta << " nodes";
  if (r.rewriteLimitHit)
    os << "; stopped after " << r.rewrites << (r.rewrites == 1 ? " rewrite" : " rewrites")
       << " (rewrite limit)";
  return os.str();
}

Expected<Snapshot> PassManager::applyStep(const Graph& current, const PipelineStep& step,
                                          std::optional<int64_t> rewriteLimit) const {
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, createPass(step.passName));
  return applyPass(current, *pass, step, rewriteLimit);
}

Expected<Snapshot> PassManager::applyPass(const Graph& current, Pass& pass,
                                          const PipelineStep& step,
                                          std::optional<int64_t> rewriteLimit) const {
  const std::string name = step.passName.empty() ? pass.name() : step.passName;
  // The pass works on a copy: on failure the copy is dropped and `current` stays as it was.
  // Steps from parsePipeline are already checked; steps built in code are checked here, before
  // the graph is copied.
  FB_TRY(validateStep(step, pass));
  std::unique_ptr<Graph> work = current.clone();
  PassContext ctx(withDeclaredDefaults(pass.options(), step.options));
  ctx.setRewriteLimit(rewriteLimit);
  PassRecord record;
  record.pass = name;
  record.step = step.passName.empty() ? name + step.options.str() : step.str();
  record.nodesBefore = countNodes(current);
  record.analysis = pass.isAnalysis();
  auto start = std::chrono::steady_clock::now();
  int runs = 0;
  bool changedAny = false;
  const int maxRuns = pass.runToFixedPoint() ? std::max(1, m_options.maxFixedPointIterations) : 1;
  while (runs < maxRuns) {
    ++runs;
    auto changed = pass.run(*work, ctx);
    if (!changed.ok())
      return changed.error().withContext("pass '" + name + "'");
    if (!*changed)
      break;
    changedAny = true;
    // Every later rewrite would be refused too: another iteration cannot change anything.
    if (ctx.rewriteRefused())
      break;
  }
  record.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  record.iterations = runs;
  // Refinement is part of every pass's contract: types downstream of what the pass made static
  // become as precise as inference can make them (and never less precise).
  if (Status refined = refineShapes(*work); !refined.ok())
    return refined.error().withContext("refining types after pass '" + name + "'");
  // Node names stay unique (exports must load in ONNX Runtime), whatever names a pass copied.
  work->makeNodeNamesUnique();
  if (m_options.verifyEach) {
    // Refinement has just set every type to what inference computes, so the verifier checks
    // the structure only (its type check would clone and infer the whole graph again).
    VerifyOptions structure;
    structure.checkTypes = false;
    Status st = verify(*work, structure);
    if (!st.ok())
      return st.error().withContext("verifier after pass '" + name + "'");
  }
  record.changed = changedAny;
  record.statistics = ctx.statistics();
  record.summary = ctx.summary();
  record.events = ctx.events();
  record.rewrites = ctx.rewrites();
  record.rewriteLimit = rewriteLimit;
  record.rewriteLimitHit = ctx.rewriteRefused();
  record.nodesAfter = countNodes(*work);
  if (m_options.numericCheck)
    record.numericMaxAbs = maxAbsDiff(current, *work, m_options.numericSeed);
  Snapshot snap;
  snap.graph = std::shared_ptr<const Graph>(std::move(work));
  snap.record = std::move(record);
  return snap;
}

PipelineResult PassManager::run(std::unique_ptr<Graph> input,
                                const std::vector<PipelineStep>& steps) const {
  PipelineResult result;
  result.snapshots.push_back(Snapshot{std::shared_ptr<const Graph>(std::move(input)), {}});
  int64_t applied = 0;
  // The rewrite limit applies to the last application that runs.
  int64_t lastApplication = 0;
  for (const PipelineStep& step : steps)
    lastApplication += m_options.disabled.count(step.passName) ? 0 : 1;
  if (m_options.passLimit)
    lastApplication = std::min(lastApplication, *m_options.passLimit);
  for (size_t k = 0; k < steps.size(); ++k) {
    const PipelineStep& step = steps[k];
    if (m_options.disabled.count(step.passName))
      continue;
    if (m_options.passLimit && applied >= *m_options.passLimit)
      break;
    const Graph& current = *result.snapshots.back().graph;
    ++applied;
    auto snap = applyStep(current, step,
                          applied == lastApplication ? m_options.rewriteLimit : std::nullopt);
    if (!snap.ok()) {
      result.error = snap.error();
      if (!m_options.reproducerDir.empty())
        result.reproducerPath = writeReproducer(m_options.reproducerDir, current, steps, k, snap.error());
      break;
    }
    if (snap->record->analysis && !snap->record->changed) {
      // Nothing changed: share the previous graph and its cached analyses instead of a copy.
      snap->graph = result.snapshots.back().graph;
      snap->analyses = result.snapshots.back().analyses;
    }
    result.snapshots.push_back(std::move(snap).value());
    if (m_options.afterPass)
      m_options.afterPass(result.snapshots.back());
  }
  return result;
}

} // namespace fb
