// The code and schedule docks, their wiring, and their screenshots.
#include "app/gui/CodeDocks.h"

#include "app/gui/CodeController.h"
#include "app/gui/CodePane.h"
#include "app/gui/CodeTextEdit.h"
#include "app/gui/CodeView.h"
#include "app/gui/Coordinator.h"
#include "app/gui/DockManager.h"
#include "app/gui/ScheduleController.h"
#include "app/gui/ScheduleForm.h"
#include "app/gui/ScheduleView.h"

#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QLineEdit>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextDocument>
#include <QTimer>

#include <algorithm>

namespace fb::gui {

namespace {

/// The node whose kernel is worth showing: the fused group with a convolution and the most ops
/// (a Conv+Add+Relu residual tail over a Conv+Relu); in a model without one (a transformer),
/// the largest group around a MatMul or Gemm; else the first convolution; else the first node.
NodeId interestingConvNode(const Graph& g) {
  auto largestGroupWith = [&](std::initializer_list<OpKind> anchors) {
    NodeId best = 0;
    size_t bestOps = 0;
    for (const auto& n : g.nodes()) {
      if (!n->body())
        continue;
      bool anchored = false;
      for (const auto& inner : n->body()->nodes())
        anchored |= std::find(anchors.begin(), anchors.end(), inner->op()) != anchors.end();
      if (anchored && n->body()->nodes().size() > bestOps) {
        best = n->id();
        bestOps = n->body()->nodes().size();
      }
    }
    return best;
  };
  if (NodeId conv = largestGroupWith({OpKind::Conv}))
    return conv;
  if (NodeId gemm = largestGroupWith({OpKind::MatMul, OpKind::Gemm}))
    return gemm;
  for (const auto& n : g.nodes())
    if (n->op() == OpKind::Conv)
      return n->id();
  return g.nodes().empty() ? 0 : g.nodes().front()->id();
}

/// Scrolls `edit` to the first line in [first, first + count) holding `needle`, a few lines from
/// the top, so a picture shows a kernel's inner loop (its FMAs) rather than its prologue.
/// False when no such line.
bool scrollToText(QPlainTextEdit* edit, const QString& needle, int first, int count) {
  if (count <= 0 || needle.isEmpty())
    return false;
  QTextDocument* doc = edit->document();
  const QTextCursor found = doc->find(needle, doc->findBlockByNumber(first).position());
  if (found.isNull() || found.blockNumber() >= first + count)
    return false;
  edit->verticalScrollBar()->setValue(std::max(first, found.blockNumber() - 12));
  return true;
}

} // namespace

CodeDocks::CodeDocks(QMainWindow* window, DockManager* docks, Coordinator* coordinator,
                     QDockWidget* codeNeighbour, QDockWidget* scheduleNeighbour)
    : QObject(window), m_window(window), m_coordinator(coordinator) {
  m_codeView = new CodeView;
  m_codeView->setObjectName("codeView");
  m_scheduleView = new ScheduleView;
  m_scheduleView->setObjectName("scheduleView");
  m_codeDock = docks->addDock("code", tr("Code"), m_codeView, Qt::RightDockWidgetArea);
  m_scheduleDock = docks->addDock("schedule", tr("Schedule"), m_scheduleView, Qt::BottomDockWidgetArea);
  // Behind their neighbours: the window opens as it did, one tab click away. A tab group is
  // made when the window is first laid out, so the neighbours are raised after that.
  for (auto [neighbour, dock] : {std::pair{codeNeighbour, m_codeDock}, std::pair{scheduleNeighbour, m_scheduleDock}})
    if (neighbour) {
      window->tabifyDockWidget(neighbour, dock);
      QTimer::singleShot(0, neighbour, &QDockWidget::raise);
    }
  // The editor needs more height than a timeline strip: grow the bottom area when it shows.
  connect(m_scheduleDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible && !m_scheduleDock->isFloating() && m_scheduleDock->height() < 420)
      m_window->resizeDocks({m_scheduleDock}, {460}, Qt::Vertical);
  });
  m_code = new CodeController(coordinator, m_codeView, this);
  m_schedule = new ScheduleController(coordinator, m_scheduleView, m_code, this);
  // A dock behind another tab is "visible" to Qt; its visibilityChanged says what the user sees.
  connect(m_codeDock, &QDockWidget::visibilityChanged, m_codeView, &CodeView::setShown);
  connect(m_scheduleDock, &QDockWidget::visibilityChanged, m_scheduleView, &ScheduleView::setShown);
}

void CodeDocks::setTextPointSize(int points) {
  m_codeView->setTextPointSize(points);
  m_scheduleView->setTextPointSize(points);
}

