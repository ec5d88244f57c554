// The diff view's widgets, marks, heat colouring and selection/pan synchronization.
#include "app/gui/DiffView.h"

#include "app/gui/IrHighlighter.h"
#include "app/gui/ShownText.h"
#include "app/gui/graph/OpColors.h"
#include "app/workbench/OverlayGraph.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace fb::gui {

namespace {

QLabel* swatch(const QColor& color, const QString& text) {
  auto* l = new QLabel(QStringLiteral("<span style=\"background:%1; border:1px solid #555;\">"
                                      "&nbsp;&nbsp;&nbsp;&nbsp;</span>&nbsp;%2")
                           .arg(color.name(), text));
  return l;
}

QString describe(const Graph* g, NodeId id) {
  const Node* n = g ? g->findNode(id) : nullptr;
  if (!n)
    return QStringLiteral("#%1").arg(id);
  QString s = QStringLiteral("#%1 %2").arg(id).arg(opName(n->op()));
  if (!n->name().empty())
    s += QStringLiteral(" \"%1\"").arg(shownName(n->name()));
  return s;
}

/// Error to heat on a log scale. Values within tolerance stay cool (0 to 0.2: 1e-7 to 1e-4, the
/// default f32 tolerance); values outside it are hot (0.55 to 0.75: from the tolerance to 1),
/// short of the darkest red so node labels stay readable on a projector.
double heatOf(double maxAbs, bool ok) {
  if (!(maxAbs > 1e-7))
    return ok ? 0.0 : 0.75; // a NaN or a shape mismatch is as hot as it gets
  const double decades = std::log10(maxAbs / 1e-4); // 0 at the tolerance
  if (ok)
    return 0.2 * std::clamp((decades + 3.0) / 3.0, 0.0, 1.0);
  return 0.55 + 0.2 * std::clamp(decades / 4.0, 0.0, 1.0);
}

constexpr int kIdRole = Qt::UserRole + 1;

/// True when `id` is a top-level node of `g` (findNode also finds nodes inside fused bodies,
/// which the graph view does not draw as their own boxes).
bool hasTopLevelNode(const Graph* g, NodeId id) {
  if (!g)
    return false;
  for (const auto& n : g->nodes())
    if (n->id() == id)
      return true;
  return false;
}

} // namespace

