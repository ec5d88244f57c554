// The minimap: the whole scene in miniature in a corner of the graph view, with the visible
// area framed; click or drag in it to move the view there.
#pragma once

#include <QPixmap>
#include <QWidget>

class QGraphicsView;

namespace fb::gui {

class Minimap : public QWidget {
  Q_OBJECT
public:
  explicit Minimap(QGraphicsView* view);
  /// The scene's contents changed: the cached picture is redrawn on the next paint.
  void invalidate();
  /// Shows itself only when the scene does not fit in the view.
  void updateVisibility();

protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

private:
  QRectF targetRect() const;
  void centerViewAt(const QPointF& widgetPos);

  QGraphicsView* m_view; // not owned: the parent
  QPixmap m_cache;
  bool m_dirty = true;
};

} // namespace fb::gui
