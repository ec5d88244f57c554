// Drives the schedule editor: describes the current snapshot's kernels and runs schedule trials
// off the GUI thread through the workbench, keeps accepted overrides in the session, and drops
// stale results (the snapshot or the session's overrides changed while a job ran).
#pragma once

#include "app/workbench/Job.h"
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/ScheduleTrial.h"
#include "app/workbench/Tuning.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>

namespace fb::gui {

class CodeController;
class Coordinator;
class ScheduleView;

/// The kernels of a snapshot described in a worker.
struct DescribeOutcome {
  std::shared_ptr<const std::vector<workbench::KernelSchedule>> kernels;
  QString error;
};

/// A schedule trial finished in a worker.
struct TrialOutcome {
  std::optional<workbench::ScheduleTrial> trial;
  QString error;
  bool cancelled = false;
};

/// A one-kernel tuning run finished in a worker.
struct TuneOutcome {
  std::optional<workbench::TuneReport> report;
  QString error;
  bool cancelled = false;
};

class ScheduleController : public QObject {
  Q_OBJECT
public:
  ScheduleController(Coordinator* coordinator, ScheduleView* view, CodeController* code,
                     QObject* parent = nullptr);
  ~ScheduleController() override;

  /// The snapshot, the selection or the overrides changed: shows the selected node's kernel
  /// (describing the snapshot's kernels in a worker when they are not cached).
  void refresh();
  /// Compiles and times the current snapshot with `change` as its kernel's override, beside
  /// the current schedule; on success the override becomes the session's. A trial in flight is
  /// cancelled and its result dropped.
  void apply(const cg::ScheduleOverride& change, int runs);
  /// Tunes kernel `kernel` of the current snapshot in a worker (the auto-tuner, within
  /// the tune budget, from its default schedule) and puts the fastest override it keeps in
  /// the form, for Apply to make it the session's. Nothing starts while a trial or tune runs.
  void tune(size_t kernel);
  /// Stops the trial or the tuning at its next check.
  void cancel();
  bool isTrialRunning() const { return m_trialRunning.has_value(); }
  bool isTuning() const { return m_tuning.has_value(); }
  /// Processes events until no tuning runs (false on timeout).
  bool waitForTune(int timeoutMs = 300000);
  /// Seconds the Tune button's search may take (default 10).
  void setTuneBudget(double seconds) { m_tuneBudgetSeconds = seconds; }
  /// The described kernels of the current snapshot and overrides, or nullptr.
  std::shared_ptr<const std::vector<workbench::KernelSchedule>> kernels() const;
  /// Processes events until the current snapshot's kernels are described, or their description
  /// failed and the editor says why (false on timeout).
  bool waitForKernels(int timeoutMs = 120000);
  /// Processes events until no trial runs (false on timeout).
  bool waitForTrial(int timeoutMs = 300000);

Q_SIGNALS:
  /// A trial ended: `ok` when it ran and its override is now the session's.
  void trialFinished(bool ok, const QString& summary);
  /// A tuning ended: `directives` the override it found for the kernel (empty: the default
  /// stays, or it failed).
  void tuneFinished(const QString& directives, const QString& summary);
  /// The session's overrides of the current snapshot changed.
  void scheduleChanged();

private:
  using DescribeKey = std::pair<const Graph*, std::string>;
  DescribeKey currentKey() const;
  void startDescribe();
  void onDescribeDone();
  void showSelected();
  void startTrial();
  void onTrialDone();
  void onTuneDone();

  Coordinator* m_coordinator;
  ScheduleView* m_view;
  CodeController* m_code;

  QFutureWatcher<DescribeOutcome> m_describeWatcher;
  std::optional<DescribeKey> m_describing;
  struct DescribeEntry {
    std::shared_ptr<const Graph> graph; ///< keeps the key's address from being reused
    DescribeOutcome outcome;
  };
  std::map<DescribeKey, DescribeEntry> m_describeCache;
  const Graph* m_viewGraph = nullptr; ///< the snapshot whose kernel the view shows (identity only)

  /// A trial asked for, with what it was asked on, so a changed session makes it stale.
  struct TrialRequest {
    std::shared_ptr<const Graph> graph;
    size_t snapshot = 0;
    std::string scheduleBefore;
    workbench::ScheduleTrialRequest request;
  };
  QFutureWatcher<TrialOutcome> m_trialWatcher;
  std::shared_ptr<workbench::JobControl> m_trialJob;
  std::optional<TrialRequest> m_trialRunning, m_trialPending;
  uint64_t m_trialRequest = 0, m_trialRunningRequest = 0;

  /// The tuning in flight: its snapshot and kernel, to drop it when they changed.
  struct TuneRequest {
    std::shared_ptr<const Graph> graph;
    std::string kernel;
  };
  QFutureWatcher<TuneOutcome> m_tuneWatcher;
  std::shared_ptr<workbench::JobControl> m_tuneJob;
  std::optional<TuneRequest> m_tuning;
  double m_tuneBudgetSeconds = 10;
};

} // namespace fb::gui
