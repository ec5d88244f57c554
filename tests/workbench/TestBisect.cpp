// Tests of bisection (app/workbench/Bisect.h) against the built-in faults: for every fault, on
// several models, with the fault on the bisection names the pass that carries it and the
// rewrite (checked independently: the pass stopped one rewrite earlier passes --compare, at
// that rewrite it fails), or, for a codegen fault, a kernel whose code disagrees (checked by
// running that kernel alone as code); with the fault off the same pipeline passes.
#include "app/workbench/Bisect.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/Session.h"
#include "core/Faults.h"
#include "core/Interpreter.h"

#include <QtTest/QtTest>

#include <atomic>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string modelPath(const QString& name) {
  if (name.startsWith("debug/"))
    return std::string(FUSEBOX_DEBUG_MODELS_DIR) + "/" + name.mid(6).toStdString();
  return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name.toStdString();
}

/// `g` with the running variance of every BatchNormalization zero on its first and last
/// channel: dead filters, the case where only epsilon keeps the folded scale finite.
std::unique_ptr<Graph> withDeadChannels(const Graph& source) {
  std::unique_ptr<Graph> g = source.clone();
  for (const auto& n : g->nodes()) {
    if (n->op() != OpKind::BatchNormalization || !n->input(4) || !n->input(4)->isConstant())
      continue;
    Tensor var = n->input(4)->constantData(); // copy on write: the model keeps its own
    var.setFromDouble(0, 0.0);
    var.setFromDouble(var.numElements() - 1, 0.0);
    n->setInput(4, g->addConstant(g->uniqueValueName(n->input(4)->name() + ".dead"), var));
  }
  return g;
}

/// A session on `model` ("debug/NAME" for the bisection test models; "+dead" appended: with
/// dead channels; "+qdq": after fold-batchnorm and quantize, so the QDQ graph is snapshot 0)
/// whose pipeline `pipeline` has run.
std::unique_ptr<Session> sessionFor(const QString& model, const QString& pipeline) {
  QString file = model.section('+', 0, 0);
  QString variant = model.section('+', 1);
  auto s = std::make_unique<Session>();
  if (!s->load(modelPath(file)).ok())
    return nullptr;
  if (variant == "dead") {
    s->loadGraph(withDeadChannels(*s->graph(0)), file.toStdString());
  } else if (variant == "qdq") {
    if (!s->setPipeline("fold-batchnorm,quantize{eval=0}").ok() || !s->runPipeline().ok())
      return nullptr;
    s->loadGraph(s->graph(s->snapshotCount() - 1)->clone(), file.toStdString());
  }
  if (!s->setPipeline(pipeline.toStdString()).ok() || !s->runPipeline().ok())
    return nullptr;
  return s;
}

BisectSettings settingsFor(const QString& backend) {
  BisectSettings b;
  b.run.backend = backendFromName(backend.toStdString()).value_or(Backend::Interpreter);
  return b;
}

/// True when `graph` on `backend` gives the reference outputs (as --compare decides).
bool passesCompare(const Graph& graph, const std::vector<Tensor>& inputs,
                   const std::vector<Tensor>& reference, const BisectSettings& settings) {
  auto run = runGraph(graph, inputs, settings.run);
  if (!run.ok())
    return false;
  auto cmp = compareOutputs(graph, reference, run->outputs, settings.tolerance);
  return cmp.ok() && cmp->ok;
}

} // namespace

