// Tests of the static memory planner (plan-memory) and of memory-aware scheduling
// (schedule-memory): exact offsets, no overlapping live buffers, efficiency, in-place reuse.
#include "PassTestUtil.h"

#include "core/Cost.h"
#include "core/onnx/OnnxImport.h"
#include "passes/AnalysisCache.h"
#include "passes/MemoryPlan.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <map>

using namespace fb;
using namespace fb::test;

namespace {

/// x → Exp → Transpose → Relu (in place) → MatMul → Relu: sizes 128, 128, 128, 512 bytes.
const char* kChain = R"(graph @chain opset 17 {
  input %x : f32[4, 8]
  input %w : f32[4, 16]
  %a : f32[4, 8] = Exp(%x)  #1
  %b : f32[8, 4] = Transpose(%a) {perm = [1, 0]}  #2
  %c : f32[8, 4] = Relu(%b)  #3
  %d : f32[8, 16] = MatMul(%c, %w)  #4
  %y : f32[8, 16] = Relu(%d)  #5
  output %y
}
)";

/// a feeds b and c, which meet again in d: every buffer is 64 bytes.
const char* kDiamond = R"(graph @diamond opset 17 {
  input %x : f32[16]
  %a : f32[16] = Exp(%x)  #1
  %b : f32[16] = Neg(%a)  #2
  %c : f32[16] = Abs(%a)  #3
  %d : f32[16] = Add(%b, %c)  #4
  %y : f32[16] = Relu(%d)  #5
  output %y
}
)";

/// Two branches that each blow x up to 4 KiB and shrink it again. In the written order both big
/// tensors are alive at once; finishing one branch first keeps only one.
const char* kBranches = R"(graph @branches opset 17 {
  input %x : f32[4, 4]
  input %w1 : f32[4, 256]
  input %w2 : f32[256, 4]
  %a1 : f32[4, 256] = MatMul(%x, %w1)  #1
  %b1 : f32[4, 256] = MatMul(%x, %w1)  #2
  %a2 : f32[4, 4] = MatMul(%a1, %w2)  #3
  %b2 : f32[4, 4] = MatMul(%b1, %w2)  #4
  %y : f32[4, 4] = Add(%a2, %b2)  #5
  output %y
}
)";

const BufferAssignment* find(const MemoryPlan& plan, const std::string& value) {
  for (const BufferAssignment& b : plan.buffers)
    if (b.value == value)
      return &b;
  return nullptr;
}

/// "" when no two buffers that are live at the same step share bytes, else the first pair.
std::string firstConflict(const MemoryPlan& plan) {
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    for (size_t j = i + 1; j < plan.buffers.size(); ++j)
      if (buffersConflict(plan.buffers[i], plan.buffers[j]))
        return plan.buffers[i].value + " and " + plan.buffers[j].value;
  return "";
}

/// The committed samples with static shapes plus the torchvision exports when present.
std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> models(
    const std::string& pipeline) {
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> out;
  for (const char* s : {"mlp.onnx", "small_cnn.onnx", "resnet_block.onnx",
                        "mobilenet_v2_block.onnx", "transformer_block.onnx"}) {
    PipelineResult r = runPipeline(*loadSample(s), pipeline);
    if (r.error)
      qFatal("%s: %s", s, errorText(r).c_str());
    out.emplace_back(s, r.snapshots.back().graph);
  }
  for (const std::string& path : {zooModel("resnet18"), zooModel("mobilenet_v2")}) {
    if (!std::filesystem::exists(path))
      qFatal("%s is missing: the zoo_export ctest exports it (needs python3-torch)", path.c_str());
    auto g = importOnnxFile(path);
    if (!g)
      qFatal("%s: %s", path.c_str(), g.error().message().c_str());
    PipelineResult r = runPipeline(**g, pipeline);
    if (r.error)
      qFatal("%s: %s", path.c_str(), errorText(r).c_str());
    out.emplace_back(path, r.snapshots.back().graph);
  }
  return out;
}

} // namespace

