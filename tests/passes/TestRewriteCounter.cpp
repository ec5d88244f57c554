// Tests of the rewrite debug counter (PassContext::mayRewrite): every rewriting pass counts its
// rewrites, a limit of N keeps exactly the first N, and stopping anywhere leaves a valid graph
// that computes what the input did.
#include "PassTestUtil.h"
#include "core/Faults.h"
#include "core/text/IrPrinter.h"

#include <QtTest/QtTest>

#include <algorithm>

using namespace fb;
using namespace fb::test;

namespace {

/// The limits worth trying for a pass that made `total` rewrites: all of them when few, else
/// the ends and a spread in between.
std::vector<int64_t> limitsFor(int64_t total) {
  std::vector<int64_t> limits;
  if (total <= 12) {
    for (int64_t r = 0; r <= total; ++r)
      limits.push_back(r);
    return limits;
  }
  for (int64_t r : {int64_t(0), int64_t(1), int64_t(2), total / 3, total / 2, total - 2,
                    total - 1, total})
    limits.push_back(r);
  std::sort(limits.begin(), limits.end());
  limits.erase(std::unique(limits.begin(), limits.end()), limits.end());
  return limits;
}

/// Small graphs for passes the samples do not exercise.
const char* kGemmPairs = R"(graph @gemm_pairs opset 17 {
  input %x : f32[3, 4]
  const %w1 : f32[4, 2] = dense<[1.0, -2.0, 0.5, 1.5, -1.0, 2.0, 0.25, -0.5]>
  const %b1 : f32[2] = dense<[0.5, -0.5]>
  const %w2 : f32[2, 2] = dense<[1.0, 2.0, -1.0, 0.5]>
  const %b2 : f32[2] = dense<[1.0, -1.0]>
  %m1 : f32[3, 2] = MatMul(%x, %w1)  #1
  %y1 : f32[3, 2] = Add(%m1, %b1)  #2
  %r : f32[3, 2] = Relu(%y1)  #3
  %m2 : f32[3, 2] = MatMul(%r, %w2)  #4
  %y2 : f32[3, 2] = Add(%b2, %m2)  #5
  output %y2
}
)";

const char* kChains = R"(graph @chains opset 17 {
  input %a : f32[20, 2]
  input %b : f32[2, 20]
  input %c : f32[20, 2]
  input %d : f32[2, 30]
  %ab : f32[20, 20] = MatMul(%a, %b)  #1
  %abc : f32[20, 2] = MatMul(%ab, %c)  #2
  %ba : f32[2, 2] = MatMul(%b, %a)  #3
  %bab : f32[2, 20] = MatMul(%ba, %b)  #4
  %babc : f32[2, 2] = MatMul(%bab, %c)  #5
  %y : f32[20, 2] = MatMul(%abc, %babc)  #6
  %z : f32[20, 30] = MatMul(%y, %d)  #7
  output %z
}
)";

const char* kBranches = R"(graph @branches opset 17 {
  input %x : f32[16, 16]
  %a : f32[16, 16] = Exp(%x)  #1
  %b : f32[16, 16] = Neg(%x)  #2
  %ra : f32[1, 16] = ReduceSum(%a) {axes = [0], keepdims = 1}  #3
  %rb : f32[1, 16] = ReduceSum(%b) {axes = [0], keepdims = 1}  #4
  %y : f32[1, 16] = Add(%ra, %rb)  #5
  output %y
}
)";

/// "random:SEED" (randomRewriteGraph), "ir:NAME" (the graphs above) or a sample file.
std::unique_ptr<Graph> loadModel(const QString& model) {
  if (model.startsWith("random:"))
    return randomRewriteGraph(model.mid(7).toULongLong());
  if (model == "ir:gemm_pairs")
    return parseIr(kGemmPairs);
  if (model == "ir:chains")
    return parseIr(kChains);
  if (model == "ir:branches")
    return parseIr(kBranches);
  return loadSample(model.toStdString());
}

} // namespace