DiffView::DiffView(QWidget* parent) : QWidget(parent) {
  m_comboA = new QComboBox;
  m_comboB = new QComboBox;
  m_comboA->setObjectName("diffA");
  m_comboB->setObjectName("diffB");
  m_comboA->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_comboB->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_sideBySide = new QPushButton(tr("Side by side"));
  m_overlayButton = new QPushButton(tr("Overlay"));
  m_sideBySide->setCheckable(true);
  m_overlayButton->setCheckable(true);
  m_sideBySide->setChecked(true);
  auto* modes = new QButtonGroup(this);
  modes->addButton(m_sideBySide);
  modes->addButton(m_overlayButton);
  m_numeric = new QPushButton(tr("Numeric diff"));
  m_numeric->setToolTip(tr("Run both snapshots on the same random inputs and compare every value"));
  m_firstDivergentButton = new QPushButton(tr("First divergent node"));
  m_firstDivergentButton->setEnabled(false);
  m_summary = new QLabel;
  m_summary->setObjectName("diffSummary");

  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Compare")));
  top->addWidget(m_comboA);
  top->addWidget(new QLabel(tr("with")));
  top->addWidget(m_comboB);
  top->addSpacing(12);
  top->addWidget(m_sideBySide);
  top->addWidget(m_overlayButton);
  top->addStretch(1);
  // Three short rows rather than one long one, so the diff tab never forces a wide window.
  auto* second = new QHBoxLayout;
  second->addWidget(m_numeric);
  second->addWidget(m_firstDivergentButton);
  second->addSpacing(12);
  second->addWidget(makeLegend());
  second->addStretch(1);

  m_viewA = new GraphView;
  m_viewB = new GraphView;
  m_overlay = new GraphView;
  m_viewA->setObjectName("diffViewA");
  m_viewB->setObjectName("diffViewB");
  m_overlay->setObjectName("diffOverlay");
  m_titleA = new QLabel;
  m_titleB = new QLabel;
  for (QLabel* t : {m_titleA, m_titleB})
    t->setStyleSheet("font-weight: bold;");
  auto* paneA = new QWidget;
  auto* la = new QVBoxLayout(paneA);
  la->setContentsMargins(0, 0, 0, 0);
  la->addWidget(m_titleA);
  la->addWidget(m_viewA, 1);
  auto* paneB = new QWidget;
  auto* lb = new QVBoxLayout(paneB);
  lb->setContentsMargins(0, 0, 0, 0);
  lb->addWidget(m_titleB);
  lb->addWidget(m_viewB, 1);
  auto* sides = new QSplitter(Qt::Horizontal);
  sides->addWidget(paneA);
  sides->addWidget(paneB);
  m_stack = new QStackedWidget;
  m_stack->addWidget(sides);
  auto* overlayPage = new QWidget;
  auto* lo = new QVBoxLayout(overlayPage);
  lo->setContentsMargins(0, 0, 0, 0);
  m_overlayNote = new QLabel;
  m_overlayNote->setWordWrap(true);
  lo->addWidget(m_overlayNote);
  lo->addWidget(m_overlay, 1);
  m_stack->addWidget(overlayPage);

  m_changes = new QListWidget;
  m_changes->setObjectName("diffChanges");
  m_text = new QPlainTextEdit;
  m_text->setObjectName("diffText");
  m_text->setReadOnly(true);
  m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSize(10);
  m_text->setFont(mono);
  new IrHighlighter(m_text->document(), /*diffMode=*/true);
  m_numericTable = new QTableWidget(0, 6);
  m_numericTable->setObjectName("numericTable");
  m_numericTable->setHorizontalHeaderLabels(
      {tr("Value"), tr("Node"), tr("Matched by"), tr("Max abs"), tr("Max rel"), tr("Cosine")});
  m_numericTable->verticalHeader()->hide();
  m_numericTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_numericTable->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_numericTable->horizontalHeader()->setStretchLastSection(true);
  m_numericStatus = new QLabel(tr("Press \"Numeric diff\" to run both snapshots on the same inputs."));
  m_numericStatus->setWordWrap(true);
  auto* numericPage = new QWidget;
  auto* ln = new QVBoxLayout(numericPage);
  ln->setContentsMargins(0, 0, 0, 0);
  ln->addWidget(m_numericStatus);
  ln->addWidget(m_numericTable, 1);
  m_tabs = new QTabWidget;
  m_tabs->addTab(m_changes, tr("Changes"));
  m_tabs->addTab(m_text, tr("IR text diff"));
  m_tabs->addTab(numericPage, tr("Numeric diff"));

  auto* vsplit = new QSplitter(Qt::Vertical);
  vsplit->addWidget(m_stack);
  vsplit->addWidget(m_tabs);
  vsplit->setStretchFactor(0, 3);
  vsplit->setStretchFactor(1, 1);
  vsplit->setSizes({640, 220});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(m_summary);
  layout->addLayout(second);
  layout->addWidget(vsplit, 1);

  auto requestCompare = [this] {
    if (!m_syncing && snapshotA() >= 0 && snapshotB() >= 0)
      Q_EMIT compareRequested(snapshotA(), snapshotB());
  };
  connect(m_comboA, &QComboBox::currentIndexChanged, this, requestCompare);
  connect(m_comboB, &QComboBox::currentIndexChanged, this, requestCompare);
  connect(m_sideBySide, &QPushButton::clicked, this, [this] { setOverlay(false); });
  connect(m_overlayButton, &QPushButton::clicked, this, [this] { setOverlay(true); });
  connect(m_numeric, &QPushButton::clicked, this, [this] {
    if (snapshotA() >= 0 && snapshotB() >= 0)
      Q_EMIT numericDiffRequested(snapshotA(), snapshotB());
  });
  connect(m_firstDivergentButton, &QPushButton::clicked, this, [this] {
    if (m_firstDivergent)
      selectNode(*m_firstDivergent);
  });
  connect(m_viewA, &GraphView::nodeSelected, this, [this](NodeId id) { syncFromA(id); });
  connect(m_viewB, &GraphView::nodeSelected, this, [this](NodeId id) { syncFromB(id); });
  connect(m_overlay, &GraphView::nodeSelected, this, [this](NodeId id) {
    auto ghost = m_ghostToRemoved.find(id);
    if (ghost != m_ghostToRemoved.end())
      syncFromA(ghost->second);
    else
      syncFromB(id);
  });
  connect(m_changes, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
    if (item && !m_syncing)
      selectNode(NodeId(item->data(kIdRole).toUInt()));
  });
  connect(m_numericTable, &QTableWidget::cellClicked, this, [this](int row, int) {
    if (QTableWidgetItem* item = m_numericTable->item(row, 1))
      selectNode(NodeId(item->data(kIdRole).toUInt()));
  });
  linkScrollBars();
}

