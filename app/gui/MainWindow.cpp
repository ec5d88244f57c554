// The main window: layout of views and docks, menus, status bar, recent files, drag and drop.
#include "app/gui/MainWindow.h"

#include "app/gui/ChartFonts.h"
#include "app/gui/CodeDocks.h"
#include "app/gui/CompressionDocks.h"
#include "app/gui/Coordinator.h"
#include "app/gui/DebugDocks.h"
#include "app/gui/DebugView.h"
#include "app/gui/DiffView.h"
#include "app/gui/DockManager.h"
#include "app/gui/InspectorView.h"
#include "app/gui/IrTextView.h"
#include "app/gui/LessonController.h"
#include "app/gui/LessonPanel.h"
#include "app/gui/PipelinePanel.h"
#include "app/gui/RunController.h"
#include "app/gui/RunPanel.h"
#include "app/gui/RunProfileDocks.h"
#include "app/gui/SessionFiles.h"
#include "app/gui/TimelineView.h"
#include "app/gui/graph/GraphView.h"
#include "app/workbench/Reproducer.h"

#include <QAction>
#include <QApplication>
#include <QChartView>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace fb::gui {

namespace {
constexpr int kMaxRecent = 8;

bool isModelFile(const QString& path) {
  const QString s = QFileInfo(path).suffix().toLower();
  return s == "onnx" || s == "fbir";
}
} // namespace

