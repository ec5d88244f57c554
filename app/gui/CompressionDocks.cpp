// Wiring of the quantize & prune dock to the session, the selection and the graph.
#include "app/gui/CompressionDocks.h"

#include "app/gui/CompressionView.h"
#include "app/gui/Coordinator.h"
#include "app/gui/DockManager.h"
#include "app/gui/PassOptionsDialog.h"
#include "app/gui/ProfileView.h"
#include "app/gui/ScreenshotSupport.h"
#include "app/gui/WorkerGuard.h"
#include "app/gui/graph/GraphView.h"

#include <QDir>
#include <QDockWidget>
#include <QMainWindow>
#include <QtConcurrent/QtConcurrent>

namespace fb::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

/// The latest snapshot at or before the current one that a quantize or prune step made, or -1.
int latestCompressionSnapshot(const workbench::Session& s) {
  if (!s.hasModel())
    return -1;
  for (size_t i = s.currentIndex(); i > 0; --i)
    if (s.snapshot(i).record && workbench::isCompressionPass(s.snapshot(i).record->pass))
      return int(i);
  return -1;
}

} // namespace

CompressionDocks::CompressionDocks(QMainWindow* window, DockManager& docks,
                                   Coordinator* coordinator, GraphView* graph, ProfileView* profile,
                                   QDockWidget* tabWith)
    : QObject(window), m_window(window), m_coordinator(coordinator), m_graph(graph),
      m_profile(profile) {
  m_view = new CompressionView;
  m_view->setObjectName("compressionView");
  m_dock = docks.addDock("compression", tr("Quantize && prune"), m_view, Qt::BottomDockWidgetArea);
  if (tabWith) {
    window->tabifyDockWidget(tabWith, m_dock);
    tabWith->raise();
  }
  m_view->setActionsEnabled(false);

  connect(coordinator, &Coordinator::modelLoaded, this, [this] { update(); });
  connect(coordinator, &Coordinator::snapshotChanged, this, [this] { update(); });
  connect(coordinator, &Coordinator::busyChanged, this, [this](bool busy) {
    m_view->setActionsEnabled(!busy && m_coordinator->session().hasModel());
  });
  connect(coordinator, &Coordinator::selectionChanged, m_view, &CompressionView::setSelectedNode);
  connect(m_view, &CompressionView::layerActivated, coordinator, &Coordinator::selectNode);
  connect(m_view, &CompressionView::quantizeRequested, this,
          [this] { configureAndApply(QStringLiteral("quantize")); });
  connect(m_view, &CompressionView::pruneRequested, this,
          [this] { configureAndApply(QStringLiteral("prune")); });
  connect(m_view, &CompressionView::colourGraphToggled, this, [this] { updateHeat(); });
  if (m_profile)
    connect(m_profile, &ProfileView::colourGraphToggled, this, [this](bool on) {
      if (on) {
        m_heatShown = false; // the profile's colouring replaced ours
        m_view->setColourGraph(false);
      }
    });
  connect(&m_watcher, &QFutureWatcher<CompressionOutcome>::finished, this,
          &CompressionDocks::onComputed);
}

CompressionDocks::~CompressionDocks() {
  m_watcher.waitForFinished();
}

std::unique_ptr<PassOptionsDialog> CompressionDocks::makeDialog(const QString& pass) const {
  for (const workbench::PassDescription& d : workbench::passDescriptions()) {
    if (qs(d.name) != pass)
      continue;
    auto dialog = std::make_unique<PassOptionsDialog>(d, m_window);
    // Start from what the pipeline last asked of this pass.
    for (const PipelineStep& step : m_coordinator->session().pipeline())
      if (step.passName == d.name) {
        const QString text = qs(step.str());
        const int open = text.indexOf('{');
        dialog->setOptions(open < 0 ? QString() : text.mid(open + 1).chopped(1));
      }
    return dialog;
  }
  return nullptr;
}

void CompressionDocks::configureAndApply(const QString& pass) {
  if (!m_coordinator->session().hasModel() || m_coordinator->isBusy())
    return;
  std::unique_ptr<PassOptionsDialog> dialog = makeDialog(pass);
  if (!dialog || dialog->exec() != QDialog::Accepted)
    return;
  m_dock->show();
  m_dock->raise();
  m_coordinator->applyStep(dialog->stepText());
}

