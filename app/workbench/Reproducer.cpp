// Reproducer files: writing, reading and replaying them.
#include "app/workbench/Reproducer.h"
#include "app/workbench/HeaderLines.h"
#include "app/workbench/Inputs.h"
#include "core/FileRead.h"
#include "core/Npy.h"
#include "core/Verifier.h"
#include "core/text/IrParser.h"

#include <cassert>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

namespace fb::workbench {

namespace {

/// The first line of every reproducer, so a replay of some other .fbir says what is missing.
constexpr const char* kSignature = "// fusebox reproducer, version 1";

std::string shortest(double x) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(x);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? sep : "") + parts[i];
  return s;
}

std::vector<std::string> splitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ','))
    if (!cur.empty())
      out.push_back(cur);
  return out;
}

Expected<double> parseNumber(const std::string& s) {
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(x >= 0))
    return makeError("expected a non-negative number, got '", s, "'");
  return x;
}

/// Sets exactly `faults` on for its lifetime and restores the previous set.
class ExactFaults {
public:
  explicit ExactFaults(const std::vector<Fault>& faults) : m_previous(enabledFaults()) {
    disableAllFaults();
    for (Fault f : faults)
      setFaultEnabled(f, true);
  }
  ~ExactFaults() {
    disableAllFaults();
    for (Fault f : m_previous)
      setFaultEnabled(f, true);
  }
  ExactFaults(const ExactFaults&) = delete;
  ExactFaults& operator=(const ExactFaults&) = delete;

private:
  std::vector<Fault> m_previous;
};

/// Applies one `key: value` header line to `r`.
Status applyHeader(Reproducer& r, const std::string& key, const std::string& value) {
  CompileSettings& c = r.check.run.compile;
  if (key == "pipeline") {
    if (!value.empty()) {
      FB_ASSIGN_OR_RETURN(r.check.pipeline, parsePipeline(value));
    }
  } else if (key == "backend") {
    auto b = backendFromName(value);
    if (!b)
      return makeError("expected interp, cpu or gpu, got '", value, "'");
    r.check.run.backend = *b;
    c.forGpu = *b == Backend::Gpu;
  } else if (key == "cpu") {
    c.cpu = value;
  } else if (key == "gpu") {
    c.gpu = value;
  } else if (key == "llvm-opt") {
    int level = -1;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), level);
    if (ec != std::errc() || p != value.data() + value.size() || level < 0 || level > 3)
      return makeError("expected 0..3, got '", value, "'");
    c.llvmOptLevel = level;
  } else if (key == "threads") {
    int threads = -1;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), threads);
    if (ec != std::errc() || p != value.data() + value.size() || threads < 1 || threads > 1024)
      return makeError("expected 1..1024 worker threads, got '", value, "'");
    c.threads = threads;
  } else if (key == "gemm") {
    if (value != "on" && value != "off")
      return makeError("expected on or off, got '", value, "'");
    c.useGemm = value == "on";
  } else if (key == "schedule") {
    FB_ASSIGN_OR_RETURN(c.schedule, cg::parseScheduleOverrides(value));
  } else if (key == "tolerance") {
    if (value == "default") {
      r.check.tolerance.reset();
    } else {
      std::vector<std::string> parts = splitCommas(value);
      if (parts.size() != 3)
        return makeError("expected 'default' or ATOL,RTOL,STOL, got '", value, "'");
      Tolerance t;
      FB_ASSIGN_OR_RETURN(t.atol, parseNumber(parts[0]));
      FB_ASSIGN_OR_RETURN(t.rtol, parseNumber(parts[1]));
      FB_ASSIGN_OR_RETURN(t.stol, parseNumber(parts[2]));
      r.check.tolerance = t;
    }
  } else if (key == "faults") {
    if (!value.empty() && value != "none") {
      FB_ASSIGN_OR_RETURN(r.faults, parseFaultList({value}));
    }
  } else if (key == "inputs") {
    r.inputFiles = splitCommas(value);
  } else if (key == "origin") {
    r.origin = value;
  }
  return Status::success();
}

} // namespace

std::string pipelineText(const std::vector<PipelineStep>& steps) {
  std::vector<std::string> parts;
  for (const PipelineStep& s : steps)
    parts.push_back(s.str());
  return join(parts, ",");
}

