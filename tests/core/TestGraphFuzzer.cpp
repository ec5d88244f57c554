// The graph fuzzer's graphs: valid, deterministic per seed, and covering the op table widely.
#include "core/GraphFuzzer.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/Verifier.h"
#include "core/text/IrPrinter.h"

#include <QtTest/QtTest>

#include <set>

using namespace fb;

class TestGraphFuzzer : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// 500 seeds: every graph verifies, has 3..~25 nodes and static types, no draw is discarded
  /// (a discard is a generator bug), and the ops drawn cover at least 70 distinct ops.
  void graphsVerifyAndCover() {
    std::set<std::string> ops;
    int discards = 0;
    for (uint64_t seed = 0; seed < 500; ++seed) {
      auto g = generateRandomGraph(seed);
      QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
      discards += g->discards;
      for (const auto& why : g->discardReasons)
        qWarning("seed %llu discarded: %s", (unsigned long long)seed, why.c_str());
      Status st = verify(*g->graph);
      QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
      QVERIFY(g->graph->numNodes() >= 3);
      QVERIFY(!g->graph->outputs().empty());
      for (const Value* in : g->graph->inputs())
        QVERIFY(in->type().isStatic());
      for (const auto& [op, n] : g->opCounts)
        ops.insert(op);
    }
    QCOMPARE(discards, 0);
    std::string list;
    for (const auto& op : ops)
      list += op + " ";
    qInfo("%zu ops covered: %s", ops.size(), list.c_str());
    QVERIFY2(ops.size() >= 70, list.c_str());
    for (const char* must : {"Conv", "ConvTranspose", "MatMul", "Gemm", "Softmax",
                             "LayerNormalization", "BatchNormalization", "MaxPool",
                             "AveragePool", "GlobalAveragePool", "Slice", "Concat", "Split",
                             "Gather", "Pad", "Resize", "QuantizeLinear", "DequantizeLinear",
                             "QLinearConv", "QLinearMatMul", "Reshape", "Transpose"})
      QVERIFY2(ops.count(must), must);
  }

  /// The same seed gives the same graph, printed byte for byte; another seed another graph.
  void deterministicPerSeed() {
    for (uint64_t seed : {0ull, 7ull, 123456789ull}) {
      auto a = generateRandomGraph(seed);
      auto b = generateRandomGraph(seed);
      QVERIFY(a.ok() && b.ok());
      PrintOptions withData;
      withData.withResourceData = true;
      QCOMPARE(printGraph(*a->graph, withData), printGraph(*b->graph, withData));
    }
    // Consecutive seeds give unrelated graphs, not shifted copies of one random stream: over 50
    // seeds, the op sequences (ops in order) are all different and their first ops vary.
    std::set<std::string> sequences, firstOps;
    for (uint64_t seed = 0; seed < 50; ++seed) {
      auto g = generateRandomGraph(seed);
      QVERIFY(g.ok());
      std::string seq;
      for (const auto& n : g->graph->nodes())
        seq += std::string(opName(n->op())) + " ";
      sequences.insert(seq);
      firstOps.insert(opName(g->graph->nodes().front()->op()));
    }
    QCOMPARE(sequences.size(), size_t(50));
    QVERIFY2(firstOps.size() >= 10, "consecutive seeds draw near-identical graphs");
  }

  /// The interpreter runs what the generator makes, and values stay finite (the guards work).
  void interpreterRunsThemFinite() {
    int nonFinite = 0;
    for (uint64_t seed = 0; seed < 100; ++seed) {
      auto g = generateRandomGraph(seed);
      QVERIFY(g.ok());
      auto inputs = makeRandomInputs(*g->graph, seed);
      QVERIFY(inputs.ok());
      auto out = interpret(*g->graph, *inputs);
      QVERIFY2(out.ok(), out.ok() ? "" : out.error().message().c_str());
      for (const Tensor& t : out->outputs)
        for (int64_t i = 0; i < t.numElements(); ++i)
          if (!std::isfinite(t.getAsDouble(i))) {
            ++nonFinite;
            break;
          }
    }
    QCOMPARE(nonFinite, 0);
  }

  /// Bounds are honoured: a graph of at most 5 nodes' worth of ops.
  void sizeBounds() {
    GraphFuzzOptions small;
    small.minNodes = 3;
    small.maxNodes = 5;
    for (uint64_t seed = 0; seed < 50; ++seed) {
      auto g = generateRandomGraph(seed, small);
      QVERIFY(g.ok());
      // One op may add its guards (Abs, Add, Quantize...) after the limit is reached.
      QVERIFY(g->graph->numNodes() <= 5 + 4);
    }
  }
};

QTEST_GUILESS_MAIN(TestGraphFuzzer)
#include "TestGraphFuzzer.moc"