class TestMemoryPlan : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void chainHasExactOffsets() {
    auto g = parseIr(kChain);
    auto plan = planMemory(*g);
    QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message().c_str());
    QCOMPARE(plan->buffers.size(), size_t(4));
    struct Row {
      const char* value;
      int64_t offset, size;
      int first, last;
      const char* reuses;
    };
    // Groups: a [0,1], b+c [1,3], d [3,4]. Largest first: d at 0; a at 0 (not live with d);
    // b+c is live with both, so it goes above d at 512.
    const Row expected[] = {{"a", 0, 128, 0, 1, ""},
                            {"b", 512, 128, 1, 2, ""},
                            {"c", 512, 128, 2, 3, "b"},
                            {"d", 0, 512, 3, 4, ""}};
    for (size_t i = 0; i < 4; ++i) {
      const BufferAssignment& b = plan->buffers[i];
      QCOMPARE(b.value, std::string(expected[i].value));
      QCOMPARE(b.offset, expected[i].offset);
      QCOMPARE(b.size, expected[i].size);
      QCOMPARE(b.first, expected[i].first);
      QCOMPARE(b.last, expected[i].last);
      QCOMPARE(b.reuses, std::string(expected[i].reuses));
    }
    QCOMPARE(plan->naiveBytes, int64_t(896));
    QCOMPARE(plan->arenaBytes, int64_t(640));
    QCOMPARE(plan->lowerBoundBytes, int64_t(640)); // b+c and d at step 3
    QCOMPARE(plan->efficiency(), 1.0);
    QCOMPARE(plan->strategy, std::string("largest-first"));
    QCOMPARE(firstConflict(*plan), std::string());

    // The checker itself: a and b live together at step 1 must not share bytes; b and c share
    // bytes at step 2 only because c overwrites b in place.
    BufferAssignment a = plan->buffers[0], b = plan->buffers[1];
    b.offset = 64;
    QVERIFY(buffersConflict(a, b));
    BufferAssignment c = plan->buffers[2];
    QVERIFY(!buffersConflict(plan->buffers[1], c));
    c.reuses.clear();
    QVERIFY(buffersConflict(plan->buffers[1], c));
  }

  void diamondHasExactOffsets() {
    auto g = parseIr(kDiamond);
    auto plan = planMemory(*g);
    QVERIFY(plan.ok());
    // In place: c overwrites a (a dies at c), d overwrites b. Two buffers of 64 bytes.
    QCOMPARE(find(*plan, "a")->offset, int64_t(0));
    QCOMPARE(find(*plan, "b")->offset, int64_t(64));
    QCOMPARE(find(*plan, "c")->offset, int64_t(0));
    QCOMPARE(find(*plan, "c")->reuses, std::string("a"));
    QCOMPARE(find(*plan, "d")->offset, int64_t(64));
    QCOMPARE(find(*plan, "d")->reuses, std::string("b"));
    QCOMPARE(find(*plan, "a")->last, 2);
    QCOMPARE(plan->arenaBytes, int64_t(128));
    QCOMPARE(plan->lowerBoundBytes, int64_t(128));
    QCOMPARE(firstConflict(*plan), std::string());

    // Without in-place: a [0,2] 0, b [1,3] 64, c [2,3] 128, d [3,4] back at 0.
    MemoryPlanOptions noInPlace;
    noInPlace.inPlace = false;
    auto plain = planMemory(*g, noInPlace);
    QVERIFY(plain.ok());
    QCOMPARE(find(*plain, "a")->offset, int64_t(0));
    QCOMPARE(find(*plain, "b")->offset, int64_t(64));
    QCOMPARE(find(*plain, "c")->offset, int64_t(128));
    QCOMPARE(find(*plain, "d")->offset, int64_t(0));
    QCOMPARE(plain->arenaBytes, int64_t(192));
    QCOMPARE(plain->lowerBoundBytes, int64_t(192));
    QCOMPARE(plain->naiveBytes, int64_t(256));
    QCOMPARE(firstConflict(*plain), std::string());
  }

  void sizesAreAligned() {
    auto g = parseIr(R"(graph @odd opset 17 {
  input %x : f32[3]
  %a : f32[3] = Exp(%x)  #1
  %y : f32[3] = Neg(%a)  #2
  output %y
}
)");
    auto plan = planMemory(*g);
    QVERIFY(plan.ok());
    QCOMPARE(plan->buffers.size(), size_t(1));
    QCOMPARE(plan->buffers[0].size, int64_t(64)); // 12 bytes rounded up
  }

  void symbolicShapesAreAnError() {
    auto g = loadSample("dynamic_batch.onnx");
    auto plan = planMemory(*g);
    QVERIFY(!plan.ok());
    QVERIFY2(plan.error().message().find("plan-memory needs static shapes: value %") == 0,
             plan.error().message().c_str());
    QVERIFY(plan.error().message().find("has type f32[N") != std::string::npos);
  }

  void noLiveBuffersOverlap_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::newRow("unfused") << QString("canonicalize,fold-constants,dce,fold-batchnorm");
    QTest::newRow("fused") << QString("canonicalize,fold-constants,dce,fold-batchnorm,fuse");
  }
  void noLiveBuffersOverlap() {
    QFETCH(QString, pipeline);
    for (const auto& [name, graph] : models(pipeline.toStdString())) {
      auto plan = planMemory(*graph);
      QVERIFY2(plan.ok(), name.c_str());
      std::string conflict = firstConflict(*plan);
      QVERIFY2(conflict.empty(), (name + ": " + conflict).c_str());
      QVERIFY(plan->arenaBytes >= plan->lowerBoundBytes);
      QVERIFY(plan->arenaBytes <= plan->naiveBytes);
      for (const BufferAssignment& b : plan->buffers) {
        QCOMPARE(b.size % 64, int64_t(0));
        QVERIFY(b.offset + b.size <= plan->arenaBytes);
        QVERIFY(b.first <= b.last);
      }
      qInfo("%s: naive %lld, arena %lld, lower bound %lld, efficiency %.4f (%s, %zu buffers)",
            name.c_str(), static_cast<long long>(plan->naiveBytes),
            static_cast<long long>(plan->arenaBytes),
            static_cast<long long>(plan->lowerBoundBytes), plan->efficiency(),
            plan->strategy.c_str(), plan->buffers.size());
      QVERIFY2(plan->efficiency() >= 0.95, name.c_str());
    }
  }

  void reluAfterConvRunsInPlace() {
    auto g = loadSample("small_cnn.onnx");
    PipelineResult r = runPipeline(*g, "canonicalize,fold-constants,dce,fold-batchnorm");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& folded = r.finalGraph();
    auto plan = planMemory(folded);
    QVERIFY(plan.ok());
    int checked = 0;
    for (const auto& n : folded.nodes()) {
      if (n->op() != OpKind::Relu || !n->input(0)->producer() ||
          n->input(0)->producer()->op() != OpKind::Conv || n->input(0)->uses().size() != 1 ||
          n->output(0)->isGraphOutput())
        continue;
      const BufferAssignment* relu = find(*plan, n->output(0)->name());
      const BufferAssignment* conv = find(*plan, n->input(0)->name());
      QVERIFY(relu && conv);
      QCOMPARE(relu->reuses, conv->value);
      QCOMPARE(relu->offset, conv->offset);
      ++checked;
    }
    QVERIFY(checked >= 2);
    QVERIFY(plan->inPlaceReuses >= checked);

    // A Conv output still read after the Relu is not overwritten.
    auto g2 = parseIr(R"(graph @keep opset 17 {
  input %x : f32[4, 4]
  %a : f32[4, 4] = Exp(%x)  #1
  %r : f32[4, 4] = Relu(%a)  #2
  %y : f32[4, 4] = Add(%r, %a)  #3
  output %y
}
)");
    auto plan2 = planMemory(*g2);
    QVERIFY(plan2.ok());
    QCOMPARE(find(*plan2, "r")->reuses, std::string());
    QVERIFY(find(*plan2, "r")->offset != find(*plan2, "a")->offset);
  }

  /// A non-elementwise step overwrites an input only where overwritesInput says so, and is
  /// asked only for an input of its result's type that dies there.
  void overwritesInputWhereTheExecutorSaysSo() {
    auto g = parseIr(R"(graph @mm opset 17 {
  input %x : f32[8, 8]
  input %w : f32[8, 8]
  %a : f32[8, 8] = Exp(%x)  #1
  %b : f32[8, 8] = Neg(%x)  #2
  %m : f32[8, 8] = MatMul(%a, %b)  #3
  %y : f32[8, 8] = Relu(%m)  #4
  output %y
}
)");
    QVERIFY(g);
    auto plain = planMemory(*g);
    QVERIFY(plain.ok());
    QCOMPARE(find(*plain, "m")->reuses, std::string());
    MemoryPlanOptions o;
    std::vector<std::string> asked;
    o.overwritesInput = [&](int step, const Value& in) {
      asked.push_back(std::to_string(step) + ":" + in.name());
      return in.name() == "b";
    };
    auto plan = planMemory(*g, o);
    QVERIFY(plan.ok());
    QCOMPARE(find(*plan, "m")->reuses, std::string("b"));
    QCOMPARE(find(*plan, "m")->offset, find(*plan, "b")->offset);
    QVERIFY(find(*plan, "a")->offset != find(*plan, "b")->offset);
    // Asked about a (declined) and b at the MatMul's step; never about the elementwise steps.
    QCOMPARE(asked, (std::vector<std::string>{"2:a", "2:b"}));
  }

  void passReportsStatisticsAndChangesNothing() {
    auto g = parseIr(kChain);
    PipelineResult r = runPipeline(*g, "plan-memory");
    QVERIFY2(!r.error, errorText(r).c_str());
    const PassRecord& rec = *r.snapshots.back().record;
    QVERIFY(!rec.changed);
    QVERIFY(rec.analysis);
    QCOMPARE(rec.statistics.at("naive_bytes"), 896.0);
    QCOMPARE(rec.statistics.at("arena_bytes"), 640.0);
    QCOMPARE(rec.statistics.at("lower_bound_bytes"), 640.0);
    QCOMPARE(rec.statistics.at("efficiency"), 1.0);
    QVERIFY2(rec.summary.find("arena 640 B for 4 buffers (naive 896 B, lower bound 640 B, "
                              "efficiency 1.00, largest-first)") != std::string::npos,
             rec.summary.c_str());

    PipelineResult bad = runPipeline(*loadSample("dynamic_batch.onnx"), "plan-memory");
    QVERIFY(bad.error);
    QVERIFY(errorText(bad).find("plan-memory needs static shapes") != std::string::npos);
  }

  void snapshotPlanIsCached() {
    PipelineResult r = runPipeline(*parseIr(kChain), "plan-memory");
    const Snapshot& s = r.snapshots.back();
    size_t before = s.analyses->computations();
    const MemoryPlan& a = snapshotMemoryPlan(s);
    const MemoryPlan& b = snapshotMemoryPlan(s);
    QCOMPARE(&a, &b);
    QCOMPARE(s.analyses->computations(), before + 1);
    QCOMPARE(a.arenaBytes, int64_t(640));
    QVERIFY(a.error.empty());

    PipelineResult d = runPipeline(*loadSample("dynamic_batch.onnx"), "dce");
    const MemoryPlan& failed = snapshotMemoryPlan(d.snapshots.back());
    QVERIFY(failed.error.find("plan-memory needs static shapes") != std::string::npos);
    QVERIFY(failed.buffers.empty());
  }

  void concatTakesItsInputsInPlace() {
    // a (4 channels) and b (12) are computed into their slices of c; b is also read after the
    // Concat, so c's buffer lives until then, and d (Relu of c) may not overwrite c in place.
    auto g = parseIr(R"(graph @cat opset 17 {
  input %x : f32[1, 4, 4, 4]
  input %z : f32[1, 12, 4, 4]
  %a : f32[1, 4, 4, 4] = Exp(%x)  #1
  %b : f32[1, 12, 4, 4] = Neg(%z)  #2
  %c : f32[1, 16, 4, 4] = Concat(%a, %b) {axis = 1}  #3
  %d : f32[1, 16, 4, 4] = Relu(%c)  #4
  %e : f32[1, 12, 4, 4] = Abs(%b)  #5
  %f : f32[1, 16, 4, 4] = Exp(%d)  #6
  output %e
  output %f
})");
    QVERIFY(g);
    MemoryPlanOptions on;
    on.concatInPlace = true;
    auto plan = planMemory(*g, on);
    QVERIFY2(plan.ok(), plan.ok() ? "" : plan.error().message().c_str());
    QCOMPARE(plan->concatsInPlace, std::vector<std::string>{"c"});
    const BufferAssignment *a = find(*plan, "a"), *b = find(*plan, "b"), *c = find(*plan, "c"),
                           *d = find(*plan, "d");
    QVERIFY(a && b && c && d);
    QCOMPARE(a->sliceOf, std::string("c"));
    QCOMPARE(b->sliceOf, std::string("c"));
    QCOMPARE(a->offset, c->offset);
    QCOMPARE(b->offset, c->offset + 4 * 16 * 4);
    QCOMPARE(a->size, int64_t(256));
    QCOMPARE(b->size, int64_t(768));
    QVERIFY(d->reuses.empty()); // b is still to be read when d is computed
    QVERIFY(d->offset >= c->offset + c->size || d->offset + d->size <= c->offset);
    QCOMPARE(firstConflict(*plan), std::string());
    // Off by default (the plan the memory view shows), and the Concat copies then.
    QVERIFY(planMemory(*g)->concatsInPlace.empty());
    QVERIFY(planMemory(*g)->buffers[0].sliceOf.empty());
  }

  void concatKeepsItsCopiesWhereSlicesCannotBe() {
    MemoryPlanOptions on;
    on.concatInPlace = true;
    for (const char* text : {// batch 2: an input is not one run of bytes of the result
                             R"(graph @batch opset 17 {
  input %x : f32[2, 16]
  %a : f32[2, 16] = Exp(%x)  #1
  %b : f32[2, 16] = Neg(%x)  #2
  %c : f32[2, 32] = Concat(%a, %b) {axis = 1}  #3
  %y : f32[2, 32] = Relu(%c)  #4
  output %y
})",
                             // the same value twice
                             R"(graph @twice opset 17 {
  input %x : f32[1, 16]
  %a : f32[1, 16] = Exp(%x)  #1
  %c : f32[1, 32] = Concat(%a, %a) {axis = 1}  #2
  %y : f32[1, 32] = Relu(%c)  #3
  output %y
})",
                             // a graph input, which the arena does not hold
                             R"(graph @input opset 17 {
  input %x : f32[1, 16]
  %a : f32[1, 16] = Exp(%x)  #1
  %c : f32[1, 32] = Concat(%a, %x) {axis = 1}  #2
  %y : f32[1, 32] = Relu(%c)  #3
  output %y
})",
                             // the second slice would start 36 bytes in, off the 64-byte alignment
                             R"(graph @unaligned opset 17 {
  input %x : f32[1, 9]
  %a : f32[1, 9] = Exp(%x)  #1
  %b : f32[1, 9] = Neg(%x)  #2
  %c : f32[1, 18] = Concat(%a, %b) {axis = 1}  #3
  %y : f32[1, 18] = Relu(%c)  #4
  output %y
})"}) {
      auto g = parseIr(text);
      QVERIFY(g);
      auto plan = planMemory(*g, on);
      QVERIFY(plan.ok());
      QVERIFY2(plan->concatsInPlace.empty(), g->name().c_str());
      for (const BufferAssignment& b : plan->buffers)
        QVERIFY(b.sliceOf.empty());
      QCOMPARE(firstConflict(*plan), std::string());
    }
    // One value in two Concats: the first takes it, the second copies.
    auto g = parseIr(R"(graph @two opset 17 {
  input %x : f32[1, 16]
  %a : f32[1, 16] = Exp(%x)  #1
  %b : f32[1, 16] = Neg(%x)  #2
  %c : f32[1, 32] = Concat(%a, %b) {axis = 1}  #3
  %d : f32[1, 32] = Concat(%b, %a) {axis = 1}  #4
  %y : f32[1, 32] = Add(%c, %d)  #5
  output %y
})");
    QVERIFY(g);
    auto plan = planMemory(*g, on);
    QVERIFY(plan.ok());
    QCOMPARE(plan->concatsInPlace, std::vector<std::string>{"c"});
    QCOMPARE(firstConflict(*plan), std::string());
  }

  void scheduleLowersPeakWhereOrderMatters() {
    auto g = parseIr(kBranches);
    // Written order: x, w1, w2 (64 + 4096 + 4096) + a1 + b1 (4096 each) = 16448 at b1.
    QCOMPARE(peakActivationBytes(*g), int64_t(16448));
    PipelineResult r = runPipeline(*g, "schedule-memory");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Graph& out = r.finalGraph();
    QVERIFY(r.snapshots.back().record->changed);
    // a1, a2 first, then b1: at most one big temporary alive, next to a2 (64 B).
    QCOMPARE(peakActivationBytes(out), int64_t(12352 + 64));
    std::vector<NodeId> order;
    for (const auto& n : out.nodes())
      order.push_back(n->id());
    QCOMPARE(order, (std::vector<NodeId>{1, 3, 2, 4, 5}));
    QCOMPARE(r.snapshots.back().record->statistics.at("peak bytes before"), 16448.0);
    QCOMPARE(r.snapshots.back().record->statistics.at("peak bytes after"), 12416.0);
    QCOMPARE(maxOutputDifference(*g, out), 0.0);
    // The arena follows the peak down: a1, b1 and a2 live together before (4096 + 4096 + 64);
    // after, at most one big temporary next to a2 and b2 (4096 + 64 + 64).
    QCOMPARE(planMemory(*g)->arenaBytes, int64_t(8256));
    QCOMPARE(planMemory(out)->arenaBytes, int64_t(4224));
  }

  void scheduleKeepsAGoodOrder() {
    auto g = parseIr(kChain);
    PipelineResult r = runPipeline(*g, "schedule-memory");
    QVERIFY2(!r.error, errorText(r).c_str());
    QVERIFY(!r.snapshots.back().record->changed);
  }

  void scheduleNeverRaisesThePeak_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::newRow("unfused") << QString("canonicalize,fold-constants,dce,fold-batchnorm");
    QTest::newRow("fused") << QString("canonicalize,fold-constants,dce,fold-batchnorm,fuse");
  }
  void scheduleNeverRaisesThePeak() {
    QFETCH(QString, pipeline);
    for (const auto& [name, graph] : models(pipeline.toStdString())) {
      PipelineResult r = runPipeline(*graph, "schedule-memory");
      QVERIFY2(!r.error, (name + ": " + errorText(r)).c_str());
      const Graph& out = r.finalGraph();
      QVERIFY2(peakActivationBytes(out) <= peakActivationBytes(*graph), name.c_str());
      if (!r.snapshots.back().record->changed)
        QCOMPARE(peakActivationBytes(out), peakActivationBytes(*graph));
      QCOMPARE(maxOutputDifference(*graph, out, 1), 0.0);
    }
    QVERIFY(checkSamplesUnchanged("schedule-memory").empty());
  }
};

QTEST_GUILESS_MAIN(TestMemoryPlan)
#include "TestMemoryPlan.moc"
