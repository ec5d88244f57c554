// Headless tests of the code view and the schedule editor in the real main window: the texts
// they show equal the workbench's, selection goes both ways, search/copy/save, the per-snapshot
// cache and stale results, lazy highlighting, the schedule form's --schedule text, trials that
// change the code and time it, item models, and the screenshots.
#include "app/gui/CodeController.h"
#include "app/gui/CodeDocks.h"
#include "app/gui/CodeHighlighter.h"
#include "app/gui/CodePane.h"
#include "app/gui/CodeTextEdit.h"
#include "app/gui/CodeView.h"
#include "app/gui/Coordinator.h"
#include "app/gui/IrTextView.h"
#include "app/gui/MainWindow.h"
#include "app/gui/ScheduleController.h"
#include "app/gui/ScheduleForm.h"
#include "app/gui/ScheduleModels.h"
#include "app/gui/ScheduleView.h"
#include "app/gui/graph/GraphView.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/ModelCode.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextLayout>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::gui;
using workbench::CodeKind;

namespace {

QString sample(const char* name) { return QStringLiteral(FUSEBOX_SAMPLES_DIR "/") + name; }

/// A window showing `model` after `pipeline`, with the code and schedule docks raised.
std::unique_ptr<MainWindow> openWindow(const char* model, const char* pipeline) {
  auto w = std::make_unique<MainWindow>(/*persistent=*/false);
  w->show();
  if (!w->openFile(sample(model)) || !w->coordinator()->setPipeline(pipeline) ||
      !w->runPipelineBlocking())
    return nullptr;
  w->codeDocks()->codeDock()->raise();
  w->codeDocks()->scheduleDock()->raise();
  QApplication::processEvents();
  return w;
}

/// The first top-level node whose fused body has a convolution and the most ops.
NodeId fusedConv(const Graph& g) {
  NodeId best = 0;
  size_t ops = 0;
  for (const auto& n : g.nodes()) {
    if (!n->body())
      continue;
    bool conv = false;
    for (const auto& inner : n->body()->nodes())
      conv |= inner->op() == OpKind::Conv;
    if (conv && n->body()->nodes().size() > ops) {
      best = n->id();
      ops = n->body()->nodes().size();
    }
  }
  return best;
}

std::shared_ptr<const Graph> currentGraph(MainWindow& w) {
  const auto& s = w.coordinator()->session();
  return s.graph(s.currentIndex());
}

/// The facade's whole-model code for the window's current snapshot and schedule.
workbench::ModelCode facadeCode(MainWindow& w, CodeKind kind) {
  workbench::EmitRequest r;
  r.kind = kind;
  const auto& s = w.coordinator()->session();
  r.settings.schedule = s.scheduleOverrides(s.currentIndex());
  auto code = workbench::emitModelCode(*currentGraph(w), r);
  return code.ok() ? std::move(code).value() : workbench::ModelCode{};
}

/// A model of `blocks` MatMul, Add, Relu, Add blocks on f32[1, 32] (4 nodes each).
std::unique_ptr<Graph> makeStack(int blocks) {
  auto g = std::make_unique<Graph>("stack");
  const TensorType act = TensorType::of(DType::F32, {1, 32});
  Value* x = g->addInput("x", act);
  const Tensor weight(DType::F32, {32, 32});
  const Tensor bias(DType::F32, {32});
  for (int b = 0; b < blocks; ++b) {
    const std::string s = "/block." + std::to_string(b);
    auto op = [&](OpKind kind, std::vector<Value*> in, const std::string& name) {
      Node* n = g->addNode(kind, in, 1, {s + "/" + name + "_out"}, s + "/" + name);
      n->output(0)->setType(act);
      return n->output(0);
    };
    Value* mm = op(OpKind::MatMul, {x, g->addConstant(s + ".weight", weight)}, "MatMul");
    Value* ab = op(OpKind::Add, {mm, g->addConstant(s + ".bias", bias)}, "Add");
    Value* r = op(OpKind::Relu, {ab}, "Relu");
    x = op(OpKind::Add, {r, x}, "Add_1");
  }
  g->addOutput(x);
  return g;
}

bool waitUntil(const std::function<bool()>& done, int timeoutMs = 60000) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeoutMs)
      return false;
    QTest::qWait(20);
  }
  return true;
}

