// Chart text sizes for presentation mode.
#include "app/gui/ChartFonts.h"

#include <QAbstractAxis>
#include <QChart>
#include <QLegend>

namespace fb::gui {

void setChartPointSize(QChart* chart, int points) {
  if (!chart)
    return;
  auto sized = [points](QFont f, int extra) {
    f.setPointSize(points + extra);
    return f;
  };
  chart->setTitleFont(sized(chart->titleFont(), 1));
  chart->legend()->setFont(sized(chart->legend()->font(), 0));
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsFont(sized(axis->labelsFont(), -1));
    axis->setTitleFont(sized(axis->titleFont(), 0));
  }
}

} // namespace fb::gui