QWidget* DiffView::makeLegend() {
  auto* w = new QWidget;
  auto* l = new QHBoxLayout(w);
  l->setContentsMargins(0, 0, 0, 0);
  l->addWidget(swatch(markColor(NodeMark::Added), tr("added")));
  l->addWidget(swatch(markColor(NodeMark::Removed), tr("removed")));
  l->addWidget(swatch(markColor(NodeMark::Changed), tr("changed")));
  l->addWidget(swatch(heatColor(0.2), tr("error within tolerance")));
  l->addWidget(swatch(heatColor(0.7), tr("outside tolerance")));
  return w;
}

DiffView::~DiffView() {
  for (const QMetaObject::Connection& c : m_scrollLinks)
    disconnect(c);
}

void DiffView::linkScrollBars() {
  // Pan together: the same relative scroll position in both views.
  auto link = [this](QScrollBar* from, QScrollBar* to) {
    m_scrollLinks.push_back(
        connect(from, &QScrollBar::valueChanged, this, [this, from, to](int value) {
          if (m_syncing || from->maximum() == from->minimum())
            return;
          m_syncing = true;
          double t = double(value - from->minimum()) / double(from->maximum() - from->minimum());
          to->setValue(to->minimum() + int(std::lround(t * (to->maximum() - to->minimum()))));
          m_syncing = false;
        }));
  };
  link(m_viewA->horizontalScrollBar(), m_viewB->horizontalScrollBar());
  link(m_viewB->horizontalScrollBar(), m_viewA->horizontalScrollBar());
  link(m_viewA->verticalScrollBar(), m_viewB->verticalScrollBar());
  link(m_viewB->verticalScrollBar(), m_viewA->verticalScrollBar());
}

void DiffView::setSnapshotLabels(const QStringList& labels) {
  const int a = snapshotA(), b = snapshotB();
  m_syncing = true;
  m_comboA->clear();
  m_comboB->clear();
  m_comboA->addItems(labels);
  m_comboB->addItems(labels);
  m_syncing = false;
  const int n = int(labels.size());
  if (a >= 0 && a < n && b >= 0 && b < n)
    setPair(a, b);
  else if (n > 0)
    setPair(std::max(0, n - 2), n - 1);
}

void DiffView::setPair(int a, int b) {
  m_syncing = true;
  m_comboA->setCurrentIndex(a);
  m_comboB->setCurrentIndex(b);
  m_syncing = false;
}

int DiffView::snapshotA() const { return m_comboA->currentIndex(); }
int DiffView::snapshotB() const { return m_comboB->currentIndex(); }

void DiffView::setTextPointSize(int points) {
  QFont f = m_text->font();
  f.setPointSize(points);
  m_text->setFont(f);
}

void DiffView::setOverlay(bool overlay) {
  m_overlayButton->setChecked(overlay);
  m_sideBySide->setChecked(!overlay);
  m_stack->setCurrentIndex(overlay ? 1 : 0);
}

bool DiffView::isOverlay() const { return m_stack->currentIndex() == 1; }

