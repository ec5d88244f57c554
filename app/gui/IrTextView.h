// The IR text view: the .fbir of the current snapshot, highlighted, with its selection kept in
// step with the graph's both ways.
#pragma once

#include "app/workbench/IrText.h"

#include <QWidget>

class QPlainTextEdit;

namespace fb::gui {

class IrHighlighter;

/// Shows a snapshot's IR. Moving the cursor onto a node's line emits nodeSelected; selectNode
/// scrolls to and highlights the node's line without emitting.
class IrTextView : public QWidget {
  Q_OBJECT
public:
  /// Texts longer than this many lines are shown without syntax colouring.
  static constexpr size_t kHighlightLineLimit = 3000;

  explicit IrTextView(QWidget* parent = nullptr);
  void setIrText(workbench::IrText ir);
  void selectNode(fb::NodeId id);
  /// Size of the monospaced IR text (presentation mode makes it larger).
  void setTextPointSize(int points);
  /// The node whose line holds the cursor (0 when none).
  fb::NodeId nodeAtCursor() const;
  /// The 0-based line highlighted for the selected node, or -1.
  int highlightedLine() const { return m_highlightedLine; }
  QPlainTextEdit* editor() const { return m_edit; }
  const workbench::IrText& irText() const { return m_ir; }

Q_SIGNALS:
  void nodeSelected(fb::NodeId id);

private:
  void highlightLine(int line);

  QPlainTextEdit* m_edit;
  IrHighlighter* m_highlighter;
  workbench::IrText m_ir;
  int m_highlightedLine = -1;
  bool m_updating = false;
};

} // namespace fb::gui
