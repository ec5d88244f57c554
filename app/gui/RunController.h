// Runs a snapshot on a backend off the GUI thread through the workbench (compile, run,
// compare with the imported model on the interpreter), with progress, cancel and stale
// results dropped.
#pragma once

#include "app/workbench/Compare.h"
#include "app/workbench/Job.h"
#include "app/workbench/OutputSummary.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace fb::gui {

/// Where a run's inputs come from and how its outputs are judged.
struct RunInputs {
  /// One entry per graph input: a .npy or .pb file, or "" for a seeded random tensor. Empty:
  /// every input is random.
  std::vector<std::string> files;
  uint64_t seed = 1;
  /// Tolerance of the comparison with the interpreter; none: the default of each dtype.
  std::optional<Tolerance> tolerance;
};

/// What a finished run reports, as values.
struct RunOutcome {
  std::optional<workbench::RunResult> run;
  std::optional<workbench::OutputComparisons> comparison;
  std::vector<workbench::OutputSummary> outputs; ///< summarized in the worker
  std::optional<Tolerance> tolerance;            ///< what the comparison used (none: default)
  QString error;
  bool cancelled = false;
};

/// One run at a time; a new request cancels the running one and its result is dropped.
class RunController : public QObject {
  Q_OBJECT
public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  /// Runs `graph` (snapshot `index`) on `settings`' backend with seeded inputs and compares its
  /// outputs with `reference` (the imported model) on the interpreter.
  void run(std::shared_ptr<const Graph> graph, std::shared_ptr<const Graph> reference, int index,
           const workbench::RunSettings& settings);
  /// The same with inputs from files or another seed, and a tolerance for the comparison.
  void run(std::shared_ptr<const Graph> graph, std::shared_ptr<const Graph> reference, int index,
           const workbench::RunSettings& settings, const RunInputs& inputs);
  /// Stops the running job at its next check (between compile stages, kernels or runs).
  void cancel();
  bool isRunning() const { return m_watcher.isRunning(); }
  /// The last finished run's outcome.
  const RunOutcome& lastOutcome() const { return m_last; }

  /// One line for the status bar: backend, snapshot, agreement, times.
  static QString describe(const RunOutcome& outcome, int index, const QString& backend);

Q_SIGNALS:
  void started(const QString& what);
  void progress(int percent, const QString& what);
  /// `ok`: ran and every output agrees with the reference.
  void finished(bool ok, const QString& summary);

private:
  void onDone();

  QFutureWatcher<RunOutcome> m_watcher;
  std::shared_ptr<workbench::JobControl> m_job;
  uint64_t m_request = 0, m_running = 0;
  int m_index = 0;
  QString m_backend;
  RunOutcome m_last;
};

} // namespace fb::gui
