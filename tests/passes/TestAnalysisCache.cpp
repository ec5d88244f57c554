// Tests that analyses are cached per snapshot and invalidated by passes that change the graph.
#include "PassTestUtil.h"
#include "passes/AnalysisCache.h"

#include <QtTest/QtTest>

using namespace fb;

class TestAnalysisCache : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cachedPerSnapshot() {
    auto g = test::loadSample("resnet_block.onnx");
    PipelineResult r = test::runPipeline(*g, "estimate,parallel-levels");
    QVERIFY(!r.error);
    QCOMPARE(r.snapshots.size(), size_t(3));
    // Analysis passes change nothing: their snapshots share the graph and the cache.
    QCOMPARE(r.snapshots[1].graph, r.snapshots[0].graph);
    QCOMPARE(r.snapshots[2].analyses, r.snapshots[0].analyses);
    const ModelStats& a = snapshotStats(r.snapshots[0]);
    const ModelStats& b = snapshotStats(r.snapshots[2]);
    QCOMPARE(&a, &b);
    QCOMPARE(r.snapshots[0].analyses->computations(), size_t(1));
    snapshotEstimate(r.snapshots[1]);
    snapshotEstimate(r.snapshots[2]);
    QCOMPARE(r.snapshots[0].analyses->computations(), size_t(2));
  }

  void invalidatedByChangingPass() {
    auto g = test::loadSample("resnet_block.onnx");
    PipelineResult r = test::runPipeline(*g, "fold-batchnorm");
    QVERIFY(!r.error);
    QCOMPARE(r.snapshots.size(), size_t(2));
    QVERIFY(r.snapshots[1].graph != r.snapshots[0].graph);
    QVERIFY(r.snapshots[1].analyses != r.snapshots[0].analyses);
    const ModelStats& before = snapshotStats(r.snapshots[0]);
    const ModelStats& after = snapshotStats(r.snapshots[1]);
    QCOMPARE(before.nodes, size_t(7));
    QCOMPARE(after.nodes, size_t(5)); // two BatchNormalization folded away
    QCOMPARE(before.ops.at("BatchNormalization"), size_t(2));
    QVERIFY(!after.ops.count("BatchNormalization"));
  }
};

QTEST_GUILESS_MAIN(TestAnalysisCache)
#include "TestAnalysisCache.moc"
