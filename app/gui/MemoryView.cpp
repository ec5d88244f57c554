// The memory plan view: charts of buffers over steps and offsets, totals and comparison.
#include "app/gui/MemoryView.h"
#include "app/gui/RectChart.h"
#include "app/gui/ShownText.h"
#include "app/gui/graph/OpColors.h"
#include "app/workbench/ProfileReport.h"
#include "core/Format.h"

#include <QChart>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QSplitter>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <set>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString bytesText(double b) { return qs(formatBytes(b, Digits::significantDigits(3))); }

/// "#12 conv1 (Conv)" with the model's name escaped for rich text.
QString nodeText(const workbench::PlanNodeRef& n) {
  QString name =
      n.name.empty() ? QString() : shownName(n.name, 60).toHtmlEscaped() + QStringLiteral(" ");
  return QStringLiteral("#%1 %2(%3)").arg(n.id).arg(name, qs(n.op).toHtmlEscaped());
}

/// The label drawn inside a buffer: its producer's op ("Conv+Relu" for a fused group).
QString shortOp(const workbench::PlanNodeRef& n) {
  QString op = qs(n.op);
  if (op.startsWith(QLatin1String("Fused(")) && op.endsWith(QLatin1Char(')')))
    op = op.mid(6, op.size() - 7);
  return op;
}

QString tooltipOf(const workbench::PlannedBuffer& b) {
  QString t = QStringLiteral("<b>%%1</b> %2<br>%3 at offset %4<br>live at steps %5\u2013%6")
                  .arg(qs(b.buffer.value).left(80).toHtmlEscaped(), qs(b.type).toHtmlEscaped(),
                       bytesText(double(b.buffer.size)), bytesText(double(b.buffer.offset)))
                  .arg(b.buffer.first)
                  .arg(b.buffer.last);
  t += QObject::tr("<br>produced by %1").arg(nodeText(b.producer));
  if (!b.consumers.empty()) {
    QStringList readers;
    for (size_t i = 0; i < b.consumers.size() && i < 6; ++i)
      readers << nodeText(b.consumers[i]);
    if (b.consumers.size() > 6)
      readers << QObject::tr("and %1 more").arg(b.consumers.size() - 6);
    t += QObject::tr("<br>read by %1").arg(readers.join(QStringLiteral(", ")));
  }
  if (!b.buffer.reuses.empty())
    t += QObject::tr("<br>overwrites %%1 in place").arg(qs(b.buffer.reuses).left(80).toHtmlEscaped());
  return t;
}

/// A tick interval of 1, 2 or 5 times a power of ten giving about `ticks` ticks over `span`.
double niceInterval(double span, int ticks) {
  const double raw = std::max(span / ticks, 1e-12);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p)
      return m * p;
  return 10 * p;
}

QLineSeries* addLine(RectChart* chart, const QString& name, const QPen& pen) {
  auto* s = new QLineSeries;
  s->setName(name);
  s->setPen(pen);
  chart->chart()->addSeries(s);
  s->attachAxis(chart->axisX());
  s->attachAxis(chart->axisY());
  return s;
}

} // namespace

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* bar = new QHBoxLayout;
  m_compare = new QComboBox;
  m_compare->setObjectName("memoryCompare");
  m_compare->setToolTip(tr("Show another snapshot's plan beside this one (before and after "
                           "fusion, with the same offset scale)"));
  bar->addWidget(new QLabel(tr("Compare with:")));
  bar->addWidget(m_compare);
  bar->addStretch(1);
  layout->addLayout(bar);
  m_totals = new QLabel;
  m_totals->setObjectName("memoryTotals");
  m_totals->setWordWrap(true);
  m_totals->setTextFormat(Qt::RichText);
  m_totals->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_totals);
  m_message = new QLabel;
  m_message->setWordWrap(true);
  m_message->setTextFormat(Qt::PlainText);
  m_message->hide();
  layout->addWidget(m_message);
  m_split = new QSplitter(Qt::Horizontal);
  makePane(m_other);
  makePane(m_main);
  m_split->addWidget(m_other.chart); // the compared snapshot, usually the earlier one, on the left
  m_split->addWidget(m_main.chart);
  m_other.chart->hide();
  layout->addWidget(m_split, 1);

  connect(m_compare, &QComboBox::currentIndexChanged, this, [this](int) {
    if (!m_updatingCombo)
      Q_EMIT compareRequested(compareIndex());
  });
  for (Pane* p : {&m_main, &m_other})
    connect(p->chart, &RectChart::rectClicked, this, [this, p](quint64 key, int) {
      Q_EMIT nodeClicked(NodeId(key), p->shown.index);
    });
  showMessage(tr("Open a model to see its memory plan."));
}