/// The foreground colour the highlighter gave to column `column` of `block`, or invalid.
QColor colourAt(const QTextBlock& block, int column) {
  for (const QTextLayout::FormatRange& r : block.layout()->formats())
    if (column >= r.start && column < r.start + r.length)
      return r.format.foreground().color();
  return {};
}

} // namespace

class TestCodeViews : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("FuseboxTest");
    QCoreApplication::setApplicationName("TestCodeViews");
  }

  /// The docks open behind the IR text and the snapshot timeline, and while hidden they make
  /// no code: stepping a pipeline costs nothing extra until the user opens them.
  void docksOpenBehindTheirNeighboursAndIdle() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QApplication::processEvents();
    QVERIFY(!w.irView()->visibleRegion().isEmpty());
    QVERIFY(w.codeDocks()->codeView()->visibleRegion().isEmpty());
    QVERIFY(!w.codeDocks()->codeView()->isShown());
    QVERIFY(!w.codeDocks()->scheduleView()->isShown());
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline("O3"));
    QVERIFY(w.runPipelineBlocking());
    QCOMPARE(w.codeDocks()->codeController()->jobsStarted(), 0);
    QVERIFY(!w.codeDocks()->scheduleController()->kernels());
    w.codeDocks()->codeDock()->raise();
    QApplication::processEvents();
    QVERIFY(w.codeDocks()->codeView()->isShown());
    QVERIFY(w.codeDocks()->codeController()->waitForCode(CodeKind::Loops));
    QCOMPARE(w.codeDocks()->codeController()->jobsStarted(), 1);
  }

  /// Each tab shows exactly the workbench's whole-model text; the selected fused group's
  /// kernel is marked where the facade locates it; kernel scope shows its section, which is
  /// the compiled kernel's own loop text; PTX says why it is unavailable, for the chosen sm.
  void codeViewShowsTheFacadesCode() {
    auto w = openWindow("resnet_block.onnx", "O3");
    QVERIFY(w);
    CodeView* view = w->codeDocks()->codeView();
    CodeController* ctl = w->codeDocks()->codeController();
    const NodeId conv = fusedConv(*currentGraph(*w));
    QVERIFY(conv);
    w->coordinator()->selectNode(conv);
    for (CodeKind kind : {CodeKind::Loops, CodeKind::LlvmRaw, CodeKind::Llvm, CodeKind::Assembly}) {
      view->setCurrentKind(kind);
      QVERIFY2(ctl->waitForCode(kind), workbench::codeKindName(kind));
      const workbench::ModelCode expected = facadeCode(*w, kind);
      QVERIFY(!expected.code.text.empty());
      CodePane* pane = view->pane(kind);
      QCOMPARE(pane->text(), QString::fromStdString(expected.code.text));
      const int k = expected.kernelOfNode(conv);
      QVERIFY(k >= 0);
      QCOMPARE(pane->shownKernel(), k);
      const workbench::CodeSection& s = expected.sections[size_t(k)];
      QCOMPARE(pane->markedLines(), std::make_pair(int(s.firstLine), int(s.lineCount)));
      // Scrolled to it: the kernel's first line is the first one shown.
      QCOMPARE(pane->editor()->verticalScrollBar()->value(), int(s.firstLine));
      const QString name = QString::fromStdString(expected.code.kernelList[size_t(k)].name);
      QVERIFY2(view->statusText().contains(name), qPrintable(view->statusText()));
      view->setKernelScope(true);
      QCOMPARE(pane->text(), QString::fromStdString(expected.sectionText(size_t(k))));
      view->setKernelScope(false);
    }
    // The kernel's loops are what the compiled model says for that kernel.
    auto inputs = workbench::gatherInputs(*currentGraph(*w), {}, 1, {});
    QVERIFY(inputs.ok());
    auto model = workbench::compileGraph(*currentGraph(*w), {}, *inputs);
    QVERIFY(model.ok());
    const workbench::ModelCode loops = facadeCode(*w, CodeKind::Loops);
    const int k = loops.kernelOfNode(conv);
    view->setCurrentKind(CodeKind::Loops);
    view->setKernelScope(true);
    QCOMPARE(view->currentText(), QString::fromStdString((*model)->kernelCode(size_t(k))->loops));
    view->setKernelScope(false);

    view->setCurrentKind(CodeKind::Ptx);
    QVERIFY(ctl->waitForCode(CodeKind::Ptx));
    QString text = view->currentText();
    QVERIFY2(text.contains(".target sm_80") && text.contains(".entry"), qPrintable(text.left(400)));
    view->findChild<QComboBox*>("ptxArch")->setCurrentText("sm_90");
    QVERIFY(ctl->waitForCode(CodeKind::Ptx));
    QVERIFY(view->currentText().contains(".target sm_90"));
    // The selected node's kernel is marked in the PTX too.
    view->setKernelScope(true);
    QVERIFY2(view->currentText().contains(
                 ".entry " + QString::fromStdString(loops.code.kernelList[size_t(k)].name)),
             qPrintable(view->currentText().left(400)));
    view->setKernelScope(false);
  }

  /// A large module (tens of thousands of lines) is made, laid out and coloured without
  /// blocking the event loop: the worker builds the document; the GUI thread only swaps it in
  /// and colours what is on screen, also when selecting, scrolling and switching scope.
  void largeCodeKeepsTheEventLoopResponsive() {
    constexpr qint64 kStallBudgetMs = 250; // the bound; typical here: well under 100 ms
    MainWindow w(/*persistent=*/false);
    w.show();
    w.coordinator()->openGraph(makeStack(300), QStringLiteral("stack300"));
    QVERIFY(w.coordinator()->setPipeline("fuse"));
    QVERIFY(w.runPipelineBlocking());
    QVERIFY(w.waitForLayouts());
    CodeView* view = w.codeDocks()->codeView();
    w.codeDocks()->codeDock()->raise();
    QElapsedTimer clock;
    clock.start();
    qint64 last = 0, worst = 0;
    QTimer ping;
    ping.setInterval(5);
    connect(&ping, &QTimer::timeout, [&] {
      const qint64 now = clock.elapsed();
      worst = std::max(worst, now - last);
      last = now;
    });
    ping.start();
    QTest::qWait(20);
    last = clock.elapsed();
    view->setCurrentKind(CodeKind::LlvmRaw);
    QVERIFY(w.codeDocks()->codeController()->waitForCode(CodeKind::LlvmRaw));
    const int lines = view->pane(CodeKind::LlvmRaw)->editor()->document()->blockCount();
    const Graph& g = *currentGraph(w);
    w.coordinator()->selectNode(g.nodes()[g.nodes().size() / 2]->id());
    QTest::qWait(20);
    view->setKernelScope(true);
    QTest::qWait(20);
    view->setKernelScope(false);
    view->pane(CodeKind::LlvmRaw)->editor()->verticalScrollBar()->setValue(lines - 100);
    QTest::qWait(20);
    view->setCurrentKind(CodeKind::Loops);
    QVERIFY(w.codeDocks()->codeController()->waitForCode(CodeKind::Loops));
    view->setCurrentKind(CodeKind::LlvmRaw); // from the cache
    QTest::qWait(20);
    ping.stop();
    qInfo("%d lines of LLVM IR; longest event-loop stall %lld ms", lines, worst);
    QVERIFY(lines > 10000);
    QVERIFY(view->pane(CodeKind::LlvmRaw)->editor()->isLazy());
    QVERIFY2(worst < kStallBudgetMs, qPrintable(QString::number(worst)));
  }

  /// A click (the cursor) in a kernel's code selects its node in every view, and the view does
  /// not scroll away from the click; a graph selection marks the kernel in the code.
  void selectionGoesBothWays() {
    auto w = openWindow("resnet_block.onnx", "O3");
    QVERIFY(w);
    CodeView* view = w->codeDocks()->codeView();
    view->setCurrentKind(CodeKind::Assembly);
    QVERIFY(w->codeDocks()->codeController()->waitForCode(CodeKind::Assembly));
    CodePane* pane = view->pane(CodeKind::Assembly);
    const auto code = pane->code();
    QVERIFY(code && code->sections.size() >= 2);
    QSignalSpy selected(w->coordinator(), &Coordinator::selectionChanged);
    // A line in the middle of the second kernel, scrolled to the top of the view first.
    const size_t last = 1;
    const int line = int(code->sections[last].firstLine + code->sections[last].lineCount / 2);
    pane->editor()->verticalScrollBar()->setValue(line);
    const int scroll = pane->editor()->verticalScrollBar()->value();
    QCOMPARE(scroll, line);
    pane->editor()->setTextCursor(QTextCursor(pane->editor()->document()->findBlockByNumber(line)));
    QCOMPARE(w->coordinator()->selectedNode(), code->code.kernelList[last].node);
    QCOMPARE(w->graphView()->selectedNode(), code->code.kernelList[last].node);
    QVERIFY(!selected.isEmpty());
    QCOMPARE(pane->shownKernel(), int(last));
    QCOMPARE(pane->editor()->verticalScrollBar()->value(), scroll); // not back to its first line
    // The other way: the graph selects the first kernel's node.
    Q_EMIT w->graphView()->nodeSelected(code->code.kernelList[0].node);
    QCOMPARE(pane->shownKernel(), 0);
    QCOMPARE(pane->editor()->verticalScrollBar()->value(), int(code->sections[0].firstLine));
    // Lines outside every kernel (the module header) select nothing.
    const NodeId before = w->coordinator()->selectedNode();
    pane->editor()->setTextCursor(QTextCursor(pane->editor()->document()->findBlockByNumber(0)));
    QCOMPARE(w->coordinator()->selectedNode(), before);
  }

  void searchCopyAndSave() {
    auto w = openWindow("small_cnn.onnx", "O3");
    QVERIFY(w);
    CodeView* view = w->codeDocks()->codeView();
    view->setCurrentKind(CodeKind::Loops);
    QVERIFY(w->codeDocks()->codeController()->waitForCode(CodeKind::Loops));
    QPlainTextEdit* edit = view->pane(CodeKind::Loops)->editor();
    QVERIFY(view->find("kernel "));
    const int first = edit->textCursor().blockNumber();
    QCOMPARE(edit->textCursor().selectedText(), QStringLiteral("kernel "));
    QVERIFY(view->find("kernel "));
    const int second = edit->textCursor().blockNumber();
    QVERIFY(second > first);
    QVERIFY(view->find("kernel ", /*backward=*/true));
    QCOMPARE(edit->textCursor().blockNumber(), first);
    QVERIFY(!view->find("no such text anywhere"));
    // Copy without a selection copies the whole tab; with one, the selection.
    edit->moveCursor(QTextCursor::Start);
    view->copyCurrent();
    QCOMPARE(QApplication::clipboard()->text(), view->currentText());
    QVERIFY(view->find("kernel "));
    view->copyCurrent();
    QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("kernel "));
    QTemporaryDir dir;
    const QString path = dir.filePath("model.loops.txt");
    QCOMPARE(view->saveCurrent(path), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(f.readAll()), view->currentText());
    QVERIFY(!view->saveCurrent(dir.filePath("no/such/dir/x.txt")).isEmpty());
  }

  /// Results are cached per snapshot (no job for a text already made); stepping shows each
  /// snapshot's own code; a result for a snapshot stepped away from is not shown.
  void cachesPerSnapshotAndDropsStaleResults() {
    auto w = openWindow("small_cnn.onnx", "canonicalize,fold-batchnorm,fuse");
    QVERIFY(w);
    CodeView* view = w->codeDocks()->codeView();
    CodeController* ctl = w->codeDocks()->codeController();
    view->setCurrentKind(CodeKind::Loops);
    QVERIFY(ctl->waitForCode(CodeKind::Loops));
    const int jobs = ctl->jobsStarted();
    const QString fused = view->currentText();
    w->coordinator()->selectSnapshot(0);
    QVERIFY(ctl->waitForCode(CodeKind::Loops));
    QCOMPARE(view->currentText(), QString::fromStdString(facadeCode(*w, CodeKind::Loops).code.text));
    QVERIFY(view->currentText() != fused);
    QCOMPARE(ctl->jobsStarted(), jobs + 1);
    const int last = int(w->coordinator()->session().snapshotCount()) - 1;
    w->coordinator()->selectSnapshot(last);
    QVERIFY(ctl->waitForCode(CodeKind::Loops));
    QCOMPARE(view->currentText(), fused);
    QCOMPARE(ctl->jobsStarted(), jobs + 1); // from the cache
    // Ask for the optimized IR, then step away before it arrives: the old result is dropped.
    QSignalSpy done(ctl, &CodeController::finished);
    view->setCurrentKind(CodeKind::Llvm);
    QVERIFY(ctl->isBusy());
    w->coordinator()->selectSnapshot(0);
    QVERIFY(waitUntil([&] { return !ctl->isBusy(); }));
    QVERIFY(!done.isEmpty());
    QVERIFY(ctl->waitForCode(CodeKind::Llvm));
    QCOMPARE(view->currentText(), QString::fromStdString(facadeCode(*w, CodeKind::Llvm).code.text));
  }

  /// Each language's highlighter colours what it should; a large text is coloured only where
  /// it is shown, and setting it stays well under a frame budget.
  void highlightsLazily() {
    CodeTextEdit loops(CodeKind::Loops);
    loops.resize(600, 400);
    loops.show();
    loops.setCode(QStringLiteral("kernel k0_relu(in x: f32[4]):\n  for i in parallel(4):  # n1 Relu\n"));
    QTest::qWait(10);
    QTextBlock second = loops.document()->findBlockByNumber(1);
    QCOMPARE(colourAt(second, second.text().indexOf("parallel")), QColor(0xC6, 0x28, 0x28));
    QVERIFY(colourAt(second, second.text().indexOf("# n1")).isValid());
    QVERIFY(!loops.isLazy());

    CodeTextEdit llvm(CodeKind::Llvm);
    llvm.resize(600, 400);
    llvm.show();
    QString big;
    for (int i = 0; i < 30000; ++i)
      big += QStringLiteral("  %v%1 = fadd fast <8 x float> %a, %b ; line %1\n").arg(i);
    QElapsedTimer timer;
    timer.start();
    llvm.setCode(big);
    QTest::qWait(10); // the deferred colouring of the visible part
    const qint64 ms = timer.elapsed();
    qInfo("30,000 lines of LLVM IR shown in %lld ms", ms);
    QVERIFY2(ms < 1500, qPrintable(QString::number(ms)));
    QVERIFY(llvm.isLazy());
    QTextBlock top = llvm.document()->findBlockByNumber(0);
    QVERIFY(colourAt(top, top.text().indexOf("fadd")).isValid());
    QTextBlock far = llvm.document()->findBlockByNumber(20000);
    QVERIFY(!colourAt(far, far.text().indexOf("fadd")).isValid());
    llvm.verticalScrollBar()->setValue(20000);
    QTest::qWait(10);
    far = llvm.document()->findBlockByNumber(20000);
    QVERIFY(colourAt(far, far.text().indexOf("fadd")).isValid());

    CodeTextEdit asmEdit(CodeKind::Assembly);
    asmEdit.show();
    asmEdit.setCode(QStringLiteral("k0:\n\tvfmadd231ps\t%ymm1, %ymm2, %ymm0  # acc\n"));
    QTest::qWait(10);
    QTextBlock ins = asmEdit.document()->findBlockByNumber(1);
    QVERIFY(colourAt(ins, ins.text().indexOf("vfmadd")).isValid());
    QVERIFY(colourAt(ins, ins.text().indexOf("%ymm1")).isValid());
    QVERIFY(colourAt(asmEdit.document()->findBlockByNumber(0), 0).isValid());
  }

  /// The editor shows the selected kernel's schedule as compiled (the facade's description),
  /// and its form writes exactly the --schedule text, which parses back to the same override.
  void scheduleEditorShowsTheCompiledSchedule() {
    auto w = openWindow("resnet_block.onnx", "O3");
    QVERIFY(w);
    ScheduleView* view = w->codeDocks()->scheduleView();
    ScheduleController* ctl = w->codeDocks()->scheduleController();
    const NodeId conv = fusedConv(*currentGraph(*w));
    w->coordinator()->selectNode(conv);
    QVERIFY(ctl->waitForKernels());
    QVERIFY(view->kernel());
    auto expected = workbench::describeSchedules(*currentGraph(*w), {});
    QVERIFY(expected.ok());
    const workbench::KernelSchedule* k = nullptr;
    for (const auto& e : *expected)
      if (e.node == conv)
        k = &e;
    QVERIFY(k && k->gemm);
    QCOMPARE(view->kernel()->kernel, k->kernel);
    QCOMPARE(view->kernel()->loopsText, k->loopsText);
    QCOMPARE(view->loopModel()->rowCount(), int(k->loops.size()));
    for (int r = 0; r < view->loopModel()->rowCount(); ++r)
      QCOMPARE(view->loopModel()->index(r, LoopNestModel::Kind).data().toString(),
               QString::fromStdString(k->loops[size_t(r)].kind));
    QAbstractItemModelTester loopTester(view->loopModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(view->form()->gemmGroup()->isEnabled());
    QVERIFY(view->form()->blockingSpin("mr")->specialValueText().contains(QString::number(k->mr)));

    ScheduleForm* form = view->form();
    const QString name = QString::fromStdString(k->kernel);
    QCOMPARE(form->overrideText(), name + ":");
    form->blockingSpin("mr")->setValue(4);
    form->blockingSpin("kc")->setValue(64);
    form->parallelCombo()->setCurrentIndex(form->parallelCombo()->findData("0"));
    QCOMPARE(form->overrideText(), name + ":parallel=0,mr=4,kc=64");
    auto parsed = cg::parseScheduleOverrides(form->overrideText().toStdString());
    QVERIFY(parsed.ok());
    QCOMPARE(QString::fromStdString(cg::printScheduleOverrides(*parsed)), form->overrideText());
    QCOMPARE(*form->currentOverride(), parsed->front());
    // Typed text fills the fields where they can hold it...
    QCOMPARE(form->setOverrideText(name + ":none,tile=8x8,vectorize=8"), QString());
    QCOMPARE(form->startCombo()->currentIndex(), 1);
    QCOMPARE(form->tileEdit()->text(), QStringLiteral("8x8"));
    QCOMPARE(form->vectorizeSpin()->value(), 8);
    QCOMPARE(form->blockingSpin("mr")->value(), 0);
    // ...and keeps what they cannot (split, cache) as text, which is what applies.
    QCOMPARE(form->setOverrideText(name + ":split=co/4,cache=Y"), QString());
    QCOMPARE(form->currentOverride()->directives.size(), size_t(2));
    QVERIFY(!form->setOverrideText(name + ":explode=1").isEmpty());
    QVERIFY(!form->currentOverride().ok());
    QVERIFY(!form->setOverrideText("k0_other:none").isEmpty());
    // The GPU fields write block= and regtile=, and typed GPU directives fill them; a block
    // size the GPU refuses stays text only.
    QCOMPARE(form->setOverrideText(name + ":"), QString());
    form->gpuBlockCombo()->setCurrentIndex(form->gpuBlockCombo()->findData(128));
    form->gpuTileSpin()->setValue(2);
    QCOMPARE(form->overrideText(), name + ":block=128,regtile=2");
    QVERIFY(form->currentOverride().ok());
    QCOMPARE(form->setOverrideText(name + ":regtile=1,block=64"), QString());
    QCOMPARE(form->gpuBlockCombo()->currentData().toInt(), 64);
    QCOMPARE(form->gpuTileSpin()->value(), 1);
    QCOMPARE(form->setOverrideText(name + ":block=100"), QString());
    QCOMPARE(form->currentOverride()->directives.front().value, std::string("100"));
    QCOMPARE(form->gpuBlockCombo()->currentData().toInt(), 64); // fields unchanged
    form->gpuTileSpin()->setValue(0);
    form->gpuBlockCombo()->setCurrentIndex(0);
    QCOMPARE(form->overrideText(), name + ":");
  }

  /// Apply recompiles the kernel in the background and shows old and new code and time; the
  /// override becomes the session's --schedule text and the code view's code; Reset goes back;
  /// a bad directive changes nothing and says why.
  void applyingAScheduleChangesCodeAndTime() {
    auto w = openWindow("small_cnn.onnx", "O3");
    QVERIFY(w);
    ScheduleView* view = w->codeDocks()->scheduleView();
    ScheduleController* ctl = w->codeDocks()->scheduleController();
    QVERIFY(ctl->waitForKernels());
    // A loop kernel: a pooling node.
    const workbench::KernelSchedule* pool = nullptr;
    for (const auto& k : *ctl->kernels())
      if (!pool && k.opSummary == "MaxPool") // the first max pooling: a loop kernel
        pool = &k;
    QVERIFY(pool);
    const std::string poolName = pool->kernel;
    w->coordinator()->selectNode(pool->node);
    QCOMPARE(view->kernel()->kernel, poolName);
    QVERIFY(!view->form()->gemmGroup()->isEnabled());
    view->form()->startCombo()->setCurrentIndex(1);
    view->form()->tileEdit()->setText("4x4");
    Q_EMIT view->form()->tileEdit()->textEdited("4x4");
    QCOMPARE(view->form()->overrideText(), QString::fromStdString(poolName + ":none,tile=4x4"));
    view->setRuns(3);
    QSignalSpy finished(ctl, &ScheduleController::trialFinished);
    QElapsedTimer clickTime;
    clickTime.start();
    view->applyButton()->click();
    QVERIFY2(clickTime.elapsed() < 250, "Apply blocked the GUI thread");
    QVERIFY(ctl->isTrialRunning());
    QVERIFY(ctl->waitForTrial());
    QCOMPARE(finished.size(), 1);
    QVERIFY2(finished.first().first().toBool(), qPrintable(finished.first().at(1).toString()));
    TrialComparisonModel* cmp = view->comparisonModel();
    QAbstractItemModelTester cmpTester(cmp, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(cmp->trial());
    const auto& trial = *cmp->trial();
    QVERIFY(trial.before.code.loops != trial.after.code.loops);
    QVERIFY(trial.after.timing.medianUs > 0 && trial.before.timing.medianUs > 0);
    QCOMPARE(trial.after.timing.us.size(), size_t(3));
    QCOMPARE(cmp->index(TrialComparisonModel::Schedule, TrialComparisonModel::After).data().toString(),
             QStringLiteral("none,tile=4x4"));
    QVERIFY(cmp->index(TrialComparisonModel::MedianTime, TrialComparisonModel::Change).data().toString().contains("\u00D7"));
    QCOMPARE(view->afterEditor(CodeKind::Loops)->toPlainText(), QString::fromStdString(trial.after.code.loops));
    QCOMPARE(view->beforeEditor(CodeKind::Assembly)->toPlainText(), QString::fromStdString(trial.before.code.assembly));
    // The session holds it, as the CLI would take it.
    const auto& s = w->coordinator()->session();
    QCOMPARE(s.scheduleText(s.currentIndex()), poolName + ":none,tile=4x4");
    QVERIFY(view->sessionText().contains(QString::fromStdString(poolName + ":none,tile=4x4")));
    // The code view now shows the new schedule's code for that kernel.
    CodeView* code = w->codeDocks()->codeView();
    code->setCurrentKind(CodeKind::Loops);
    QVERIFY(w->codeDocks()->codeController()->waitForCode(CodeKind::Loops));
    code->setKernelScope(true);
    QCOMPARE(code->currentText(), QString::fromStdString(trial.after.code.loops));
    code->setKernelScope(false);
    QVERIFY(ctl->waitForKernels());
    QCOMPARE(view->kernel()->override, std::string("none,tile=4x4"));
    QVERIFY(view->resetButton()->isEnabled());

    // A directive the kernel cannot take: nothing changes, and the message names it.
    view->form()->setOverrideText(QString::fromStdString(poolName + ":vectorize=nope/8"));
    view->applyButton()->click();
    QVERIFY(ctl->waitForTrial());
    QVERIFY2(view->statusText().contains("vectorize=nope/8"), qPrintable(view->statusText()));
    QCOMPARE(s.scheduleText(s.currentIndex()), poolName + ":none,tile=4x4");

    // Reset to default.
    view->resetButton()->click();
    QVERIFY(ctl->waitForTrial());
    QCOMPARE(s.scheduleText(s.currentIndex()), std::string());
    QVERIFY(cmp->trial()->after.code.schedule.empty());
    QVERIFY(ctl->waitForKernels());
    QVERIFY(view->kernel()->override.empty());
  }

  /// A newer Apply replaces a running trial; the replaced one's result is not committed.
  void newerTrialWins() {
    auto w = openWindow("small_cnn.onnx", "O3");
    QVERIFY(w);
    ScheduleController* ctl = w->codeDocks()->scheduleController();
    QVERIFY(ctl->waitForKernels());
    std::string pool;
    for (const auto& k : *ctl->kernels())
      if (pool.empty() && k.opSummary == "MaxPool")
        pool = k.kernel;
    QVERIFY(!pool.empty());
    QSignalSpy finished(ctl, &ScheduleController::trialFinished);
    ctl->apply({pool, {{"none", ""}, {"tile", "2x2"}}}, 3);
    ctl->apply({pool, {{"none", ""}, {"tile", "4x4"}}}, 3);
    QVERIFY(ctl->waitForTrial());
    QCOMPARE(finished.size(), 1);
    const auto& s = w->coordinator()->session();
    QCOMPARE(s.scheduleText(s.currentIndex()), pool + ":none,tile=4x4");
  }

  /// Tune searches the selected kernel's schedules in the background and puts the fastest
  /// override it keeps in the form (the session changes only on Apply); Cancel stops it.
  void tuneFillsTheFormInTheBackground() {
    auto w = openWindow("small_cnn.onnx", "O3");
    QVERIFY(w);
    ScheduleView* view = w->codeDocks()->scheduleView();
    ScheduleController* ctl = w->codeDocks()->scheduleController();
    QVERIFY(ctl->waitForKernels());
    const workbench::KernelSchedule* conv = nullptr;
    for (const auto& k : *ctl->kernels())
      if (k.gemm && k.opSummary == "Conv+Relu")
        conv = &k; // the last convolution: the hottest kernel
    QVERIFY(conv);
    const std::string name = conv->kernel;
    w->coordinator()->selectNode(conv->node);
    QCOMPARE(view->kernel()->kernel, name);
    QVERIFY(view->tuneButton()->isEnabled());
    ctl->setTuneBudget(2.0);
    QSignalSpy finished(ctl, &ScheduleController::tuneFinished);
    QElapsedTimer clickTime;
    clickTime.start();
    view->tuneButton()->click();
    QVERIFY2(clickTime.elapsed() < 250, "Tune blocked the GUI thread");
    QVERIFY(ctl->isTuning());
    QVERIFY(!view->applyButton()->isEnabled() && !view->tuneButton()->isEnabled());
    QVERIFY(ctl->waitForTune());
    QCOMPARE(finished.size(), 1);
    const QString directives = finished.first().at(0).toString();
    const QString summary = finished.first().at(1).toString();
    QVERIFY2(summary.contains(QString::fromStdString(name)), qPrintable(summary));
    qInfo("%s", qPrintable(summary));
    if (directives.isEmpty())
      QVERIFY2(summary.contains("default schedule stays"), qPrintable(summary));
    else
      QCOMPARE(view->form()->overrideText(), QString::fromStdString(name) + ":" + directives);
    const auto& s = w->coordinator()->session();
    QCOMPARE(s.scheduleText(s.currentIndex()), std::string());
    QVERIFY(view->tuneButton()->isEnabled());

    view->tuneButton()->click();
    ctl->cancel();
    QVERIFY(ctl->waitForTune());
    QCOMPARE(finished.size(), 2);
    QVERIFY2(finished.last().at(1).toString().contains("cancelled"),
             qPrintable(finished.last().at(1).toString()));
  }

  /// --screenshot writes the code and schedule pictures, and they show what they should.
  void screenshotsShowCodeAndSchedule() {
    QTemporaryDir dir;
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("resnet_block.onnx")));
    QVERIFY(w.coordinator()->setPipeline("O3"));
    QVERIFY(w.runPipelineBlocking());
    QString error;
    const QStringList files = w.saveScreenshots(dir.path(), &error);
    QVERIFY2(!files.isEmpty(), qPrintable(error));
    for (const char* name : {"code-loops.png", "code-llvm.png", "code-asm.png", "schedule.png"}) {
      QVERIFY2(files.contains(dir.filePath(name)), name);
      QImage img(dir.filePath(name));
      QVERIFY2(!img.isNull(), name);
      QVERIFY(img.width() >= 1000 && img.height() >= 600);
    }
    // The schedule picture was taken after a trial of the selected fused convolution.
    ScheduleView* view = w.codeDocks()->scheduleView();
    QVERIFY2(view->kernel(), qPrintable(view->statusText()));
    QCOMPARE(view->kernel()->node, fusedConv(*currentGraph(w)));
    QVERIFY(view->comparisonModel()->trial());
    QVERIFY(view->comparisonModel()->trial()->after.timing.medianUs > 0);
  }
};

QTEST_MAIN(TestCodeViews)
#include "TestCodeViews.moc"
