// A Qt Charts view that draws rectangles in data coordinates over its value axes: the memory
// plan (buffers over steps and offsets) and the kernel timeline (kernels over time). The axes,
// grid, zoom and legend are Qt Charts'; only the rectangles are drawn here.
#pragma once

#include <QChartView>
#include <QColor>
#include <QRectF>
#include <QString>

#include <set>
#include <vector>

class QLineSeries;
class QValueAxis;

namespace fb::gui {

/// One rectangle in data coordinates (x..x+width, y..y+height).
struct ChartRect {
  QRectF rect;
  QColor fill;
  QString tooltip;   ///< rich text shown while the mouse is over it
  QString label;     ///< drawn inside when it fits
  quint64 key = 0;   ///< what a click reports (a node id, a kernel index)
};

/// Rectangles over two QValueAxis. Thousands of rectangles paint as one item; hovering shows a
/// rectangle's tooltip, clicking one emits rectClicked, the wheel zooms the x axis around the
/// mouse and a double click resets the zoom. Highlighted rectangles get a dark outline and the
/// others fade.
class RectChart : public QChartView {
  Q_OBJECT
public:
  explicit RectChart(QWidget* parent = nullptr);
  ~RectChart() override;

  QValueAxis* axisX() const { return m_axisX; }
  QValueAxis* axisY() const { return m_axisY; }
  /// The series every mapping goes through (empty; keep it attached to both axes).
  QLineSeries* anchorSeries() const { return m_anchor; }

  /// Sets an axis to [min, max] with a tick every `interval`. Dynamic ticks are switched off
  /// while the range changes: Qt Charts lays out the ticks of the old interval over the new
  /// range first, and an interval meant for 0..1 KiB over 0..80 MiB is millions of labels.
  static void setAxis(QValueAxis* axis, double min, double max, double interval);

  /// Replaces the rectangles (drawn in this order: later ones on top).
  void setRects(std::vector<ChartRect> rects);
  const std::vector<ChartRect>& rects() const { return m_rects; }
  /// Outlines these rectangles (indices into rects()) and fades the rest; empty: none.
  void setHighlighted(std::set<int> indices);
  const std::set<int>& highlighted() const { return m_highlighted; }

  /// The topmost rectangle under a point of this widget, or -1.
  int rectAt(const QPoint& widgetPos) const;
  /// The centre of rectangle `index` in widget coordinates (tests click and hover there).
  QPoint widgetPosOf(int index) const;
  /// The tooltip last shown for a hover (tests read it: offscreen tooltips are not visible).
  const QString& lastTooltip() const { return m_lastTooltip; }

Q_SIGNALS:
  void rectClicked(quint64 key, int index);

protected:
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

private:
  class Layer;
  QRectF toPosition(const QRectF& data) const;

  QValueAxis* m_axisX = nullptr;
  QValueAxis* m_axisY = nullptr;
  QLineSeries* m_anchor = nullptr;
  Layer* m_layer = nullptr;
  std::vector<ChartRect> m_rects;
  std::set<int> m_highlighted;
  QString m_lastTooltip;
  QPoint m_pressPos;
};

} // namespace fb::gui
