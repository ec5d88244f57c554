// The find-the-bug view: which backend to check, the faults that are on, a start and cancel
// button with progress, and the report: the guilty pass and rewrite (or kernel), where values
// first diverge, and the reduced reproducer, each one click from where it is shown.
#pragma once

#include "app/workbench/FindBug.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTextBrowser;

namespace fb::gui {

class DebugView : public QWidget {
  Q_OBJECT
public:
  explicit DebugView(QWidget* parent = nullptr);

  /// The backend the search checks (the interpreter finds pass bugs; a compiled backend finds
  /// kernel bugs too).
  workbench::Backend backend() const;
  void setBackend(workbench::Backend backend);
  /// Reduce to a reproducer after bisecting.
  bool reduce() const;
  /// Shows which faults are on ("none": a search will find nothing to blame).
  void setFaultsText(const QString& text);
  void setRunning(bool running);
  void setProgress(int percent, const QString& what);
  /// Shows a finished search; `stale` when the session changed since it started.
  void showReport(const workbench::FindBugReport& report, const QString& backend, bool stale);
  void showMessage(const QString& text);
  QString reportText() const;

Q_SIGNALS:
  void findRequested();
  void cancelRequested();
  void showSnapshotRequested();
  void showNodeRequested();
  void openReproducerRequested();

private:
  QComboBox* m_backend;
  QCheckBox* m_reduce;
  QPushButton* m_find;
  QPushButton* m_cancel;
  QProgressBar* m_progress;
  QLabel* m_faults;
  QTextBrowser* m_text;
  QPushButton* m_showSnapshot;
  QPushButton* m_showNode;
  QPushButton* m_openRepro;
};

} // namespace fb::gui
