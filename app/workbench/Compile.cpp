// Compiling a snapshot: typed settings to codegen options, and the compile call itself.
#include "app/workbench/Compile.h"
#include "app/workbench/TuningLog.h"
#include "codegen/gpu/CudaDriver.h"
#include "codegen/llvm/KernelCache.h"

#include <cstdio>
#include <sstream>

namespace fb::workbench {

const char* backendName(Backend backend) {
  switch (backend) {
  case Backend::Interpreter: return "interp";
  case Backend::Cpu: return "cpu";
  case Backend::Gpu: return "gpu";
  }
  __builtin_unreachable();
}

std::optional<Backend> backendFromName(const std::string& name) {
  for (Backend b : {Backend::Interpreter, Backend::Cpu, Backend::Gpu})
    if (name == backendName(b))
      return b;
  return std::nullopt;
}

Status backendAvailable(Backend backend) {
  switch (backend) {
  case Backend::Interpreter:
  case Backend::Cpu: return Status::success();
  case Backend::Gpu:
    return cg::gpu::cudaAvailable();
  }
  __builtin_unreachable();
}

std::string defaultGpuArch() {
  auto driver = cg::gpu::cudaDriver();
  if (!driver.ok() || (*driver)->deviceCount() < 1)
    return "sm_80";
  auto info = (*driver)->deviceInfo(0);
  if (!info.ok())
    return "sm_80";
  std::string arch = info->smName();
  return cg::TargetInfo::forGpu(arch).ok() ? arch : "sm_90";
}

Expected<cg::TargetInfo> targetFor(const CompileSettings& settings) {
  if (settings.forGpu)
    return cg::TargetInfo::forGpu(settings.gpu.empty() ? defaultGpuArch() : settings.gpu);
  if (settings.cpu.empty() || settings.cpu == "host")
    return cg::TargetInfo::host();
  return cg::TargetInfo::forCpu(settings.cpu);
}

Expected<cg::CompileOptions> compileOptionsFor(const CompileSettings& settings,
                                                const std::vector<Tensor>& inputs) {
  cg::CompileOptions co;
  FB_ASSIGN_OR_RETURN(co.target, targetFor(settings));
  co.llvmOptLevel = settings.llvmOptLevel;
  co.threads = settings.threads;
  co.adaptiveThreads = settings.adaptiveThreads;
  co.lower.scheduleOverrides = settings.schedule;
  co.emit.useGemm = settings.useGemm;
  co.lower.gemmSpecs = settings.useGemm;
  co.useCache = settings.useCache;
  co.dims = settings.dims;
  for (const Tensor& t : inputs)
    co.inputSizes.push_back(t.sizes());
  co.specializeInputs = inputs;
  return co;
}

Expected<std::shared_ptr<cg::CompiledModel>> compileGraph(const Graph& graph,
                                                          const CompileSettings& settings,
                                                          const std::vector<Tensor>& inputs,
                                                          const JobControl* job) {
  FB_TRY(checkCancelled(job, "compilation"));
  // The tuning log's schedules for matching kernels, under the explicit overrides.
  CompileSettings tuned = settings;
  tuned.schedule = scheduleWithTuningLog(graph, settings, inputs);
  const bool fromLog = tuned.schedule.size() != settings.schedule.size();
  FB_ASSIGN_OR_RETURN(cg::CompileOptions co, compileOptionsFor(tuned, inputs));
  // Compiled kernels persist across sessions and runs (FUSEBOX_KERNEL_CACHE=off disables).
  cg::KernelCache::global().setDirectory(cg::KernelCache::defaultDirectory());
  if (job) {
    co.cancel = job->cancelFlag();
    co.progress = [job](const std::string& stage, double fraction) {
      job->report(fraction, "compile: " + stage);
    };
  }
  auto compiled = cg::CompiledModel::compile(graph, co);
  if (!compiled.ok() && fromLog && !(job && job->cancelled())) {
    // A log entry this build cannot apply (a log from another version) must not stop a
    // compilation: compile without the log.
    co.lower.scheduleOverrides = settings.schedule;
    compiled = cg::CompiledModel::compile(graph, co);
  }
  FB_ASSIGN_OR_RETURN(std::unique_ptr<cg::CompiledModel> model, std::move(compiled));
  reportProgress(job, 1.0, "compiled");
  return std::shared_ptr<cg::CompiledModel>(std::move(model));
}

std::string compileSummary(const cg::CompileStats& s) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line,
                "compiled %d kernels (%d gemm, %d distinct) in %.1f ms (lower %.1f, emit %.1f, "
                "jit %.1f [optimize %.1f + codegen %.1f cpu-ms]; %d from cache); arena %lld "
                "bytes%s\n",
                s.kernels, s.gemmKernels, s.distinctKernels, s.totalMs, s.lowerMs, s.emitMs,
                s.jitMs, s.optimizeMs, s.codegenMs, s.cacheHits, (long long)s.arenaBytes,
                s.memoryPlanUsed ? "" : " (no memory plan)");
  os << line;
  for (const std::string& n : s.notes)
    os << "note: " << n << "\n";
  return os.str();
}

} // namespace fb::workbench
