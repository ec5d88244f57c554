// JobControl: progress and cancellation of a long workbench operation (compile, run, bench,
// profile), shared by the thread that runs it and the one that watches it.
#pragma once

#include "core/Error.h"

#include <atomic>
#include <functional>
#include <string>

namespace fb::workbench {

/// Handed to a long operation. The GUI keeps it to cancel from the GUI thread and to receive
/// progress (the callback runs on the worker thread: post it to the GUI thread yourself); the
/// CLI passes none. Operations check cancelled() between units of work (stages, kernels, runs)
/// and then return an error saying they were cancelled.
class JobControl {
public:
  using ProgressFn = std::function<void(double fraction, const std::string& what)>;

  JobControl() = default;
  explicit JobControl(ProgressFn onProgress) : m_onProgress(std::move(onProgress)) {}
  JobControl(const JobControl&) = delete;
  JobControl& operator=(const JobControl&) = delete;

  /// Asks the operation to stop at its next check (any thread).
  void cancel() { m_cancelled.store(true); }
  bool cancelled() const { return m_cancelled.load(); }
  /// The flag itself, for libraries below the workbench that take a `const atomic<bool>*`.
  const std::atomic<bool>* cancelFlag() const { return &m_cancelled; }

  /// Reports that `fraction` (0..1) of the work is done and what is being done now.
  void report(double fraction, const std::string& what) const {
    if (m_onProgress)
      m_onProgress(fraction, what);
  }
  /// An error naming `operation` when cancel() was called, success otherwise.
  Status checkCancelled(const std::string& operation) const {
    if (cancelled())
      return makeError(operation, " cancelled");
    return Status::success();
  }

private:
  std::atomic<bool> m_cancelled{false};
  ProgressFn m_onProgress;
};

/// Reports through `job` when there is one.
inline void reportProgress(const JobControl* job, double fraction, const std::string& what) {
  if (job)
    job->report(fraction, what);
}

/// Fails when `job` was cancelled.
inline Status checkCancelled(const JobControl* job, const std::string& operation) {
  return job ? job->checkCancelled(operation) : Status::success();
}

} // namespace fb::workbench
