// The fusebox-opt driver: a thin front end over the workbench. Flags become typed values
// (CliSettings.h), the Session loads the model and runs the pipeline, the workbench's
// operations run, compare, emit and measure, and this file prints what they return.
#include "app/cli/OptDriver.h"
#include "app/cli/CliSettings.h"
#include "app/cli/DebugReports.h"
#include "app/cli/FuzzReports.h"
#include "app/cli/MemoryReports.h"
#include "app/cli/PipelineReports.h"
#include "app/cli/ReduceReports.h"
#include "app/cli/Reports.h"
#include "app/cli/TuneReports.h"
#include "app/workbench/Bisect.h"
#include "app/workbench/Compare.h"
#include "app/workbench/DifferentialFuzz.h"
#include "app/workbench/Emit.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/Reduce.h"
#include "app/workbench/Reproducer.h"
#include "app/workbench/Run.h"
#include "app/workbench/Session.h"
#include "app/workbench/Tuning.h"
#include "app/workbench/TuningLog.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "core/Faults.h"
#include "core/Graph.h"
#include "core/GraphDiff.h"
#include "core/ModelIO.h"
#include "core/Npy.h"
#include "core/text/IrPrinter.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fb::cli {

namespace {

std::string sanitizeFileName(const std::string& name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return s.empty() ? "output" : s;
}

Status writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    return makeError(path, ": cannot open for writing");
  f << text;
  if (!f)
    return makeError(path, ": write failed");
  return Status::success();
}

/// " (bind symbolic dims first, e.g. --dim N=1)": how to bind the first symbolic input dim.
std::string dimHint(const Graph& g) {
  for (const Value* in : g.inputs())
    for (const Dim& d : in->type().dims)
      if (!d.isStatic())
        return " (bind symbolic dims first, e.g. --dim " + d.str() + "=1)";
  return " (bind symbolic dims first with --dim NAME=SIZE)";
}

class Driver {
public:
  Driver(const CliOptions& o, std::ostream& out, std::ostream& err) : m_o(o), m_out(out), m_err(err) {}

