// Rectangles over Qt Charts axes, with hover tooltips, clicks and wheel zoom.
#include "app/gui/RectChart.h"

#include <QChart>
#include <QGraphicsObject>
#include <QLineSeries>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QValueAxis>
#include <QWheelEvent>

namespace fb::gui {

/// Paints every rectangle in one item above the grid and below the series (so lines drawn
/// over the rectangles, like the memory plan's live bytes, stay visible).
class RectChart::Layer : public QGraphicsObject {
public:
  explicit Layer(RectChart* owner) : QGraphicsObject(owner->chart()), m_owner(owner) {
    setZValue(3); // Qt Charts: grid at 2, series from 5
    setAcceptedMouseButtons(Qt::NoButton);
  }
  QRectF boundingRect() const override { return m_owner->chart()->plotArea(); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) override {
    const QRectF plot = m_owner->chart()->plotArea();
    p->setClipRect(plot);
    const QFontMetricsF fm(p->font());
    const bool fade = !m_owner->m_highlighted.empty();
    const std::vector<ChartRect>& rects = m_owner->m_rects;
    for (size_t i = 0; i < rects.size(); ++i) {
      const QRectF r = m_owner->toPosition(rects[i].rect);
      if (!r.intersects(plot))
        continue;
      QColor fill = rects[i].fill;
      if (fade && !m_owner->m_highlighted.count(int(i)))
        fill.setAlpha(90);
      p->setPen(r.width() > 3 && r.height() > 3 ? QPen(fill.darker(150), 0.8) : Qt::NoPen);
      p->setBrush(fill);
      p->drawRect(r);
      if (!rects[i].label.isEmpty() && r.width() > fm.horizontalAdvance(rects[i].label) + 6 &&
          r.height() > fm.height() + 2) {
        p->setPen(QColor(0x20, 0x20, 0x20));
        p->drawText(r, Qt::AlignCenter, rects[i].label);
      }
    }
    // Highlights on top of everything, so a buffer under others still shows its outline.
    p->setBrush(Qt::NoBrush);
    p->setPen(QPen(QColor(0x11, 0x11, 0x11), 2.5));
    for (int i : m_owner->m_highlighted)
      if (i >= 0 && size_t(i) < rects.size())
        p->drawRect(m_owner->toPosition(rects[size_t(i)].rect).adjusted(1, 1, -1, -1));
  }
  void refresh() {
    prepareGeometryChange();
    update();
  }

private:
  RectChart* m_owner;
};

RectChart::RectChart(QWidget* parent) : QChartView(new QChart, parent) {
  setRenderHint(QPainter::Antialiasing, false); // crisp rectangle edges
  setMouseTracking(true);
  QChart* c = chart();
  c->setMargins(QMargins(6, 6, 6, 6));
  c->legend()->setVisible(false);
  m_axisX = new QValueAxis;
  m_axisY = new QValueAxis;
  c->addAxis(m_axisX, Qt::AlignBottom);
  c->addAxis(m_axisY, Qt::AlignLeft);
  // Value-to-position mapping needs a series on both axes; this one stays empty.
  m_anchor = new QLineSeries;
  c->addSeries(m_anchor);
  m_anchor->attachAxis(m_axisX);
  m_anchor->attachAxis(m_axisY);
  m_layer = new Layer(this);
  connect(c, &QChart::plotAreaChanged, this, [this] { m_layer->refresh(); });
  connect(m_axisX, &QValueAxis::rangeChanged, this, [this] { m_layer->refresh(); });
  connect(m_axisY, &QValueAxis::rangeChanged, this, [this] { m_layer->refresh(); });
}

RectChart::~RectChart() = default;

void RectChart::setAxis(QValueAxis* axis, double min, double max, double interval) {
  axis->setTickType(QValueAxis::TicksFixed);
  axis->setRange(min, max);
  axis->setTickInterval(interval);
  axis->setTickAnchor(min);
  axis->setTickType(QValueAxis::TicksDynamic);
}

void RectChart::setRects(std::vector<ChartRect> rects) {
  m_rects = std::move(rects);
  m_highlighted.clear();
  m_layer->refresh();
}

void RectChart::setHighlighted(std::set<int> indices) {
  m_highlighted = std::move(indices);
  m_layer->refresh();
}

QRectF RectChart::toPosition(const QRectF& data) const {
  const QPointF a = chart()->mapToPosition(data.topLeft(), m_anchor);
  const QPointF b = chart()->mapToPosition(data.bottomRight(), m_anchor);
  return QRectF(a, b).normalized();
}

int RectChart::rectAt(const QPoint& widgetPos) const {
  const QPointF pos = chart()->mapFromScene(mapToScene(widgetPos));
  if (!chart()->plotArea().contains(pos))
    return -1;
  for (int i = int(m_rects.size()) - 1; i >= 0; --i) {
    // At least 3 pixels wide and tall, so thin buffers and short kernels can be hovered.
    QRectF r = toPosition(m_rects[size_t(i)].rect);
    if (r.width() < 3)
      r.adjust(-1.5, 0, 1.5, 0);
    if (r.height() < 3)
      r.adjust(0, -1.5, 0, 1.5);
    if (r.contains(pos))
      return i;
  }
  return -1;
}

QPoint RectChart::widgetPosOf(int index) const {
  const QRectF r = toPosition(m_rects.at(size_t(index)).rect).intersected(chart()->plotArea());
  return mapFromScene(chart()->mapToScene(r.center()));
}

void RectChart::mouseMoveEvent(QMouseEvent* event) {
  const int i = rectAt(event->position().toPoint());
  if (i >= 0) {
    m_lastTooltip = m_rects[size_t(i)].tooltip;
    QToolTip::showText(event->globalPosition().toPoint(), m_lastTooltip, this);
  } else {
    QToolTip::hideText();
  }
  QChartView::mouseMoveEvent(event);
}

void RectChart::mousePressEvent(QMouseEvent* event) {
  m_pressPos = event->position().toPoint();
  QChartView::mousePressEvent(event);
}

void RectChart::mouseReleaseEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (event->button() == Qt::LeftButton && (pos - m_pressPos).manhattanLength() < 4) {
    const int i = rectAt(pos);
    if (i >= 0)
      Q_EMIT rectClicked(m_rects[size_t(i)].key, i);
  }
  QChartView::mouseReleaseEvent(event);
}

void RectChart::mouseDoubleClickEvent(QMouseEvent* event) {
  chart()->zoomReset();
  event->accept();
}

void RectChart::wheelEvent(QWheelEvent* event) {
  const QPointF pos = chart()->mapFromScene(mapToScene(event->position().toPoint()));
  const QRectF plot = chart()->plotArea();
  if (!plot.contains(pos) || event->angleDelta().y() == 0) {
    QChartView::wheelEvent(event);
    return;
  }
  // The new x range keeps the value under the mouse where it is.
  const double factor = event->angleDelta().y() > 0 ? 0.8 : 1.25;
  QRectF r = plot;
  r.setLeft(pos.x() - (pos.x() - plot.left()) * factor);
  r.setWidth(plot.width() * factor);
  chart()->zoomIn(r);
  event->accept();
}

} // namespace fb::gui
