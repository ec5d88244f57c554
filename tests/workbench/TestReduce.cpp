// Tests of reduction and replay (app/workbench/Reduce.h, Reproducer.h) against the built-in
// faults: for every fault, on two models, the reduction of a failing pipeline ends in a
// reproducer of a handful of nodes (fewer than the model), which written to a file and read
// back fails on replay with the fault on and passes with it off; a passing model is refused;
// sub-graph extraction feeds cut values with the recorded tensors; cancellation stops it.
#include "app/workbench/Inputs.h"
#include "app/workbench/Reduce.h"
#include "app/workbench/Reproducer.h"
#include "app/workbench/Session.h"
#include "app/workbench/SubGraph.h"
#include "core/Faults.h"
#include "core/Interpreter.h"
#include "core/text/IrParser.h"

#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string modelPath(const QString& name) {
  if (name.startsWith("debug/"))
    return std::string(FUSEBOX_DEBUG_MODELS_DIR) + "/" + name.mid(6).toStdString();
  return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name.toStdString();
}

/// `g` with the running variance of every BatchNormalization zero on its first and last
/// channel (dead filters: only epsilon keeps a folded scale finite).
std::unique_ptr<Graph> withDeadChannels(const Graph& source) {
  std::unique_ptr<Graph> g = source.clone();
  for (const auto& n : g->nodes()) {
    if (n->op() != OpKind::BatchNormalization || !n->input(4) || !n->input(4)->isConstant())
      continue;
    Tensor var = n->input(4)->constantData();
    var.setFromDouble(0, 0.0);
    var.setFromDouble(var.numElements() - 1, 0.0);
    n->setInput(4, g->addConstant(g->uniqueValueName(n->input(4)->name() + ".dead"), var));
  }
  return g;
}

/// The imported graph of `model` ("debug/NAME": the debugging test models; "+dead": with dead
/// channels; "+qdq": after fold-batchnorm and quantize, so the QDQ graph is the model).
std::unique_ptr<Graph> modelGraph(const QString& model) {
  QString file = model.section('+', 0, 0);
  QString variant = model.section('+', 1);
  Session s;
  if (!s.load(modelPath(file)).ok())
    return nullptr;
  if (variant == "dead")
    return withDeadChannels(*s.graph(0));
  if (variant == "qdq") {
    if (!s.setPipeline("fold-batchnorm,quantize{eval=0}").ok() || !s.runPipeline().ok())
      return nullptr;
    return s.graph(s.snapshotCount() - 1)->clone();
  }
  return s.graph(0)->clone();
}

/// The check of `pipeline` ("-O1", "canonicalize,layout", "-O1,layout": as fusebox-opt
/// takes it) on `backend`.
ReduceSettings settingsFor(const QString& pipeline, const QString& backend) {
  ReduceSettings r;
  for (const QString& part : pipeline.split(',')) {
    auto more = part.startsWith("-O") ? namedPipeline(part.mid(1).toStdString())
                                      : parsePipeline(part.toStdString());
    if (more.ok())
      r.check.pipeline.insert(r.check.pipeline.end(), more->begin(), more->end());
  }
  r.check.run.backend = backendFromName(backend.toStdString()).value_or(Backend::Interpreter);
  return r;
}

/// Largest reproducer the reduction may leave: "a handful of nodes".
constexpr size_t kMaxReducedNodes = 6;

} // namespace