  int run() {
    // Faults are process-wide switches read by passes and codegen: set them before anything
    // runs (and before --list-faults, which shows them on).
    auto faults = parseFaultList(m_o.injectFaults);
    if (!faults.ok())
      return fail(faults.error().withContext("--inject-fault"), 2);
    for (Fault f : *faults)
      setFaultEnabled(f, true);
    if (m_o.listFaults) {
      if (m_o.json) {
        JsonWriter w;
        w.beginObject();
        writeFaultListJson(w);
        w.endObject();
        m_out << w.str() << "\n";
      } else {
        m_out << faultListText();
      }
      return 0;
    }
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
    if (!m_o.replay.empty())
      return replay();
    if (m_o.withoutFaults)
      return fail(Error("--without-faults goes with --replay FILE.fbir"), 2);
    if (m_o.fuzz)
      return fuzzAndReport();
    if (m_o.model.empty()) {
      m_err << "error: no model given (usage: fusebox-opt MODEL [options]; see --help)\n";
      return 2;
    }
    // Every flag is parsed and checked before the model is read.
    auto settings = runSettingsFrom(m_o);
    if (!settings.ok())
      return fail(settings.error(), 2);
    m_settings = std::move(settings).value();
    auto steps = pipelineFrom(m_o);
    if (!steps.ok())
      return fail(steps.error(), 2);
    auto tolerance = toleranceFrom(m_o);
    if (!tolerance.ok())
      return fail(tolerance.error(), 2);
    m_tolerance = *tolerance;

    if (m_o.tune && m_o.backendGiven && m_settings.backend != workbench::Backend::Cpu)
      return fail(Error("--tune measures the cpu backend: use --backend cpu"), 2);
    warnAboutTuningLog();

    Status loaded = m_session.load(m_o.model);
    if (!loaded.ok())
      return fail(loaded.error());
    // --dim N=4 binds symbolic input dims before the pipeline, so passes that need static shapes
    // (plan-memory, the cpu backend) run on a dynamic-batch model.
    Status bound = m_session.bindDims(m_o.dims);
    if (!bound.ok())
      return fail(bound.error());
    m_session.setPipelineSteps(std::move(steps).value());
    configurePassManager(m_session.passManagerOptions());
    Status ran = m_session.runPipeline();
    if (!ran.ok()) {
      Error e = ran.error();
      std::string message = e.message();
      if (e.kind() == ErrorKind::SymbolicShape)
        message += dimHint(*m_session.graph(0));
      if (!m_session.reproducerPath().empty())
        message += " (reproducer written to " + m_session.reproducerPath() + ")";
      return fail(Error(message, e.kind()));
    }
    if (!needsHistory())
      m_session.dropHistory();
    const std::vector<Snapshot>& snapshots = m_session.snapshots();
    const Graph& result = *snapshots.back().graph;

    JsonWriter json;
    json.beginObject();
    bool reported = false;
    int exitCode = 0;

    if (m_o.stats) {
      const ModelStats& s = m_session.summary(snapshots.size() - 1).stats;
      if (m_o.json)
        writeStatsJson(json, s);
      else
        m_out << statsText(m_o.model, s);
      reported = true;
    }
    if (m_o.memoryPlan) {
      const MemoryPlan& plan = snapshotMemoryPlan(snapshots.back());
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
        writeTimingJson(json, snapshots);
      else
        m_err << timingText(snapshots);
    }
    if (!m_o.diff.empty()) {
      auto ij = snapshotPairFrom("--diff", m_o.diff, snapshots.size());
      if (!ij.ok())
        return fail(ij.error(), 2);
      const Graph& a = *snapshots[ij->first].graph;
      const Graph& b = *snapshots[ij->second].graph;
      GraphDiff d = m_session.structuralDiff(ij->first, ij->second);
      if (m_o.json)
        writeDiffJson(json, a, b, d);
      else
        m_out << diffText(a, b, d, ij->first, ij->second);
      reported = true;
    }
    if (!m_o.numericDiff.empty()) {
      auto ij = snapshotPairFrom("--numeric-diff", m_o.numericDiff, snapshots.size());
      if (!ij.ok())
        return fail(ij.error(), 2);
      const Graph& a = *snapshots[ij->first].graph;
      const Graph& b = *snapshots[ij->second].graph;
      auto inputs = inputsFor(a);
      if (!inputs.ok())
        return fail(inputs.error());
      auto nd = workbench::numericDiffGraphs(a, b, *inputs, m_tolerance);
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
    if (m_o.bisect) {
      auto code = bisectAndReport(json);
      if (!code.ok())
        return fail(code.error());
      exitCode = std::max(exitCode, *code);
      reported = true;
    }
    if (!m_o.reduce.empty()) {
      auto code = reduceAndReport(json);
      if (!code.ok()) {
        Error e = code.error();
        if (e.kind() == ErrorKind::SymbolicShape)
          return fail(Error(e.message() + dimHint(*m_session.graph(0)), e.kind()));
        return fail(e);
      }
      exitCode = std::max(exitCode, *code);
      reported = true;
    }
    if (m_o.tune) {
      // Before --run/--bench, so that they run with what the tuning found.
      Status tuned = tuneAndReport(result, json);
      if (!tuned.ok())
        return fail(tuned.error());
      reported = true;
    }
    if (m_o.run || m_o.compare || m_o.bench || !m_o.profile.empty()) {
      auto code = runAndReport(result, json);
      if (!code.ok())
        return fail(code.error());
      exitCode = std::max(exitCode, *code);
      reported = true;
    }
    if (!m_o.emit.empty()) {
      Status st = emit(result);
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

  void configurePassManager(PassManagerOptions& pm) {
    pm.passLimit = m_o.passLimit;
    pm.rewriteLimit = m_o.rewriteLimit;
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
  }

  /// Whether a report of this command reads a snapshot other than the pipeline's result (the
  /// imported model, or one per pass). Without one, the history is dropped after the pipeline
  /// so that weights a pass replaced do not stay in memory beside the compiled copy.
  bool needsHistory() const {
    return m_o.compare || !m_o.diff.empty() || !m_o.numericDiff.empty() || m_o.bisect ||
           !m_o.reduce.empty() || !m_o.replay.empty() || m_o.timing || m_o.printAfterAll ||
           m_o.printAfterChange || m_o.fuzz.has_value();
  }

  Expected<std::vector<Tensor>> inputsFor(const Graph& g) {
    auto inputs = workbench::gatherInputs(g, m_o.inputs, m_o.seed.value_or(0), m_o.dims);
    if (!inputs.ok() && !m_o.inputs.empty())
      return inputs.error().withContext("--inputs");
    return inputs;
  }

  /// --fuzz N: draws N random graphs and checks each on every -O level and backend through the
  /// workbench, printing one line per finding as it happens and the summary. Exit 1 on findings.
  int fuzzAndReport() {
    if (!m_o.model.empty())
      return fail(Error("--fuzz draws its own graphs: give no MODEL"), 2);
    workbench::FuzzSettings fuzz;
    fuzz.graphs = *m_o.fuzz;
    fuzz.seed = m_o.seed.value_or(0);
    fuzz.outputDir = m_o.fuzzOut;
    auto compile = compileSettingsFrom(m_o);
    if (!compile.ok())
      return fail(compile.error(), 2);
    fuzz.compile = *compile;
    auto tolerance = toleranceFrom(m_o);
    if (!tolerance.ok())
      return fail(tolerance.error(), 2);
    fuzz.tolerance = *tolerance;
    if (m_o.backendGiven) {
      auto backend = workbench::backendFromName(m_o.backend);
      if (!backend)
        return fail(makeError("--backend expects interp, cpu or gpu, got '", m_o.backend, "'"), 2);
      // The interpreter on the optimized graph tells a pass bug from a codegen bug.
      fuzz.backends = {workbench::Backend::Interpreter};
      if (*backend != workbench::Backend::Interpreter)
        fuzz.backends.push_back(*backend);
    }
    auto report = workbench::fuzzDifferential(fuzz, [this](const workbench::FuzzFinding& f) {
      if (!m_o.json)
        m_out << f.str() << std::endl;
    });
    if (!report.ok())
      return fail(report.error(), report.error().isUnsupported() ? 2 : 1);
    if (m_o.json) {
      JsonWriter w;
      w.beginObject();
      writeFuzzJson(w, *report, fuzz.seed);
      w.endObject();
      m_out << w.str() << "\n";
    } else {
      m_out << fuzzSummaryText(*report, fuzz.seed);
    }
    return report->findings.empty() ? 0 : 1;
  }

  /// A tuning log that cannot be read is ignored by every compilation: say so once, naming the
  /// file and the problem (--tune refuses to overwrite it instead).
  void warnAboutTuningLog() {
    if (m_o.tune)
      return;
    const std::string path = workbench::tuningLogPath(m_settings.compile.tuningLog);
    if (path.empty())
      return;
    if (auto log = workbench::readTuningLog(path); !log.ok())
      m_err << "warning: " << log.error().message() << " (ignored)\n";
  }

  /// --tune: tunes the resulting graph's kernels on this CPU through the workbench, writes the
  /// tuning log and prints the report.
  Status tuneAndReport(const Graph& result, JsonWriter& json) {
    workbench::TuneRequest request;
    request.settings = m_settings.compile;
    request.budgetSeconds = m_o.tuneBudget.value_or(60.0);
    request.seed = m_o.seed.value_or(1);
    request.tolerance = m_tolerance;
    request.modelName = std::filesystem::path(m_o.model).filename().string();
    FB_ASSIGN_OR_RETURN(workbench::TuneReport report, workbench::tuneGraph(result, request));
    if (m_o.json)
      writeTuneJson(json, report);
    else
      m_out << tuneText(report);
    return Status::success();
  }

  /// --bisect: bisects the session's snapshots on --backend through the workbench and prints
  /// the report. Returns the exit code (1: a mismatch was found).
  Expected<int> bisectAndReport(JsonWriter& json) {
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, inputsFor(*m_session.graph(0)));
    workbench::BisectSettings settings;
    settings.run = m_settings;
    settings.tolerance = m_tolerance;
    FB_ASSIGN_OR_RETURN(workbench::BisectReport report,
                        workbench::bisectSnapshots(m_session.snapshots(), inputs, settings));
    if (m_o.json)
      writeBisectJson(json, report, m_o.backend);
    else
      m_out << bisectText(report, m_o.backend, reproduceCommand(report));
    return report.mismatch ? 1 : 0;
  }

  /// --reduce FILE: reduces the imported model under the pass applications that ran (their
  /// steps as recorded, so --disable-pass and --pass-limit count), on --backend at --tolerance,
  /// writes the reproducer and prints the report. Returns the exit code: 1, the reproducer
  /// fails, as the model did.
  Expected<int> reduceAndReport(JsonWriter& json) {
    if (std::filesystem::path(m_o.reduce).extension() != ".fbir")
      return makeError("--reduce expects a .fbir file name, got '", m_o.reduce, "'");
    if (m_o.rewriteLimit)
      return makeError("--reduce cannot keep --rewrite-limit (a reproducer holds whole pass "
                       "applications): reduce the pipeline without it");
    workbench::ReduceSettings settings;
    for (const Snapshot& s : m_session.snapshots()) {
      if (!s.record)
        continue;
      FB_ASSIGN_OR_RETURN(std::vector<PipelineStep> step, parsePipeline(s.record->step));
      settings.check.pipeline.insert(settings.check.pipeline.end(), step.begin(), step.end());
    }
    settings.check.run = m_settings;
    settings.check.tolerance = m_tolerance;
    const Graph& model = *m_session.graph(0);
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, inputsFor(model));
    FB_ASSIGN_OR_RETURN(workbench::ReduceReport report,
                        workbench::reduceFailure(model, inputs, settings));
    workbench::Reproducer repro;
    repro.graph = report.reduced;
    repro.inputs = report.inputs;
    repro.check = settings.check;
    repro.faults = enabledFaults();
    repro.origin = "reduced from " + std::filesystem::path(m_o.model).filename().string() + ": " +
                   std::to_string(report.nodesBefore) + " -> " +
                   std::to_string(report.nodesAfter) + " nodes";
    FB_ASSIGN_OR_RETURN(std::vector<std::string> inputFiles,
                        workbench::writeReproducer(m_o.reduce, repro));
    if (m_o.json)
      writeReduceJson(json, report, m_o.backend, m_o.reduce, inputFiles);
    else
      m_out << reduceText(report, m_o.backend, m_o.reduce, inputFiles);
    return 1;
  }

  /// --replay FILE: reads the reproducer and re-runs its check with its faults (none with
  /// --without-faults) and any --inject-fault on. Exit 1 when it still fails, 0 when it passes.
  int replay() {
    if (!m_o.model.empty())
      return fail(Error("--replay takes no MODEL (the reproducer holds the graph), got '" +
                        m_o.model + "'"),
                  2);
    auto repro = workbench::readReproducer(m_o.replay);
    if (!repro.ok())
      return fail(repro.error());
    std::vector<Fault> faults = m_o.withoutFaults ? std::vector<Fault>{} : repro->faults;
    for (Fault f : enabledFaults()) // --inject-fault on the command line adds to them
      if (std::find(faults.begin(), faults.end(), f) == faults.end())
        faults.push_back(f);
    repro->faults = faults;
    auto report = workbench::replayReproducer(*repro);
    if (!report.ok())
      return fail(report.error().withContext(m_o.replay));
    if (m_o.json) {
      JsonWriter w;
      w.beginObject();
      writeReplayJson(w, m_o.replay, *repro, *report);
      w.endObject();
      m_out << w.str() << "\n";
    } else {
      m_out << replayText(m_o.replay, *repro, *report);
    }
    return report->outcome.mismatch ? 1 : 0;
  }

  /// The fusebox-opt command that stops the pipeline in the failing state and compares it.
  std::string reproduceCommand(const workbench::BisectReport& r) const {
    if (!r.mismatch)
      return {};
    std::string cmd = "fusebox-opt " + m_o.model;
    if (!m_session.pipeline().empty())
      cmd += " -p '" + m_session.pipelineString() + "'";
    for (const std::string& d : m_o.disabledPasses)
      cmd += " --disable-pass " + d;
    for (const auto& [dim, size] : m_o.dims)
      cmd += " --dim " + dim + "=" + std::to_string(size);
    for (const std::string& f : m_o.injectFaults)
      cmd += " --inject-fault " + f;
    cmd += " --pass-limit " + std::to_string(r.index);
    if (r.rewrite)
      cmd += " --rewrite-limit " + std::to_string(*r.rewrite);
    if (m_o.backend != "interp")
      cmd += " --backend " + m_o.backend;
    if (!m_o.inputs.empty()) {
      cmd += " --inputs ";
      for (size_t i = 0; i < m_o.inputs.size(); ++i)
        cmd += (i ? "," : "") + m_o.inputs[i];
    }
    if (m_o.seed)
      cmd += " --seed " + std::to_string(*m_o.seed);
    if (!m_o.tolerance.empty())
      cmd += " --tolerance " + m_o.tolerance;
    return cmd + " --compare";
  }

  /// --run, --compare, --bench and --profile: runs the resulting graph on --backend through
  /// the workbench and prints what it measured. Returns the exit code (1: a comparison failed).
  Expected<int> runAndReport(const Graph& result, JsonWriter& json) {
    const std::string backend = m_o.backend;
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, inputsFor(result));
    FB_ASSIGN_OR_RETURN(workbench::RunResult run, workbench::runGraph(result, inputs, m_settings));
    if (m_o.timing && run.compileStats)
      m_err << workbench::compileSummary(*run.compileStats);
    int exitCode = 0;
    if (run.profile) {
      if (!writeText(m_o.profile, run.profile->chromeTraceJson() + "\n").ok())
        return makeError(m_o.profile, ": cannot write the profile");
      if (m_o.json)
        writeProfileJson(json, m_o.profile, *run.profile);
    }
    if (m_o.compare) {
      FB_ASSIGN_OR_RETURN(workbench::OutputComparisons cmp,
                          workbench::compareWithReference(*m_session.graph(0), result, inputs,
                                                          run.outputs, m_tolerance));
      if (m_o.json)
        writeCompareJson(json, backend, cmp.outputs, cmp.ok);
      else
        m_out << compareText(backend, cmp.outputs, cmp.ok);
      if (!cmp.ok)
        exitCode = 1;
    } else if (m_o.run) {
      FB_ASSIGN_OR_RETURN(std::vector<RunOutput> outputs, writeOutputs(result, run.outputs));
      if (m_o.json)
        writeRunJson(json, backend, outputs, run.firstRunMs);
      else
        m_out << runText(backend, outputs, run.firstRunMs);
    }
    if (run.bench) {
      if (m_o.json)
        writeBenchJson(json, backend, *run.bench, !m_o.compare && !m_o.run);
      else
        m_out << benchText(backend, *run.bench);
    }
    if (run.profile && !m_o.json)
      m_out << run.profile->tableText() << "profile written to " << m_o.profile << "\n";
    return exitCode;
  }

