// Dock creation with stable ids and layout persistence.
#include "app/gui/DockManager.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QSettings>

namespace fb::gui {

namespace {
/// Bumped when the set of docks changes so an old saved state is not forced onto new docks.
constexpr int kLayoutVersion = 2;
} // namespace

QDockWidget* DockManager::addDock(const QString& id, const QString& title, QWidget* widget,
                                  int area) {
  auto* dock = new QDockWidget(title, m_window);
  dock->setObjectName(QStringLiteral("dock.") + id);
  dock->setWidget(widget);
  dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                    QDockWidget::DockWidgetFloatable);
  m_window->addDockWidget(Qt::DockWidgetArea(area), dock);
  m_docks.append(dock);
  return dock;
}

QDockWidget* DockManager::dock(const QString& id) const {
  const QString name = QStringLiteral("dock.") + id;
  for (QDockWidget* d : m_docks)
    if (d->objectName() == name)
      return d;
  return nullptr;
}

void DockManager::saveLayout(QSettings& settings) const {
  settings.setValue("mainwindow/geometry", m_window->saveGeometry());
  settings.setValue("mainwindow/state", m_window->saveState(kLayoutVersion));
}

bool DockManager::restoreLayout(QSettings& settings) const {
  const QByteArray geometry = settings.value("mainwindow/geometry").toByteArray();
  const QByteArray state = settings.value("mainwindow/state").toByteArray();
  if (geometry.isEmpty() || state.isEmpty())
    return false;
  m_window->restoreGeometry(geometry);
  return m_window->restoreState(state, kLayoutVersion);
}

} // namespace fb::gui