Expected<std::vector<std::string>> writeReproducer(const std::string& path,
                                                   const Reproducer& repro) {
  namespace fs = std::filesystem;
  assert(repro.graph && repro.inputs.size() == repro.graph->inputs().size() &&
         "one input tensor per graph input");
  const fs::path file(path);
  if (file.extension() != ".fbir")
    return makeError(path, ": a reproducer is a .fbir file");
  std::vector<std::string> inputFiles, inputPaths;
  for (size_t i = 0; i < repro.inputs.size(); ++i) {
    std::string name = file.stem().string() + ".in" + std::to_string(i) + ".npy";
    inputPaths.push_back((file.parent_path() / name).string());
    FB_TRY(writeNpy(inputPaths.back(), repro.inputs[i]));
    inputFiles.push_back(name);
  }
  const CompileSettings& c = repro.check.run.compile;
  std::vector<std::string> faultNames;
  for (Fault f : repro.faults)
    faultNames.push_back(faultInfo(f).name);
  std::ostringstream h;
  h << kSignature << "; replay: fusebox-opt --replay " << file.filename().string() << "\n";
  if (!repro.origin.empty())
    h << "// origin: " << repro.origin << "\n";
  h << "// pipeline: " << pipelineText(repro.check.pipeline) << "\n";
  h << "// backend: " << backendName(repro.check.run.backend) << "\n";
  if (!c.cpu.empty())
    h << "// cpu: " << c.cpu << "\n";
  if (!c.gpu.empty())
    h << "// gpu: " << c.gpu << "\n";
  if (c.threads > 0)
    h << "// threads: " << c.threads << "\n";
  h << "// llvm-opt: " << c.llvmOptLevel << "\n";
  h << "// gemm: " << (c.useGemm ? "on" : "off") << "\n";
  const std::string schedule = cg::printScheduleOverrides(c.schedule);
  h << "// schedule:" << (schedule.empty() ? "" : " " + schedule) << "\n";
  if (const auto& t = repro.check.tolerance)
    h << "// tolerance: " << shortest(t->atol) << "," << shortest(t->rtol) << ","
      << shortest(t->stol) << "\n";
  else
    h << "// tolerance: default\n";
  h << "// faults: " << (faultNames.empty() ? "none" : join(faultNames, ",")) << "\n";
  h << "// inputs: " << join(inputFiles, ",") << "\n";
  h << "\n";
  FB_TRY(writeHeaderAndGraph(path, h.str(), *repro.graph));
  return inputPaths;
}

Expected<Reproducer> readReproducer(const std::string& path) {
  namespace fs = std::filesystem;
  FB_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "reproducer"));
  Reproducer r;
  const Header header = readHeader(text);
  const bool signed_ = header.firstLine.rfind(kSignature, 0) == 0;
  bool sawInputs = false;
  for (const HeaderLine& h : header.lines) {
    sawInputs = sawInputs || h.key == "inputs";
    Status st = applyHeader(r, h.key, h.value);
    if (!st.ok())
      return makeError(path, ":", h.line, ": ", h.key, ": ", st.error().message());
  }
  if (!signed_)
    return makeError(path, ": not a reproducer (its first line is not '", kSignature,
                     "'; --reduce writes them)");
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, parseGraph(text, path));
  FB_TRY(verify(*graph));
  if (!sawInputs)
    return makeError(path, ": the header has no 'inputs:' line");
  if (r.inputFiles.size() != graph->inputs().size())
    return makeError(path, ": the header names ", r.inputFiles.size(), " input files, the graph has ",
                     graph->inputs().size(), " inputs");
  const fs::path dir = fs::path(path).parent_path();
  for (size_t i = 0; i < r.inputFiles.size(); ++i) {
    fs::path f(r.inputFiles[i]);
    std::string full = f.is_absolute() ? f.string() : (dir / f).string();
    auto t = readInputFile(full);
    if (!t.ok())
      return t.error().withContext(path + ": input " + std::to_string(i));
    if (Status fits = checkInputFits(*graph->inputs()[i], *t, full); !fits.ok())
      return fits.error().withContext(path + ": input " + std::to_string(i));
    r.inputs.push_back(std::move(t).value());
  }
  r.graph = std::shared_ptr<const Graph>(std::move(graph));
  return r;
}

Expected<ReplayReport> replayReproducer(const Reproducer& repro, bool withFaults,
                                        const JobControl* job) {
  const auto start = std::chrono::steady_clock::now();
  ReplayReport report;
  report.faults = withFaults ? repro.faults : std::vector<Fault>{};
  ExactFaults faults(report.faults);
  FB_ASSIGN_OR_RETURN(report.outcome, runFailureCheck(*repro.graph, repro.inputs, repro.check, job));
  if (!report.outcome.error.empty())
    return makeError("replay: the check cannot compare: ", report.outcome.error);
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

} // namespace fb::workbench
