// The fusebox-opt driver: load, run the pipeline, report, run, write.
#include "app/cli/OptDriver.h"
#include "app/cli/CpuBackend.h"
#include "app/cli/MemoryReports.h"
#include "app/cli/PipelineReports.h"
#include "app/cli/Reports.h"
#include "core/Cost.h"
#include "core/GraphDiff.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"
#include "core/onnx/OnnxImport.h"
#include "core/text/IrPrinter.h"
#include "core/ShapeInference.h"
#include "passes/PassManager.h"

#include <chrono>
#include <filesystem>
#include <fstream>

namespace fb::cli {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Options of later issues that this build does not carry out yet.
std::vector<std::string> unavailableOptions(const CliOptions& o) {
  std::vector<std::string> names;
  if (o.bisect)
    names.push_back("--bisect");
  if (!o.reduce.empty())
    names.push_back("--reduce");
  if (!o.replay.empty())
    names.push_back("--replay");
  if (!o.injectFault.empty())
    names.push_back("--inject-fault");
  if (o.listFaults)
    names.push_back("--list-faults");
  if (o.fuzz)
    names.push_back("--fuzz");
  return names;
}

Expected<Tensor> readInputFile(const std::string& path) {
  if (endsWith(path, ".npy"))
    return readNpy(path);
  if (endsWith(path, ".pb"))
    return readOnnxTensorFile(path);
  return makeError(path, ": unknown input format (expected .npy or .pb)");
}

Expected<std::vector<Tensor>> gatherInputs(const Graph& g, const CliOptions& o) {
  if (!o.inputs.empty()) {
    if (o.inputs.size() != g.inputs().size())
      return makeError("--inputs gives ", o.inputs.size(), " files but the model takes ",
                       g.inputs().size(), " inputs");
    std::vector<Tensor> ins;
    for (const std::string& path : o.inputs) {
      FB_ASSIGN_OR_RETURN(Tensor t, readInputFile(path));
      ins.push_back(std::move(t));
    }
    return ins;
  }
  return makeRandomInputs(g, o.seed.value_or(0), o.dims);
}

std::string sanitizeFileName(const std::string& name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return s.empty() ? "output" : s;
}

Expected<std::vector<PipelineStep>> buildPipeline(const CliOptions& o) {
  std::vector<PipelineStep> steps;
  if (!o.optLevel.empty()) {
    FB_ASSIGN_OR_RETURN(steps, namedPipeline(o.optLevel));
  }
  for (const std::string& p : o.passes) {
    FB_ASSIGN_OR_RETURN(std::vector<PipelineStep> more, parsePipeline(p));
    steps.insert(steps.end(), more.begin(), more.end());
  }
  return steps;
}

Expected<std::pair<size_t, size_t>> parseDiffIndices(const std::string& spec, size_t count) {
  size_t comma = spec.find(',');
  if (comma == std::string::npos)
    return makeError("--diff expects I,J (snapshot indices), got '", spec, "'");
  char* end = nullptr;
  std::string a = spec.substr(0, comma), b = spec.substr(comma + 1);
  long i = std::strtol(a.c_str(), &end, 10);
  bool okA = !a.empty() && *end == '\0';
  long j = std::strtol(b.c_str(), &end, 10);
  bool okB = !b.empty() && *end == '\0';
  if (!okA || !okB || i < 0 || j < 0)
    return makeError("--diff expects I,J (snapshot indices), got '", spec, "'");
  if (size_t(i) >= count || size_t(j) >= count)
    return makeError("--diff ", spec, ": this pipeline has snapshots 0..", count - 1);
  return std::make_pair(size_t(i), size_t(j));
}

Expected<std::optional<Tolerance>> parseTolerance(const std::string& spec) {
  if (spec.empty())
    return std::optional<Tolerance>();
  Tolerance t;
  size_t comma = spec.find(',');
  char* end = nullptr;
  std::string a = spec.substr(0, comma);
  t.atol = std::strtod(a.c_str(), &end);
  if (a.empty() || *end != '\0' || t.atol < 0)
    return makeError("--tolerance expects A[,R] with non-negative numbers, got '", spec, "'");
  t.rtol = 0;
  if (comma != std::string::npos) {
    std::string r = spec.substr(comma + 1);
    t.rtol = std::strtod(r.c_str(), &end);
    if (r.empty() || *end != '\0' || t.rtol < 0)
      return makeError("--tolerance expects A[,R] with non-negative numbers, got '", spec, "'");
  }
  return std::optional<Tolerance>(t);
}

/// Runs a graph on the interpreter and times it.
Expected<std::pair<std::vector<Tensor>, double>> runInterp(const Graph& g,
                                                          const std::vector<Tensor>& inputs) {
  auto start = std::chrono::steady_clock::now();
  FB_ASSIGN_OR_RETURN(InterpretResult r, interpret(g, inputs));
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return std::make_pair(std::move(r.outputs), ms);
}

class Driver {
public:
  Driver(const CliOptions& o, std::ostream& out, std::ostream& err) : m_o(o), m_out(out), m_err(err) {}

