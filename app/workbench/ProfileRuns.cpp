// Alternating profiles of compiled models.
#include "app/workbench/ProfileRuns.h"

#include <algorithm>

namespace fb::workbench {

Expected<std::vector<cg::Profile>> profileAlternating(const std::vector<ProfileTarget>& targets,
                                                     int runs, int warmupRuns,
                                                     const JobControl* job) {
  if (runs < 1)
    return makeError("a profile needs at least one run, got ", runs);
  std::vector<cg::Profile> profiles;
  for (const ProfileTarget& t : targets) {
    assert(t.model && "profileAlternating needs compiled models");
    profiles.push_back(t.model->newProfile());
  }
  // Warm-up: caches, page faults, the worker threads.
  for (int w = 0; w < warmupRuns; ++w)
    for (const ProfileTarget& t : targets) {
      FB_TRY(checkCancelled(job, "profile"));
      FB_ASSIGN_OR_RETURN(std::vector<Tensor> out, t.model->run(t.inputs));
    }
  for (int r = 0; r < runs; ++r) {
    reportProgress(job, double(r) / double(runs),
                   "run " + std::to_string(r + 1) + " of " + std::to_string(runs));
    for (size_t i = 0; i < targets.size(); ++i) {
      FB_TRY(checkCancelled(job, "profile"));
      FB_ASSIGN_OR_RETURN(std::vector<Tensor> out, targets[i].model->run(targets[i].inputs, &profiles[i]));
    }
  }
  reportProgress(job, 1.0, "profiled");
  return profiles;
}

double medianRunMs(const cg::Profile& profile) {
  std::vector<double> ms;
  for (const auto& [start, duration] : profile.runs)
    ms.push_back(duration / 1000.0);
  if (ms.empty())
    return 0;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

} // namespace fb::workbench