void MemoryView::makePane(Pane& pane) {
  pane.chart = new RectChart;
  pane.chart->setMinimumSize(320, 220);
  QChart* c = pane.chart->chart();
  c->legend()->setVisible(true);
  c->legend()->setAlignment(Qt::AlignBottom);
  pane.chart->axisX()->setTitleText(tr("execution step"));
  pane.chart->axisX()->setLabelFormat(QStringLiteral("%.0f"));
  // The anchor series carries no data; keep it out of the legend.
  for (QLegendMarker* m : c->legend()->markers(pane.chart->anchorSeries()))
    m->setVisible(false);
  pane.live = addLine(pane.chart, tr("bytes live"), QPen(QColor(0x1F, 0x4E, 0x9A), 1.6));
  QPen bound(QColor(0x00, 0x80, 0x60), 1.4, Qt::DashLine);
  pane.lowerBound = addLine(pane.chart, tr("lower bound"), bound);
  QPen arena(QColor(0xC0, 0x30, 0x20), 1.4, Qt::DashLine);
  pane.arena = addLine(pane.chart, tr("arena size"), arena);
}

void MemoryView::setSnapshots(const QStringList& labels, int current) {
  m_labels = labels;
  m_updatingCombo = true;
  const int keep = compareIndex();
  m_compare->clear();
  m_compare->addItem(tr("nothing"), -1);
  for (int i = 0; i < labels.size(); ++i)
    if (i != current)
      m_compare->addItem(labels[i], i);
  const int at = m_compare->findData(keep);
  m_compare->setCurrentIndex(at >= 0 ? at : 0);
  m_updatingCombo = false;
}

int MemoryView::compareIndex() const {
  return m_compare->currentIndex() < 0 ? -1 : m_compare->currentData().toInt();
}

void MemoryView::setCompareIndex(int index) {
  const int at = m_compare->findData(index);
  m_compare->setCurrentIndex(at >= 0 ? at : 0); // emits compareRequested
}

void MemoryView::showMessage(const QString& text) {
  m_message->setText(text);
  m_message->setVisible(!text.isEmpty());
}

QString MemoryView::totalsText() const { return m_totals->text(); }

void MemoryView::showOutcome(const PlanOutcome& outcome) {
  m_outcome = outcome;
  if (!outcome.error.isEmpty() || !outcome.main.report) {
    showMessage(outcome.error);
    return;
  }
  const workbench::MemoryPlanReport& main = *outcome.main.report;
  const workbench::MemoryPlanReport* other =
      outcome.other && outcome.other->report ? outcome.other->report.get() : nullptr;
  // One offset scale for both charts, so equal heights are equal bytes.
  double maxBytes = double(main.plan.arenaBytes);
  if (other)
    maxBytes = std::max(maxBytes, double(other->plan.arenaBytes));
  double unit = 1;
  QString unitName = tr("bytes");
  if (maxBytes >= 1 << 20) {
    unit = 1 << 20;
    unitName = QStringLiteral("MiB");
  } else if (maxBytes >= 1 << 10) {
    unit = 1 << 10;
    unitName = QStringLiteral("KiB");
  }
  const double yMax = std::max(maxBytes / unit, 1.0); // an empty plan still gets a sane axis
  fillPane(m_main, outcome.main, unit, unitName, yMax);
  if (other && !m_other.chart->isVisibleTo(this)) {
    m_other.chart->show();
    m_split->setSizes({1000, 1000}); // side by side at equal widths
  }
  m_other.chart->setVisible(other != nullptr);
  if (other)
    fillPane(m_other, *outcome.other, unit, unitName, yMax);

  auto totals = [](const workbench::MemoryPlanReport& r) {
    const MemoryPlan& p = r.plan;
    return tr("<b>arena %1</b> \u00b7 naive %2 (one buffer each, no reuse) \u00b7 lower bound %3 "
              "(most bytes live at one step) \u00b7 <b>efficiency %4 %</b> \u00b7 %5, %6 "
              "in place \u00b7 ordering: %7")
        .arg(bytesText(double(p.arenaBytes)), bytesText(double(p.naiveBytes)),
             bytesText(double(p.lowerBoundBytes)))
        .arg(100.0 * p.efficiency(), 0, 'f', 1)
        .arg(p.buffers.size() == 1 ? tr("1 buffer") : tr("%1 buffers").arg(p.buffers.size()))
        .arg(p.inPlaceReuses)
        .arg(qs(p.strategy).toHtmlEscaped());
  };
  QString text;
  if (!main.error.empty())
    text = tr("Snapshot %1: no plan (%2)").arg(outcome.main.index).arg(qs(main.error).toHtmlEscaped());
  else
    text = tr("Snapshot %1: %2").arg(outcome.main.index).arg(totals(main));
  if (other) {
    if (!other->error.empty()) {
      text += tr("<br>Snapshot %1: no plan (%2)").arg(outcome.other->index).arg(qs(other->error).toHtmlEscaped());
    } else {
      text += tr("<br>Snapshot %1: %2").arg(outcome.other->index).arg(totals(*other));
      if (main.error.empty() && other->plan.arenaBytes > 0) {
        const double change = 100.0 * (double(main.plan.arenaBytes) / double(other->plan.arenaBytes) - 1);
        if (main.plan.arenaBytes == other->plan.arenaBytes)
          text += tr("<br>Both arenas are the same size; snapshot %1 needs %2 fewer buffers.")
                      .arg(outcome.main.index)
                      .arg(qint64(other->plan.buffers.size()) - qint64(main.plan.buffers.size()));
        else
          text += tr("<br>Snapshot %1's arena is <b>%2 % %3</b> than snapshot %4's.")
                      .arg(outcome.main.index)
                      .arg(std::abs(change), 0, 'f', 1)
                      .arg(change < 0 ? tr("smaller") : tr("larger"))
                      .arg(outcome.other->index);
      }
    }
  }
  m_totals->setText(text);
  showMessage({});
  setSelectedNode(m_selected);
}