void DiffView::showDiff(int a, int b, std::shared_ptr<const Graph> graphA,
                        std::shared_ptr<const Graph> graphB, const GraphDiff& diff,
                        const QString& textDiff) {
  const bool sameGraphs = graphA == m_graphA && graphB == m_graphB;
  m_diff = diff;
  m_graphA = std::move(graphA);
  m_graphB = std::move(graphB);
  m_shownA = a;
  m_shownB = b;
  setPair(a, b);
  m_marksA.clear();
  m_marksB.clear();
  for (NodeId id : diff.removed)
    m_marksA[id] = NodeMark::Removed;
  for (const NodeChange& c : diff.changed) {
    m_marksA[c.id] = NodeMark::Changed;
    m_marksB[c.id] = NodeMark::Changed;
  }
  for (NodeId id : diff.added)
    m_marksB[id] = NodeMark::Added;
  m_overlayNote->setText(tr("Snapshot %1 drawn with what changed since snapshot %2; the %3 "
                            "removed node(s) are drawn as ghosts where they were connected.")
                             .arg(m_comboB->currentText(), m_comboA->currentText())
                             .arg(diff.removed.size()));
  m_titleA->setText(tr("A: snapshot %1").arg(m_comboA->currentText()));
  m_titleB->setText(tr("B: snapshot %1").arg(m_comboB->currentText()));
  if (!sameGraphs) {
    m_viewA->setGraph(m_graphA);
    m_viewB->setGraph(m_graphB);
    OverlayGraph overlay = buildOverlayGraph(*m_graphA, *m_graphB, diff);
    m_overlayGraph = std::shared_ptr<const Graph>(std::move(overlay.graph));
    m_ghostToRemoved = std::move(overlay.ghostToRemoved);
    m_removedToGhost.clear();
    for (const auto& [ghost, removed] : m_ghostToRemoved)
      m_removedToGhost[removed] = ghost;
    m_overlay->setGraph(m_overlayGraph);
  }
  std::map<NodeId, NodeMark> overlayMarks = m_marksB;
  for (const auto& [ghost, removed] : m_ghostToRemoved)
    overlayMarks[ghost] = NodeMark::Removed;
  m_viewA->setMarks(m_marksA);
  m_viewB->setMarks(m_marksB);
  m_overlay->setMarks(overlayMarks);
  m_viewB->setHeat({});
  m_overlay->setHeat({});
  m_firstDivergent.reset();
  m_firstDivergentButton->setEnabled(false);
  m_numericTable->setRowCount(0);
  m_numericStatus->setText(tr("Press \"Numeric diff\" to run both snapshots on the same inputs."));

  m_summary->setText(tr("<b>%1 added</b>, <b>%2 removed</b>, <b>%3 changed</b>, %4 unchanged")
                         .arg(diff.added.size())
                         .arg(diff.removed.size())
                         .arg(diff.changed.size())
                         .arg(diff.unchanged.size()));
  m_syncing = true;
  m_changes->clear();
  auto addItem = [this](const QString& text, NodeMark mark, NodeId id, const QString& tip) {
    auto* item = new QListWidgetItem(text, m_changes);
    QColor c = markColor(mark);
    item->setBackground(c.lighter(170));
    item->setData(kIdRole, id);
    item->setToolTip(tip);
  };
  for (NodeId id : diff.added) {
    QString from;
    auto it = diff.addedFrom.find(id);
    if (it != diff.addedFrom.end() && !it->second.empty()) {
      QStringList ids;
      for (NodeId f : it->second)
        ids << QStringLiteral("#%1").arg(f);
      from = tr("  made from %1").arg(ids.join(", "));
    }
    addItem(tr("+ added    %1%2").arg(describe(m_graphB.get(), id), from), NodeMark::Added, id, {});
  }
  for (NodeId id : diff.removed) {
    QString into;
    auto it = diff.removedInto.find(id);
    if (it != diff.removedInto.end() && !it->second.empty()) {
      QStringList ids;
      for (NodeId f : it->second)
        ids << QStringLiteral("#%1").arg(f);
      into = tr("  \u2192 into %1").arg(ids.join(", "));
    }
    addItem(tr("\u2212 removed  %1%2").arg(describe(m_graphA.get(), id), into), NodeMark::Removed, id, {});
  }
  for (const NodeChange& c : diff.changed) {
    QStringList details;
    for (const std::string& d : c.details)
      details << shownName(d, 300);
    addItem(tr("~ changed  %1:  %2").arg(describe(m_graphB.get(), c.id), details.join("; ")),
            NodeMark::Changed, c.id, details.join("\n"));
  }
  m_syncing = false;
  m_text->setPlainText(textDiff.isEmpty() ? tr("(the two snapshots print the same IR)")
                                          : shownText(textDiff));
}