class TestBisect : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cleanup() { disableAllFaults(); }

  void findsFault_data() {
    QTest::addColumn<QString>("fault");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("backend");
    // Pass faults: an op among the touched nodes. Codegen faults: the kernel's generator
    // ("gemm", "loops") or an op it computes.
    QTest::addColumn<QString>("expect");
    QTest::newRow("canonicalize square_transpose")
        << "canonicalize-drops-transpose" << "debug/square_transpose.fbir" << "-O1" << "interp"
        << "Transpose";
    QTest::newRow("canonicalize dual_softmax")
        << "canonicalize-drops-transpose" << "debug/dual_softmax.fbir" << "-O3" << "interp"
        << "Transpose";
    QTest::newRow("cse spp_block") << "cse-ignores-attributes" << "debug/spp_block.fbir" << "-O1"
                                   << "interp" << "MaxPool";
    QTest::newRow("cse dual_softmax") << "cse-ignores-attributes" << "debug/dual_softmax.fbir"
                                      << "-O2" << "interp" << "Softmax";
    QTest::newRow("fold-batchnorm dead_channels")
        << "fold-batchnorm-epsilon" << "debug/dead_channels.fbir" << "-O3" << "interp"
        << "BatchNormalization";
    QTest::newRow("fold-batchnorm small_cnn") << "fold-batchnorm-epsilon" << "small_cnn.onnx+dead"
                                              << "-O3" << "interp" << "BatchNormalization";
    QTest::newRow("fold-batchnorm resnet_block")
        << "fold-batchnorm-epsilon" << "resnet_block.onnx+dead" << "-O2" << "interp"
        << "BatchNormalization";
    QTest::newRow("fold-batchnorm mobilenet_v2_block")
        << "fold-batchnorm-epsilon" << "mobilenet_v2_block.onnx+dead" << "-O3" << "interp"
        << "BatchNormalization";
    QTest::newRow("layout small_cnn") << "layout-constant-channels" << "small_cnn.onnx"
                                      << "canonicalize,layout" << "interp" << "BatchNormalization";
    QTest::newRow("layout resnet_block") << "layout-constant-channels" << "resnet_block.onnx"
                                         << "layout,dce" << "interp" << "BatchNormalization";
    QTest::newRow("layout mobilenet_v2_block")
        << "layout-constant-channels" << "mobilenet_v2_block.onnx" << "-O1,layout" << "interp"
        << "BatchNormalization";
    QTest::newRow("gemm edge small_cnn") << "gemm-edge-last-column" << "small_cnn.onnx" << "-O3"
                                         << "cpu" << "gemm";
    QTest::newRow("gemm edge mlp") << "gemm-edge-last-column" << "mlp.onnx" << "-O1" << "cpu"
                                   << "gemm";
    QTest::newRow("gemm epilogue small_cnn") << "gemm-epilogue-drops-bias" << "small_cnn.onnx"
                                             << "-O3" << "cpu" << "gemm";
    QTest::newRow("gemm epilogue resnet_block") << "gemm-epilogue-drops-bias"
                                                << "resnet_block.onnx" << "-O3" << "cpu" << "gemm";
    QTest::newRow("gemm epilogue mlp") << "gemm-epilogue-drops-bias" << "mlp.onnx" << "-O2"
                                       << "cpu" << "gemm";
    QTest::newRow("loop tail resnet_block") << "loop-tail-off-by-one" << "resnet_block.onnx"
                                            << "-O1" << "cpu" << "loops";
    QTest::newRow("loop tail mobilenet_v2_block") << "loop-tail-off-by-one"
                                                  << "mobilenet_v2_block.onnx" << "-O1" << "cpu"
                                                  << "loops";
    QTest::newRow("requantize small_cnn") << "requantize-truncates" << "small_cnn.onnx+qdq"
                                          << "-O1" << "cpu" << "QuantizeLinear";
    QTest::newRow("requantize resnet_block") << "requantize-truncates"
                                             << "resnet_block.onnx+qdq" << "-O1" << "cpu"
                                             << "QuantizeLinear";
  }
  void findsFault() {
    QFETCH(QString, fault);
    QFETCH(QString, model);
    QFETCH(QString, pipeline);
    QFETCH(QString, backend);
    QFETCH(QString, expect);
    auto f = faultFromName(fault.toStdString());
    QVERIFY(f.ok());
    const FaultInfo& info = faultInfo(*f);
    const BisectSettings settings = settingsFor(backend);
    if (!backendAvailable(settings.run.backend).ok())
      QSKIP("backend not available here");

    // Fault off: the pipeline passes.
    std::unique_ptr<Session> clean = sessionFor(model, pipeline);
    QVERIFY2(clean, "the model or pipeline does not load/run");
    auto inputs = gatherInputs(*clean->graph(0), {}, 0, {});
    QVERIFY(inputs.ok());
    auto ok = bisectSnapshots(clean->snapshots(), *inputs, settings);
    QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().message().c_str());
    QVERIFY2(!ok->mismatch, "the pipeline fails without the fault");

    // Fault on.
    ScopedFaults on({*f});
    std::unique_ptr<Session> faulty = sessionFor(model, pipeline);
    QVERIFY(faulty);
    auto report = bisectSnapshots(faulty->snapshots(), *inputs, settings);
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().message().c_str());
    QVERIFY2(report->mismatch, "the fault does not show on this model and pipeline");
    auto ref = interpret(*faulty->graph(0), *inputs);
    QVERIFY(ref.ok());

    if (!info.inCodegen()) {
      // The pass that carries the fault, and the first rewrite after which it fails.
      QCOMPARE(report->pass, std::string(info.where));
      QVERIFY2(report->rewrite.has_value(), "no rewrite blamed");
      const int64_t r = *report->rewrite;
      QVERIFY(r >= 1 && r <= report->rewrites);
      const Graph& before = *faulty->graph(report->index - 1);
      auto step = parsePipeline(report->step);
      QVERIFY(step.ok() && step->size() == 1);
      PassManager pm;
      auto good = pm.applyStep(before, step->front(), r - 1);
      auto bad = pm.applyStep(before, step->front(), r);
      QVERIFY(good.ok() && bad.ok());
      QVERIFY2(passesCompare(*good->graph, *inputs, ref->outputs, settings),
               "the pass stopped before the blamed rewrite fails already");
      QVERIFY2(!passesCompare(*bad->graph, *inputs, ref->outputs, settings),
               "the pass stopped after the blamed rewrite passes");
      // The touched nodes include an op of the kind the fault lives in.
      bool found = false;
      for (const TouchedNode& n : report->nodes) {
        const Node* node = before.findNode(n.id);
        if (!node)
          node = bad->graph->findNode(n.id);
        found = found || (node && opName(node->op()) == expect.toStdString());
      }
      QVERIFY2(found, ("no " + expect.toStdString() + " among the touched nodes").c_str());
      QVERIFY(report->firstDivergent.has_value());
      QVERIFY(!report->interpreterAgrees);
      return;
    }

    // A codegen fault: the graph is right, a kernel's code is not.
    QVERIFY2(report->interpreterAgrees, "the interpreter disagrees: a pass is blamed instead");
    QVERIFY2(report->kernel.has_value(), "no kernel blamed");
    const KernelBlame& k = *report->kernel;
    // A Winograd convolution runs on the GEMM generator and shares its fused store.
    QVERIFY2(k.generator == expect.toStdString() ||
                 (expect == "gemm" && k.generator == "winograd") ||
                 k.opSummary.find(expect.toStdString()) != std::string::npos,
             ("kernel " + k.name + " computes " + k.opSummary + " (" + k.generator + ")").c_str());
    // Checked alone: that kernel as code and every other interpreted fails; nothing as code
    // passes.
    auto compiled = compileGraph(*report->badGraph, settings.run.compile, *inputs);
    QVERIFY(compiled.ok());
    cg::CompiledModel& m = **compiled;
    std::vector<bool> interpreted(m.kernels().size(), true);
    m.setInterpretedKernels(interpreted);
    auto none = m.run(*inputs);
    QVERIFY(none.ok());
    auto cmpNone = compareOutputs(m.graph(), ref->outputs, *none, settings.tolerance);
    QVERIFY(cmpNone.ok() && cmpNone->ok);
    interpreted[k.index] = false;
    m.setInterpretedKernels(interpreted);
    auto alone = m.run(*inputs);
    QVERIFY(alone.ok());
    auto cmpAlone = compareOutputs(m.graph(), ref->outputs, *alone, settings.tolerance);
    QVERIFY2(cmpAlone.ok() && !cmpAlone->ok, "the blamed kernel alone as code passes");
  }

  /// Progress reaches the caller and cancel stops the bisection with an error.
  void progressAndCancel() {
    ScopedFaults on({Fault::CseIgnoresAttributes});
    std::unique_ptr<Session> s = sessionFor("debug/spp_block.fbir", "-O1");
    QVERIFY(s);
    auto inputs = gatherInputs(*s->graph(0), {}, 0, {});
    QVERIFY(inputs.ok());
    std::atomic<int> reports{0};
    JobControl job([&](double, const std::string&) { ++reports; });
    auto r = bisectSnapshots(s->snapshots(), *inputs, settingsFor("interp"), &job);
    QVERIFY(r.ok() && r->mismatch);
    QVERIFY(reports > 2);
    QVERIFY(r->probes > 2);
    JobControl cancelled;
    cancelled.cancel();
    auto c = bisectSnapshots(s->snapshots(), *inputs, settingsFor("interp"), &cancelled);
    QVERIFY(!c.ok());
    QVERIFY(c.error().message().find("cancelled") != std::string::npos);
  }

  /// A pipeline without a mismatch reports none, on one probe.
  void noMismatch() {
    std::unique_ptr<Session> s = sessionFor("small_cnn.onnx", "-O3");
    QVERIFY(s);
    auto inputs = gatherInputs(*s->graph(0), {}, 0, {});
    QVERIFY(inputs.ok());
    auto r = bisectSnapshots(s->snapshots(), *inputs, settingsFor("interp"));
    QVERIFY(r.ok());
    QVERIFY(!r->mismatch);
    QCOMPARE(r->probes, 1);
  }
};

QTEST_APPLESS_MAIN(TestBisect)
#include "TestBisect.moc"
