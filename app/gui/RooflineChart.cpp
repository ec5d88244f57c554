// The roofline chart: log axes, the roofs, the kernels by generator, labels of the slowest.
#include "app/gui/RooflineChart.h"

#include <QChart>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

/// Okabe-Ito colours, one per code generator.
QColor generatorColor(const std::string& generator) {
  if (generator == "gemm")
    return QColor(0x00, 0x72, 0xB2);
  if (generator == "dwconv")
    return QColor(0xCC, 0x79, 0xA7);
  if (generator == "loops")
    return QColor(0xE6, 0x9F, 0x00);
  return QColor(0x66, 0x66, 0x66);
}

QString generatorTitle(const std::string& generator) {
  if (generator == "gemm")
    return QObject::tr("GEMM kernels");
  if (generator == "dwconv")
    return QObject::tr("depthwise kernels");
  if (generator == "loops")
    return QObject::tr("loop-nest kernels");
  return QObject::tr("%1 kernels").arg(qs(generator));
}

/// The largest power of ten at or below v, and the smallest at or above.
double floorPow10(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double ceilPow10(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

/// How many of the slowest kernels get a label on the chart.
constexpr int kLabelled = 5;

} // namespace

RooflineChart::RooflineChart(QWidget* parent) : QChartView(new QChart, parent) {
  setRenderHint(QPainter::Antialiasing);
  QChart* c = chart();
  c->setMargins(QMargins(6, 6, 6, 6));
  c->legend()->setAlignment(Qt::AlignBottom);
  m_x = new QLogValueAxis;
  m_x->setBase(10);
  m_x->setLabelFormat(QStringLiteral("%g"));
  m_x->setMinorTickCount(8);
  m_x->setTitleText(tr("arithmetic intensity (FLOP per byte moved)"));
  m_y = new QLogValueAxis;
  m_y->setBase(10);
  m_y->setLabelFormat(QStringLiteral("%g"));
  m_y->setMinorTickCount(8);
  m_y->setTitleText(tr("achieved GFLOP/s"));
  c->addAxis(m_x, Qt::AlignBottom);
  c->addAxis(m_y, Qt::AlignLeft);
  m_roof = new QLineSeries;
  m_roof->setName(tr("roof from DRAM: min(peak FLOP/s, bandwidth \u00d7 intensity)"));
  m_roof->setPen(QPen(QColor(0x33, 0x33, 0x33), 2.2));
  c->addSeries(m_roof);
  m_roof->attachAxis(m_x);
  m_roof->attachAxis(m_y);
  // Kernels whose tensors fit in cache can pass the DRAM roof; this one still bounds them.
  m_cacheRoof = new QLineSeries;
  m_cacheRoof->setName(tr("roof from L2 cache"));
  m_cacheRoof->setPen(QPen(QColor(0x77, 0x77, 0x77), 1.6, Qt::DashLine));
  c->addSeries(m_cacheRoof);
  m_cacheRoof->attachAxis(m_x);
  m_cacheRoof->attachAxis(m_y);
  m_selected = new QScatterSeries;
  m_selected->setName(tr("selected node"));
  m_selected->setMarkerSize(20);
  m_selected->setColor(Qt::transparent);
  m_selected->setBorderColor(QColor(0xD5, 0x2B, 0x1E));
  m_selected->setPen(QPen(QColor(0xD5, 0x2B, 0x1E), 2.5));
  c->addSeries(m_selected);
  m_selected->attachAxis(m_x);
  m_selected->attachAxis(m_y);
  m_computeLabel = new QGraphicsSimpleTextItem(c);
  m_memoryLabel = new QGraphicsSimpleTextItem(c);
  m_cacheLabel = new QGraphicsSimpleTextItem(c);
  m_cacheLabel->setBrush(QColor(0x55, 0x55, 0x55));
  for (auto* l : {m_computeLabel, m_memoryLabel, m_cacheLabel})
    l->setZValue(10);
  connect(c, &QChart::plotAreaChanged, this, [this] { placeLabels(); });
  clear();
}

void RooflineChart::clear() {
  setData({}, -1, std::nullopt, tr("Profile a snapshot to place its kernels here."));
}

double RooflineChart::roofAt(double intensity) const {
  if (!m_peaks)
    return 0;
  return std::min(m_peaks->gflops, m_peaks->gbps * intensity);
}

double RooflineChart::cacheRoofAt(double intensity) const {
  if (!m_peaks || !(m_peaks->cacheGbps > 0))
    return 0;
  return std::min(m_peaks->gflops, m_peaks->cacheGbps * intensity);
}

void RooflineChart::setData(const workbench::ProfileSummary& summary, int index,
                            const std::optional<workbench::MachinePeaks>& peaks,
                            const QString& peaksNote) {
  m_summary = summary;
  m_peaks = peaks;
  QChart* c = chart();
  for (QScatterSeries* s : m_series) {
    c->removeSeries(s);
    delete s;
  }
  m_series.clear();
  m_seriesKernels.clear();
  for (QGraphicsSimpleTextItem* l : m_labels)
    delete l;
  m_labels.clear();
  m_labelKernels.clear();
  m_plotted.clear();
  m_omitted = 0;

  // Kernels by generator; those a log axis cannot show are counted instead.
  std::map<std::string, std::vector<int>> byGenerator;
  double xMin = 1e300, xMax = 0, yMin = 1e300, yMax = 0;
  for (size_t k = 0; k < summary.kernels.size(); ++k) {
    const workbench::KernelTiming& t = summary.kernels[k];
    if (!(t.flops > 0) || !(t.bytes > 0) || !(t.gflops > 0)) {
      ++m_omitted;
      continue;
    }
    byGenerator[t.generator].push_back(int(k));
    m_plotted.push_back(int(k));
    xMin = std::min(xMin, t.intensity());
    xMax = std::max(xMax, t.intensity());
    yMin = std::min(yMin, t.gflops);
    yMax = std::max(yMax, t.gflops);
  }
  for (auto& [generator, kernels] : byGenerator) {
    auto* s = new QScatterSeries;
    s->setName(generatorTitle(generator));
    s->setMarkerSize(11);
    s->setColor(generatorColor(generator));
    s->setBorderColor(generatorColor(generator).darker(140));
    for (int k : kernels)
      s->append(summary.kernels[size_t(k)].intensity(), summary.kernels[size_t(k)].gflops);
    c->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(m_y);
    const size_t seriesIndex = m_series.size();
    connect(s, &QScatterSeries::hovered, this, [this, seriesIndex](const QPointF& p, bool on) {
      if (!on) {
        QToolTip::hideText();
        return;
      }
      const QList<QPointF> points = m_series[seriesIndex]->points();
      for (int i = 0; i < points.size(); ++i)
        if (points[i] == p) {
          QToolTip::showText(QCursor::pos(), tooltipOf(m_seriesKernels[seriesIndex][size_t(i)]), this);
          return;
        }
    });
    connect(s, &QScatterSeries::clicked, this, [this, seriesIndex](const QPointF& p) {
      const QList<QPointF> points = m_series[seriesIndex]->points();
      for (int i = 0; i < points.size(); ++i)
        if (points[i] == p) {
          Q_EMIT kernelClicked(m_seriesKernels[seriesIndex][size_t(i)]);
          return;
        }
    });
    m_series.push_back(s);
    m_seriesKernels.push_back(kernels);
  }
  m_selected->clear();
  // The selection ring above the kernels: re-add it last.
  c->removeSeries(m_selected);
  c->addSeries(m_selected);
  m_selected->attachAxis(m_x);
  m_selected->attachAxis(m_y);

  // Ranges: whole decades around the kernels and the ridge point.
  if (m_plotted.empty()) {
    xMin = 0.1;
    xMax = 100;
    yMin = 0.1;
    yMax = 100;
  }
  QList<QPointF> roof, cacheRoof;
  if (peaks) {
    const double ridge = peaks->gflops / peaks->gbps;
    xMin = std::min(xMin, ridge / 4);
    xMax = std::max(xMax, ridge * 4);
    yMax = std::max(yMax, peaks->gflops);
    yMin = std::min(yMin, peaks->gbps * xMin);
  }
  xMin = floorPow10(xMin / 1.2);
  xMax = ceilPow10(xMax * 1.2);
  yMin = floorPow10(yMin / 1.5); // points and labels keep off the edges
  yMax = ceilPow10(yMax * 1.5);
  if (peaks) {
    const double ridge = peaks->gflops / peaks->gbps;
    roof << QPointF(xMin, roofAt(xMin)) << QPointF(ridge, peaks->gflops) << QPointF(xMax, peaks->gflops);
    if (peaks->cacheGbps > 0) {
      const double cacheRidge = peaks->gflops / peaks->cacheGbps;
      cacheRoof << QPointF(xMin, cacheRoofAt(xMin));
      if (cacheRidge > xMin)
        cacheRoof << QPointF(cacheRidge, peaks->gflops);
      cacheRoof << QPointF(ridge, peaks->gflops); // along the compute roof to where DRAM meets it
    }
    m_computeLabel->setText(tr("peak %1 GFLOP/s (%2 FMA)").arg(peaks->gflops, 0, 'f', 1).arg(qs(peaks->isa)));
    m_memoryLabel->setText(
        tr("DRAM %1 GB/s (%2)").arg(peaks->gbps, 0, 'f', 1).arg(qs(peaks->memoryMethod)));
    m_cacheLabel->setText(peaks->cacheGbps > 0 ? tr("L2 %1 GB/s").arg(peaks->cacheGbps, 0, 'f', 0) : QString());
  } else {
    m_computeLabel->setText({});
    m_memoryLabel->setText({});
    m_cacheLabel->setText({});
  }
  m_roof->replace(roof);
  m_cacheRoof->replace(cacheRoof);
  for (QLegendMarker* m : c->legend()->markers(m_roof))
    m->setVisible(peaks.has_value());
  for (QLegendMarker* m : c->legend()->markers(m_cacheRoof))
    m->setVisible(!cacheRoof.isEmpty());
  m_x->setRange(xMin, xMax);
  m_y->setRange(yMin, yMax);

  // Labels on the slowest kernels, the ones worth a look. Identical kernels (the same op on
  // the same shapes in several layers) sit on one point and share one label: "×3".
  std::vector<int> slowest = m_plotted;
  std::stable_sort(slowest.begin(), slowest.end(), [&](int a, int b) {
    return summary.kernels[size_t(a)].medianUs > summary.kernels[size_t(b)].medianUs;
  });
  std::vector<std::pair<int, int>> labelled; // kernel, how many identical ones it stands for
  auto same = [&](const workbench::KernelTiming& a, const workbench::KernelTiming& b) {
    return a.op == b.op && std::abs(std::log10(a.intensity() / b.intensity())) < 0.02 &&
           std::abs(std::log10(a.gflops / b.gflops)) < 0.05;
  };
  for (int k : slowest) {
    auto it = std::find_if(labelled.begin(), labelled.end(), [&](const auto& l) {
      return same(summary.kernels[size_t(l.first)], summary.kernels[size_t(k)]);
    });
    if (it != labelled.end())
      ++it->second;
    else if (labelled.size() < size_t(kLabelled))
      labelled.push_back({k, 1});
  }
  for (const auto& [k, count] : labelled) {
    const workbench::KernelTiming& t = summary.kernels[size_t(k)];
    QString op = qs(t.op);
    if (op.size() > 28)
      op = op.left(27) + QStringLiteral("\u2026");
    QString text = QStringLiteral("%1 %2 %").arg(op).arg(t.percent, 0, 'f', t.percent < 10 ? 1 : 0);
    if (count > 1)
      text += QStringLiteral(" \u00d7%1").arg(count);
    auto* label = new QGraphicsSimpleTextItem(text, c);
    label->setZValue(10);
    QFont f = label->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    label->setFont(f);
    m_labels.push_back(label);
    m_labelKernels.push_back(k);
  }

  QString note = peaks ? qs(workbench::describeMachinePeaks(*peaks)) : peaksNote;
  if (m_omitted > 0)
    note += tr("; %n kernel(s) without FLOPs or bytes (copies, reshapes) not shown", nullptr, m_omitted);
  m_note = note;
  const QString title = index >= 0 ? tr("<b>Roofline of snapshot %1</b> \u2014 %2 kernels, %3 thread(s)")
                                         .arg(index)
                                         .arg(summary.kernels.size())
                                         .arg(summary.threads)
                                   : tr("<b>Roofline</b>");
  c->setTitle(title + QStringLiteral("<br><span style='font-size:small; color:#555'>") +
              note.toHtmlEscaped() + QStringLiteral("</span>"));
  placeLabels();
}

void RooflineChart::setSelectedKernels(const std::vector<int>& kernels) {
  QList<QPointF> points;
  for (int k : kernels)
    if (std::find(m_plotted.begin(), m_plotted.end(), k) != m_plotted.end())
      points << QPointF(m_summary.kernels[size_t(k)].intensity(), m_summary.kernels[size_t(k)].gflops);
  m_selected->replace(points);
}

void RooflineChart::placeLabels() {
  QChart* c = chart();
  const QRectF plot = c->plotArea();
  // Greedy placement, slowest kernel first: the first of a few spots around the point that
  // overlaps no label placed before and stays inside the plot.
  std::vector<QRectF> placed;
  for (size_t i = 0; i < m_labels.size(); ++i) {
    const workbench::KernelTiming& t = m_summary.kernels[size_t(m_labelKernels[i])];
    const QPointF p = c->mapToPosition(QPointF(t.intensity(), t.gflops), m_roof);
    const QRectF box = m_labels[i]->boundingRect();
    const double w = box.width(), h = box.height();
    const QPointF spots[] = {{p.x() + 9, p.y() - h / 2},     {p.x() - 9 - w, p.y() - h / 2},
                             {p.x() + 6, p.y() - h - 6},     {p.x() + 6, p.y() + 6},
                             {p.x() - w - 6, p.y() - h - 6}, {p.x() - w - 6, p.y() + 6},
                             {p.x() + 6, p.y() - 2 * h - 8}, {p.x() + 6, p.y() + h + 8},
                             {p.x() - w - 6, p.y() - 2 * h - 8}, {p.x() - w - 6, p.y() + h + 8}};
    // Failing a free spot, the first one inside the plot (overlapping), else the first.
    std::optional<QRectF> chosen, inside;
    for (const QPointF& at : spots) {
      const QRectF r(at, box.size());
      if (!plot.contains(r))
        continue;
      if (!inside)
        inside = r;
      if (std::none_of(placed.begin(), placed.end(), [&](const QRectF& o) { return o.intersects(r); })) {
        chosen = r;
        break;
      }
    }
    if (!chosen)
      chosen = inside.value_or(QRectF(spots[0], box.size()));
    placed.push_back(*chosen);
    m_labels[i]->setPos(chosen->topLeft());
  }
  if (m_peaks) {
    const QPointF right = c->mapToPosition(QPointF(m_x->max(), m_peaks->gflops), m_roof);
    const QRectF cb = m_computeLabel->boundingRect();
    m_computeLabel->setPos(right.x() - cb.width() - 6, right.y() - cb.height() - 3);
    // The memory label sits on the sloped roof near its left end.
    const double x = m_x->min() * 2;
    const QPointF left = c->mapToPosition(QPointF(x, roofAt(x)), m_roof);
    m_memoryLabel->setPos(left.x() + 4, left.y() - m_memoryLabel->boundingRect().height() - 4);
    if (m_peaks->cacheGbps > 0) {
      const QPointF at = c->mapToPosition(QPointF(x, cacheRoofAt(x)), m_roof);
      m_cacheLabel->setPos(at.x() + 4, at.y() - m_cacheLabel->boundingRect().height() - 4);
    }
  }
}

QString RooflineChart::tooltipOf(int kernel) const {
  const workbench::KernelTiming& t = m_summary.kernels[size_t(kernel)];
  QString text = tr("<b>%1</b> (%2)<br>median %3 ms per run, %4 % of kernel time<br>%5 GFLOP/s, %6 GB/s, "
                    "%7 FLOP/byte")
                     .arg(qs(t.name).toHtmlEscaped(), qs(t.op).toHtmlEscaped())
                     .arg(t.medianUs / 1000.0, 0, 'f', 4)
                     .arg(t.percent, 0, 'f', 1)
                     .arg(t.gflops, 0, 'f', 2)
                     .arg(t.gbps, 0, 'f', 2)
                     .arg(t.intensity(), 0, 'f', 2);
  if (m_peaks && roofAt(t.intensity()) > 0) {
    text += tr("<br>%1 % of the DRAM roof here (%2 bound)")
                .arg(100.0 * t.gflops / roofAt(t.intensity()), 0, 'f', 0)
                .arg(t.intensity() < m_peaks->gflops / m_peaks->gbps ? tr("memory") : tr("compute"));
    if (t.gflops > roofAt(t.intensity()))
      text += tr("<br>above the DRAM roof: its data stays in cache");
  }
  return text;
}

} // namespace fb::gui