  int run() {
    if (m_o.listPasses) {
      if (m_o.json) {
        JsonWriter w;
        w.beginObject();
        writePassListJson(w);
        w.endObject();
        m_out << w.str() << "\n";
      } else {
        m_out << passListText();
      }
      return 0;
    }
    std::vector<std::string> unavailable = unavailableOptions(m_o);
    if (!unavailable.empty()) {
      std::string list;
      for (const auto& n : unavailable)
        list += (list.empty() ? "" : ", ") + n;
      m_err << "error: not available in this build yet: " << list << "\n";
      return 2;
    }
    if (m_o.model.empty()) {
      m_err << "error: no model given (usage: fusebox-opt MODEL [options]; see --help)\n";
      return 2;
    }
    if (m_o.backend != "interp" && m_o.backend != "cpu") {
      m_err << "error: backend '" << m_o.backend
            << "' is not available in this build (use interp or cpu)\n";
      return 2;
    }
    if (!m_o.profile.empty() && m_o.backend != "cpu") {
      m_err << "error: --profile needs --backend cpu\n";
      return 2;
    }
    auto steps = buildPipeline(m_o);
    if (!steps.ok())
      return fail(steps.error(), 2);
    auto tolerance = parseTolerance(m_o.tolerance);
    if (!tolerance.ok())
      return fail(tolerance.error(), 2);

    auto loaded = loadModel(m_o.model);
    if (!loaded.ok())
      return fail(loaded.error());
    // --dim N=4 binds symbolic input dims before the pipeline, so passes that need static shapes
    // (plan-memory, the cpu backend) run on a dynamic-batch model.
    if (!m_o.dims.empty()) {
      Status bound = specializeDims(**loaded, m_o.dims);
      if (!bound.ok())
        return fail(bound.error());
    }

    PipelineResult pipeline = runPipeline(std::move(loaded).value(), *steps);
    if (pipeline.error) {
      std::string msg = pipeline.error->message();
      if (!pipeline.reproducerPath.empty())
        msg += " (reproducer written to " + pipeline.reproducerPath + ")";
      return fail(Error(msg));
    }
    const Graph& result = pipeline.finalGraph();

    JsonWriter json;
    json.beginObject();
    bool reported = false;
    int exitCode = 0;

    if (m_o.stats) {
      const ModelStats& s = snapshotStats(pipeline.snapshots.back());
      if (m_o.json)
        writeStatsJson(json, s);
      else
        m_out << statsText(m_o.model, s);
      reported = true;
    }
    if (m_o.memoryPlan) {
      const MemoryPlan& plan = snapshotMemoryPlan(pipeline.snapshots.back());
      if (!plan.error.empty())
        return fail(Error(plan.error));
      if (m_o.json)
        writeMemoryPlanJson(json, plan);
      else
        m_out << memoryPlanText(plan);
      reported = true;
    }
    if (m_o.timing) {
      if (m_o.json)
        writeTimingJson(json, pipeline.snapshots);
      else
        m_err << timingText(pipeline.snapshots);
    }
    if (!m_o.diff.empty()) {
      auto ij = parseDiffIndices(m_o.diff, pipeline.snapshots.size());
      if (!ij.ok())
        return fail(ij.error(), 2);
      const Graph& a = *pipeline.snapshots[ij->first].graph;
      const Graph& b = *pipeline.snapshots[ij->second].graph;
      GraphDiff d = diffGraphs(a, b);
      if (m_o.json)
        writeDiffJson(json, a, b, d);
      else
        m_out << diffText(a, b, d, ij->first, ij->second);
      reported = true;
    }
    if (!m_o.numericDiff.empty()) {
      auto ij = parseDiffIndices(m_o.numericDiff, pipeline.snapshots.size());
      if (!ij.ok())
        return fail(ij.error(), 2);
      const Graph& a = *pipeline.snapshots[ij->first].graph;
      const Graph& b = *pipeline.snapshots[ij->second].graph;
      auto inputs = gatherInputs(a, m_o);
      if (!inputs.ok())
        return fail(inputs.error());
      Tolerance tol = tolerance->value_or(defaultTolerance(DType::F32));
      auto nd = numericDiff(a, b, *inputs, tol.atol, tol.rtol);
      if (!nd.ok())
        return fail(nd.error());
      if (m_o.json)
        writeNumericDiffJson(json, b, *nd);
      else
        m_out << numericDiffText(b, *nd, ij->first, ij->second);
      if (!nd->ok())
        exitCode = 1;
      reported = true;
    }
    if (m_o.run || m_o.compare || m_o.bench || !m_o.profile.empty()) {
      auto inputs = gatherInputs(result, m_o);
      if (!inputs.ok())
        return fail(inputs.error());
      auto got = runBackend(result, *inputs, json);
      if (!got.ok())
        return fail(got.error());
      if (m_o.compare) {
        auto ref = runInterp(*pipeline.snapshots.front().graph, *inputs);
        if (!ref.ok())
          return fail(ref.error());
        std::vector<OutputComparison> cmp;
        bool ok = true;
        for (size_t i = 0; i < result.outputs().size(); ++i) {
          const Tensor& r = ref->first[i];
          Tolerance tol = tolerance->value_or(defaultTolerance(r.dtype()));
          cmp.push_back({result.outputs()[i]->name(), compareTensors(r, got->first[i], tol)});
          ok = ok && cmp.back().result.ok;
        }
        if (m_o.json)
          writeCompareJson(json, m_o.backend, cmp, ok);
        else
          m_out << compareText(m_o.backend, cmp, ok);
        if (!ok)
          exitCode = 1;
      } else if (m_o.run) {
        auto outputs = writeOutputs(result, got->first);
        if (!outputs.ok())
          return fail(outputs.error());
        if (m_o.json)
          writeRunJson(json, m_o.backend, *outputs, got->second);
        else
          m_out << runText(m_o.backend, *outputs, got->second);
      }
      if (m_bench) {
        if (m_o.json)
          writeBenchJson(json, m_o.backend, *m_bench, !m_o.compare && !m_o.run);
        else
          m_out << benchText(m_o.backend, *m_bench);
      }
      if (!m_profileTable.empty() && !m_o.json)
        m_out << m_profileTable;
      reported = true;
    }
    if (!m_o.emit.empty()) {
      Status st = emitCode(result, m_o, m_out);
      if (!st.ok())
        return fail(st.error(), st.error().isUnsupported() ? 2 : 1);
      reported = true;
    }
    if (!m_o.outputFile.empty() && m_o.emit.empty()) {
      Status st = saveModel(result, m_o.outputFile);
      if (!st.ok())
        return fail(st.error());
    }
    bool printedAlong = m_o.printAfterAll || m_o.printAfterChange;
    if (m_o.printIr || (!reported && m_o.outputFile.empty() && !printedAlong && !m_o.timing))
      m_out << printGraph(result);
    json.endObject();
    if (m_o.json && json.str() != "{}")
      m_out << json.str() << "\n";
    return exitCode;
  }

private:
  int fail(const Error& e, int code = 1) {
    m_err << "error: " << e.message() << "\n";
    return code;
  }