MainWindow::MainWindow(bool persistent, QWidget* parent)
    : QMainWindow(parent), m_persistent(persistent), m_actions(MainActions::create(this)),
      m_docks(std::make_unique<DockManager>(this)) {
  setObjectName("MainWindow");
  setAcceptDrops(true);
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

  m_graph = new GraphView;
  m_graph->setObjectName("mainGraph");
  m_diff = new DiffView;
  m_diff->setObjectName("diffView");
  m_pipeline = new PipelinePanel;
  m_pipeline->setObjectName("pipelinePanel");
  m_inspector = new InspectorView;
  m_inspector->setObjectName("inspector");
  m_inspector->setMinimumWidth(380); // tables of types and producers need room to stay readable
  m_ir = new IrTextView;
  m_ir->setObjectName("irView");
  m_timeline = new TimelineView;
  m_timeline->setObjectName("timeline");

  m_banner = new QLabel;
  m_banner->setObjectName("banner");
  m_banner->setWordWrap(true);
  m_banner->setTextFormat(Qt::PlainText); // messages quote names from the model file
  m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_banner->hide();

  m_searchBar = new QWidget;
  auto* sl = new QHBoxLayout(m_searchBar);
  sl->setContentsMargins(4, 2, 4, 2);
  m_search = new QLineEdit;
  m_search->setObjectName("search");
  m_search->setPlaceholderText(tr("Find a node by name, op or value (Enter: next, Shift+Enter: previous)"));
  m_search->setClearButtonEnabled(true);
  m_searchStatus = new QLabel;
  auto* closeSearch = new QToolButton;
  closeSearch->setText(QStringLiteral("\u2715"));
  sl->addWidget(new QLabel(tr("Find:")));
  sl->addWidget(m_search, 1);
  sl->addWidget(m_searchStatus);
  sl->addWidget(closeSearch);
  m_searchBar->hide();

  m_tabs = new QTabWidget;
  m_tabs->setObjectName("centralTabs");
  m_tabs->setDocumentMode(true);
  m_tabs->addTab(m_graph, tr("Graph"));
  m_tabs->addTab(m_diff, tr("Diff"));
  auto* central = new QWidget;
  auto* cl = new QVBoxLayout(central);
  cl->setContentsMargins(0, 0, 0, 0);
  cl->setSpacing(0);
  cl->addWidget(m_banner);
  cl->addWidget(m_searchBar);
  cl->addWidget(m_tabs, 1);
  setCentralWidget(central);

  m_docks->addDock("pipeline", tr("Pipeline"), m_pipeline, Qt::LeftDockWidgetArea);
  QDockWidget* inspectorDock = m_docks->addDock("inspector", tr("Inspector"), m_inspector, Qt::RightDockWidgetArea);
  QDockWidget* irDock = m_docks->addDock("ir", tr("IR text"), m_ir, Qt::RightDockWidgetArea);
  splitDockWidget(inspectorDock, irDock, Qt::Vertical);
  QDockWidget* timelineDock = m_docks->addDock("timeline", tr("Snapshots"), m_timeline, Qt::BottomDockWidgetArea);

  m_statusText = new QLabel;
  m_progress = new QProgressBar;
  m_progress->setObjectName("progress");
  m_progress->setMaximumWidth(180);
  m_progress->setTextVisible(false);
  m_progress->hide();
  m_cancelButton = new QToolButton;
  m_cancelButton->setDefaultAction(m_actions.cancel);
  m_cancelButton->hide();
  statusBar()->addWidget(m_statusText, 1);
  statusBar()->addPermanentWidget(m_progress);
  statusBar()->addPermanentWidget(m_cancelButton);

  Views views;
  views.graph = m_graph;
  views.pipeline = m_pipeline;
  views.inspector = m_inspector;
  views.timeline = m_timeline;
  views.ir = m_ir;
  views.diff = m_diff;
  m_coordinator = new Coordinator(views, this);
  m_runs = new RunController(this);
  m_runProfile = new RunProfileDocks(this, *m_docks, m_coordinator, m_graph, m_docks->dock("timeline"));
  m_codeDocks = new CodeDocks(this, m_docks.get(), m_coordinator, irDock, timelineDock);
  m_compression = new CompressionDocks(this, *m_docks, m_coordinator, m_graph,
                                       m_runProfile->profileView(), m_docks->dock("profile"));
  m_debug = new DebugDocks(this, *m_docks, m_coordinator, m_graph, m_docks->dock("compression"));
  connect(m_debug, &DebugDocks::openReproducerRequested, this, &MainWindow::openReproducer);
  m_lessons = new LessonController(this, *m_docks);
  m_sessions = new SessionFiles(
      m_coordinator,
      [this]() -> std::optional<std::pair<size_t, size_t>> {
        if (m_diff->snapshotA() < 0 || m_diff->snapshotB() < 0)
          return std::nullopt;
        return std::make_pair(size_t(m_diff->snapshotA()), size_t(m_diff->snapshotB()));
      },
      [this](int a, int b) { showDiff(a, b); }, this);

  buildMenus();
  wireActions();
  connect(closeSearch, &QToolButton::clicked, m_searchBar, &QWidget::hide);

  if (m_persistent) {
    QSettings settings;
    m_recent = settings.value("recentFiles").toStringList();
    m_layoutRestored = m_docks->restoreLayout(settings);
  }
  rebuildRecentMenu();
  resize(1600, 1000);
  updateTitle();
  updateActions();
  showBanner(tr("Open a model with File \u2192 Open (Ctrl+O) or drop an .onnx / .fbir file here."), false);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(m_actions.open);
  file->addMenu(m_actions.recent);
  file->addAction(m_actions.exportView);
  file->addSeparator();
  QAction* saveSessionAction = file->addAction(tr("&Save Session\u2026"));
  saveSessionAction->setObjectName("action.saveSession");
  saveSessionAction->setShortcut(QKeySequence::Save);
  saveSessionAction->setToolTip(tr("The model, pipeline, schedules, faults and the snapshots "
                                   "shown, in one file: a bug report is one attachment"));
  connect(saveSessionAction, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save Session"), QFileInfo(m_modelName).completeBaseName() + ".fbsession",
        tr("Fusebox sessions (*.fbsession)"));
    if (path.isEmpty())
      return;
    const QString error = saveSession(path);
    if (!error.isEmpty())
      reportFailure(error);
    else
      m_statusText->setText(tr("Session saved to %1").arg(path));
  });
  file->addSeparator();
  file->addAction(m_actions.quit);
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  edit->addAction(m_actions.back);
  edit->addAction(m_actions.forward);
  edit->addSeparator();
  edit->addAction(m_actions.find);
  edit->addAction(m_actions.findNext);
  edit->addAction(m_actions.findPrevious);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(m_actions.zoomIn);
  view->addAction(m_actions.zoomOut);
  view->addAction(m_actions.fit);
  view->addSeparator();
  view->addAction(m_actions.showConstants);
  view->addAction(m_actions.expandGroups);
  view->addSeparator();
  view->addAction(m_actions.showDiff);
  view->addAction(m_actions.presentation);
  view->addSeparator();
  for (QDockWidget* d : m_docks->docks())
    view->addAction(d->toggleViewAction());
  QMenu* passes = menuBar()->addMenu(tr("&Passes"));
  passes->addAction(m_actions.step);
  passes->addAction(m_actions.runToEnd);
  passes->addAction(m_actions.back);
  passes->addAction(m_actions.forward);
  passes->addAction(m_actions.reset);
  passes->addSeparator();
  QAction* quantize = passes->addAction(tr("&Quantize\u2026"));
  quantize->setObjectName("action.quantize");
  connect(quantize, &QAction::triggered, this,
          [this] { m_compression->configureAndApply(QStringLiteral("quantize")); });
  QAction* prune = passes->addAction(tr("P&rune\u2026"));
  prune->setObjectName("action.prune");
  connect(prune, &QAction::triggered, this,
          [this] { m_compression->configureAndApply(QStringLiteral("prune")); });
  passes->addSeparator();
  passes->addAction(m_actions.cancel);
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(m_actions.runOnCpu);
  QMenu* debug = menuBar()->addMenu(tr("&Debug"));
  m_debug->populateMenu(debug);
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* lessons = help->addAction(tr("&Lessons"));
  lessons->setObjectName("action.lessons");
  lessons->setToolTip(tr("The course: compiler passes step by step on real models"));
  connect(lessons, &QAction::triggered, m_lessons, &LessonController::openCourse);
  help->addAction(m_actions.about);

  QToolBar* tb = addToolBar(tr("Main"));
  tb->setObjectName("toolbar.main");
  tb->setToolButtonStyle(Qt::ToolButtonTextOnly);
  tb->addAction(m_actions.open);
  tb->addSeparator();
  tb->addAction(m_actions.reset);
  tb->addAction(m_actions.back);
  tb->addAction(m_actions.step);
  tb->addAction(m_actions.runToEnd);
  tb->addAction(m_actions.forward);
  tb->addSeparator();
  tb->addAction(m_actions.zoomIn);
  tb->addAction(m_actions.zoomOut);
  tb->addAction(m_actions.fit);
  tb->addAction(m_actions.find);
  tb->addAction(m_actions.showDiff);
}