void DiffView::showNumericDiff(const NumericDiff& diff) {
  setNumericBusy(false);
  std::map<NodeId, double> heat;
  m_numericTable->setRowCount(int(diff.values.size()));
  int row = 0;
  for (const ValueComparison& v : diff.values) {
    double h = heatOf(v.maxAbs, v.ok);
    heat[v.producer] = std::max(heat[v.producer], h);
    auto* name = new QTableWidgetItem(shownName(v.value));
    auto* node = new QTableWidgetItem(describe(m_graphB.get(), v.producer));
    node->setData(kIdRole, v.producer);
    auto* match = new QTableWidgetItem(QString::fromUtf8(valueMatchName(v.match)));
    auto* abs = new QTableWidgetItem(QString::number(v.maxAbs, 'g', 3));
    auto* rel = new QTableWidgetItem(QString::number(v.maxRel, 'g', 3));
    auto* cos = new QTableWidgetItem(QString::number(v.cosine, 'f', 6));
    for (QTableWidgetItem* item : {name, node, match, abs, rel, cos}) {
      if (h > 0)
        item->setBackground(heatColor(h).lighter(125));
      if (!v.ok)
        item->setToolTip(shownName(v.reason, kShownLineChars));
    }
    m_numericTable->setItem(row, 0, name);
    m_numericTable->setItem(row, 1, node);
    m_numericTable->setItem(row, 2, match);
    m_numericTable->setItem(row, 3, abs);
    m_numericTable->setItem(row, 4, rel);
    m_numericTable->setItem(row, 5, cos);
    ++row;
  }
  m_numericTable->resizeColumnsToContents();
  m_viewB->setHeat(heat);
  m_overlay->setHeat(heat);
  m_firstDivergent = diff.firstDivergent;
  m_firstDivergentButton->setEnabled(diff.firstDivergent.has_value());
  if (diff.firstDivergent)
    m_numericStatus->setText(tr("<b style=\"color:#B00020\">The snapshots disagree.</b> First "
                                "divergent node: %1.")
                                 .arg(describe(m_graphB.get(), *diff.firstDivergent).toHtmlEscaped()));
  else
    m_numericStatus->setText(tr("<b style=\"color:#2E7D32\">All %1 matched values agree</b> within "
                                "tolerance (%2 values without a counterpart).")
                                 .arg(diff.values.size())
                                 .arg(diff.unmatched.size()));
  m_tabs->setCurrentIndex(2);
}

void DiffView::showNumericError(const QString& message) {
  setNumericBusy(false);
  m_numericStatus->setText(tr("<b style=\"color:#B00020\">Numeric diff failed:</b> %1")
                               .arg(message.toHtmlEscaped()));
  m_tabs->setCurrentIndex(2);
}

void DiffView::setNumericBusy(bool busy) {
  m_numeric->setEnabled(!busy);
  if (busy)
    m_numericStatus->setText(tr("Running both snapshots\u2026"));
}

void DiffView::selectNode(NodeId id) {
  const bool inB = hasTopLevelNode(m_graphB.get(), id);
  if (inB)
    syncFromB(id);
  else
    syncFromA(id);
}

void DiffView::syncFromA(NodeId id) {
  if (m_syncing)
    return;
  m_syncing = true;
  m_viewA->selectNode(id);
  if (auto ghost = m_removedToGhost.find(id); ghost != m_removedToGhost.end())
    m_overlay->selectNode(ghost->second);
  NodeId other = 0;
  if (hasTopLevelNode(m_graphB.get(), id))
    other = id;
  else if (m_diff) {
    auto it = m_diff->removedInto.find(id);
    if (it != m_diff->removedInto.end() && !it->second.empty())
      other = it->second.front();
  }
  if (other) {
    m_viewB->selectNode(other);
    if (!m_removedToGhost.count(id)) // a removed node stays selected as its ghost
      m_overlay->selectNode(other);
  }
  m_syncing = false;
  if (other)
    Q_EMIT nodeSelected(other, m_shownB);
}

void DiffView::syncFromB(NodeId id) {
  if (m_syncing)
    return;
  m_syncing = true;
  m_viewB->selectNode(id);
  m_overlay->selectNode(id);
  NodeId other = 0;
  if (hasTopLevelNode(m_graphA.get(), id))
    other = id;
  else if (m_diff) {
    auto it = m_diff->addedFrom.find(id);
    if (it != m_diff->addedFrom.end() && !it->second.empty())
      other = it->second.front();
  }
  if (other)
    m_viewA->selectNode(other);
  m_syncing = false;
  Q_EMIT nodeSelected(id, m_shownB);
}

} // namespace fb::gui