  /// Runs the resulting graph once on --backend (the outputs and that run's wall time); with
  /// --bench also times N runs after warm-up, and with --profile profiles them (or one run)
  /// and writes the trace. Reports of bench and profile are left in m_bench / m_profileTable.
  Expected<std::pair<std::vector<Tensor>, double>> runBackend(const Graph& g,
                                                             const std::vector<Tensor>& inputs,
                                                             JsonWriter& json) {
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    int64_t benchRuns = m_o.bench.value_or(0);
    if (benchRuns < 0)
      return makeError("--bench expects a non-negative number of runs");
    if (m_o.backend == "interp") {
      FB_ASSIGN_OR_RETURN(auto first, runInterp(g, inputs));
      if (benchRuns > 0) {
        std::vector<double> times;
        for (int64_t r = 0; r < benchRuns; ++r) {
          FB_ASSIGN_OR_RETURN(auto again, runInterp(g, inputs));
          times.push_back(again.second);
        }
        m_bench = benchStats(times, 0, 1);
      }
      return first;
    }
    auto c0 = Clock::now();
    FB_ASSIGN_OR_RETURN(std::unique_ptr<cg::CompiledModel> model, compileForCpu(g, m_o, inputs));
    double compileMs = ms(c0, Clock::now());
    if (m_o.timing)
      m_err << compileSummary(model->stats());
    auto r0 = Clock::now();
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, model->run(inputs));
    double firstMs = ms(r0, Clock::now());
    bool profiling = !m_o.profile.empty();
    cg::Profile profile = model->newProfile();
    if (benchRuns > 0) {
      for (int w = 0; w < 3; ++w) { // warm-up: caches, page faults, worker threads
        auto warm = model->run(inputs);
        if (!warm.ok())
          return warm.error();
      }
      std::vector<double> times;
      for (int64_t r = 0; r < benchRuns; ++r) {
        auto t0 = Clock::now();
        FB_ASSIGN_OR_RETURN(auto out, model->run(inputs, profiling ? &profile : nullptr));
        times.push_back(ms(t0, Clock::now()));
      }
      m_bench = benchStats(times, compileMs, fb_get_num_threads());
    } else if (profiling) {
      FB_ASSIGN_OR_RETURN(auto out, model->run(inputs, &profile));
    }
    if (profiling) {
      std::ofstream f(m_o.profile, std::ios::binary);
      f << profile.chromeTraceJson() << "\n";
      if (!f)
        return makeError(m_o.profile, ": cannot write the profile");
      if (m_o.json) {
        json.key("profile");
        json.beginObject();
        json.field("file", m_o.profile);
        json.key("kernels");
        json.beginArray();
        for (size_t k = 0; k < profile.kernels.size(); ++k) {
          const cg::KernelProfileInfo& info = profile.kernels[k];
          double us = profile.meanUs(int(k));
          json.beginObject();
          json.field("kernel", info.name);
          json.field("op", info.op);
          json.field("generator", info.generator);
          json.field("ms", us / 1000.0);
          json.field("gflops_per_s", us > 0 ? info.flops / us * 1e-3 : 0.0);
          json.field("gb_per_s", us > 0 ? info.bytes / us * 1e-3 : 0.0);
          json.endObject();
        }
        json.endArray();
        json.endObject();
      } else {
        m_profileTable = profile.tableText() + "profile written to " + m_o.profile + "\n";
      }
    }
    return std::make_pair(std::move(outputs), firstMs);
  }

