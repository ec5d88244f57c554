// Background code generation for the code view, with a per-snapshot cache.
#include "app/gui/CodeController.h"
#include "app/gui/GuiJob.h"

#include "app/gui/CodePane.h"
#include "app/gui/CodeTextEdit.h"
#include "app/gui/CodeView.h"
#include "app/gui/Coordinator.h"
#include "app/gui/WorkerGuard.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QPlainTextEdit>
#include <QPointer>
#include <QTimer>
#include <QtConcurrent/QtConcurrent>

#include <cmath>

namespace fb::gui {

using workbench::CodeKind;

namespace {
/// Whole-model texts kept (a ResNet's optimized IR is a few MB, its document several times that).
constexpr size_t kCacheLimit = 8;
} // namespace

CodeController::CodeController(Coordinator* coordinator, CodeView* view, QObject* parent)
    : QObject(parent), m_coordinator(coordinator), m_view(view) {
  connect(&m_watcher, &QFutureWatcher<CodeOutcome>::finished, this, &CodeController::onDone);
  connect(m_view, &CodeView::codeWanted, this, &CodeController::request);
  connect(m_view, &CodeView::cancelRequested, this, &CodeController::cancel);
  connect(m_view, &CodeView::nodeSelected, m_coordinator, &Coordinator::selectNode);
  connect(m_coordinator, &Coordinator::selectionChanged, m_view, &CodeView::selectNode);
  connect(m_coordinator, &Coordinator::snapshotChanged, this, &CodeController::refresh);
}

CodeController::~CodeController() {
  cancel();
  m_watcher.waitForFinished(); // the worker holds only its job's values
}

CodeKey CodeController::keyFor(CodeKind kind) const {
  const workbench::Session& s = m_coordinator->session();
  CodeKey key;
  key.kind = kind;
  if (!s.hasModel())
    return key;
  key.graph = s.graph(s.currentIndex());
  key.schedule = s.scheduleText(s.currentIndex());
  if (kind == CodeKind::Ptx)
    key.arch = m_view->ptxArch().toStdString();
  return key;
}

const CodeOutcome* CodeController::cached(const CodeKey& key) const {
  auto it = m_cache.find(key);
  return it == m_cache.end() ? nullptr : &it->second;
}

void CodeController::request(CodeKind kind) {
  if (!m_coordinator->session().hasModel()) {
    m_view->setMessage(kind, tr("Open a model to see its code."));
    return;
  }
  const CodeKey key = keyFor(kind);
  if (const CodeOutcome* c = cached(key)) {
    show(key, *c);
    return;
  }
  ++m_request;
  if (m_running) {
    if (*m_running == key)
      return; // already on its way
    // One job at a time: stop the running one (at its next check) and start this one after.
    if (m_job)
      m_job->cancel();
    m_pending = key;
    m_view->setMessage(kind, tr("Waiting for the previous job to stop\u2026"));
    return;
  }
  start(key);
}

void CodeController::start(const CodeKey& key) {
  m_running = key;
  m_runningRequest = m_request;
  ++m_jobsStarted;
  const QString what = tr("Generating %1 for snapshot %2\u2026")
                           .arg(CodeView::kindTitle(key.kind))
                           .arg(m_coordinator->session().currentIndex());
  m_view->setMessage(key.kind, what);
  m_view->setBusy(true, what);
  const uint64_t request = m_runningRequest;
  m_job = jobReportingTo(this, [this, request, what](double f, const QString& stage) {
    if (m_running && m_runningRequest == request)
      m_view->setBusy(
          true, QStringLiteral("%1 %2 (%3%)").arg(what, stage).arg(int(std::lround(f * 100))));
  });
  workbench::EmitRequest emitRequest;
  emitRequest.kind = key.kind;
  emitRequest.settings.gpu = key.arch; // PTX: the chosen sm_NN
  emitRequest.settings.schedule = m_coordinator->session().scheduleOverrides(m_coordinator->session().currentIndex());
  std::shared_ptr<const Graph> graph = key.graph;
  std::shared_ptr<workbench::JobControl> job = m_job;
  const QFont font = m_view->pane(key.kind)->editor()->font();
  m_watcher.setFuture(QtConcurrent::run([graph, emitRequest, job, font] {
    return guardedWork<CodeOutcome>(QStringLiteral("Generating code"), [&] {
      CodeOutcome out;
      auto code = workbench::emitModelCode(*graph, emitRequest, job.get());
      if (code.ok()) {
        out.code = std::make_shared<const workbench::ModelCode>(std::move(code).value());
        out.document = CodeTextEdit::buildDocument(QString::fromStdString(out.code->code.text), font);
      } else {
        out.error = QString::fromStdString(code.error().message());
        out.unsupported = code.error().isUnsupported();
        out.cancelled = job->cancelled();
      }
      return out;
    });
  }));
}

void CodeController::onDone() {
  CodeOutcome out = m_watcher.result();
  const CodeKey key = *m_running;
  m_running.reset();
  m_job.reset();
  m_view->setBusy(false);
  if (!out.cancelled) {
    if (m_cache.size() >= kCacheLimit)
      m_cache.clear();
    m_cache[key] = out;
  }
  // Shown only while it is still what the view is for (not a snapshot stepped away from).
  const bool current = keyFor(key.kind) == key;
  if (current)
    show(key, out);
  Q_EMIT finished(key.kind, current && out.code != nullptr);
  std::optional<CodeKey> next = std::move(m_pending);
  m_pending.reset();
  if (next && keyFor(next->kind) == *next)
    request(next->kind);
  else if (m_view->isShown() && !cached(keyFor(m_view->currentKind())))
    request(m_view->currentKind());
}

void CodeController::show(const CodeKey& key, const CodeOutcome& outcome) {
  CodePane* pane = m_view->pane(key.kind);
  if (outcome.code) {
    if (pane && pane->code() != outcome.code) // re-setting a large text costs a few ms per MB
      m_view->setCode(key.kind, outcome.code, outcome.document);
    return;
  }
  if (key.kind == CodeKind::Ptx && outcome.unsupported)
    m_view->setMessage(key.kind,
                       tr("PTX for %1 is not available: %2.\n\nThe Loops, LLVM IR and Assembly "
                          "tabs show the code compiled for this CPU.")
                           .arg(QString::fromStdString(key.arch), outcome.error));
  else
    m_view->setMessage(key.kind, tr("No %1: %2").arg(CodeView::kindTitle(key.kind), outcome.error),
                       /*error=*/true);
}

void CodeController::refresh() {
  for (CodeKind kind : CodeView::kinds()) {
    const CodeKey key = keyFor(kind);
    if (const CodeOutcome* c = key.graph ? cached(key) : nullptr)
      show(key, *c);
    else if (!m_running || !(*m_running == key))
      m_view->setMessage(kind, m_coordinator->session().hasModel()
                                   ? tr("Not generated yet for this snapshot.")
                                   : tr("Open a model to see its code."));
  }
  m_view->selectNode(m_coordinator->selectedNode());
  if (m_view->isShown())
    request(m_view->currentKind());
}

void CodeController::cancel() {
  m_pending.reset();
  if (m_job)
    m_job->cancel();
}

bool CodeController::waitForCode(CodeKind kind, int timeoutMs) {
  QElapsedTimer timer;
  timer.start();
  request(kind);
  while (timer.elapsed() < timeoutMs) {
    const CodeKey key = keyFor(kind);
    if (cached(key) && !(m_running && *m_running == key)) {
      show(key, *cached(key));
      return true;
    }
    if (!m_running && !m_pending)
      request(kind);
    QEventLoop loop;
    QTimer::singleShot(20, &loop, &QEventLoop::quit);
    loop.exec();
  }
  return false;
}

} // namespace fb::gui
