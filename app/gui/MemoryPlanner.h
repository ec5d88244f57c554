// Plans snapshots' memory off the GUI thread for the memory view: one job at a time, the latest
// request wins, a stale result is dropped.
#pragma once

#include "app/workbench/MemoryPlanReport.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace fb::gui {

/// One snapshot's plan, as a value.
struct PlannedSnapshot {
  int index = -1;
  std::shared_ptr<const Graph> graph;
  std::shared_ptr<const workbench::MemoryPlanReport> report;
};

/// What a planning job produced: the snapshot shown and, when comparing, the other one.
struct PlanOutcome {
  PlannedSnapshot main;
  std::optional<PlannedSnapshot> other;
  QString error; ///< only when the job itself failed (a plan's own error is in its report)
};

class MemoryPlanner : public QObject {
  Q_OBJECT
public:
  explicit MemoryPlanner(QObject* parent = nullptr);
  ~MemoryPlanner() override;

  /// Plans snapshot `index` and, with `other`, snapshot `otherIndex` too. A request made while
  /// a job runs waits for it and then replaces whatever else was waiting.
  void request(const Snapshot& main, int index, std::optional<Snapshot> other, int otherIndex);
  /// Drops the running job's result and any waiting request.
  void cancel();
  bool isRunning() const { return m_watcher.isRunning(); }

Q_SIGNALS:
  void planned(const fb::gui::PlanOutcome& outcome);

private:
  struct Request {
    Snapshot main;
    int index = -1;
    std::optional<Snapshot> other;
    int otherIndex = -1;
  };
  void start(Request r);
  void onDone();

  QFutureWatcher<PlanOutcome> m_watcher;
  std::optional<Request> m_pending;
  uint64_t m_request = 0, m_running = 0;
};

} // namespace fb::gui
