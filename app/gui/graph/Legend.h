// The legend of the graph view: what the colours on screen mean (op categories present, marks,
// heat), drawn in the view's top-left corner.
#pragma once

#include "app/gui/graph/OpColors.h"

#include <QWidget>

#include <vector>

namespace fb::gui {

class Legend : public QWidget {
  Q_OBJECT
public:
  explicit Legend(QWidget* parent);
  /// Fill entries (swatches) and outline entries (marks); the widget resizes to fit.
  void setEntries(std::vector<LegendEntry> fills, std::vector<LegendEntry> outlines, bool heat);
  /// What the heat gradient means (empty: numeric error); takes effect at the next setEntries.
  void setHeatText(const QString& text) { m_heatText = text; }

protected:
  void paintEvent(QPaintEvent* event) override;

private:
  QString heatText() const {
    return m_heatText.isEmpty() ? tr("numeric error: low \u2192 high") : m_heatText;
  }
  std::vector<LegendEntry> m_fills, m_outlines;
  bool m_heat = false;
  QString m_heatText;
};

} // namespace fb::gui
