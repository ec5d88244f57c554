// Scene items of the graph view: node boxes, edges with type labels, and cluster frames.
#pragma once

#include "app/gui/graph/DisplayGraph.h"
#include "app/gui/graph/GraphLayout.h"

#include <QGraphicsItem>
#include <QPainterPath>

#include <optional>

namespace fb::gui {

/// Item types, for qgraphicsitem_cast.
enum ItemType { NodeItemType = QGraphicsItem::UserType + 1, EdgeItemType, ClusterItemType };

/// One unit's box: category fill, bold title, detail lines; mark outline, heat fill, selection.
class NodeItem : public QGraphicsItem {
public:
  NodeItem(const DisplayUnit& unit, int index);
  int type() const override { return NodeItemType; }
  int index() const { return m_index; }
  QRectF box() const { return m_box; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  void setMark(NodeMark mark);
  void setHeat(std::optional<double> heat);
  void setSearchHit(bool hit);
  NodeMark mark() const { return m_mark; }
  std::optional<double> heat() const { return m_heat; }
  bool isSearchHit() const { return m_searchHit; }
  UnitKind kind() const { return m_kind; }

private:
  int m_index;
  UnitKind m_kind;
  bool m_fused;
  QString m_title;
  QStringList m_details;
  QColor m_fill;
  QRectF m_box; // centred on the item's position
  NodeMark m_mark = NodeMark::None;
  std::optional<double> m_heat;
  bool m_searchHit = false;
};

/// One edge: a spline with an arrowhead and a "dtype [shape]" label.
class EdgeItem : public QGraphicsItem {
public:
  EdgeItem(const DisplayEdge& edge, const EdgeRoute& route, int index);
  int type() const override { return EdgeItemType; }
  int index() const { return m_index; }
  QRectF boundingRect() const override;
  QPainterPath shape() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  /// Drawn stronger when it touches the selected node.
  void setEmphasized(bool on);

private:
  int m_index;
  QPainterPath m_path;
  QPolygonF m_arrow;
  QString m_label;
  QPointF m_labelPos;
  QRectF m_bounds;
  bool m_emphasized = false;
};

/// The frame of an expanded fused group or block, with its label at the top left.
class ClusterItem : public QGraphicsItem {
public:
  ClusterItem(const DisplayCluster& cluster, const QRectF& rect, int index);
  int type() const override { return ClusterItemType; }
  int index() const { return m_index; }
  QRectF boundingRect() const override { return m_rect.adjusted(-2, -2, 2, 2); }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
  int m_index;
  QRectF m_rect;
  QString m_label;
  bool m_fused;
};

/// The title of a cluster, drawn above edges so that arrows entering the frame never hide it.
class ClusterTitleItem : public QGraphicsItem {
public:
  ClusterTitleItem(const DisplayCluster& cluster, const QRectF& clusterRect);
  QRectF boundingRect() const override { return m_rect; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
  QRectF m_rect;
  QString m_text;
  bool m_fused;
};

} // namespace fb::gui
