// Creation of the main window's actions.
#include "app/gui/MainActions.h"

#include <QAction>
#include <QKeySequence>
#include <QMenu>

namespace fb::gui {

namespace {
QAction* make(QObject* parent, const QString& text, const QKeySequence& key, const QString& tip = {}) {
  auto* a = new QAction(text, parent);
  if (!key.isEmpty())
    a->setShortcut(key);
  a->setToolTip(tip.isEmpty() ? text : tip);
  a->setStatusTip(a->toolTip());
  return a;
}
QAction* make(QObject* parent, const QString& text, QKeySequence::StandardKey key, const QString& tip = {}) {
  auto* a = make(parent, text, QKeySequence(), tip);
  a->setShortcuts(key);
  return a;
}
} // namespace

MainActions MainActions::create(QObject* parent) {
  MainActions a;
  a.open = make(parent, QObject::tr("&Open\u2026"), QKeySequence::Open, QObject::tr("Open a model (.onnx, .fbir)"));
  a.recent = new QMenu(QObject::tr("Open &Recent"));
  a.exportView = make(parent, QObject::tr("&Export View\u2026"), QKeySequence(Qt::CTRL | Qt::Key_E),
                      QObject::tr("Export the graph as PNG, SVG or DOT"));
  a.quit = make(parent, QObject::tr("&Quit"), QKeySequence::Quit);
  a.find = make(parent, QObject::tr("&Find\u2026"), QKeySequence::Find, QObject::tr("Find a node by name or op"));
  a.findNext = make(parent, QObject::tr("Find &Next"), QKeySequence::FindNext);
  a.findPrevious = make(parent, QObject::tr("Find &Previous"), QKeySequence::FindPrevious);
  a.zoomIn = make(parent, QObject::tr("Zoom &In"), QKeySequence::ZoomIn);
  a.zoomOut = make(parent, QObject::tr("Zoom &Out"), QKeySequence::ZoomOut);
  a.fit = make(parent, QObject::tr("&Fit to Window"), QKeySequence(Qt::CTRL | Qt::Key_0));
  a.showConstants = make(parent, QObject::tr("Show &Constants"), QKeySequence(Qt::CTRL | Qt::Key_K),
                         QObject::tr("Draw weights and other constants as nodes"));
  a.showConstants->setCheckable(true);
  a.expandGroups = make(parent, QObject::tr("E&xpand Fused Groups"), QKeySequence(Qt::CTRL | Qt::Key_G),
                        QObject::tr("Draw fused groups as clusters of their ops"));
  a.expandGroups->setCheckable(true);
  a.step = make(parent, QObject::tr("&Step"), QKeySequence(Qt::Key_F10), QObject::tr("Apply the next pass (F10)"));
  a.runToEnd = make(parent, QObject::tr("&Run to End"), QKeySequence(Qt::Key_F5),
                    QObject::tr("Apply every remaining pass (F5)"));
  a.back = make(parent, QObject::tr("&Back"), QKeySequence::Undo, QObject::tr("Previous snapshot (Undo)"));
  a.forward = make(parent, QObject::tr("&Forward"), QKeySequence::Redo, QObject::tr("Next snapshot (Redo)"));
  a.reset = make(parent, QObject::tr("Rese&t"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                 QObject::tr("Back to the imported model"));
  a.cancel = make(parent, QObject::tr("&Cancel"), QKeySequence(Qt::Key_Escape), QObject::tr("Stop long work"));
  a.runOnCpu = make(parent, QObject::tr("Run on &CPU and Compare"), QKeySequence(Qt::CTRL | Qt::Key_R),
                    QObject::tr("Compile the current snapshot for this CPU, run it and compare its "
                                "outputs with the imported model on the interpreter"));
  a.showDiff = make(parent, QObject::tr("&Diff Snapshots"), QKeySequence(Qt::CTRL | Qt::Key_D),
                    QObject::tr("Compare two snapshots"));
  a.presentation = make(parent, QObject::tr("&Presentation Mode"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P),
                        QObject::tr("Larger text everywhere, for a projector"));
  a.presentation->setCheckable(true);
  a.about = make(parent, QObject::tr("&About Fusebox"), QKeySequence());
  return a;
}

} // namespace fb::gui
