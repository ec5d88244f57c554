// Runs a snapshot on a backend off the GUI thread through the workbench (compile, run,
// compare with the imported model on the interpreter), with progress, cancel and stale
// results dropped.
#pragma once

#include "app/workbench/Compare.h"
#include "app/workbench/Job.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace fb::gui {

/// What a finished run reports, as values.
struct RunOutcome {
  std::optional<workbench::RunResult> run;
  std::optional<workbench::OutputComparisons> comparison;
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