  PipelineResult runPipeline(std::unique_ptr<Graph> graph, const std::vector<PipelineStep>& steps) {
    PassManagerOptions pm;
    pm.passLimit = m_o.passLimit;
    pm.disabled.insert(m_o.disabledPasses.begin(), m_o.disabledPasses.end());
    pm.numericCheck = m_o.numericCheck;
    pm.numericSeed = m_o.seed.value_or(0);
    pm.reproducerDir = m_o.reproducerDir.empty()
                           ? (std::filesystem::temp_directory_path() / "fusebox-reproducers").string()
                           : m_o.reproducerDir;
    if (m_o.printAfterAll || m_o.printAfterChange) {
      pm.afterPass = [this](const Snapshot& s) {
        if (m_o.printAfterChange && !s.record->changed)
          return;
        m_out << "// -----// IR Dump After " << s.record->step << " //----- //\n";
        m_out << "// " << describeRecord(*s.record) << "\n";
        m_out << printGraph(*s.graph) << "\n";
      };
    }
    return PassManager(pm).run(std::move(graph), steps);
  }

  Expected<std::vector<RunOutput>> writeOutputs(const Graph& g, const std::vector<Tensor>& tensors) {
    std::vector<RunOutput> outputs;
    if (!m_o.outputDir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(m_o.outputDir, ec);
      if (ec)
        return makeError(m_o.outputDir, ": cannot create directory: ", ec.message());
    }
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      RunOutput ro{g.outputs()[i]->name(), tensors[i], ""};
      if (!m_o.outputDir.empty()) {
        ro.file =
            (std::filesystem::path(m_o.outputDir) / (sanitizeFileName(ro.name) + ".npy")).string();
        FB_TRY(writeNpy(ro.file, ro.tensor));
      }
      outputs.push_back(std::move(ro));
    }
    return outputs;
  }

  const CliOptions& m_o;
  std::ostream& m_out;
  std::ostream& m_err;
  std::optional<BenchStats> m_bench; // set by runBackend under --bench
  std::string m_profileTable;        // set by runBackend under --profile (text mode)
};

} // namespace

int runOptDriver(const CliOptions& options, std::ostream& out, std::ostream& err) {
  return Driver(options, out, err).run();
}

} // namespace fb::cli