class TestRewriteCounter : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void passStopsAfterEveryRewrite_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("prefix");  // passes run first, so the pass finds work
    QTest::addColumn<QString>("step");    // the pass under test
    QTest::addColumn<bool>("preserves"); // outputs stay as they were (not quantize or prune)
    for (int seed : {1, 2, 5}) {
      const QString random = QString("random:%1").arg(seed);
      for (const char* pass : {"canonicalize", "fold-constants", "cse"})
        QTest::newRow(qPrintable(QString("%1 %2").arg(pass, random)))
            << random << "" << pass << true;
      QTest::newRow(qPrintable("dce " + random)) << random << "fold-constants" << "dce" << true;
    }
    QTest::newRow("fold-batchnorm") << "resnet_block.onnx" << "" << "fold-batchnorm" << true;
    QTest::newRow("fold-batchnorm mobilenet") << "mobilenet_v2_block.onnx" << ""
                                              << "fold-batchnorm" << true;
    QTest::newRow("fuse-gemm-bias") << "ir:gemm_pairs" << "" << "fuse-gemm-bias" << true;
    QTest::newRow("reassociate-matmul") << "ir:chains" << "" << "reassociate-matmul" << true;
    QTest::newRow("fuse") << "resnet_block.onnx" << "fold-batchnorm" << "fuse" << true;
    QTest::newRow("fuse transformer") << "transformer_block.onnx" << "" << "fuse" << true;
    QTest::newRow("layout nchw8c") << "small_cnn.onnx" << "" << "layout" << true;
    QTest::newRow("layout nhwc") << "mobilenet_v2_block.onnx" << "" << "layout{to=nhwc}" << true;
    QTest::newRow("schedule-memory") << "ir:branches" << "" << "schedule-memory" << true;
    QTest::newRow("quantize") << "small_cnn.onnx" << "fold-batchnorm" << "quantize{eval=0}"
                              << false;
    QTest::newRow("lower-quantized") << "small_cnn.onnx" << "fold-batchnorm,quantize{eval=0}"
                                     << "lower-quantized" << false;
    QTest::newRow("prune unstructured") << "small_cnn.onnx" << "" << "prune{eval=0}" << false;
    QTest::newRow("prune structured")
        << "small_cnn.onnx" << "fold-batchnorm" << "prune{structured=true,sparsity=0.5,eval=0}"
        << false;
  }
  /// Under every limit the pass makes min(limit, total) rewrites, the verifier accepts the
  /// result (the pass manager checks it), an output-preserving pass still computes the input's
  /// outputs, the full limit gives exactly the unlimited result, and no provenance event is
  /// attributed to a refused rewrite.
  void passStopsAfterEveryRewrite() {
    QFETCH(QString, model);
    QFETCH(QString, prefix);
    QFETCH(QString, step);
    QFETCH(bool, preserves);
    std::shared_ptr<const Graph> input = loadModel(model);
    if (!prefix.isEmpty()) {
      PipelineResult pre = runPipeline(*input, prefix.toStdString());
      QVERIFY2(!pre.error, errorText(pre).c_str());
      input = pre.snapshots.back().graph;
    }
    auto steps = parsePipeline(step.toStdString());
    QVERIFY(steps.ok() && steps->size() == 1);
    PassManager pm;
    auto full = pm.applyStep(*input, steps->front());
    QVERIFY2(full.ok(), full.ok() ? "" : full.error().message().c_str());
    const int64_t total = full->record->rewrites;
    QVERIFY2(total > 0, "the pass found nothing to rewrite: the test model does not exercise it");
    QVERIFY(!full->record->rewriteLimitHit);
    const std::string fullText = printGraph(*full->graph);
    for (int64_t r : limitsFor(total)) {
      auto limited = pm.applyStep(*input, steps->front(), r);
      const std::string where = step.toStdString() + " stopped after " + std::to_string(r) +
                                " of " + std::to_string(total) + " rewrites";
      QVERIFY2(limited.ok(), (where + ": " + (limited.ok() ? "" : limited.error().message())).c_str());
      QCOMPARE(limited->record->rewrites, std::min(r, total));
      QCOMPARE(limited->record->rewriteLimitHit, r < total);
      if (preserves) {
        double d = maxOutputDifference(*input, *limited->graph, 1);
        QVERIFY2(d < 1e-3, (where + ": outputs differ by " + std::to_string(d)).c_str());
      }
      if (r == total)
        QCOMPARE(printGraph(*limited->graph), fullText);
      // Events belong to allowed rewrites only.
      for (const ProvenanceEvent& e : limited->record->events)
        QVERIFY2(e.rewrite <= r, where.c_str());
    }
  }

  /// The pass manager stops the last application of a pipeline (--pass-limit) after the
  /// rewrite limit, and only that one.
  void pipelineRewriteLimit() {
    std::unique_ptr<Graph> g = loadSample("resnet_block.onnx");
    auto steps = parsePipeline("canonicalize,fold-batchnorm,fuse");
    QVERIFY(steps.ok());
    PassManagerOptions options;
    options.passLimit = 2;
    options.rewriteLimit = 1;
    PipelineResult r = PassManager(options).run(g->clone(), *steps);
    QVERIFY(!r.error);
    QCOMPARE(r.snapshots.size(), size_t(3));
    QCOMPARE(r.snapshots[2].record->pass, std::string("fold-batchnorm"));
    QCOMPARE(r.snapshots[2].record->rewrites, int64_t(1));
    QVERIFY(r.snapshots[2].record->rewriteLimitHit);
    QVERIFY(!r.snapshots[1].record->rewriteLimit);
    QVERIFY(describeRecord(*r.snapshots[2].record).find("stopped after 1 rewrite") !=
            std::string::npos);
    // Without a pass limit the limit applies to the pipeline's last step.
    options.passLimit.reset();
    PipelineResult all = PassManager(options).run(g->clone(), *steps);
    QVERIFY(!all.error);
    QCOMPARE(all.snapshots.back().record->pass, std::string("fuse"));
    QCOMPARE(all.snapshots.back().record->rewrites, int64_t(1));
    QVERIFY(all.snapshots[2].record->rewrites > 1);
  }

  /// The counter is free when nobody sets a limit: every rewrite is allowed and counted.
  void contextCounts() {
    PassContext ctx;
    for (int i = 0; i < 5; ++i)
      QVERIFY(ctx.mayRewrite());
    QCOMPARE(ctx.rewrites(), int64_t(5));
    QVERIFY(!ctx.rewriteRefused());
    ctx.logDeleted(7);
    QCOMPARE(ctx.events().back().rewrite, int64_t(5));
    PassContext limited;
    limited.setRewriteLimit(2);
    QVERIFY(limited.mayRewrite());
    QVERIFY(limited.mayRewrite());
    QVERIFY(!limited.mayRewrite());
    QVERIFY(!limited.mayRewrite());
    QCOMPARE(limited.rewrites(), int64_t(2));
    QVERIFY(limited.rewriteRefused());
  }

  /// Faults: names round-trip, lists parse, ScopedFaults restores what was on.
  void faultRegistry() {
    QVERIFY(allFaults().size() >= 8);
    int inCodegen = 0;
    for (const FaultInfo& f : allFaults()) {
      auto back = faultFromName(f.name);
      QVERIFY(back.ok() && *back == f.fault);
      QVERIFY(!faultEnabled(f.fault));
      inCodegen += f.inCodegen();
    }
    QVERIFY(inCodegen >= 3 && inCodegen + 3 <= int(allFaults().size()));
    QVERIFY(!faultFromName("no-such-fault").ok());
    auto list = parseFaultList({"cse-ignores-attributes,fold-batchnorm-epsilon",
                                "loop-tail-off-by-one"});
    QVERIFY(list.ok());
    QCOMPARE(list->size(), size_t(3));
    QVERIFY(!parseFaultList({"cse-ignores-attributes,"}).ok());
    setFaultEnabled(Fault::LoopTailOffByOne, true);
    {
      ScopedFaults on({Fault::CseIgnoresAttributes});
      QVERIFY(faultEnabled(Fault::CseIgnoresAttributes));
      QVERIFY(faultEnabled(Fault::LoopTailOffByOne));
      QCOMPARE(enabledFaults().size(), size_t(2));
    }
    QVERIFY(!faultEnabled(Fault::CseIgnoresAttributes));
    QVERIFY(faultEnabled(Fault::LoopTailOffByOne));
    disableAllFaults();
    QVERIFY(enabledFaults().empty());
  }
};

QTEST_APPLESS_MAIN(TestRewriteCounter)
#include "TestRewriteCounter.moc"
