// The graph view's minimap: a cached rendering of the scene plus the viewport frame.
#include "app/gui/graph/Minimap.h"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>

namespace fb::gui {

Minimap::Minimap(QGraphicsView* view) : QWidget(view), m_view(view) {
  setFixedSize(220, 160);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  hide();
}

void Minimap::invalidate() {
  m_dirty = true;
  update();
}

void Minimap::updateVisibility() {
  QGraphicsScene* scene = m_view->scene();
  const bool fits =
      !scene || scene->items().isEmpty() ||
      m_view->mapToScene(m_view->viewport()->rect()).boundingRect().contains(scene->sceneRect());
  // In a small view the minimap would hide what it summarizes.
  const QSize vp = m_view->viewport()->size();
  setVisible(!fits && vp.width() >= 400 && vp.height() >= 300);
  update();
}

QRectF Minimap::targetRect() const {
  const QRectF scene = m_view->scene() ? m_view->scene()->sceneRect() : QRectF();
  const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -4);
  if (scene.isEmpty())
    return area;
  const double s = std::min(area.width() / scene.width(), area.height() / scene.height());
  const QSizeF size(scene.width() * s, scene.height() * s);
  return QRectF(area.center() - QPointF(size.width() / 2, size.height() / 2), size);
}

void Minimap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), QColor(255, 255, 255, 235));
  p.setPen(QPen(QColor(0x88, 0x88, 0x88), 1));
  p.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
  QGraphicsScene* scene = m_view->scene();
  if (!scene)
    return;
  const QRectF target = targetRect();
  if (m_dirty || m_cache.size() != target.size().toSize()) {
    m_cache = QPixmap(target.size().toSize().expandedTo(QSize(1, 1)));
    m_cache.fill(Qt::white);
    QPainter cp(&m_cache);
    cp.setRenderHint(QPainter::Antialiasing);
    scene->render(&cp, QRectF(QPointF(), target.size()), scene->sceneRect());
    m_dirty = false;
  }
  p.drawPixmap(target.topLeft(), m_cache);
  // The visible area, in minimap coordinates.
  const QRectF sceneRect = scene->sceneRect();
  const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
  const double s = target.width() / sceneRect.width();
  QRectF frame((visible.left() - sceneRect.left()) * s + target.left(),
               (visible.top() - sceneRect.top()) * s + target.top(), visible.width() * s,
               visible.height() * s);
  p.setPen(QPen(QColor(0x00, 0x72, 0xB2), 2));
  p.setBrush(QColor(0x00, 0x72, 0xB2, 30));
  p.drawRect(frame.intersected(target.adjusted(-1, -1, 1, 1)));
}

void Minimap::centerViewAt(const QPointF& widgetPos) {
  QGraphicsScene* scene = m_view->scene();
  if (!scene)
    return;
  const QRectF target = targetRect();
  const QRectF sceneRect = scene->sceneRect();
  const double s = sceneRect.width() / target.width();
  m_view->centerOn(QPointF((widgetPos.x() - target.left()) * s + sceneRect.left(),
                           (widgetPos.y() - target.top()) * s + sceneRect.top()));
  update();
}

void Minimap::mousePressEvent(QMouseEvent* event) { centerViewAt(event->position()); }

void Minimap::mouseReleaseEvent(QMouseEvent* event) { event->accept(); }

void Minimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton)
    centerViewAt(event->position());
}

} // namespace fb::gui