  Status emit(const Graph& result) {
    FB_ASSIGN_OR_RETURN(workbench::EmitRequest request, emitRequestFrom(m_o));
    FB_ASSIGN_OR_RETURN(workbench::EmittedCode code, workbench::emitCode(result, request));
    if (request.kind == workbench::CodeKind::Object) {
      std::string header =
          std::filesystem::path(m_o.outputFile).replace_extension(".h").string();
      std::string weightsPath =
          std::filesystem::path(m_o.outputFile).replace_extension(".weights").string();
      FB_TRY(cg::writeBinaryFile(m_o.outputFile, code.object));
      FB_TRY(cg::writeBinaryFile(weightsPath, code.weights));
      FB_TRY(writeText(header, code.header));
      m_out << "wrote " << m_o.outputFile << " (" << code.object.size() << " bytes, "
            << code.kernels << " kernels, " << code.cpu << "), " << header << " and "
            << weightsPath << " (" << code.weights.size() << " bytes)\n";
      return Status::success();
    }
    std::string text = code.text;
    if (request.kind == workbench::CodeKind::Llvm || request.kind == workbench::CodeKind::LlvmRaw)
      text = "; fusebox-opt --emit " + m_o.emit + ":" + text.substr(1);
    if (!m_o.outputFile.empty())
      return writeText(m_o.outputFile, text);
    m_out << text;
    return Status::success();
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
  workbench::Session m_session;
  workbench::RunSettings m_settings;
  std::optional<Tolerance> m_tolerance;
};

} // namespace

int runOptDriver(const CliOptions& options, std::ostream& out, std::ostream& err) {
  return Driver(options, out, err).run();
}

} // namespace fb::cli