void MainWindow::wireActions() {
  Coordinator* c = m_coordinator;
  connect(m_actions.open, &QAction::triggered, this, &MainWindow::openDialog);
  connect(m_actions.exportView, &QAction::triggered, this, &MainWindow::exportDialog);
  connect(m_actions.quit, &QAction::triggered, this, &QWidget::close);
  connect(m_actions.step, &QAction::triggered, c, &Coordinator::step);
  connect(m_actions.runToEnd, &QAction::triggered, c, &Coordinator::runToEnd);
  connect(m_actions.back, &QAction::triggered, c, &Coordinator::back);
  connect(m_actions.forward, &QAction::triggered, c, &Coordinator::forward);
  connect(m_actions.reset, &QAction::triggered, c, &Coordinator::reset);
  connect(m_actions.runOnCpu, &QAction::triggered, this, &MainWindow::runCurrentOnCpu);
  connect(m_runs, &RunController::started, this, [this](const QString& what) {
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_progress->show();
    m_cancelButton->show();
    m_statusText->setText(what);
    updateActions();
  });
  connect(m_runs, &RunController::progress, this, [this](int percent, const QString& what) {
    m_progress->setValue(percent);
    m_statusText->setText(what);
  });
  connect(m_runs, &RunController::finished, this, [this](bool ok, const QString& summary) {
    m_progress->hide();
    m_cancelButton->hide();
    m_statusText->setText(summary);
    showBanner(summary, !ok);
    updateActions();
  });
  connect(m_actions.cancel, &QAction::triggered, this, [this] {
    m_runs->cancel();
    m_coordinator->cancel();
    m_graph->cancelLayout();
  });
  connect(m_actions.zoomIn, &QAction::triggered, this, [this] { m_graph->zoomIn(); });
  connect(m_actions.zoomOut, &QAction::triggered, this, [this] { m_graph->zoomOut(); });
  connect(m_actions.fit, &QAction::triggered, this, [this] { m_graph->fitToView(); });
  auto applyOptions = [this] {
    GraphViewOptions o = m_coordinator->graphOptions();
    o.showConstants = m_actions.showConstants->isChecked();
    o.expandFusedGroups = m_actions.expandGroups->isChecked();
    m_coordinator->setGraphOptions(o);
  };
  connect(m_actions.showConstants, &QAction::toggled, this, applyOptions);
  connect(m_actions.expandGroups, &QAction::toggled, this, applyOptions);
  connect(m_actions.find, &QAction::triggered, this, [this] {
    m_searchBar->show();
    m_search->setFocus();
    m_search->selectAll();
  });
  connect(m_search, &QLineEdit::textChanged, this, [this](const QString& t) { search(t); });
  connect(m_search, &QLineEdit::returnPressed, this, [this] {
    if (QApplication::keyboardModifiers() & Qt::ShiftModifier)
      m_graph->findPrevious();
    else
      m_graph->findNext();
  });
  connect(m_actions.findNext, &QAction::triggered, this, [this] { m_graph->findNext(); });
  connect(m_actions.findPrevious, &QAction::triggered, this, [this] { m_graph->findPrevious(); });
  connect(m_actions.showDiff, &QAction::triggered, this, [this] {
    int cur = int(m_coordinator->session().currentIndex());
    showDiff(std::max(0, cur - 1), cur);
  });
  connect(m_actions.presentation, &QAction::toggled, this, &MainWindow::setPresentationMode);
  connect(m_actions.about, &QAction::triggered, this, [this] {
    QMessageBox::about(this, tr("About Fusebox"),
                       tr("<b>Fusebox</b> \u2014 a workbench for machine-learning graph compilers.<br>"
                          "Open a model, step through passes, inspect and diff snapshots."));
  });
  connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
    if (m_tabs->widget(index) == m_diff && m_coordinator->session().hasModel())
      m_coordinator->compare(m_diff->snapshotA(), m_diff->snapshotB());
  });

  connect(c, &Coordinator::modelLoaded, this, [this](const QString& name) {
    m_modelName = name;
    const std::string& path = m_coordinator->session().modelPath();
    if (!path.empty())
      addRecentFile(QFileInfo(QString::fromStdString(path)).absoluteFilePath());
    showBanner({}, false);
    showGraphTab();
    updateTitle();
  });
  connect(c, &Coordinator::loadStarted, this,
          [this](const QString& path) { showBanner(tr("Loading %1…").arg(path), false); });
  connect(c, &Coordinator::message, this, [this](const QString& text, bool error) {
    if (error)
      reportFailure(text);
    else
      m_statusText->setText(text);
  });
  connect(c, &Coordinator::busyChanged, this, [this](bool busy, const QString& what) {
    m_progress->setRange(0, 0);
    m_progress->setVisible(busy);
    m_cancelButton->setVisible(busy);
    if (busy)
      m_statusText->setText(what);
    updateActions();
  });
  connect(c, &Coordinator::snapshotChanged, this, [this] {
    if (!m_banner->property("error").toBool())
      showBanner({}, false);
    updateActions();
    updateTitle();
  });
  connect(m_graph, &GraphView::layoutStarted, this, [this] {
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_progress->show();
    m_cancelButton->show();
    m_statusText->setText(tr("Laying out the graph\u2026"));
  });
  connect(m_graph, &GraphView::layoutProgress, m_progress, &QProgressBar::setValue);
  connect(m_graph, &GraphView::layoutFinished, this, [this](bool ok, const QString& msg) {
    if (!m_coordinator->isBusy()) {
      m_progress->hide();
      m_cancelButton->hide();
    }
    if (!ok && !msg.isEmpty())
      m_statusText->setText(msg);
    else
      m_statusText->setText(tr("Layout took %1 ms").arg(m_graph->lastLayoutMilliseconds(), 0, 'f', 0));
  });
}

