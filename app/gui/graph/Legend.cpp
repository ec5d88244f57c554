// Painting of the graph view's legend.
#include "app/gui/graph/Legend.h"

#include "app/gui/graph/DisplayGraph.h"

#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>

namespace fb::gui {

namespace {
constexpr int kRow = 18, kSwatch = 22, kPad = 8;
} // namespace

Legend::Legend(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);
  hide();
}

void Legend::setEntries(std::vector<LegendEntry> fills, std::vector<LegendEntry> outlines,
                        bool heat) {
  m_fills = std::move(fills);
  m_outlines = std::move(outlines);
  m_heat = heat;
  const QFontMetrics fm(detailFont());
  int width = fm.horizontalAdvance(heatText());
  for (const auto* list : {&m_fills, &m_outlines})
    for (const LegendEntry& e : *list)
      width = std::max(width, fm.horizontalAdvance(e.text));
  const int rows = int(m_fills.size() + m_outlines.size()) + (m_heat ? 1 : 0);
  resize(width + kSwatch + 3 * kPad, rows * kRow + 2 * kPad);
  setVisible(rows > 0);
  update();
}

void Legend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(QColor(0xBB, 0xBB, 0xBB), 1));
  p.setBrush(QColor(255, 255, 255, 230));
  p.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
  p.setFont(detailFont());
  int y = kPad;
  auto text = [&](const QString& s) {
    p.setPen(QColor(0x22, 0x22, 0x22));
    p.drawText(QRect(kPad * 2 + kSwatch, y, width(), kRow), Qt::AlignVCenter | Qt::AlignLeft, s);
    y += kRow;
  };
  for (const LegendEntry& e : m_fills) {
    p.setPen(QPen(QColor(0x55, 0x55, 0x55), 1));
    p.setBrush(e.color);
    p.drawRoundedRect(QRectF(kPad, y + 3, kSwatch, kRow - 6), 3, 3);
    text(e.text);
  }
  for (const LegendEntry& e : m_outlines) {
    p.setPen(QPen(e.color, 3));
    p.setBrush(Qt::white);
    p.drawRoundedRect(QRectF(kPad + 1, y + 4, kSwatch - 2, kRow - 8), 3, 3);
    text(e.text);
  }
  if (m_heat) {
    QLinearGradient g(kPad, 0, kPad + kSwatch, 0);
    for (double t : {0.0, 0.5, 1.0})
      g.setColorAt(t, heatColor(t));
    p.setPen(QPen(QColor(0x55, 0x55, 0x55), 1));
    p.setBrush(g);
    p.drawRect(QRectF(kPad, y + 3, kSwatch, kRow - 6));
    text(heatText());
  }
}

} // namespace fb::gui
