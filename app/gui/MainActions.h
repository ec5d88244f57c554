// The main window's actions, made in one place with standard shortcuts.
#pragma once

#include <QObject>

class QAction;
class QMenu;

namespace fb::gui {

/// Every action of the main window's menus and tool bar. Shortcuts use QKeySequence's standard
/// keys where one exists (Open, Find, FindNext, ZoomIn, Undo, Redo...), so they follow the
/// platform's conventions.
struct MainActions {
  QAction* open = nullptr;
  QMenu* recent = nullptr;
  QAction* exportView = nullptr;
  QAction* quit = nullptr;
  QAction* find = nullptr;
  QAction* findNext = nullptr;
  QAction* findPrevious = nullptr;
  QAction* zoomIn = nullptr;
  QAction* zoomOut = nullptr;
  QAction* fit = nullptr;
  QAction* showConstants = nullptr;
  QAction* expandGroups = nullptr;
  QAction* step = nullptr;
  QAction* runToEnd = nullptr;
  QAction* back = nullptr;
  QAction* forward = nullptr;
  QAction* reset = nullptr;
  QAction* cancel = nullptr;
  QAction* runOnCpu = nullptr; ///< run the current snapshot on the CPU backend and compare
  QAction* showDiff = nullptr;
  QAction* presentation = nullptr;
  QAction* about = nullptr;

  /// Creates the actions, owned by `parent`.
  static MainActions create(QObject* parent);
};

} // namespace fb::gui