QString MainWindow::saveSession(const QString& path) const {
  return m_sessions->save(path);
}

bool MainWindow::openSession(const QString& path) {
  const QString error = m_sessions->open(path);
  if (!error.isEmpty()) {
    reportFailure(error);
    return false;
  }
  showGraphTab();
  return true;
}

bool MainWindow::openFile(const QString& path) {
  if (path.endsWith(QLatin1String(".fbsession")))
    return openSession(path);
  // A message in the window says what happened; the coordinator keeps the old model on failure.
  if (!m_coordinator->openModel(path))
    return false;
  showGraphTab();
  return true;
}

void MainWindow::openFileAsync(const QString& path) {
  if (path.endsWith(QLatin1String(".fbsession")))
    openSession(path); // the steps run in the background
  else
    m_coordinator->openModelAsync(path);
}

// isHidden, not isVisible: in screenshot mode the window is never shown, and the banner's text
// is what the command line prints when opening fails.
QString MainWindow::bannerText() const {
  return m_banner->isHidden() ? QString() : m_banner->text();
}

void MainWindow::reportFailure(const QString& text) {
  m_statusText->setText(text);
  showBanner(text, true);
  if (!isVisible())
    return; // screenshot mode and tests: the banner and the status bar say it
  if (!m_failureDialog) {
    m_failureDialog =
        new QMessageBox(QMessageBox::Warning, tr("Fusebox"), {}, QMessageBox::Ok, this);
    m_failureDialog->setAttribute(Qt::WA_DeleteOnClose);
    m_failureDialog->setWindowModality(Qt::NonModal);
  }
  // Very long messages (a 2 MB node name) are cut for the dialog; the banner elides too.
  m_failureDialog->setText(text.size() > 2000 ? text.left(2000) + QStringLiteral("…") : text);
  m_failureDialog->show();
  m_failureDialog->raise();
}

