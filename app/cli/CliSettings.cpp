// Flags to typed workbench values.
#include "app/cli/CliSettings.h"
#include "codegen/llvm/Target.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace fb::cli {

Expected<std::vector<PipelineStep>> pipelineFrom(const CliOptions& o) {
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

Expected<workbench::CompileSettings> compileSettingsFrom(const CliOptions& o) {
  workbench::CompileSettings s;
  // --target names a GPU (sm_NN) or, as --cpu does, a CPU.
  if (!o.cpu.empty())
    s.cpu = o.cpu;
  else if (o.target != "host" && o.target.rfind("sm_", 0) != 0)
    s.cpu = o.target;
  if (o.target.rfind("sm_", 0) == 0) {
    s.gpu = o.target;
    auto gpu = cg::TargetInfo::forGpu(o.target);
    if (!gpu.ok())
      return gpu.error().withContext("--target");
  }
  if (!s.cpu.empty()) {
    auto target = workbench::targetFor(s);
    if (!target.ok())
      return target.error(); // "unknown CPU 'x' for x86_64-... (try host, ...)"
  }
  if (o.threads) {
    if (*o.threads < 1 || *o.threads > 1024)
      return makeError("--threads expects 1..1024, got ", *o.threads);
    s.threads = int(*o.threads);
  }
  s.llvmOptLevel = int(o.llvmOpt);
  s.useGemm = !o.noGemm;
  auto schedule = cg::parseScheduleOverrides(o.schedule);
  if (!schedule.ok())
    return schedule.error().withContext("--schedule");
  s.schedule = std::move(schedule).value();
  s.dims = o.dims;
  s.tuningLog = o.tuningLog;
  return s;
}

Expected<workbench::RunSettings> runSettingsFrom(const CliOptions& o) {
  workbench::RunSettings r;
  auto backend = workbench::backendFromName(o.backend);
  if (!backend)
    return makeError("--backend expects interp, cpu or gpu, got '", o.backend, "'");
  if (Status available = workbench::backendAvailable(*backend); !available.ok())
    return makeUnsupported("backend '", o.backend,
                           "' cannot run here: ", available.error().message());
  r.backend = *backend;
  FB_ASSIGN_OR_RETURN(r.compile, compileSettingsFrom(o));
  if (o.bench && *o.bench < 0)
    return makeError("--bench expects a non-negative number of runs");
  r.benchRuns = o.bench.value_or(0);
  r.profile = !o.profile.empty();
  if (r.profile && r.backend == workbench::Backend::Interpreter)
    return makeError("--profile needs --backend cpu or gpu");
  return r;
}

namespace {

std::string guardName(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string(), g;
  for (char c : stem)
    g += std::isalnum(static_cast<unsigned char>(c))
             ? char(std::toupper(static_cast<unsigned char>(c)))
             : '_';
  return "FUSEBOX_" + g + "_H";
}

} // namespace

Expected<workbench::EmitRequest> emitRequestFrom(const CliOptions& o) {
  workbench::EmitRequest r;
  auto kind = workbench::codeKindFromName(o.emit);
  if (!kind)
    return makeError("--emit expects loops, llvm, llvm-raw, asm, obj or ptx, got '", o.emit, "'");
  r.kind = *kind;
  FB_ASSIGN_OR_RETURN(r.settings, compileSettingsFrom(o));
  r.settings.forGpu = r.kind == workbench::CodeKind::Ptx || !r.settings.gpu.empty();
  r.moduleName = std::filesystem::path(o.model).stem().string();
  if (r.kind == workbench::CodeKind::Object) {
    if (o.outputFile.empty())
      return makeError("--emit obj needs -o FILE.o (the header goes next to it as FILE.h)");
    r.headerGuard = guardName(o.outputFile);
    r.weightsFileName =
        std::filesystem::path(o.outputFile).replace_extension(".weights").filename().string();
  }
  return r;
}

Expected<std::optional<Tolerance>> toleranceFrom(const CliOptions& o) {
  const std::string& spec = o.tolerance;
  if (spec.empty())
    return std::optional<Tolerance>();
  Tolerance t;
  size_t comma = spec.find(',');
  char* end = nullptr;
  std::string a = spec.substr(0, comma);
  t.atol = std::strtod(a.c_str(), &end);
  if (a.empty() || *end != '\0' || !(t.atol >= 0) || !std::isfinite(t.atol))
    return makeError("--tolerance expects A[,R[,S]] with non-negative numbers, got '", spec, "'");
  t.rtol = 0;
  t.stol = 0;
  // R and S follow A: "1e-4", "1e-4,1e-3", "1e-4,1e-3,1e-5".
  double* more[] = {&t.rtol, &t.stol};
  size_t at = comma;
  for (double* field : more) {
    if (at == std::string::npos)
      break;
    size_t next = spec.find(',', at + 1);
    std::string r = spec.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    *field = std::strtod(r.c_str(), &end);
    if (r.empty() || *end != '\0' || !(*field >= 0) || !std::isfinite(*field))
      return makeError("--tolerance expects A[,R[,S]] with non-negative numbers, got '", spec, "'");
    at = next;
  }
  if (at != std::string::npos)
    return makeError("--tolerance expects A[,R[,S]] with non-negative numbers, got '", spec, "'");
  return std::optional<Tolerance>(t);
}

Expected<std::pair<size_t, size_t>> snapshotPairFrom(const std::string& flag,
                                                     const std::string& spec, size_t count) {
  size_t comma = spec.find(',');
  if (comma == std::string::npos)
    return makeError(flag, " expects I,J (snapshot indices), got '", spec, "'");
  char* end = nullptr;
  std::string a = spec.substr(0, comma), b = spec.substr(comma + 1);
  long i = std::strtol(a.c_str(), &end, 10);
  bool okA = !a.empty() && *end == '\0';
  long j = std::strtol(b.c_str(), &end, 10);
  bool okB = !b.empty() && *end == '\0';
  if (!okA || !okB || i < 0 || j < 0)
    return makeError(flag, " expects I,J (snapshot indices), got '", spec, "'");
  if (size_t(i) >= count || size_t(j) >= count)
    return makeError(flag, " ", spec, ": this pipeline has snapshots 0..", count - 1);
  return std::make_pair(size_t(i), size_t(j));
}

} // namespace fb::cli
