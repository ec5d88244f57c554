// The inspector: one node's op, attributes, operands and results with producers and consumers,
// cost, constant statistics with histograms, and clickable provenance.
#pragma once

#include "app/workbench/NodeInspection.h"

#include <QImage>
#include <QWidget>

#include <optional>

class QTextBrowser;

namespace fb::gui {

/// Renders a NodeInspection as a document. Links to other nodes and to provenance emit signals;
/// the coordinator decides what to show.
class InspectorView : public QWidget {
  Q_OBJECT
public:
  explicit InspectorView(QWidget* parent = nullptr);
  /// Shows a node of snapshot `snapshot`.
  void showNode(const workbench::NodeInspection& inspection, int snapshot);
  /// Shows a hint instead of a node.
  void clear(const QString& hint = {});
  /// The plain text shown (tests).
  QString plainText() const;
  const std::optional<workbench::NodeInspection>& inspection() const { return m_inspection; }
  QTextBrowser* browser() const { return m_browser; }

  /// A histogram picture of a constant's values.
  static QImage histogramImage(const workbench::ConstantStats& stats, QSize size);

Q_SIGNALS:
  /// A producer or consumer link was clicked: select that node in the current snapshot.
  void nodeLinkActivated(fb::NodeId id);
  /// A provenance link was clicked: show node `id` in snapshot `snapshot`.
  void provenanceActivated(fb::NodeId id, int snapshot);

private:
  QTextBrowser* m_browser;
  std::optional<workbench::NodeInspection> m_inspection;
};

} // namespace fb::gui