void MainWindow::showBanner(const QString& text, bool error) {
  m_banner->setProperty("error", error);
  if (text.isEmpty()) {
    m_banner->hide();
    m_banner->clear();
    return;
  }
  // Plain text, cut when very long (a message quoting a 2 MB node name).
  m_banner->setText(
      text.size() > 600 ? text.left(400) + QStringLiteral(" \u2026 ") + text.right(150) : text);
  m_banner->setStyleSheet(error ? "QLabel { background: #FDECEA; color: #8A1C14; border-bottom: 2px solid "
                                  "#D93025; padding: 8px; font-weight: bold; }"
                                : "QLabel { background: #E8F0FE; color: #1A3E7A; border-bottom: 1px solid "
                                  "#9DB7E8; padding: 8px; }");
  m_banner->show();
}

QString MainWindow::exportGraph(const QString& path) { return m_graph->exportTo(path); }

void MainWindow::showDiff(int a, int b) {
  m_diff->setPair(a, b);
  if (m_tabs->currentWidget() != m_diff)
    m_tabs->setCurrentWidget(m_diff); // compares through currentChanged
  else
    m_coordinator->compare(a, b);
}

void MainWindow::showGraphTab() { m_tabs->setCurrentWidget(m_graph); }

void MainWindow::setPresentationMode(bool on) {
  if (on == m_presentation)
    return;
  m_presentation = on;
  QFont f = QApplication::font();
  if (on)
    m_normalPointSize = f.pointSize() > 0 ? f.pointSize() : 10;
  const int points = on ? m_normalPointSize + 4 : m_normalPointSize;
  f.setPointSize(points);
  QApplication::setFont(f);
  // Widgets that carry a style sheet keep their font through setFont; an application-wide rule
  // reaches them too.
  qApp->setStyleSheet(on ? QStringLiteral("QWidget { font-size: %1pt; }").arg(points) : QString());
  m_ir->setTextPointSize(points);
  m_diff->setTextPointSize(points);
  m_codeDocks->setTextPointSize(points);
  // Charts keep the fonts they were made with; set theirs (the docks are the window's children,
  // floating or not).
  for (QChartView* chart : findChildren<QChartView*>())
    setChartPointSize(chart->chart(), points);
  if (on)
    m_graph->zoomIn();
  else
    m_graph->zoomOut();
  m_lessons->panel()->setPresenting(on);
  QSignalBlocker block(m_actions.presentation);
  m_actions.presentation->setChecked(on);
}

