// Painting of node boxes, edges and cluster frames (drawn directly: no child text items, so a
// scene of hundreds of boxes builds in a few milliseconds).
#include "app/gui/graph/GraphItems.h"

#include "app/gui/graph/OpColors.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cmath>

namespace fb::gui {

namespace {

const QColor kSelection(0x00, 0x72, 0xB2); // blue, distinct from every mark colour
const QColor kText(0x1A, 0x1A, 0x1A);
const QColor kEdge(0x6B, 0x6B, 0x6B);

QFont edgeFont() {
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setPixelSize(10);
  return f;
}

} // namespace

NodeItem::NodeItem(const DisplayUnit& unit, int index)
    : m_index(index), m_kind(unit.kind), m_fused(unit.kind == UnitKind::Op && unit.expandable),
      m_title(unit.title), m_details(unit.details), m_fill(unit.fill),
      m_box(-unit.width / 2, -unit.height / 2, unit.width, unit.height) {
  setFlag(ItemIsSelectable);
  setToolTip(unit.tooltip);
  setZValue(2);
  setData(0, index);
}

QRectF NodeItem::boundingRect() const { return m_box.adjusted(-6, -6, 8, 8); }

void NodeItem::setMark(NodeMark mark) {
  if (mark != m_mark) {
    m_mark = mark;
    update();
  }
}

void NodeItem::setHeat(std::optional<double> heat) {
  m_heat = heat;
  update();
}

void NodeItem::setSearchHit(bool hit) {
  if (hit != m_searchHit) {
    m_searchHit = hit;
    update();
  }
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  painter->setRenderHint(QPainter::Antialiasing);
  const double radius = m_kind == UnitKind::Input || m_kind == UnitKind::Output ? m_box.height() / 2
                        : m_kind == UnitKind::Constant                         ? 2.0
                                                                               : 6.0;
  QColor fill = m_heat ? heatColor(*m_heat) : m_fill;
  if (m_mark == NodeMark::Removed)
    fill = fill.lighter(115);
  // Zoomed far out (the overview of a large model) text cannot be read: draw each box as its
  // colour and its mark or selection outline only, which reads as a map and draws fast.
  const double lod = option ? option->levelOfDetailFromTransform(painter->worldTransform()) : 1;
  if (lod < 0.3) {
    QPen pen(QColor(0x66, 0x66, 0x66), 0); // cosmetic: one pixel at any zoom
    if (m_mark != NodeMark::None)
      pen = QPen(markColor(m_mark), 3.0 / std::max(lod, 0.02),
                 m_mark == NodeMark::Removed ? Qt::DashLine : Qt::SolidLine);
    if (m_searchHit)
      pen = QPen(QColor(0xCC, 0x79, 0xA7), 3.0 / std::max(lod, 0.02));
    if (isSelected())
      pen = QPen(kSelection, 4.0 / std::max(lod, 0.02));
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRect(m_box);
    return;
  }
  // A collapsed block looks like a stack of cards.
  if (m_kind == UnitKind::Block) {
    painter->setPen(QPen(QColor(0x99, 0x99, 0x99), 1));
    painter->setBrush(fill.darker(104));
    painter->drawRoundedRect(m_box.translated(5, 5), radius, radius);
    painter->drawRoundedRect(m_box.translated(2.5, 2.5), radius, radius);
  }
  QPen outline(QColor(0x55, 0x55, 0x55), 1.2);
  if (m_kind == UnitKind::Constant || m_kind == UnitKind::Input || m_kind == UnitKind::Output)
    outline.setColor(QColor(0x88, 0x88, 0x88));
  if (m_searchHit) {
    outline = QPen(QColor(0xCC, 0x79, 0xA7), 2.5); // reddish purple: a search match
  }
  if (m_mark != NodeMark::None) {
    outline = QPen(markColor(m_mark), 3.5);
    if (m_mark == NodeMark::Removed)
      outline.setStyle(Qt::DashLine);
  }
  if (isSelected()) {
    painter->setPen(QPen(QColor(kSelection.red(), kSelection.green(), kSelection.blue(), 90), 9));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(m_box, radius, radius);
    outline = QPen(kSelection, 3);
  }
  painter->setPen(outline);
  painter->setBrush(fill);
  painter->drawRoundedRect(m_box, radius, radius);
  if (m_fused) {
    painter->setPen(QPen(QColor(0x99, 0x80, 0x20), 1));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(m_box.adjusted(3, 3, -3, -3), radius - 2, radius - 2);
  }

  const QFont title = titleFont(), detail = detailFont();
  const QFontMetricsF tm(title), dm(detail);
  double y = m_box.top() + 6;
  // The hot end of the heat scale is dark: light text keeps the name readable there.
  const bool darkFill = fill.lightnessF() < 0.45;
  painter->setPen(darkFill ? QColor(Qt::white) : kText);
  painter->setFont(title);
  painter->drawText(QRectF(m_box.left(), y, m_box.width(), tm.height()), Qt::AlignCenter, m_title);
  y += tm.height();
  painter->setFont(detail);
  painter->setPen(darkFill ? QColor(0xF2, 0xF2, 0xF2) : QColor(0x33, 0x33, 0x33));
  for (const QString& d : m_details) {
    painter->drawText(QRectF(m_box.left(), y, m_box.width(), dm.height()), Qt::AlignCenter, d);
    y += dm.height();
  }
  if (m_mark != NodeMark::None) {
    // A badge names the mark, so it reads without colour too.
    const QString badge = m_mark == NodeMark::Added     ? QStringLiteral("+")
                          : m_mark == NodeMark::Removed ? QStringLiteral("\u2212")
                                                        : QStringLiteral("\u0394");
    const QRectF circle(m_box.right() - 9, m_box.top() - 9, 18, 18);
    painter->setPen(Qt::NoPen);
    painter->setBrush(markColor(m_mark));
    painter->drawEllipse(circle);
    painter->setPen(Qt::white);
    painter->setFont(title);
    painter->drawText(circle, Qt::AlignCenter, badge);
  }
}

EdgeItem::EdgeItem(const DisplayEdge& edge, const EdgeRoute& route, int index)
    : m_index(index), m_label(edge.label), m_labelPos(route.labelPos) {
  const auto& s = route.spline;
  if (!s.empty()) {
    m_path.moveTo(s.front());
    for (size_t i = 1; i + 2 < s.size(); i += 3)
      m_path.cubicTo(s[i], s[i + 1], s[i + 2]);
  }
  // The arrowhead points from the spline's end (or its last control point) to the tip.
  QPointF from = s.empty() ? route.arrowTip : s.back();
  if (!s.empty() && QLineF(from, route.arrowTip).length() < 1 && s.size() >= 2)
    from = s[s.size() - 2];
  QLineF dir(route.arrowTip, from);
  if (dir.length() > 0.01) {
    dir.setLength(9);
    QLineF side = dir;
    side.setAngle(dir.angle() + 22);
    QLineF other = dir;
    other.setAngle(dir.angle() - 22);
    m_arrow << route.arrowTip << side.p2() << other.p2();
    if (QLineF(s.empty() ? route.arrowTip : s.back(), route.arrowTip).length() >= 1)
      m_path.lineTo(route.arrowTip);
  }
  const QFontMetricsF fm(edgeFont());
  m_bounds = m_path.boundingRect().united(m_arrow.boundingRect());
  if (!m_label.isEmpty())
    m_bounds = m_bounds.united(
        QRectF(m_labelPos, QSizeF(fm.horizontalAdvance(m_label) + 4, fm.height() + 2)));
  m_bounds.adjust(-3, -3, 3, 3);
  setZValue(1);
  setData(0, index);
  setToolTip(edge.tooltip);
}

QRectF EdgeItem::boundingRect() const { return m_bounds; }

QPainterPath EdgeItem::shape() const {
  QPainterPathStroker stroker;
  stroker.setWidth(6);
  return stroker.createStroke(m_path);
}

void EdgeItem::setEmphasized(bool on) {
  if (on != m_emphasized) {
    m_emphasized = on;
    setZValue(on ? 1.5 : 1);
    update();
  }
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  painter->setRenderHint(QPainter::Antialiasing);
  const QColor color = m_emphasized ? kSelection : kEdge;
  painter->setPen(QPen(color, m_emphasized ? 2.2 : 1.2));
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(m_path);
  painter->setPen(Qt::NoPen);
  painter->setBrush(color);
  painter->drawPolygon(m_arrow);
  // Labels are unreadable when zoomed far out; skip them there (the view stays fast).
  const double lod = option ? option->levelOfDetailFromTransform(painter->worldTransform()) : 1;
  if (!m_label.isEmpty() && lod > 0.35) {
    painter->setFont(edgeFont());
    painter->setPen(m_emphasized ? kSelection : QColor(0x4D, 0x4D, 0x4D));
    const QFontMetricsF fm(edgeFont());
    painter->setBrush(QColor(255, 255, 255, 200));
    painter->setPen(Qt::NoPen);
    painter->drawRoundedRect(QRectF(m_labelPos, QSizeF(fm.horizontalAdvance(m_label) + 4, fm.height())),
                             2, 2);
    painter->setPen(m_emphasized ? kSelection : QColor(0x4D, 0x4D, 0x4D));
    painter->drawText(QPointF(m_labelPos.x() + 2, m_labelPos.y() + fm.ascent()), m_label);
  }
}

ClusterItem::ClusterItem(const DisplayCluster& cluster, const QRectF& rect, int index)
    : m_index(index), m_rect(rect), m_label(cluster.label), m_fused(cluster.fused) {
  setZValue(-1);
  setData(0, index);
  setToolTip(cluster.label + QStringLiteral("\n(double-click the frame to collapse)"));
}

void ClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  painter->setRenderHint(QPainter::Antialiasing);
  QPen pen(m_fused ? QColor(0xB8, 0x93, 0x1E) : QColor(0x9A, 0x9A, 0x9A), 1.5, Qt::DashLine);
  painter->setPen(pen);
  painter->setBrush(m_fused ? QColor(0xFF, 0xF7, 0xDA, 200) : QColor(0xF6, 0xF6, 0xF6, 200));
  painter->drawRoundedRect(m_rect, 8, 8);
}

namespace {
QFont clusterFont() {
  QFont f = titleFont();
  f.setPixelSize(12);
  return f;
}
} // namespace

ClusterTitleItem::ClusterTitleItem(const DisplayCluster& cluster, const QRectF& clusterRect)
    : m_fused(cluster.fused) {
  const QFontMetricsF fm(clusterFont());
  m_text = fm.elidedText(cluster.label, Qt::ElideRight, clusterRect.width() - 20);
  m_rect = QRectF(clusterRect.left() + 6, clusterRect.top() + 3, fm.horizontalAdvance(m_text) + 8,
                  fm.height() + 2);
  setZValue(1.8); // above edges, below boxes
}

void ClusterTitleItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  painter->setPen(Qt::NoPen);
  painter->setBrush(m_fused ? QColor(0xFF, 0xF7, 0xDA) : QColor(0xF6, 0xF6, 0xF6));
  painter->drawRoundedRect(m_rect, 3, 3);
  painter->setFont(clusterFont());
  painter->setPen(QColor(0x55, 0x44, 0x10));
  painter->drawText(m_rect.adjusted(4, 1, -4, 0), Qt::AlignLeft | Qt::AlignTop, m_text);
}

} // namespace fb::gui