class TestReduce : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cleanup() { disableAllFaults(); }

  void reducesFault_data() {
    QTest::addColumn<QString>("fault");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("backend");
    QTest::newRow("canonicalize square_transpose") << "canonicalize-drops-transpose"
                                                   << "debug/square_transpose.fbir" << "-O1"
                                                   << "interp";
    QTest::newRow("canonicalize dual_softmax") << "canonicalize-drops-transpose"
                                               << "debug/dual_softmax.fbir" << "-O3" << "interp";
    QTest::newRow("cse spp_block") << "cse-ignores-attributes" << "debug/spp_block.fbir" << "-O1"
                                   << "interp";
    QTest::newRow("cse dual_softmax") << "cse-ignores-attributes" << "debug/dual_softmax.fbir"
                                      << "-O2" << "interp";
    QTest::newRow("fold-batchnorm dead_channels") << "fold-batchnorm-epsilon"
                                                  << "debug/dead_channels.fbir" << "-O3"
                                                  << "interp";
    QTest::newRow("fold-batchnorm small_cnn") << "fold-batchnorm-epsilon" << "small_cnn.onnx+dead"
                                              << "-O3" << "interp";
    QTest::newRow("layout small_cnn") << "layout-constant-channels" << "small_cnn.onnx"
                                      << "canonicalize,layout" << "interp";
    QTest::newRow("layout resnet_block") << "layout-constant-channels" << "resnet_block.onnx"
                                         << "layout,dce" << "interp";
    QTest::newRow("gemm edge small_cnn") << "gemm-edge-last-column" << "small_cnn.onnx" << "-O3"
                                         << "cpu";
    QTest::newRow("gemm edge mlp") << "gemm-edge-last-column" << "mlp.onnx" << "-O1" << "cpu";
    QTest::newRow("gemm epilogue small_cnn") << "gemm-epilogue-drops-bias" << "small_cnn.onnx"
                                             << "-O3" << "cpu";
    QTest::newRow("gemm epilogue mlp") << "gemm-epilogue-drops-bias" << "mlp.onnx" << "-O2"
                                       << "cpu";
    QTest::newRow("loop tail resnet_block") << "loop-tail-off-by-one" << "resnet_block.onnx"
                                            << "-O1" << "cpu";
    QTest::newRow("loop tail mobilenet_v2_block") << "loop-tail-off-by-one"
                                                  << "mobilenet_v2_block.onnx" << "-O1" << "cpu";
    QTest::newRow("requantize small_cnn") << "requantize-truncates" << "small_cnn.onnx+qdq"
                                          << "-O1" << "cpu";
    QTest::newRow("requantize resnet_block") << "requantize-truncates" << "resnet_block.onnx+qdq"
                                             << "-O1" << "cpu";
  }
  void reducesFault() {
    QFETCH(QString, fault);
    QFETCH(QString, model);
    QFETCH(QString, pipeline);
    QFETCH(QString, backend);
    auto f = faultFromName(fault.toStdString());
    QVERIFY(f.ok());
    const ReduceSettings settings = settingsFor(pipeline, backend);
    QVERIFY(!settings.check.pipeline.empty());
    if (!backendAvailable(settings.check.run.backend).ok())
      QSKIP("backend not available here");
    std::unique_ptr<Graph> graph = modelGraph(model);
    QVERIFY2(graph, "the model does not load");
    auto inputs = gatherInputs(*graph, {}, 0, {});
    QVERIFY(inputs.ok());

    ScopedFaults on({*f});
    auto report = reduceFailure(*graph, *inputs, settings);
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().message().c_str());
    qInfo("%s: %zu -> %zu nodes, %d runs, %.1f s", qPrintable(fault), report->nodesBefore,
          report->nodesAfter, report->probes, report->seconds);
    QCOMPARE(report->nodesBefore, graph->numNodes());
    QCOMPARE(report->nodesAfter, report->reduced->numNodes());
    QVERIFY2(report->nodesAfter <= kMaxReducedNodes, "the reproducer is not a handful of nodes");
    QVERIFY2(report->nodesAfter < report->nodesBefore, "nothing was removed");
    QVERIFY(!report->probeLimitHit);
    QVERIFY(report->outcome.mismatch);

    // Written and read back, it fails with the fault on and passes with it off.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string file = (dir.path() + "/repro.fbir").toStdString();
    Reproducer repro;
    repro.graph = report->reduced;
    repro.inputs = report->inputs;
    repro.check = settings.check;
    repro.faults = enabledFaults();
    auto written = writeReproducer(file, repro);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().message().c_str());
    QCOMPARE(written->size(), report->inputs.size());
    auto back = readReproducer(file);
    QVERIFY2(back.ok(), back.ok() ? "" : back.error().message().c_str());
    QCOMPARE(back->graph->numNodes(), report->nodesAfter);
    QCOMPARE(pipelineText(back->check.pipeline), pipelineText(settings.check.pipeline));
    QCOMPARE(back->check.run.backend, settings.check.run.backend);
    QCOMPARE(back->faults, std::vector<Fault>{*f});
    QCOMPARE(back->inputs.size(), report->inputs.size());
    for (size_t i = 0; i < back->inputs.size(); ++i)
      QVERIFY(back->inputs[i].identical(report->inputs[i]));

    auto failing = replayReproducer(*back);
    QVERIFY2(failing.ok(), failing.ok() ? "" : failing.error().message().c_str());
    QVERIFY2(failing->outcome.mismatch, "the reproducer passes with the fault on");
    auto passing = replayReproducer(*back, /*withFaults=*/false);
    QVERIFY2(passing.ok(), passing.ok() ? "" : passing.error().message().c_str());
    QVERIFY2(!passing->outcome.mismatch, "the reproducer fails with the fault off");
    // The replay restores the process's faults.
    QCOMPARE(enabledFaults(), std::vector<Fault>{*f});
  }

  /// A model whose check passes is refused, on one run.
  void refusesPassingModel() {
    std::unique_ptr<Graph> graph = modelGraph("small_cnn.onnx");
    QVERIFY(graph);
    auto inputs = gatherInputs(*graph, {}, 0, {});
    QVERIFY(inputs.ok());
    auto r = reduceFailure(*graph, *inputs, settingsFor("-O3", "interp"));
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message().find("nothing to reduce: the check passes") != std::string::npos,
             r.error().message().c_str());
  }

  /// Cut values become inputs fed with the recorded tensors, and outputs are what the kept
  /// nodes produce that nothing reads any more: the middle of a chain computes what it did.
  void extractsMiddleOfChain() {
    auto g = parseGraph(R"(graph @g opset 17 {
  input %x : f32[2, 3]
  %a : f32[2, 3] = Relu(%x)  #1
  %b : f32[2, 3] = Neg(%a)  #2
  %c : f32[2, 3] = Sigmoid(%b)  #3
  %d : f32[2, 3] = Add(%c, %a)  #4
  output %d
}
)");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    auto inputs = gatherInputs(**g, {}, 7, {});
    QVERIFY(inputs.ok());
    InterpretOptions keep;
    keep.keepIntermediates = true;
    auto full = interpret(**g, *inputs, keep);
    QVERIFY(full.ok());
    auto sub = extractSubGraph(**g, {false, true, true, false}, *inputs, full->values);
    QVERIFY2(sub.ok(), sub.ok() ? "" : sub.error().message().c_str());
    const Graph& s = *sub->graph;
    QCOMPARE(s.numNodes(), size_t(2));
    QCOMPARE(s.inputs().size(), size_t(1));
    QCOMPARE(s.inputs()[0]->name(), std::string("a"));
    QVERIFY(sub->inputs[0].identical(full->values.at("a")));
    QCOMPARE(s.outputs().size(), size_t(1));
    QCOMPARE(s.outputs()[0]->name(), std::string("c"));
    auto part = interpret(s, sub->inputs);
    QVERIFY(part.ok());
    QVERIFY(part->outputs[0].identical(full->values.at("c")));
    // Nothing selected is an error.
    QVERIFY(!extractSubGraph(**g, {false, false, false, false}, *inputs, full->values).ok());
  }

  /// Progress reaches the caller and cancel stops the reduction with an error.
  void progressAndCancel() {
    ScopedFaults on({Fault::CseIgnoresAttributes});
    std::unique_ptr<Graph> graph = modelGraph("debug/spp_block.fbir");
    QVERIFY(graph);
    auto inputs = gatherInputs(*graph, {}, 0, {});
    QVERIFY(inputs.ok());
    std::atomic<int> reports{0};
    JobControl job([&](double, const std::string&) { ++reports; });
    auto r = reduceFailure(*graph, *inputs, settingsFor("-O1", "interp"), &job);
    QVERIFY(r.ok());
    QVERIFY(reports > 2);
    JobControl cancelled;
    cancelled.cancel();
    auto c = reduceFailure(*graph, *inputs, settingsFor("-O1", "interp"), &cancelled);
    QVERIFY(!c.ok());
    QVERIFY(c.error().message().find("cancelled") != std::string::npos);
  }

  /// The probe bound stops the search and says so; the result still fails.
  void probeBound() {
    ScopedFaults on({Fault::CseIgnoresAttributes});
    std::unique_ptr<Graph> graph = modelGraph("debug/spp_block.fbir");
    QVERIFY(graph);
    auto inputs = gatherInputs(*graph, {}, 0, {});
    QVERIFY(inputs.ok());
    ReduceSettings s = settingsFor("-O1", "interp");
    s.maxProbes = 3;
    auto r = reduceFailure(*graph, *inputs, s);
    QVERIFY(r.ok());
    QVERIFY(r->probeLimitHit);
    QCOMPARE(r->probes, 3);
    QVERIFY(r->outcome.mismatch);
  }
};

QTEST_APPLESS_MAIN(TestReduce)
#include "TestReduce.moc"
