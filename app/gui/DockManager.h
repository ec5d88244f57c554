// Makes the main window's docks with stable ids and saves/restores their layout with QSettings.
#pragma once

#include <QList>
#include <QString>

class QDockWidget;
class QMainWindow;
class QSettings;
class QWidget;

namespace fb::gui {

/// The one place docks are made. Each dock's object name is its stable id ("dock.pipeline"), so
/// QMainWindow::saveState/restoreState find them again across versions and sessions.
class DockManager {
public:
  explicit DockManager(QMainWindow* window) : m_window(window) {}

  /// Creates a dock holding `widget` with id `id` (object name "dock.<id>") in `area`.
  QDockWidget* addDock(const QString& id, const QString& title, QWidget* widget, int area);
  QDockWidget* dock(const QString& id) const;
  const QList<QDockWidget*>& docks() const { return m_docks; }

  /// Saves the window geometry and dock layout under "mainwindow/".
  void saveLayout(QSettings& settings) const;
  /// Restores them; false when nothing was saved or the saved state does not fit.
  bool restoreLayout(QSettings& settings) const;

private:
  QMainWindow* m_window;
  QList<QDockWidget*> m_docks;
};

} // namespace fb::gui