int MainWindow::search(const QString& text) {
  if (text.isEmpty()) {
    m_searchStatus->clear();
    return 0;
  }
  std::vector<NodeId> hits = m_graph->find(text);
  m_searchStatus->setText(hits.empty() ? tr("no match") : tr("%n match(es)", nullptr, int(hits.size())));
  if (!hits.empty())
    m_coordinator->selectNode(hits.front());
  return int(hits.size());
}

void MainWindow::openDialog() {
  QString dir = m_recent.isEmpty() ? QStringLiteral(FUSEBOX_SAMPLES_DIR) : QFileInfo(m_recent.front()).path();
  QString path = QFileDialog::getOpenFileName(
      this, tr("Open Model"), dir,
      tr("Models and sessions (*.onnx *.fbir *.fbsession);;All files (*)"));
  if (!path.isEmpty())
    openFileAsync(path);
}

void MainWindow::exportDialog() {
  QString path = QFileDialog::getSaveFileName(this, tr("Export View"), m_modelName + ".svg",
                                              tr("SVG (*.svg);;PNG (*.png);;Graphviz DOT (*.dot)"));
  if (path.isEmpty())
    return;
  QString err = exportGraph(path);
  if (!err.isEmpty())
    showBanner(tr("Export failed: %1").arg(err), true);
  else
    m_statusText->setText(tr("Exported %1").arg(path));
}

void MainWindow::addRecentFile(const QString& path) {
  m_recent.removeAll(path);
  m_recent.prepend(path);
  while (m_recent.size() > kMaxRecent)
    m_recent.removeLast();
  if (m_persistent)
    QSettings().setValue("recentFiles", m_recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  m_actions.recent->clear();
  for (const QString& path : m_recent) {
    QAction* a = m_actions.recent->addAction(QFileInfo(path).fileName());
    a->setToolTip(path);
    connect(a, &QAction::triggered, this, [this, path] { openFileAsync(path); });
  }
  m_actions.recent->setEnabled(!m_recent.isEmpty());
}

void MainWindow::updateTitle() {
  const auto& s = m_coordinator->session();
  if (!s.hasModel()) {
    setWindowTitle(tr("Fusebox"));
    return;
  }
  setWindowTitle(tr("%1 \u2014 snapshot %2 of %3 \u2014 Fusebox")
                     .arg(m_modelName)
                     .arg(s.currentIndex())
                     .arg(s.snapshotCount() - 1));
}

void MainWindow::updateActions() {
  const auto& s = m_coordinator->session();
  const bool busy = m_coordinator->isBusy();
  m_actions.step->setEnabled(!busy && s.canStep());
  m_actions.runToEnd->setEnabled(!busy && s.canStep());
  m_actions.back->setEnabled(!busy && s.canBack());
  m_actions.forward->setEnabled(!busy && s.canForward());
  m_actions.reset->setEnabled(!busy && s.hasModel() && s.snapshotCount() > 1);
  m_actions.exportView->setEnabled(s.hasModel());
  m_actions.showDiff->setEnabled(s.hasModel());
  m_actions.runOnCpu->setEnabled(!busy && s.hasModel() && !m_runs->isRunning());
}

void MainWindow::runCurrentOnCpu() {
  const auto& s = m_coordinator->session();
  if (!s.hasModel())
    return;
  workbench::RunSettings settings;
  settings.backend = workbench::Backend::Cpu;
  settings.compile.schedule = s.scheduleOverrides(s.currentIndex()); // the schedule editor's
  m_runs->run(s.graph(s.currentIndex()), s.graph(0), int(s.currentIndex()), settings);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_persistent) {
    QSettings settings;
    m_docks->saveLayout(settings);
  }
  m_coordinator->cancel();
  m_runs->cancel();
  m_runProfile->cancel();
  event->accept();
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  if (m_shownOnce)
    return;
  m_shownOnce = true;
  // Default dock sizes need a shown window; a restored layout keeps its own.
  if (!m_layoutRestored) {
    QApplication::processEvents();
    resizeDocks({m_docks->dock("pipeline"), m_docks->dock("inspector")}, {330, 460}, Qt::Horizontal);
    resizeDocks({m_docks->dock("inspector"), m_docks->dock("ir")}, {520, 300}, Qt::Vertical);
    resizeDocks({m_docks->dock("timeline")}, {200}, Qt::Vertical);
  }
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls.front().isLocalFile() && isModelFile(urls.front().toLocalFile()))
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.front().isLocalFile())
    return;
  event->acceptProposedAction();
  openFileAsync(urls.front().toLocalFile());
}

