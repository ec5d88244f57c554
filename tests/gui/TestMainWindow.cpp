// Headless GUI tests that drive the real main window: open each sample, step a pipeline forward
// and back, check the highlighted change set against the structural diff, selection sync between
// graph, IR text and inspector, search, export, diffs, a broken file, item models, stale results,
// the dock layout and the screenshot mode.
#include "app/gui/Coordinator.h"
#include "app/gui/DiffView.h"
#include "app/gui/DockManager.h"
#include "app/gui/InspectorView.h"
#include "app/gui/IrTextView.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PipelineModels.h"
#include "app/gui/PipelinePanel.h"
#include "app/gui/RunController.h"
#include "app/gui/TimelineModel.h"
#include "app/gui/TimelineView.h"
#include "app/gui/WorkerGuard.h"
#include "app/gui/graph/GraphView.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/Session.h"

#include "core/GraphDiff.h"
#include "core/ModelIO.h"
#include "core/ShapeInference.h"
#include "core/text/IrPrinter.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QUrl>
#include <QXmlStreamReader>
#include <QtTest/QtTest>

#include <set>

using namespace fb;
using namespace fb::gui;

namespace {

QString sample(const char* name) { return QStringLiteral(FUSEBOX_SAMPLES_DIR "/") + name; }

const char* kTeachingPipeline = "canonicalize,fold-constants,fold-batchnorm,fuse";

/// Steps once through the coordinator and waits for the result.
bool stepAndWait(Coordinator* c) {
  QSignalSpy spy(c, &Coordinator::stepFinished);
  c->step();
  if (spy.isEmpty() && !spy.wait(30000))
    return false;
  return spy.first().first().toBool();
}

std::map<NodeId, NodeMark> expectedMarks(const GraphDiff& d) {
  std::map<NodeId, NodeMark> m;
  for (NodeId id : d.added)
    m[id] = NodeMark::Added;
  for (const NodeChange& c : d.changed)
    m[c.id] = NodeMark::Changed;
  return m;
}

/// A 5,000-node model in name-scoped blocks (/layers.L/block.B/...): MatMul, Add bias, Relu and
/// a residual Add per block, on f32[1, 16] activations.
std::unique_ptr<Graph> makeLargeModel(int blocks) {
  auto g = std::make_unique<Graph>("stack");
  const TensorType act = TensorType::of(DType::F32, {1, 16});
  Value* x = g->addInput("x", act);
  const Tensor weight(DType::F32, {16, 16});
  const Tensor bias(DType::F32, {16});
  for (int b = 0; b < blocks; ++b) {
    const std::string s = "/layers." + std::to_string(b / 8) + "/block." + std::to_string(b % 8);
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

} // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName("FuseboxTest");
    QCoreApplication::setApplicationName("TestMainWindow");
  }

  void opensEverySample() {
    MainWindow w(/*persistent=*/false);
    w.show();
    for (const char* name : {"mlp.onnx", "small_cnn.onnx", "resnet_block.onnx", "mobilenet_v2_block.onnx",
                             "transformer_block.onnx", "dynamic_batch.onnx", "small_cnn.fbir"}) {
      QVERIFY2(w.openFile(sample(name)), name);
      QVERIFY(w.bannerText().isEmpty());
      QVERIFY(w.waitForLayouts());
      auto direct = loadModel(sample(name).toStdString());
      QVERIFY(direct.ok());
      QVERIFY(w.graphView()->graph());
      QCOMPARE(w.graphView()->graph()->numNodes(), (*direct)->numNodes());
      QCOMPARE(w.irView()->editor()->toPlainText(), QString::fromStdString(printGraph(**direct)));
      QCOMPARE(w.timeline()->model()->rowCount(), 1);
      QVERIFY(w.windowTitle().contains(QString::fromUtf8(name)));
    }
  }

