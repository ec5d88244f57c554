// Runs the find-the-bug flow (workbench/FindBug.h) off the GUI thread on a copy of the session's
// snapshots, with progress, cancel and a newer request replacing an older one.
#pragma once

#include "app/workbench/FindBug.h"
#include "app/workbench/Job.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace fb::gui {

/// What a finished search reports, with the snapshots it looked at (their graphs identify the
/// session state it belongs to).
struct FindBugOutcome {
  std::optional<workbench::FindBugReport> report;
  std::vector<Snapshot> snapshots;
  QString backend;
  QString error;
  bool cancelled = false;
};

class FindBugController : public QObject {
  Q_OBJECT
public:
  explicit FindBugController(QObject* parent = nullptr);
  ~FindBugController() override;

  /// Searches `snapshots` (the session's, snapshot 0 the imported model) on `settings`' backend
  /// with seeded inputs (seed 1, as --bisect); the reproducer goes to settings.reproducerPath.
  void start(std::vector<Snapshot> snapshots, const workbench::FindBugSettings& settings);
  void cancel();
  bool isRunning() const { return m_watcher.isRunning(); }
  const FindBugOutcome& lastOutcome() const { return m_last; }

Q_SIGNALS:
  void started(const QString& what);
  void progress(int percent, const QString& what);
  void finished(bool found);

private:
  void onDone();

  QFutureWatcher<FindBugOutcome> m_watcher;
  std::shared_ptr<workbench::JobControl> m_job;
  uint64_t m_request = 0, m_running = 0;
  FindBugOutcome m_last;
};

} // namespace fb::gui
