// Session files in the window.
#include "app/gui/SessionFiles.h"

#include "app/gui/Coordinator.h"
#include "app/workbench/Reproducer.h"

namespace fb::gui {

SessionFiles::SessionFiles(Coordinator* coordinator,
                           std::function<std::optional<std::pair<size_t, size_t>>()> compared,
                           std::function<void(int, int)> showDiff, QObject* parent)
    : QObject(parent), m_coordinator(coordinator), m_compared(std::move(compared)),
      m_showDiff(std::move(showDiff)) {
  connect(coordinator, &Coordinator::stepFinished, this, &SessionFiles::onStepFinished);
}

QString SessionFiles::save(const QString& path) const {
  workbench::Session& s = m_coordinator->session();
  if (!s.hasModel())
    return tr("There is no session to save: open a model first.");
  Status st = workbench::writeSessionFile(
      path.toStdString(), workbench::captureSession(s, s.passManagerOptions(), m_compared()));
  return st.ok() ? QString() : QString::fromStdString(st.error().message());
}

QString SessionFiles::open(const QString& path) {
  Expected<workbench::SessionState> state = workbench::readSessionFile(path.toStdString());
  if (!state.ok())
    return QString::fromStdString(state.error().message());
  m_pending.reset();
  m_coordinator->openGraph(state->model->clone(), QString::fromStdString(state->modelName));
  workbench::Session& s = m_coordinator->session();
  workbench::applySessionOptions(s, *state);
  m_coordinator->setPipeline(QString::fromStdString(workbench::pipelineText(state->pipeline)));
  m_pending = std::move(state).value();
  if (workbench::lastSnapshotNeeded(*m_pending) == 0 || !s.canStep())
    finish(true);
  else
    m_coordinator->step();
  return {};
}

void SessionFiles::onStepFinished(bool ok) {
  if (!m_pending)
    return;
  const workbench::Session& s = m_coordinator->session();
  if (!ok) {
    finish(false);
    return;
  }
  if (s.snapshotCount() > workbench::lastSnapshotNeeded(*m_pending) || !s.canStep())
    finish(true);
  else
    m_coordinator->step();
}

void SessionFiles::finish(bool ok) {
  const workbench::SessionState state = std::move(*m_pending);
  m_pending.reset();
  workbench::Session& s = m_coordinator->session();
  workbench::applySessionSchedules(s, state);
  m_coordinator->selectSnapshot(int(std::min(state.current, s.snapshotCount() - 1)));
  if (state.compare && state.compare->first < s.snapshotCount() &&
      state.compare->second < s.snapshotCount())
    m_showDiff(int(state.compare->first), int(state.compare->second));
  Q_EMIT restored(ok);
}

} // namespace fb::gui
