// A schedule trial: two compilations of one snapshot, one kernel's code and time from each.
#include "app/workbench/ScheduleTrial.h"

#include "app/workbench/Inputs.h"
#include "app/workbench/KernelSchedule.h"

#include <algorithm>

namespace fb::workbench {

TrialTiming trialTiming(std::vector<double> us) {
  TrialTiming t;
  if (us.empty())
    return t;
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  t.medianUs = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  t.minUs = sorted.front();
  t.maxUs = sorted.back();
  t.us = std::move(us);
  return t;
}

namespace {

/// The index of the kernel an override names (its full name or "kN"), or an error.
Expected<size_t> kernelIndex(const cg::CompiledModel& model, const std::string& name) {
  const std::vector<cg::Kernel>& kernels = model.kernels();
  for (size_t k = 0; k < kernels.size(); ++k)
    if (kernels[k].name == name || "k" + std::to_string(k) == name)
      return k;
  return makeError("schedule trial: no kernel is named ", name);
}

Status runOnce(cg::CompiledModel& model, const std::vector<Tensor>& inputs,
               cg::Profile* profile = nullptr) {
  auto outputs = model.run(inputs, profile);
  return outputs.ok() ? Status::success() : Status(outputs.error());
}

std::vector<double> kernelTimes(const cg::Profile& profile, size_t kernel) {
  std::vector<double> us;
  for (const cg::KernelEvent& e : profile.events)
    if (size_t(e.kernel) == kernel)
      us.push_back(e.durationUs);
  return us;
}

} // namespace

Expected<std::vector<TrialTiming>> timeKernels(cg::CompiledModel& model,
                                               const std::vector<Tensor>& inputs, int runs,
                                               int warmupRuns, const JobControl* job) {
  for (int w = 0; w < warmupRuns; ++w)
    FB_TRY(runOnce(model, inputs));
  cg::Profile profile = model.newProfile();
  for (int r = 0; r < std::max(1, runs); ++r) {
    FB_TRY(checkCancelled(job, "timing the kernels"));
    FB_TRY(runOnce(model, inputs, &profile));
  }
  std::vector<TrialTiming> timings;
  for (size_t k = 0; k < model.kernels().size(); ++k)
    timings.push_back(trialTiming(kernelTimes(profile, k)));
  return timings;
}

Expected<ScheduleTrial> trySchedule(const Graph& graph, const ScheduleTrialRequest& request,
                                    const JobControl* job) {
  if (request.change.kernel.empty() || request.change.kernel == "*")
    return makeError("schedule trial: name one kernel");
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                      gatherInputs(graph, {}, request.seed, request.settings.dims));
  CompileSettings beforeSettings = request.settings;
  beforeSettings.adaptiveThreads = false; // every sample of both schedules on the pool
  CompileSettings afterSettings = beforeSettings;
  afterSettings.schedule = withOverride(request.settings.schedule, request.change);

  reportProgress(job, 0.0, "compile the current schedule");
  FB_ASSIGN_OR_RETURN(std::shared_ptr<cg::CompiledModel> before,
                      compileGraph(graph, beforeSettings, inputs, job));
  reportProgress(job, 0.2, "compile the new schedule");
  FB_ASSIGN_OR_RETURN(std::shared_ptr<cg::CompiledModel> after,
                      compileGraph(graph, afterSettings, inputs, job));
  FB_ASSIGN_OR_RETURN(size_t k, kernelIndex(*before, request.change.kernel));

  ScheduleTrial trial;
  trial.kernel = k;
  trial.afterOverrides = afterSettings.schedule;
  trial.before.schedule = cg::printScheduleOverrides(request.settings.schedule);
  trial.after.schedule = cg::printScheduleOverrides(afterSettings.schedule);
  reportProgress(job, 0.4, "read the kernel's code");
  FB_ASSIGN_OR_RETURN(trial.before.code, before->kernelCode(k));
  FB_ASSIGN_OR_RETURN(trial.after.code, after->kernelCode(k));
  FB_TRY(checkCancelled(job, "schedule trial"));

  trial.before.runnable = before->runnable();
  trial.after.runnable = after->runnable();
  if (!trial.before.runnable || !trial.after.runnable)
    return trial; // code for another CPU: readable, not timed

  // Alternate the two models run by run, so a change in the machine's load (another process,
  // the clock) falls on both alike.
  for (int w = 0; w < request.warmupRuns; ++w) {
    FB_TRY(runOnce(*before, inputs));
    FB_TRY(runOnce(*after, inputs));
  }
  cg::Profile beforeProfile = before->newProfile(), afterProfile = after->newProfile();
  const int runs = std::max(1, request.runs);
  for (int r = 0; r < runs; ++r) {
    FB_TRY(checkCancelled(job, "schedule trial"));
    reportProgress(job, 0.5 + 0.5 * r / runs, "time run " + std::to_string(r + 1) + " of " +
                                                  std::to_string(runs));
    FB_TRY(runOnce(*before, inputs, &beforeProfile));
    FB_TRY(runOnce(*after, inputs, &afterProfile));
  }
  trial.before.timing = trialTiming(kernelTimes(beforeProfile, k));
  trial.after.timing = trialTiming(kernelTimes(afterProfile, k));
  reportProgress(job, 1.0, "timed");
  return trial;
}

} // namespace fb::workbench
