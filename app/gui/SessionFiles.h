// Saving the window's session to a .fbsession file and opening one: the model, pipeline and
// pass manager limits go in at once; the steps up to the saved snapshot run in the background
// (the window stays responsive), then the schedule overrides, the current snapshot and the
// compared snapshots are put back.
#pragma once

#include "app/workbench/SessionFile.h"

#include <QObject>
#include <QString>

#include <functional>
#include <optional>

namespace fb::gui {

class Coordinator;

class SessionFiles : public QObject {
  Q_OBJECT
public:
  /// `compared` gives the diff view's snapshots (for saving); `showDiff` shows a pair again.
  SessionFiles(Coordinator* coordinator,
               std::function<std::optional<std::pair<size_t, size_t>>()> compared,
               std::function<void(int, int)> showDiff, QObject* parent = nullptr);

  /// Writes the session to `path`; an error message, or empty.
  QString save(const QString& path) const;
  /// Reads `path` and starts restoring it; an error message (the loaded model stays), or
  /// empty. restored() follows when the saved snapshot is shown.
  QString open(const QString& path);
  bool isRestoring() const { return m_pending.has_value(); }

Q_SIGNALS:
  /// The session is back (ok), or a step failed on the way (the snapshots before it stay).
  void restored(bool ok);

private:
  void onStepFinished(bool ok);
  void finish(bool ok);

  Coordinator* m_coordinator;
  std::function<std::optional<std::pair<size_t, size_t>>()> m_compared;
  std::function<void(int, int)> m_showDiff;
  std::optional<workbench::SessionState> m_pending;
};

} // namespace fb::gui
