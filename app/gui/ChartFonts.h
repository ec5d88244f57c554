// Text size of Qt Charts: a chart keeps the fonts it was made with, so presentation mode sets
// them explicitly (title, legend, every axis's labels and title).
#pragma once

class QChart;

namespace fb::gui {

/// Sets every text of `chart` to `points` (titles a little larger).
void setChartPointSize(QChart* chart, int points);

} // namespace fb::gui