QStringList CodeDocks::saveScreenshots(const QString& dir, QString* error) {
  QStringList written;
  const workbench::Session& s = m_coordinator->session();
  if (!s.hasModel()) {
    *error = tr("no model to show code for");
    return {};
  }
  auto save = [&](QWidget* w, const QString& name) {
    QApplication::processEvents();
    const QString path = QDir(dir).filePath(name);
    if (!w->grab().save(path, "PNG")) {
      *error = tr("cannot write %1").arg(path);
      return false;
    }
    written << path;
    return true;
  };
  const NodeId focus = interestingConvNode(*s.graph(s.currentIndex()));
  if (focus)
    m_coordinator->selectNode(focus);

  // Floating at a size that shows a kernel's code and the editor's two columns readably.
  // A floating dock is not always told it became visible (offscreen): say it.
  m_codeDock->setFloating(true);
  m_codeDock->resize(1400, 900);
  m_codeDock->show();
  m_codeView->setShown(true);
  m_codeView->setKernelScope(false);
  struct Shot {
    workbench::CodeKind kind;
    const char* file;
    const char* needle; ///< where the kernel's interesting part starts
  };
  const Shot shots[] = {{workbench::CodeKind::Loops, "code-loops.png", ""},
                        {workbench::CodeKind::Llvm, "code-llvm.png", "fmuladd"},
                        {workbench::CodeKind::Assembly, "code-asm.png", "vfmadd"},
                        {workbench::CodeKind::Ptx, "code-ptx.png", "ld.global"}};
  bool ok = true;
  for (const auto& [kind, file, needle] : shots) {
    m_codeView->setCurrentKind(kind);
    if (!m_code->waitForCode(kind)) {
      *error = tr("the %1 code did not arrive in time").arg(CodeView::kindTitle(kind));
      ok = false;
      break;
    }
    m_codeView->selectNode(m_coordinator->selectedNode()); // scroll to the kernel again
    CodePane* pane = m_codeView->pane(kind);
    scrollToText(pane->editor(), QString::fromLatin1(needle), pane->markedLines().first,
                 pane->markedLines().second);
    if (!(ok = save(m_codeView, QString::fromLatin1(file))))
      break;
  }
  m_codeView->setCurrentKind(workbench::CodeKind::Loops);
  m_codeDock->setFloating(false);
  if (!ok)
    return {};

  m_scheduleDock->setFloating(true);
  m_scheduleDock->resize(1500, 950);
  m_scheduleDock->show();
  m_scheduleView->setShown(true);
  if (!m_schedule->waitForKernels()) {
    *error = tr("the kernels were not described in time");
    m_scheduleDock->setFloating(false);
    return {};
  }
  if (const auto& k = m_scheduleView->kernel(); k && !k->interpreted) {
    // What a student would try: a smaller register tile on a GEMM kernel, a tile elsewhere.
    ScheduleForm* form = m_scheduleView->form();
    if (k->gemm) {
      form->blockingSpin("mr")->setValue(int(std::max<int64_t>(2, k->mr / 2)));
      if (k->nr > 8)
        form->blockingSpin("nr")->setValue(8);
    } else {
      form->tileEdit()->setText(QStringLiteral("4x4"));
      Q_EMIT form->tileEdit()->textEdited(form->tileEdit()->text());
    }
    m_scheduleView->setRuns(10);
    m_scheduleView->applyButton()->click();
    if (!m_schedule->waitForTrial() || !m_schedule->waitForKernels()) {
      *error = tr("the schedule trial did not finish in time");
      m_scheduleDock->setFloating(false);
      return {};
    }
    // A GEMM kernel's register tile shows in its assembly (the FMAs of one micro-kernel
    // step); a loop kernel's tile in its loops.
    m_scheduleView->codeTabs()->setCurrentIndex(0);
    if (k->gemm) {
      m_scheduleView->codeTabs()->setCurrentIndex(2);
      QApplication::processEvents();
      for (QPlainTextEdit* e : {static_cast<QPlainTextEdit*>(m_scheduleView->beforeEditor(workbench::CodeKind::Assembly)),
                                static_cast<QPlainTextEdit*>(m_scheduleView->afterEditor(workbench::CodeKind::Assembly))})
        scrollToText(e, QStringLiteral("vfmadd"), 0, e->document()->blockCount());
    }
  }
  ok = save(m_scheduleView, QStringLiteral("schedule.png"));
  m_scheduleDock->setFloating(false);
  return ok ? written : QStringList();
}

} // namespace fb::gui