void MemoryView::fillPane(Pane& pane, const PlannedSnapshot& s, double unit,
                          const QString& unitName, double yMax) {
  pane.shown = s;
  const workbench::MemoryPlanReport& r = *s.report;
  std::vector<ChartRect> rects;
  rects.reserve(r.buffers.size());
  // An in-place pair shares its bytes at one step: the old value is read and the new one
  // written there. Each gets half of that step, so the hand-over shows instead of an overlap.
  std::set<std::string> overwritten;
  for (const workbench::PlannedBuffer& b : r.buffers)
    if (!b.buffer.reuses.empty())
      overwritten.insert(b.buffer.reuses);
  for (const workbench::PlannedBuffer& b : r.buffers) {
    ChartRect c;
    const double x0 = b.buffer.first + (b.buffer.reuses.empty() ? 0.0 : 0.5);
    const double x1 = b.buffer.last + (overwritten.count(b.buffer.value) ? 0.5 : 1.0);
    c.rect = QRectF(x0, double(b.buffer.offset) / unit, x1 - x0, double(b.buffer.size) / unit);
    c.fill = opColor(b.producer.kind);
    c.tooltip = tooltipOf(b);
    c.label = shortOp(b.producer);
    c.key = b.producer.id;
    rects.push_back(std::move(c));
  }
  pane.chart->setRects(std::move(rects));
  // A step's bytes span [s, s+1) like its buffers.
  QList<QPointF> live;
  for (size_t i = 0; i < r.liveBytes.size(); ++i) {
    live << QPointF(double(i), double(r.liveBytes[i]) / unit)
         << QPointF(double(i + 1), double(r.liveBytes[i]) / unit);
  }
  pane.live->replace(live);
  const double steps = std::max<double>(1, double(r.steps.size()));
  const double bound = double(r.plan.lowerBoundBytes) / unit, arena = double(r.plan.arenaBytes) / unit;
  if (r.error.empty()) {
    pane.lowerBound->replace({QPointF(0, bound), QPointF(steps, bound)});
    pane.arena->replace({QPointF(0, arena), QPointF(steps, arena)});
  } else { // no plan: no lines pretending to be one
    pane.lowerBound->clear();
    pane.arena->clear();
  }
  RectChart::setAxis(pane.chart->axisX(), 0, steps, std::max(1.0, niceInterval(steps, 8)));
  RectChart::setAxis(pane.chart->axisY(), 0, yMax * 1.05, niceInterval(yMax * 1.05, 6));
  pane.chart->axisY()->setLabelFormat(unit == 1 ? QStringLiteral("%.0f") : QStringLiteral("%.3g"));
  pane.chart->axisY()->setTitleText(tr("arena offset (%1)").arg(unitName));
  pane.chart->chart()->zoomReset();
  const QString label = s.index >= 0 && s.index < m_labels.size()
                            ? m_labels[s.index].toHtmlEscaped()
                            : QString::number(s.index);
  pane.chart->chart()->setTitle(
      r.error.empty()
          ? tr("<b>Snapshot %1</b> \u2014 arena %2, lower bound %3, %4 % efficient")
                .arg(label, bytesText(double(r.plan.arenaBytes)), bytesText(double(r.plan.lowerBoundBytes)))
                .arg(100.0 * r.plan.efficiency(), 0, 'f', 1)
          : tr("<b>Snapshot %1</b> \u2014 no plan: %2")
                .arg(label, (r.error.size() > 90 ? qs(r.error.substr(0, 89)) + QStringLiteral("\u2026")
                                                 : qs(r.error))
                                .toHtmlEscaped()));
}

void MemoryView::setSelectedNode(NodeId id) {
  m_selected = id;
  highlight(m_main, id ? std::vector<NodeId>{id} : std::vector<NodeId>{});
  if (m_other.chart->isVisibleTo(this) && m_main.shown.graph && m_other.shown.graph && id)
    highlight(m_other, workbench::correspondingNodes(*m_main.shown.graph, id, *m_other.shown.graph));
  else
    highlight(m_other, {});
}

void MemoryView::highlight(Pane& pane, const std::vector<NodeId>& nodes) {
  std::set<int> marked;
  if (pane.shown.report && !nodes.empty()) {
    const std::set<NodeId> ids(nodes.begin(), nodes.end());
    const auto& buffers = pane.shown.report->buffers;
    for (size_t i = 0; i < buffers.size(); ++i) {
      bool hit = ids.count(buffers[i].producer.id) > 0;
      for (const auto& c : buffers[i].consumers)
        hit = hit || ids.count(c.id) > 0;
      if (hit)
        marked.insert(int(i));
    }
  }
  pane.chart->setHighlighted(std::move(marked));
}

} // namespace fb::gui
