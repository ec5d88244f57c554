// Background memory planning for the memory view.
#include "app/gui/MemoryPlanner.h"
#include "app/gui/WorkerGuard.h"

#include <QtConcurrent/QtConcurrent>

namespace fb::gui {

MemoryPlanner::MemoryPlanner(QObject* parent) : QObject(parent) {
  connect(&m_watcher, &QFutureWatcher<PlanOutcome>::finished, this, &MemoryPlanner::onDone);
}

MemoryPlanner::~MemoryPlanner() { m_watcher.waitForFinished(); }

void MemoryPlanner::request(const Snapshot& main, int index, std::optional<Snapshot> other,
                            int otherIndex) {
  Request r{main, index, std::move(other), otherIndex};
  ++m_request;
  if (m_watcher.isRunning()) {
    m_pending = std::move(r); // the running job's result is stale now
    return;
  }
  start(std::move(r));
}

void MemoryPlanner::cancel() {
  ++m_request;
  m_pending.reset();
}

void MemoryPlanner::start(Request r) {
  m_running = m_request;
  m_watcher.setFuture(QtConcurrent::run([r = std::move(r)] {
    return guardedWork<PlanOutcome>(QStringLiteral("Memory planning"), [&] {
      auto plan = [](const Snapshot& s, int index) {
        PlannedSnapshot p;
        p.index = index;
        p.graph = s.graph;
        p.report = std::make_shared<const workbench::MemoryPlanReport>(
            workbench::describeMemoryPlan(s));
        return p;
      };
      PlanOutcome out;
      out.main = plan(r.main, r.index);
      if (r.other)
        out.other = plan(*r.other, r.otherIndex);
      return out;
    });
  }));
}

void MemoryPlanner::onDone() {
  PlanOutcome out = m_watcher.result();
  const bool stale = m_running != m_request;
  if (m_pending) {
    Request next = std::move(*m_pending);
    m_pending.reset();
    start(std::move(next));
  }
  if (!stale)
    Q_EMIT planned(out);
}

} // namespace fb::gui
