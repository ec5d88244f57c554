// Running a snapshot: the interpreter or a compiled model, once, benchmarked or profiled.
#include "app/workbench/Run.h"
#include "codegen/runtime/RuntimeAbi.h"
#include "core/Interpreter.h"

#include <algorithm>
#include <chrono>

namespace fb::workbench {

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// "run 3 of 20" as a fraction of a job whose first `base` is already done.
void reportRun(const JobControl* job, int64_t done, int64_t total, double base) {
  if (total > 0)
    reportProgress(job, base + (1.0 - base) * double(done) / double(total),
                   "run " + std::to_string(done) + " of " + std::to_string(total));
}

Expected<RunResult> runInterpreter(const Graph& graph, const std::vector<Tensor>& inputs,
                                   const RunSettings& settings, const JobControl* job) {
  RunResult result;
  auto t0 = Clock::now();
  FB_ASSIGN_OR_RETURN(InterpretResult first, interpret(graph, inputs));
  result.firstRunMs = msBetween(t0, Clock::now());
  result.outputs = std::move(first.outputs);
  if (settings.benchRuns > 0) {
    std::vector<double> times;
    for (int64_t r = 0; r < settings.benchRuns; ++r) {
      FB_TRY(checkCancelled(job, "benchmark"));
      reportRun(job, r, settings.benchRuns, 0.0);
      auto t = Clock::now();
      FB_ASSIGN_OR_RETURN(InterpretResult again, interpret(graph, inputs));
      times.push_back(msBetween(t, Clock::now()));
    }
    result.bench = benchStats(times, 0, 1);
  }
  return result;
}

} // namespace

BenchStats benchStats(std::vector<double> timesMs, double compileMs, int threads) {
  BenchStats s;
  s.runs = int(timesMs.size());
  s.compileMs = compileMs;
  s.threads = threads;
  if (timesMs.empty())
    return s;
  std::sort(timesMs.begin(), timesMs.end());
  size_t n = timesMs.size();
  s.medianMs = n % 2 ? timesMs[n / 2] : 0.5 * (timesMs[n / 2 - 1] + timesMs[n / 2]);
  s.minMs = timesMs.front();
  s.maxMs = timesMs.back();
  double sum = 0;
  for (double t : timesMs)
    sum += t;
  s.meanMs = sum / double(n);
  return s;
}

Expected<RunResult> runCompiled(std::shared_ptr<cg::CompiledModel> model,
                                const std::vector<Tensor>& inputs, const RunSettings& settings,
                                const JobControl* job) {
  assert(model && "runCompiled needs a compiled model");
  RunResult result;
  result.compileStats = model->stats();
  result.compileMs = model->stats().totalMs;
  FB_TRY(checkCancelled(job, "run"));
  auto r0 = Clock::now();
  FB_ASSIGN_OR_RETURN(result.outputs, model->run(inputs));
  result.firstRunMs = msBetween(r0, Clock::now());
  cg::Profile profile = model->newProfile();
  cg::Profile* profiling = settings.profile ? &profile : nullptr;
  if (settings.benchRuns > 0) {
    for (int w = 0; w < settings.warmupRuns; ++w) { // caches, page faults, worker threads
      FB_TRY(checkCancelled(job, "benchmark"));
      FB_ASSIGN_OR_RETURN(std::vector<Tensor> warm, model->run(inputs));
    }
    std::vector<double> times;
    for (int64_t r = 0; r < settings.benchRuns; ++r) {
      FB_TRY(checkCancelled(job, "benchmark"));
      reportRun(job, r, settings.benchRuns, 0.5);
      auto t0 = Clock::now();
      FB_ASSIGN_OR_RETURN(std::vector<Tensor> out, model->run(inputs, profiling));
      times.push_back(msBetween(t0, Clock::now()));
    }
    result.bench = benchStats(times, result.compileMs, fb_get_num_threads());
  } else if (profiling) {
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> out, model->run(inputs, profiling));
  }
  if (profiling)
    result.profile = std::move(profile);
  result.compiled = std::move(model);
  reportProgress(job, 1.0, "done");
  return result;
}

Expected<RunResult> runGraph(const Graph& graph, const std::vector<Tensor>& inputs,
                             const RunSettings& settings, const JobControl* job) {
  FB_TRY(backendAvailable(settings.backend));
  if (settings.benchRuns < 0)
    return makeError("a benchmark needs a non-negative number of runs, got ",
                     settings.benchRuns);
  switch (settings.backend) {
  case Backend::Interpreter:
    if (settings.profile)
      return makeError("profiles are per compiled kernel: choose the cpu or gpu backend");
    return runInterpreter(graph, inputs, settings, job);
  case Backend::Cpu:
  case Backend::Gpu: {
    auto c0 = Clock::now();
    CompileSettings compile = settings.compile;
    compile.forGpu = settings.backend == Backend::Gpu;
    FB_ASSIGN_OR_RETURN(std::shared_ptr<cg::CompiledModel> model,
                        compileGraph(graph, compile, inputs, job));
    double compileMs = msBetween(c0, Clock::now());
    FB_ASSIGN_OR_RETURN(RunResult result, runCompiled(std::move(model), inputs, settings, job));
    result.compileMs = compileMs;
    if (result.bench)
      result.bench->compileMs = compileMs;
    return result;
  }
  }
  return makeUnsupported("backend ", backendName(settings.backend), " cannot run here");
}

} // namespace fb::workbench