  void brokenFileShowsAMessageAndKeepsTheModel() {
    QTemporaryDir dir;
    const QString broken = dir.filePath("broken.fbir");
    QFile f(broken);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("graph @g opset 17 {\n  input %x : f32[2\n");
    f.close();
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("mlp.onnx")));
    auto shown = w.graphView()->graph();
    QVERIFY(!w.openFile(broken));
    QVERIFY2(w.bannerText().contains("broken.fbir"), qPrintable(w.bannerText()));
    QCOMPARE(w.coordinator()->session().displayName(), std::string("mlp.onnx"));
    QCOMPARE(w.graphView()->graph().get(), shown.get());
    QVERIFY(!w.openFile(dir.filePath("does-not-exist.onnx")));
    QVERIFY(w.bannerText().contains("does-not-exist.onnx"));
    // A good file clears the message.
    QVERIFY(w.openFile(sample("mlp.onnx")));
    QVERIFY(w.bannerText().isEmpty());
  }

  void workerExceptionsBecomeMessages() {
    // What a worker throws reaches the GUI thread as the outcome's error, not as an abort.
    LoadOutcome oom = guardedWork<LoadOutcome>(QStringLiteral("Loading the model"),
                                               []() -> LoadOutcome { throw std::bad_alloc(); });
    QVERIFY(!oom.graph);
    QVERIFY2(oom.error.contains("Loading the model") && oom.error.contains("out of memory"),
             qPrintable(oom.error));
    StepOutcome boom = guardedWork<StepOutcome>(QStringLiteral("The step"), []() -> StepOutcome {
      throw std::runtime_error("boom at #3");
    });
    QVERIFY2(boom.error.contains("The step failed: boom at #3"), qPrintable(boom.error));
    StepOutcome fine =
        guardedWork<StepOutcome>(QStringLiteral("The step"), [] { return StepOutcome{}; });
    QVERIFY(fine.error.isEmpty());
  }

  void longNamesAreElided() {
    // A 2 MB node name: the model opens, and the inspector and the banner stay short.
    QTemporaryDir dir;
    const QString path = dir.filePath("long_name.fbir");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const QByteArray name(2 * 1024 * 1024, 'n');
    f.write("graph @g opset 17 {\n  input %x : f32[2]\n  %y : f32[2] = Relu(%x)  #1 \"" + name +
            "\"\n  output %y\n}\n");
    f.close();
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(path));
    QVERIFY(w.waitForLayouts());
    const Graph& g = *w.coordinator()->session().graph(0);
    QCOMPARE(g.nodes().size(), size_t(1));
    Q_EMIT w.graphView()->nodeSelected(g.nodes().front()->id());
    const QString text = w.inspector()->plainText();
    QVERIFY2(text.contains("Relu") && text.size() < 4000, qPrintable(QString::number(text.size())));
    QVERIFY(text.contains(QStringLiteral("(%1 characters)").arg(name.size())));
  }

  void droppedFileOpens() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(sample("mlp.onnx"))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QSignalSpy loaded(w.coordinator(), &Coordinator::modelLoaded);
    QApplication::sendEvent(&w, &drop);
    QVERIFY(loaded.wait(10000)); // dropped files load off the GUI thread
    QCOMPARE(w.coordinator()->session().displayName(), std::string("mlp.onnx"));
    QVERIFY(w.actions().recent->actions().size() == 1);
    // Something that is not a model is refused at the door.
    QMimeData other;
    other.setUrls({QUrl::fromLocalFile(sample("README.md"))});
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &other, Qt::LeftButton, Qt::NoModifier);
    refused.setAccepted(false);
    QApplication::sendEvent(&w, &refused);
    QVERIFY(!refused.isAccepted());
  }

  void backgroundLoadsReportAndDropStaleResults() {
    MainWindow w(/*persistent=*/false);
    w.show();
    Coordinator* c = w.coordinator();
    QSignalSpy loaded(c, &Coordinator::modelLoaded);
    QSignalSpy failed(c, &Coordinator::loadFailed);
    w.openFileAsync(sample("transformer_block.onnx"));
    QVERIFY(c->isLoading());
    QVERIFY(w.bannerText().contains("Loading"));
    QVERIFY(loaded.wait(10000));
    QCOMPARE(c->session().displayName(), std::string("transformer_block.onnx"));
    QVERIFY(w.bannerText().isEmpty());
    w.openFileAsync(sample("no-such-model.onnx"));
    QVERIFY(failed.wait(10000));
    QVERIFY(w.bannerText().contains("no-such-model.onnx"));
    QCOMPARE(c->session().displayName(), std::string("transformer_block.onnx"));
    // A synchronous open while a background load runs wins; the late result is dropped.
    loaded.clear();
    w.openFileAsync(sample("resnet_block.onnx"));
    QVERIFY(w.openFile(sample("mlp.onnx")));
    QTRY_VERIFY(!c->isLoading());
    QTest::qWait(50);
    QCOMPARE(c->session().displayName(), std::string("mlp.onnx"));
    QCOMPARE(loaded.size(), 1);
  }

  void failingStepKeepsTheGraphAndSaysWhy() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("mlp.onnx")));
    Coordinator* c = w.coordinator();
    // A misspelt option is refused when the pipeline is set, before anything runs.
    QVERIFY(!c->setPipeline("canonicalize,prune{ratio=abc}"));
    QVERIFY2(w.bannerText().contains("prune") && w.bannerText().contains("ratio") &&
                 w.bannerText().contains("sparsity"),
             qPrintable(w.bannerText()));
    // A pass that fails while it runs (its calibration file does not exist).
    QVERIFY(c->setPipeline("canonicalize,quantize{inputs=/nonexistent/calibration.npy}"));
    QVERIFY(stepAndWait(c));
    auto before = c->session().graph(1);
    QVERIFY(!stepAndWait(c));
    QCOMPARE(c->session().currentIndex(), size_t(1));
    QCOMPARE(c->session().snapshotCount(), size_t(2));
    QCOMPARE(w.graphView()->graph().get(), before.get());
    QVERIFY2(w.bannerText().contains("quantize") && w.bannerText().contains("calibration.npy"),
             qPrintable(w.bannerText()));
    QVERIFY(!c->isBusy());
  }

  /// The options field completes from the selected step's declared options, and the
  /// description lists them with what each accepts.
  void optionFieldOffersTheDeclaredOptions() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("mlp.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline("canonicalize,layout,dce"));
    auto* list = w.pipelinePanel()->findChild<QListView*>("pipelineList");
    QVERIFY(list);
    list->setCurrentIndex(list->model()->index(1, 0));
    const QStringList offered = w.pipelinePanel()->optionCompletions();
    QCOMPARE(offered, QStringList({"to=nchw8c", "to=nhwc"}));
    auto* description = w.pipelinePanel()->findChild<QLabel*>("passDescription");
    QVERIFY(description);
    QVERIFY2(description->text().contains("one of nchw8c, nhwc"), qPrintable(description->text()));
    list->setCurrentIndex(list->model()->index(2, 0));
    QVERIFY(w.pipelinePanel()->optionCompletions().isEmpty());
  }

  /// Run → Run on CPU compiles and runs the current snapshot off the GUI thread through the
  /// workbench, and reports the same comparison the workbench computes directly.
  void runsTheSnapshotOnTheCpuThroughTheWorkbench() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline("canonicalize,fold-batchnorm,fuse"));
    for (int i = 0; i < 3; ++i)
      QVERIFY(stepAndWait(c));
    RunController* runs = w.runController();
    QSignalSpy finished(runs, &RunController::finished);
    QSignalSpy progress(runs, &RunController::progress);
    QVERIFY(w.actions().runOnCpu->isEnabled());
    w.actions().runOnCpu->trigger(); // the current snapshot: 3
    QVERIFY(finished.wait(120000));
    QCOMPARE(finished.first().at(0).toBool(), true);
    const QString summary = finished.first().at(1).toString();
    QVERIFY2(summary.contains("agree with the imported model") && summary.contains("compiled"),
             qPrintable(summary));
    QVERIFY(progress.count() > 0); // the compile stages were reported
    const RunOutcome& out = runs->lastOutcome();
    QVERIFY(out.run && out.comparison);
    // The same numbers as the workbench called directly on the same inputs.
    auto inputs = workbench::gatherInputs(*c->session().graph(3), {}, 1, {});
    QVERIFY(inputs.ok());
    auto direct = workbench::runGraph(*c->session().graph(3), *inputs,
                                      workbench::RunSettings{workbench::Backend::Cpu, {}, 0, 3, false});
    QVERIFY(direct.ok());
    auto cmp = workbench::compareWithReference(*c->session().graph(0), *c->session().graph(3),
                                               *inputs, direct->outputs, std::nullopt);
    QVERIFY(cmp.ok());
    QCOMPARE(out.comparison->outputs.size(), cmp->outputs.size());
    for (size_t i = 0; i < cmp->outputs.size(); ++i)
      QCOMPARE(out.comparison->outputs[i].result.maxAbs, cmp->outputs[i].result.maxAbs);
    QVERIFY(w.bannerText().contains("agree"));
  }

  void stepsForwardAndBackHighlightingTheStructuralDiff() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("resnet_block.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline(kTeachingPipeline));
    QCOMPARE(w.pipelinePanel()->pipelineModel()->rowCount(), 4);
    const auto& s = c->session();
    for (size_t k = 1; k <= 4; ++k) {
      QVERIFY(stepAndWait(c));
      QCOMPARE(s.currentIndex(), k);
      GraphDiff d = diffGraphs(*s.graph(k - 1), *s.graph(k));
      const auto expected = expectedMarks(d);
      QCOMPARE(c->currentMarks(), expected);
      std::vector<NodeId> changed = changedNodeIds(d);
      QCOMPARE(c->currentMarks().size(), std::set<NodeId>(changed.begin(), changed.end()).size());
      QCOMPARE(w.graphView()->graph().get(), s.graph(k).get());
      QCOMPARE(w.graphView()->marks(), expected);
      QCOMPARE(w.timeline()->model()->rowCount(), int(k + 1));
      QVERIFY(w.waitForLayouts());
    }
    QVERIFY(w.pipelinePanel()->summaryText().startsWith("fuse"));
    QVERIFY(!w.actions().step->isEnabled());
    // fold-batchnorm (snapshot 3) removed the two BatchNormalizations.
    QCOMPARE(s.summary(3).stats.nodes + 2, s.summary(2).stats.nodes);

    c->back();
    c->back();
    QCOMPARE(s.currentIndex(), size_t(2));
    QCOMPARE(w.graphView()->graph().get(), s.graph(2).get());
    QCOMPARE(c->currentMarks(), expectedMarks(diffGraphs(*s.graph(1), *s.graph(2))));
    QVERIFY(w.actions().forward->isEnabled());
    QVERIFY(stepAndWait(c)); // a computed snapshot ahead: Step moves forward
    QCOMPARE(s.currentIndex(), size_t(3));
    QCOMPARE(s.snapshotCount(), size_t(5));
    w.timeline()->table()->selectRow(0);
    QCOMPARE(s.currentIndex(), size_t(0));
    QVERIFY(c->currentMarks().empty());
    QVERIFY(w.graphView()->marks().empty());
    c->reset();
    QCOMPARE(s.snapshotCount(), size_t(1));
    QVERIFY(w.runPipelineBlocking());
    QCOMPARE(s.currentIndex(), size_t(4));
  }

  void selectionIsSyncedAcrossGraphIrAndInspector() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.waitForLayouts());
    const Graph& g = *w.coordinator()->session().graph(0);
    const Node* conv = nullptr;
    const Node* gemm = nullptr;
    for (const auto& n : g.nodes()) {
      if (n->op() == OpKind::Conv && !conv)
        conv = n.get();
      if (n->op() == OpKind::Gemm)
        gemm = n.get();
    }
    QVERIFY(conv && gemm);
    // The user clicks a node in the graph.
    Q_EMIT w.graphView()->nodeSelected(conv->id());
    QCOMPARE(w.coordinator()->selectedNode(), conv->id());
    QVERIFY(w.inspector()->inspection().has_value());
    QCOMPARE(w.inspector()->inspection()->id, conv->id());
    const QString text = w.inspector()->plainText();
    QVERIFY2(text.contains("Conv") && text.contains("FLOPs") && text.contains("Arithmetic intensity"),
             qPrintable(text));
    QVERIFY(text.contains(QString::fromStdString(conv->input(1)->name()))); // the weight
    QVERIFY(text.contains("sparsity"));
    const int line = int(w.irView()->irText().lineOfNode.at(conv->id()));
    QCOMPARE(w.irView()->highlightedLine(), line);
    QCOMPARE(w.irView()->editor()->textCursor().blockNumber(), line);
    // The user moves the cursor onto another node's line in the IR text.
    const int gemmLine = int(w.irView()->irText().lineOfNode.at(gemm->id()));
    QTextCursor cur(w.irView()->editor()->document()->findBlockByNumber(gemmLine));
    w.irView()->editor()->setTextCursor(cur);
    QCOMPARE(w.coordinator()->selectedNode(), gemm->id());
    QCOMPARE(w.graphView()->selectedNode(), gemm->id());
    QCOMPARE(w.inspector()->inspection()->op, std::string("Gemm"));
    // The histogram shown is the Gemm weight's, not the Conv's from before.
    const QImage shown = w.inspector()->browser()->document()
                             ->resource(QTextDocument::ImageResource, QUrl("hist://constant/0"))
                             .value<QImage>();
    const auto& gemmStats = w.inspector()->inspection()->constants.at(0);
    QCOMPARE(gemmStats.name, gemm->input(1)->name());
    QCOMPARE(shown, InspectorView::histogramImage(gemmStats, QSize(300, 90)));
    // A producer link in the inspector selects that node.
    Q_EMIT w.inspector()->nodeLinkActivated(conv->id());
    QCOMPARE(w.graphView()->selectedNode(), conv->id());
  }

  /// An LSTM node's inspector explains its gates with the node's hidden size and direction.
  void inspectorExplainsRecurrentCells() {
    Graph g("lstm");
    Value* x = g.addInput("X", TensorType::of(DType::F32, {5, 1, 3}));
    Value* w = g.addConstant("W", Tensor(DType::F32, {2, 16, 3}));
    Value* r = g.addConstant("R", Tensor(DType::F32, {2, 16, 4}));
    Node* n = g.addNode(OpKind::LSTM, {x, w, r}, 2, {"Y", "Y_h"}, "lstm");
    n->attrs().set("direction", std::string("bidirectional"));
    g.addOutput(n->output(0));
    QVERIFY(inferShapes(g).ok());
    QTemporaryDir dir;
    const std::string path = dir.filePath("lstm.onnx").toStdString();
    QVERIFY(saveModel(g, path).ok());
    workbench::Session s;
    Status st = s.load(path);
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
    const Node* lstm = s.graph(0)->nodes()[0].get();
    auto ins = workbench::inspectNode(s, 0, lstm->id());
    QVERIFY(ins.has_value());
    InspectorView view;
    view.showNode(*ins, 0);
    const QString text = view.plainText();
    for (const char* want : {"How it works", "i_t = f(", "o_t = f(", "Hidden size 4",
                             "bidirectional", "f = Sigmoid, g = Tanh, h = Tanh"})
      QVERIFY2(text.contains(QString::fromUtf8(want)), qPrintable(text));
  }

  void provenanceLinkShowsTheOriginalSnapshot() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline(kTeachingPipeline));
    QVERIFY(w.runPipelineBlocking());
    const auto& s = w.coordinator()->session();
    const Node* group = nullptr;
    for (const auto& n : s.graph(4)->nodes())
      if (n->body() && !group)
        group = n.get();
    QVERIFY(group);
    w.coordinator()->selectNode(group->id());
    const auto& ins = w.inspector()->inspection();
    QVERIFY(ins.has_value() && !ins->provenance.empty());
    const workbench::ProvenanceLink link = ins->provenance.front();
    QVERIFY(link.snapshot.has_value());
    Q_EMIT w.inspector()->provenanceActivated(link.id, int(*link.snapshot));
    QCOMPARE(s.currentIndex(), *link.snapshot);
    QCOMPARE(w.coordinator()->selectedNode(), link.id);
    QCOMPARE(w.inspector()->inspection()->id, link.id);
  }

  void searchFindsNodesByNameAndOp() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.waitForLayouts());
    const Graph& g = *w.coordinator()->session().graph(0);
    size_t relus = 0;
    for (const auto& n : g.nodes())
      relus += n->op() == OpKind::Relu;
    QVERIFY(relus >= 2);
    w.actions().find->trigger();
    QVERIFY(w.searchField()->isVisible());
    const int hits = w.search("relu");
    QVERIFY(hits >= int(relus));
    const Node* sel = g.findNode(w.coordinator()->selectedNode());
    QVERIFY(sel);
    QVERIFY(QString::fromStdString(sel->name()).contains("relu", Qt::CaseInsensitive) ||
            sel->op() == OpKind::Relu ||
            QString::fromStdString(sel->output(0)->name()).contains("relu", Qt::CaseInsensitive));
    QCOMPARE(w.search("no-such-node-anywhere"), 0);
  }

  void exportsSvgPngAndDot() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("resnet_block.onnx")));
    QVERIFY(w.waitForLayouts());
    QTemporaryDir dir;
    const QString svg = dir.filePath("view.svg");
    QCOMPARE(w.exportGraph(svg), QString());
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    bool sawSvg = false;
    QString allText;
    while (!xml.atEnd()) {
      xml.readNext();
      if (xml.isStartElement() && xml.name() == QLatin1String("svg"))
        sawSvg = true;
      if (xml.isCharacters())
        allText += xml.text();
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(sawSvg);
    QVERIFY(allText.contains("Conv"));
    QCOMPARE(w.exportGraph(dir.filePath("view.png")), QString());
    QImage png(dir.filePath("view.png"));
    QVERIFY(!png.isNull() && png.width() > 50);
    QCOMPARE(w.exportGraph(dir.filePath("view.dot")), QString());
    QFile dot(dir.filePath("view.dot"));
    QVERIFY(dot.open(QIODevice::ReadOnly));
    QVERIFY(dot.readAll().contains("digraph"));
  }

  void diffsTwoSnapshots() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("resnet_block.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline(kTeachingPipeline));
    QVERIFY(w.runPipelineBlocking());
    const auto& s = c->session();
    w.showDiff(0, 4);
    DiffView* dv = w.diffView();
    QVERIFY(dv->isVisible());
    QVERIFY(dv->diff().has_value());
    GraphDiff ref = diffGraphs(*s.graph(0), *s.graph(4));
    QCOMPARE(dv->diff()->added, ref.added);
    QCOMPARE(dv->diff()->removed, ref.removed);
    QCOMPARE(dv->diff()->changed.size(), ref.changed.size());
    QCOMPARE(dv->changeList()->count(), int(ref.added.size() + ref.removed.size() + ref.changed.size()));
    QCOMPARE(dv->textDiffView()->toPlainText(), QString::fromStdString(s.textDiff(0, 4)));
    QCOMPARE(dv->viewA()->graph().get(), s.graph(0).get());
    QCOMPARE(dv->viewB()->graph().get(), s.graph(4).get());
    for (NodeId id : ref.removed)
      QCOMPARE(dv->marksA().at(id), NodeMark::Removed);
    for (NodeId id : ref.added)
      QCOMPARE(dv->marksB().at(id), NodeMark::Added);
    QVERIFY(w.waitForLayouts());
    // Selecting a removed node in A selects what it became in B.
    QVERIFY(!ref.removed.empty());
    NodeId removed = ref.removed.front();
    Q_EMIT dv->viewA()->nodeSelected(removed);
    QCOMPARE(dv->viewA()->selectedNode(), removed);
    QCOMPARE(dv->viewB()->selectedNode(), ref.removedInto.at(removed).front());

    QSignalSpy numeric(c, &Coordinator::numericDiffFinished);
    Q_EMIT dv->numericDiffRequested(0, 4);
    QVERIFY(numeric.wait(30000));
    QCOMPARE(numeric.first().first().toBool(), true);
    QVERIFY(!dv->firstDivergent().has_value()); // folding and fusing keep the numbers
    // Overlay mode shows b with its marks plus one ghost per removed node, marked removed,
    // with the removed node's op; selecting the ghost selects the removed node in A.
    dv->setOverlay(true);
    QVERIFY(dv->isOverlay());
    const auto& ghosts = dv->overlayGhosts();
    QCOMPARE(ghosts.size(), ref.removed.size());
    std::map<NodeId, NodeMark> expected = dv->marksB();
    for (const auto& [ghost, original] : ghosts) {
      QVERIFY(std::count(ref.removed.begin(), ref.removed.end(), original) == 1);
      QVERIFY(!s.graph(4)->findNode(ghost)); // ghost ids are fresh
      QCOMPARE(dv->overlayGraph()->findNode(ghost)->op(), s.graph(0)->findNode(original)->op());
      expected[ghost] = NodeMark::Removed;
    }
    QCOMPARE(dv->overlayView()->marks(), expected);
    QCOMPARE(dv->overlayGraph()->numNodes(), s.graph(4)->numNodes() + ref.removed.size());
    const auto firstGhost = *ghosts.begin();
    Q_EMIT dv->overlayView()->nodeSelected(firstGhost.first);
    QCOMPARE(dv->viewA()->selectedNode(), firstGhost.second);
    QCOMPARE(dv->overlayView()->selectedNode(), firstGhost.first);
  }

  void numericDiffFindsTheFirstDivergentNode() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline("prune{sparsity=0.5}")); // pruning weights changes the numbers
    QVERIFY(stepAndWait(c));
    w.showDiff(0, 1);
    DiffView* dv = w.diffView();
    QSignalSpy numeric(c, &Coordinator::numericDiffFinished);
    Q_EMIT dv->numericDiffRequested(0, 1);
    QVERIFY(numeric.wait(30000));
    QVERIFY(numeric.first().first().toBool());
    // The reference: the library's numeric diff on the same seeded inputs.
    auto ref = c->session().numericDiff(0, 1, /*seed=*/1);
    QVERIFY(ref.ok() && ref->firstDivergent.has_value());
    QCOMPARE(dv->firstDivergent(), ref->firstDivergent);
    const Node* first = c->session().graph(1)->findNode(*ref->firstDivergent);
    QVERIFY(first);
    QCOMPARE(first->op(), OpKind::Conv); // the first pruned layer
    QSignalSpy picked(dv, &DiffView::nodeSelected);
    dv->selectNode(*dv->firstDivergent()); // what the "First divergent node" button does
    QCOMPARE(dv->viewB()->selectedNode(), *ref->firstDivergent);
    QCOMPARE(dv->viewA()->selectedNode(), *ref->firstDivergent);
    QCOMPARE(picked.size(), 1);
    QCOMPARE(w.inspector()->inspection()->id, *ref->firstDivergent);
  }

  void staleStepResultIsDropped() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline(kTeachingPipeline));
    QSignalSpy spy(c, &Coordinator::stepFinished);
    c->step();
    QVERIFY(c->isBusy());
    // The user edits the pipeline while the pass runs.
    Q_EMIT w.pipelinePanel()->addStepRequested("dce", 0);
    QVERIFY(spy.wait(30000));
    QCOMPARE(spy.first().first().toBool(), false);
    QCOMPARE(c->session().snapshotCount(), size_t(1));
    QCOMPARE(c->session().pipeline().front().passName, std::string("dce"));
    QVERIFY(stepAndWait(c));
    QCOMPARE(c->session().summary(1).label, std::string("dce"));
  }

  void itemModelsPassTheTester() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QAbstractItemModelTester passes(w.pipelinePanel()->passModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester pipeline(w.pipelinePanel()->pipelineModel(),
                                      QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester timeline(w.timeline()->model(),
                                      QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(w.pipelinePanel()->passModel()->rowCount() > 5);
    QVERIFY(w.openFile(sample("mobilenet_v2_block.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline(kTeachingPipeline));
    QVERIFY(stepAndWait(c));
    QVERIFY(stepAndWait(c));
    Q_EMIT w.pipelinePanel()->moveStepRequested(3, 2);
    Q_EMIT w.pipelinePanel()->removeStepRequested(0);
    Q_EMIT w.pipelinePanel()->addStepRequested("cse", 1);
    QCOMPARE(w.pipelinePanel()->pipelineModel()->rowCount(), 4);
    QCOMPARE(c->session().pipelineString(), std::string("fold-constants,cse,fuse,fold-batchnorm"));
    QVERIFY(w.runPipelineBlocking());
    QCOMPARE(w.timeline()->model()->rowCount(), 5);
    QCOMPARE(w.timeline()->model()->data(w.timeline()->model()->index(4, TimelineModel::Step)).toString(),
             QString("fold-batchnorm"));
    c->reset();
    QCOMPARE(w.timeline()->model()->rowCount(), 1);
  }

  void stepOptionsAreEditedAndChecked() {
    MainWindow w(/*persistent=*/false);
    w.show();
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    Coordinator* c = w.coordinator();
    QVERIFY(c->setPipeline("canonicalize,prune"));
    QVERIFY(stepAndWait(c));
    Q_EMIT w.pipelinePanel()->stepOptionsRequested(1, "sparsity=0.5");
    QCOMPARE(c->session().pipelineString(), std::string("canonicalize,prune{sparsity=0.5}"));
    QCOMPARE(c->session().snapshotCount(), size_t(2)); // the canonicalize snapshot stays
    Q_EMIT w.pipelinePanel()->stepOptionsRequested(0, "a=1,prune");
    QVERIFY2(w.bannerText().contains("key=value"), qPrintable(w.bannerText()));
    QCOMPARE(c->session().pipelineString(), std::string("canonicalize,prune{sparsity=0.5}"));
    QVERIFY(!c->setPipeline("canonicalize,no-such-pass"));
    QVERIFY(w.bannerText().contains("no-such-pass"));
    QCOMPARE(c->session().pipelineString(), std::string("canonicalize,prune{sparsity=0.5}"));
  }

  /// Opening a 5,000-node model and stepping two passes over it never blocks the event loop for
  /// long: passes and layouts run in workers, and what runs on the GUI thread (diff, IR text,
  /// statistics) stays within the budget.
  void largeModelKeepsTheEventLoopResponsive() {
    constexpr qint64 kStallBudgetMs = 500; // typical here: about 100 ms; 2 shared cores add noise
    MainWindow w(/*persistent=*/false);
    w.show();
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
    QTemporaryDir dir;
    const QString path = dir.filePath("stack5000.onnx");
    {
      auto g = makeLargeModel(1250);
      QCOMPARE(g->numNodes(), size_t(5000));
      QVERIFY(saveModel(*g, path.toStdString()).ok());
    }
    QSignalSpy loaded(w.coordinator(), &Coordinator::modelLoaded);
    QTest::qWait(20);
    last = clock.elapsed();
    w.openFileAsync(path); // as File > Open does
    QVERIFY(loaded.wait(20000));
    QCOMPARE(w.coordinator()->session().graph(0)->numNodes(), size_t(5000));
    QVERIFY(w.coordinator()->setPipeline("canonicalize,fuse"));
    QVERIFY(w.runPipelineBlocking());
    QVERIFY(w.waitForLayouts());
    QTest::qWait(20);
    const qint64 total = clock.elapsed();
    ping.stop();
    qInfo("5,000 nodes: open + 2 passes + layouts in %lld ms; longest event-loop stall %lld ms",
          total, worst);
    QCOMPARE(w.coordinator()->session().summary(2).stats.nodes, size_t(1250));
    QVERIFY2(worst < kStallBudgetMs, qPrintable(QString::number(worst)));
  }
};

QTEST_MAIN(TestMainWindow)
#include "TestMainWindow.moc"
