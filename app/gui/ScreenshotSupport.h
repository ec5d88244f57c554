// Helpers of the --screenshot mode shared by the docks that take their own pictures: waiting
// for a background job's signal, floating a dock at a readable size for its picture, and
// fitting a graph at a readable scale.
#pragma once

#include "app/gui/graph/GraphView.h"

#include <QApplication>
#include <QDockWidget>
#include <QEventLoop>
#include <QObject>
#include <QSize>
#include <QTimer>
#include <QTransform>

namespace fb::gui {

/// Processes events until `signal` of `sender` fires or `timeoutMs` pass; false on timeout.
template <typename Sender, typename Signal>
bool waitFor(Sender* sender, Signal signal, int timeoutMs) {
  QEventLoop loop;
  bool fired = false;
  QObject::connect(sender, signal, &loop, [&] {
    fired = true;
    loop.quit();
  });
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  loop.exec();
  return fired;
}

/// Shows `dock` floating at `size` so its picture is readable, and puts it back afterwards.
class FloatedDock {
public:
  FloatedDock(QDockWidget* dock, QSize size) : m_dock(dock), m_wasFloating(dock->isFloating()) {
    m_dock->show();
    m_dock->setFloating(true);
    m_dock->resize(size);
    m_dock->raise();
    QApplication::processEvents();
  }
  ~FloatedDock() { m_dock->setFloating(m_wasFloating); }
  FloatedDock(const FloatedDock&) = delete;
  FloatedDock& operator=(const FloatedDock&) = delete;

private:
  QDockWidget* m_dock;
  bool m_wasFloating;
};

/// Fits the graph in the view when it stays readable; a long graph (a ResNet is a tall chain)
/// is shown at a readable scale around `focus` instead, and a tiny one is not blown up.
inline void readableFit(GraphView* view, NodeId focus) {
  view->fitToView();
  const qreal scale = view->transform().m11();
  if (scale < 0.55) {
    view->setTransform(QTransform::fromScale(0.85, 0.85));
    if (focus)
      view->centerOnNode(focus);
  } else if (scale > 1.6) {
    view->setTransform(QTransform::fromScale(1.6, 1.6));
  }
}

} // namespace fb::gui
