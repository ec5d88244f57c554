// The roofline chart: each kernel at (FLOPs per byte, achieved GFLOP/s) on log axes, under this
// machine's compute and memory roofs as measured by the workbench's micro-benchmark.
#pragma once

#include "app/workbench/MachinePeaks.h"
#include "app/workbench/ProfileReport.h"

#include <QChartView>

#include <optional>
#include <vector>

class QGraphicsSimpleTextItem;
class QLineSeries;
class QLogValueAxis;
class QScatterSeries;

namespace fb::gui {

class RooflineChart : public QChartView {
  Q_OBJECT
public:
  explicit RooflineChart(QWidget* parent = nullptr);

  /// Places the kernels of `summary` (snapshot `index`) under `peaks`' roofs; without peaks,
  /// the kernels alone and `peaksNote` saying why.
  void setData(const workbench::ProfileSummary& summary, int index,
               const std::optional<workbench::MachinePeaks>& peaks, const QString& peaksNote);
  void clear();
  /// Rings these kernels (indices into the summary's kernels).
  void setSelectedKernels(const std::vector<int>& kernels);

  /// The kernels drawn, and those left out because a log axis cannot show them (no FLOPs or no
  /// bytes: copies and reshapes).
  const std::vector<int>& plottedKernels() const { return m_plotted; }
  int omittedKernels() const { return m_omitted; }
  /// The attainable GFLOP/s at `intensity` from DRAM: min(peak, bandwidth × intensity); 0
  /// without peaks.
  double roofAt(double intensity) const;
  /// The same with the L2 cache's bandwidth: the roof of kernels whose data stays in cache.
  double cacheRoofAt(double intensity) const;
  /// What the chart says about its roofs (where they come from) in plain text.
  QString roofNote() const { return m_note; }

Q_SIGNALS:
  void kernelClicked(int kernel);

private:
  QString tooltipOf(int kernel) const;
  void placeLabels();

  QLogValueAxis* m_x = nullptr;
  QLogValueAxis* m_y = nullptr;
  QLineSeries* m_roof = nullptr;
  QLineSeries* m_cacheRoof = nullptr;
  QScatterSeries* m_selected = nullptr;
  std::vector<QScatterSeries*> m_series;       ///< one per generator
  std::vector<std::vector<int>> m_seriesKernels; ///< kernel index of each point, per series
  std::vector<QGraphicsSimpleTextItem*> m_labels;
  std::vector<int> m_labelKernels;
  QGraphicsSimpleTextItem* m_computeLabel = nullptr;
  QGraphicsSimpleTextItem* m_memoryLabel = nullptr;
  QGraphicsSimpleTextItem* m_cacheLabel = nullptr;
  workbench::ProfileSummary m_summary;
  std::optional<workbench::MachinePeaks> m_peaks;
  std::vector<int> m_plotted;
  int m_omitted = 0;
  QString m_note;
};

} // namespace fb::gui
