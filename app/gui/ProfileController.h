// Profiles snapshots off the GUI thread through the workbench: compiles for the CPU, runs with
// per-kernel timing, profiles a second snapshot to compare, and reads (or measures once) the
// machine's roofs. Progress, cancel, and a stale result is dropped.
#pragma once

#include "app/workbench/Compile.h"
#include "app/workbench/Job.h"
#include "app/workbench/MachinePeaks.h"
#include "app/workbench/ProfileReport.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

namespace fb::gui {

/// A snapshot and its profile, as values.
struct ProfiledSnapshot {
  int index = -1;
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const cg::Profile> profile;
  workbench::ProfileSummary summary; ///< summarizeProfile(*profile)
  double compileMs = 0;
  double medianRunMs = 0; ///< of the timed runs (the whole model, not just its kernels)
};

/// What a profiling job reports.
struct ProfileOutcome {
  std::optional<ProfiledSnapshot> main;
  std::optional<ProfiledSnapshot> before; ///< the snapshot compared with, when asked
  std::optional<workbench::ProfileComparison> comparison;
  std::optional<workbench::MachinePeaks> peaks;
  QString peaksError;   ///< why there are no roofs (the profile itself may be fine)
  QString compareError; ///< why the compared snapshot has no profile (the main one is fine)
  QString error;
  bool cancelled = false;
};

/// How to profile.
struct ProfileRequest {
  int runs = 10;     ///< timed runs whose kernel times are averaged
  int threads = 0;   ///< compile threads (0: the runtime's default)
  /// Where the machine's peaks are cached; empty: measured every time and not kept.
  std::string peaksCachePath = workbench::defaultMachinePeaksPath();
  bool peaks = true; ///< read or measure the roofs
  /// Cpu, or Gpu: compiled to PTX and timed on the CUDA device, its roofs from the device's
  /// attributes (app/workbench/GpuPeaks.h).
  workbench::Backend backend = workbench::Backend::Cpu;
};

/// One profiling job at a time; a new request cancels the running one and its result is dropped.
class ProfileController : public QObject {
  Q_OBJECT
public:
  explicit ProfileController(QObject* parent = nullptr);
  ~ProfileController() override;

  /// Profiles `graph` (snapshot `index`) and, with `before`, snapshot `beforeIndex` too, on
  /// seeded random inputs.
  void profile(std::shared_ptr<const Graph> graph, int index,
               std::shared_ptr<const Graph> before, int beforeIndex, const ProfileRequest& request);
  /// Measures the machine's peaks again at the last profile's thread count (the cached ones
  /// were measured on a busy machine, say) and reports the last profile under the new roofs.
  void remeasurePeaks(const ProfileRequest& request);
  void cancel();
  bool isRunning() const { return m_watcher.isRunning(); }
  const ProfileOutcome& lastOutcome() const { return m_last; }

Q_SIGNALS:
  void started(const QString& what);
  void progress(int percent, const QString& what);
  void finished(const fb::gui::ProfileOutcome& outcome);

private:
  void onDone();
  /// Starts `work` as the one running job, with progress reported as `stages` parts.
  template <typename Work> void start(const QString& what, int stages, Work work);

  QFutureWatcher<ProfileOutcome> m_watcher;
  std::shared_ptr<workbench::JobControl> m_job;
  uint64_t m_request = 0, m_running = 0;
  ProfileOutcome m_last;
};

} // namespace fb::gui
