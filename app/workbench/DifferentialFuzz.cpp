// Differential fuzzing: each random graph's reference outputs come from the interpreter on the
// unoptimized graph; every level's pipeline result runs on every backend and is compared.
#include "app/workbench/DifferentialFuzz.h"
#include "app/workbench/Compare.h"
#include "app/workbench/Run.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"
#include "passes/PassManager.h"

#include <chrono>
#include <filesystem>
#include <sstream>

namespace fb::workbench {

namespace {

/// The discard reasons a report keeps (the count keeps going).
constexpr size_t kDiscardReasonsKept = 10;

/// Every backend this machine can run, for an empty FuzzSettings::backends.
std::vector<Backend> availableBackends() {
  std::vector<Backend> all;
  for (Backend b : {Backend::Interpreter, Backend::Cpu, Backend::Gpu})
    if (backendAvailable(b).ok())
      all.push_back(b);
  return all;
}

/// The first line of a message without the node's id ("#9 (QLinearConv): ..." becomes
/// "QLinearConv: ..."), for grouping refusals.
std::string firstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.rfind("#", 0) == 0 && line.find(" (") != std::string::npos) {
    size_t open = line.find(" ("), close = line.find(')', open);
    if (close != std::string::npos)
      line = line.substr(open + 2, close - open - 2) + line.substr(close + 1);
  }
  return line.size() > 160 ? line.substr(0, 157) + "..." : line;
}

/// The worst failing output of a comparison, in words.
std::string mismatchMessage(const OutputComparisons& cmp) {
  for (const OutputComparison& o : cmp.outputs) {
    if (o.result.ok)
      continue;
    std::ostringstream os;
    os << "output '" << o.name << "': max abs " << o.result.maxAbs << ", max rel "
       << o.result.maxRel << ", cosine " << o.result.cosine;
    if (!o.result.reason.empty())
      os << " (" << o.result.reason << ")";
    return os.str();
  }
  return "outputs differ";
}

/// Writes the unoptimized graph and its inputs for a finding; returns the files written.
Expected<std::vector<std::string>> writeReproducer(const std::string& dir, const FuzzFinding& f,
                                                   const Graph& graph,
                                                   const std::vector<Tensor>& inputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return makeError(dir, ": cannot create the fuzz output folder: ", ec.message());
  std::string stem = (std::filesystem::path(dir) /
                      ("fuzz-s" + std::to_string(f.seed) + "-" + f.level + "-" + f.backend))
                         .string();
  std::vector<std::string> files = {stem + ".fbir"};
  FB_TRY(saveModel(graph, files[0]));
  for (size_t i = 0; i < inputs.size(); ++i) {
    files.push_back(stem + ".in" + std::to_string(i) + ".npy");
    FB_TRY(writeNpy(files.back(), inputs[i]));
  }
  return files;
}

/// Checks one graph on every level and backend, adding to `report`.
class GraphCheck {
public:
  GraphCheck(const FuzzSettings& settings, const std::vector<Backend>& backends,
             const std::function<void(const FuzzFinding&)>& onFinding, FuzzReport& report)
      : m_settings(settings), m_backends(backends), m_onFinding(onFinding), m_report(report) {}

  Status run(const Graph& graph, uint64_t seed, const JobControl* job) {
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, makeRandomInputs(graph, seed));
    auto reference = interpret(graph, inputs);
    if (!reference.ok()) {
      // The verifier accepted a graph the interpreter cannot run: a finding in itself.
      return addFinding(seed, "O0", "interp", FindingKind::Error,
                        "interpreter on the unoptimized graph: " + reference.error().message(),
                        graph, inputs);
    }
    PassManagerOptions pmOptions; // verify after every pass
    for (const std::string& level : m_settings.levels) {
      if (job)
        FB_TRY(job->checkCancelled("fuzzing"));
      FB_ASSIGN_OR_RETURN(std::vector<PipelineStep> steps, namedPipeline(level));
      PipelineResult piped = PassManager(pmOptions).run(graph.clone(), steps);
      if (piped.error) {
        if (piped.error->isUnsupported()) {
          ++m_report.configs[level + "/passes"].refused;
          ++m_report.refusals[firstLine(piped.error->message())];
          continue;
        }
        FB_TRY(addFinding(seed, level, "passes", FindingKind::Error, piped.error->message(),
                          graph, inputs));
        continue;
      }
      const Graph& optimized = piped.finalGraph();
      for (Backend backend : m_backends)
        FB_TRY(runOne(graph, optimized, inputs, reference->outputs, seed, level, backend));
    }
    return Status::success();
  }