bool MainWindow::runPipelineBlocking(int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  bool failed = false;
  QEventLoop loop;
  auto conn = connect(m_coordinator, &Coordinator::stepFinished, &loop, [&](bool ok) {
    if (!ok)
      failed = true;
    if (!ok || !m_coordinator->session().canStep())
      loop.quit();
  });
  QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
  if (m_coordinator->session().canStep()) {
    m_coordinator->runToEnd();
    if (m_coordinator->session().canStep() || m_coordinator->isBusy())
      loop.exec();
  }
  disconnect(conn);
  return !failed && !m_coordinator->session().canStep() && timer.elapsed() < timeoutMs;
}

bool MainWindow::waitForLayouts(int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  auto running = [this] {
    return m_graph->isLayoutRunning() || m_diff->viewA()->isLayoutRunning() ||
           m_diff->viewB()->isLayoutRunning() || m_diff->overlayView()->isLayoutRunning();
  };
  while (running()) {
    if (timer.elapsed() > timeoutMs)
      return false;
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  QApplication::processEvents();
  return true;
}

MainWindow* MainWindow::openReproducer(const QString& path) {
  auto repro = workbench::readReproducer(path.toStdString());
  if (!repro.ok()) {
    reportFailure(
        tr("Cannot open the reproducer: %1").arg(QString::fromStdString(repro.error().message())));
    return nullptr;
  }
  // A new session in its own window, so the model being debugged stays as it is: the reduced
  // graph with the pipeline that breaks it, ready to step.
  auto* w = new MainWindow(/*persistent=*/false);
  w->setAttribute(Qt::WA_DeleteOnClose);
  if (!w->openFile(path)) {
    w->deleteLater();
    return nullptr;
  }
  w->coordinator()->setPipeline(
      QString::fromStdString(workbench::pipelineText(repro->check.pipeline)));
  // Its recorded inputs and backend, so Run and Find the bug there fail as the model did.
  const QDir dir = QFileInfo(path).dir();
  for (size_t i = 0; i < repro->inputFiles.size(); ++i)
    w->runProfile()->runPanel()->setInputFile(
        int(i), dir.filePath(QString::fromStdString(repro->inputFiles[i])));
  w->runProfile()->runPanel()->setBackend(
      QString::fromLatin1(workbench::backendName(repro->check.run.backend)));
  w->debugDocks()->view()->setBackend(repro->check.run.backend);
  w->setWindowTitle(w->windowTitle() + tr(" \u2014 reproducer"));
  w->show();
  return w;
}

} // namespace fb::gui