void CompressionDocks::update() {
  const workbench::Session& s = m_coordinator->session();
  m_view->setActionsEnabled(s.hasModel() && !m_coordinator->isBusy());
  const int index = latestCompressionSnapshot(s);
  if (index < 0) {
    m_pending.reset();
    if (m_shown || m_view->reportSnapshot() >= 0 || m_view->messageText().isEmpty())
      m_view->showMessage(
          tr("Quantize or prune the model (buttons above, or a quantize or prune step in the "
             "pipeline) to see what it does to size and accuracy, layer by layer."));
    m_shown.reset();
    updateHeat();
    Q_EMIT reportShown();
    return;
  }
  std::shared_ptr<const Graph> graph = s.graph(size_t(index));
  if (m_shown && m_shown->graph == graph) {
    if (m_view->reportSnapshot() != index && m_shown->report)
      m_view->showReport(*m_shown->report, index);
    updateHeat();
    Q_EMIT reportShown();
    return;
  }
  m_pending = graph;
  m_view->showMessage(tr("Measuring what %1 did to the model, layer by layer\u2026")
                          .arg(qs(s.snapshot(size_t(index)).record->step)));
  if (m_running)
    return; // onComputed starts the newest request
  m_running = true;
  const PassRecord record = *s.snapshot(size_t(index)).record;
  std::shared_ptr<const Graph> before = s.graph(size_t(index) - 1);
  m_watcher.setFuture(QtConcurrent::run([before, graph, record, index] {
    return guardedWork<CompressionOutcome>(QStringLiteral("The compression report"), [&] {
      CompressionOutcome out;
      out.graph = graph;
      out.snapshot = index;
      Expected<workbench::CompressionReport> r =
          workbench::compressionReport(*before, *graph, record);
      if (r.ok())
        out.report = std::move(r).value();
      else
        out.error = QString::fromStdString(r.error().message());
      return out;
    });
  }));
}

void CompressionDocks::onComputed() {
  m_running = false;
  CompressionOutcome out = m_watcher.result();
  const workbench::Session& s = m_coordinator->session();
  const bool current = out.graph && out.graph == m_pending && out.snapshot >= 0 &&
                       size_t(out.snapshot) < s.snapshotCount() &&
                       s.graph(size_t(out.snapshot)) == out.graph;
  if (!current) {
    update(); // stale: compute what is wanted now
    return;
  }
  if (out.report)
    m_view->showReport(*out.report, out.snapshot);
  else
    m_view->showMessage(
        tr("No report: %1").arg(out.error.isEmpty() ? tr("unknown error") : out.error));
  m_shown = std::move(out);
  m_pending.reset();
  updateHeat();
  Q_EMIT reportShown();
}

void CompressionDocks::updateHeat() {
  const bool want =
      m_view->colourGraph() && m_shown && m_shown->report && !m_shown->report->heat.empty();
  if (!want) {
    if (m_heatShown && !(m_profile && m_profile->colourGraph()))
      m_graph->setHeat({});
    m_heatShown = false;
    return;
  }
  if (m_profile && m_profile->colourGraph())
    m_profile->setColourGraph(false);
  const workbench::CompressionReport& r = *m_shown->report;
  m_graph->setHeat(
      r.heat, tr("%1 (%2, snapshot %3)").arg(qs(r.heatLegend), qs(r.pass)).arg(m_shown->snapshot));
  m_heatShown = true;
}

QStringList CompressionDocks::saveScreenshots(const QString& dir, QString* error) {
  FloatedDock floated(m_dock, QSize(1400, 560));
  update();
  if (m_running && !waitFor(this, &CompressionDocks::reportShown, 120000)) {
    *error = tr("the quantize & prune report did not finish");
    return {};
  }
  m_view->setColourGraph(true);
  QStringList written;
  for (auto [widget, name] : {std::pair<QWidget*, const char*>{m_view, "compression.png"},
                              {m_graph, "graph-compression.png"}}) {
    QApplication::processEvents();
    const QString path = QDir(dir).filePath(QString::fromLatin1(name));
    if (!widget->grab().save(path, "PNG")) {
      *error = tr("cannot write %1").arg(path);
      return {};
    }
    written << path;
  }
  // The quantize dialog as a user opens it.
  if (std::unique_ptr<PassOptionsDialog> dialog = makeDialog(QStringLiteral("quantize"))) {
    dialog->resize(720, dialog->sizeHint().height());
    dialog->show();
    QApplication::processEvents();
    const QString path = QDir(dir).filePath(QStringLiteral("quantize-dialog.png"));
    const bool saved = dialog->grab().save(path, "PNG");
    dialog->close();
    if (!saved) {
      *error = tr("cannot write %1").arg(path);
      return {};
    }
    written << path;
  }
  return written;
}

} // namespace fb::gui