private:
  Status runOne(const Graph& graph, const Graph& optimized, const std::vector<Tensor>& inputs,
                const std::vector<Tensor>& reference, uint64_t seed, const std::string& level,
                Backend backend) {
    std::string config = level + "/" + backendName(backend);
    FuzzConfigStats& stats = m_report.configs[config];
    RunSettings run;
    run.backend = backend;
    run.compile = m_settings.compile;
    run.compile.useCache = false; // thousands of one-off kernels would only fill the cache
    auto got = runGraph(optimized, inputs, run);
    if (!got.ok()) {
      if (got.error().isUnsupported()) {
        ++stats.refused;
        ++m_report.refusals[firstLine(got.error().message())];
        return Status::success();
      }
      ++stats.runs;
      return addFinding(seed, level, backendName(backend), FindingKind::Error,
                        got.error().message(), graph, inputs);
    }
    ++stats.runs;
    auto cmp = compareOutputs(graph, reference, got->outputs, m_settings.tolerance);
    if (!cmp.ok())
      return addFinding(seed, level, backendName(backend), FindingKind::Error,
                        "comparison: " + cmp.error().message(), graph, inputs);
    if (!cmp->ok)
      return addFinding(seed, level, backendName(backend), FindingKind::Mismatch,
                        mismatchMessage(*cmp), graph, inputs);
    return Status::success();
  }

  Status addFinding(uint64_t seed, const std::string& level, const std::string& backend,
                    FindingKind kind, const std::string& message, const Graph& graph,
                    const std::vector<Tensor>& inputs) {
    FuzzFinding f;
    f.seed = seed;
    f.level = level;
    f.backend = backend;
    f.kind = kind;
    f.message = message;
    if (!m_settings.outputDir.empty()) {
      FB_ASSIGN_OR_RETURN(f.files, writeReproducer(m_settings.outputDir, f, graph, inputs));
    }
    ++m_report.configs[level + "/" + backend].findings;
    if (m_onFinding)
      m_onFinding(f);
    m_report.findings.push_back(std::move(f));
    return Status::success();
  }

  const FuzzSettings& m_settings;
  const std::vector<Backend>& m_backends;
  const std::function<void(const FuzzFinding&)>& m_onFinding;
  FuzzReport& m_report;
};

} // namespace

std::string FuzzFinding::str() const {
  std::string s = "seed " + std::to_string(seed) + " " + level + "/" + backend + " " +
                  (kind == FindingKind::Mismatch ? "mismatch" : "error") + ": " +
                  message.substr(0, message.find('\n'));
  if (!files.empty())
    s += " [" + files.front() + "]";
  return s;
}

int64_t FuzzReport::count(FindingKind kind) const {
  int64_t n = 0;
  for (const FuzzFinding& f : findings)
    n += f.kind == kind;
  return n;
}

Expected<FuzzReport> fuzzDifferential(const FuzzSettings& settings,
                                      const std::function<void(const FuzzFinding&)>& onFinding,
                                      const JobControl* job) {
  if (settings.graphs < 0)
    return makeError("fuzzing: the number of graphs must not be negative, got ", settings.graphs);
  for (const std::string& level : settings.levels)
    FB_TRY(namedPipeline(level));
  std::vector<Backend> backends = settings.backends.empty() ? availableBackends()
                                                            : settings.backends;
  for (Backend b : backends)
    if (Status st = backendAvailable(b); !st.ok())
      return makeUnsupported("fuzzing: backend '", backendName(b),
                             "' cannot run here: ", st.error().message());
  auto start = std::chrono::steady_clock::now();
  FuzzReport report;
  GraphCheck check(settings, backends, onFinding, report);
  for (int64_t i = 0; i < settings.graphs; ++i) {
    uint64_t seed = settings.seed + uint64_t(i);
    if (job) {
      FB_TRY(job->checkCancelled("fuzzing"));
      job->report(double(i) / double(settings.graphs), "graph " + std::to_string(i + 1));
    }
    auto drawn = generateRandomGraph(seed, settings.generator);
    if (!drawn.ok()) {
      report.discards += settings.generator.maxAttempts;
      if (report.discardReasons.size() < kDiscardReasonsKept)
        report.discardReasons.push_back(drawn.error().message());
      continue;
    }
    report.discards += drawn->discards;
    for (const std::string& r : drawn->discardReasons)
      if (report.discardReasons.size() < kDiscardReasonsKept)
        report.discardReasons.push_back("seed " + std::to_string(seed) + ": " + r);
    for (const auto& [op, n] : drawn->opCounts)
      report.opCounts[op] += n;
    ++report.graphs;
    FB_TRY(check.run(*drawn->graph, seed, job));
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace fb::workbench
