// Tests of the workbench's reports behind the memory, run and profile views: the memory plan
// with producers, consumers and live bytes; per-kernel profile summaries, time shares through
// provenance and profile comparisons; output summaries; inputs mixing files and seeds; the
// machine's peaks and their cache.
#include "app/workbench/Compile.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/MachinePeaks.h"
#include "app/workbench/MemoryPlanReport.h"
#include "app/workbench/OutputSummary.h"
#include "app/workbench/ProfileReport.h"
#include "app/workbench/ProfileRuns.h"
#include "app/workbench/Run.h"
#include "app/workbench/Session.h"
#include "core/Npy.h"
#include "passes/AnalysisCache.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <limits>
#include <numeric>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) { return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name; }

/// A session on `name` with `pipeline` run to its end.
std::unique_ptr<Session> sessionAfter(const char* name, const std::string& pipeline) {
  auto s = std::make_unique<Session>();
  if (!s->load(sample(name)).ok() || !s->setPipeline(pipeline).ok() || !s->runPipeline().ok())
    return nullptr;
  return s;
}

/// Profiles `graph` on the CPU over `runs` runs.
Expected<cg::Profile> profileOf(const Graph& graph, int runs) {
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, gatherInputs(graph, {}, 1, {}));
  RunSettings s;
  s.backend = Backend::Cpu;
  s.profile = true;
  s.benchRuns = runs;
  s.warmupRuns = 1;
  Expected<RunResult> r = runGraph(graph, inputs, s);
  if (!r.ok())
    return r.error();
  if (!r.value().profile.has_value())
    return makeError("the run recorded no profile");
  return cg::Profile(r.value().profile.value());
}

/// A profile of `kernels` kernels with the given per-run times (µs), as the executor records.
cg::Profile syntheticProfile(const std::vector<std::vector<double>>& timesPerRun,
                             const std::vector<std::vector<NodeId>>& nodes) {
  cg::Profile p;
  for (size_t k = 0; k < nodes.size(); ++k) {
    cg::KernelProfileInfo info;
    info.name = "k" + std::to_string(k);
    info.op = "Op" + std::to_string(k);
    info.nodes = nodes[k];
    info.flops = 1e6 * double(k + 1);
    info.bytes = 4e5;
    info.generator = "loops";
    p.kernels.push_back(info);
  }
  double t = 0;
  for (size_t r = 0; r < timesPerRun.size(); ++r) {
    const double start = t;
    for (size_t k = 0; k < timesPerRun[r].size(); ++k) {
      p.events.push_back({int(k), int(r), t, timesPerRun[r][k]});
      t += timesPerRun[r][k];
    }
    p.runs.push_back({start, t - start});
  }
  return p;
}

} // namespace

class TestBackHalfReports : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// The report carries the plan's own totals; every buffer names the node of its first step
  /// as producer and its readers as consumers; the bytes live per step peak at the lower bound.
  void memoryPlanReportMatchesThePlan() {
    for (const char* name : {"resnet_block.onnx", "transformer_block.onnx", "small_cnn.onnx"}) {
      for (const char* pipeline : {"", "O3"}) {
        auto s = sessionAfter(name, pipeline);
        QVERIFY(s);
        const Snapshot& snap = s->snapshot(s->snapshotCount() - 1);
        const MemoryPlan& plan = snapshotMemoryPlan(snap);
        const MemoryPlanReport r = describeMemoryPlan(snap);
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.plan.arenaBytes, plan.arenaBytes);
        QCOMPARE(r.plan.naiveBytes, plan.naiveBytes);
        QCOMPARE(r.plan.lowerBoundBytes, plan.lowerBoundBytes);
        QCOMPARE(r.buffers.size(), plan.buffers.size());
        QVERIFY(!r.buffers.empty());
        const Graph& g = *snap.graph;
        QCOMPARE(r.steps.size(), g.nodes().size());
        for (size_t i = 0; i < r.buffers.size(); ++i) {
          const PlannedBuffer& b = r.buffers[i];
          QCOMPARE(b.buffer.value, plan.buffers[i].value);
          QCOMPARE(b.buffer.offset, plan.buffers[i].offset);
          const Node& producer = *g.nodes()[size_t(b.buffer.first)];
          QCOMPARE(b.producer.id, producer.id());
          const Value* v = g.findValue(b.buffer.value);
          QVERIFY(v && v->producer() == &producer);
          QCOMPARE(QString::fromStdString(b.type), QString::fromStdString(v->type().str()));
          // The last consumer reads it at its last step.
          if (b.buffer.last > b.buffer.first) {
            QVERIFY(!b.consumers.empty());
            QCOMPARE(b.consumers.back().id, g.nodes()[size_t(b.buffer.last)]->id());
          }
        }
        QCOMPARE(*std::max_element(r.liveBytes.begin(), r.liveBytes.end()), plan.lowerBoundBytes);
      }
    }
  }

  /// A model with symbolic shapes has no plan, and the report says why.
  void memoryPlanReportSaysWhyThereIsNone() {
    auto s = sessionAfter("dynamic_batch.onnx", "");
    QVERIFY(s);
    const MemoryPlanReport r = describeMemoryPlan(s->snapshot(0));
    QVERIFY(!r.error.empty());
    QVERIFY2(r.error.find("static shapes") != std::string::npos, r.error.c_str());
    QVERIFY(r.buffers.empty());
  }

  /// Means, shares and rates follow the profiler's own formulas.
  void profileSummaryUsesTheProfilersNumbers() {
    const cg::Profile p = syntheticProfile({{100, 300}, {200, 500}}, {{1}, {2, 3}});
    const ProfileSummary s = summarizeProfile(p);
    QCOMPARE(s.runs, 2);
    QCOMPARE(s.kernels.size(), size_t(2));
    QCOMPARE(s.kernels[0].meanUs, 150.0);
    QCOMPARE(s.kernels[1].meanUs, 400.0);
    QCOMPARE(s.kernels[0].meanUs, p.meanUs(0));
    QCOMPARE(s.kernels[0].medianUs, 150.0); // two runs: the median is their mean
    QCOMPARE(s.totalUs, 550.0);
    QVERIFY(std::abs(s.kernels[0].percent - 100.0 * 150 / 550) < 1e-12);
    // 1 MFLOP in 150 µs: 6.67 GFLOP/s; 400 KB in 150 µs: 2.67 GB/s.
    QVERIFY(std::abs(s.kernels[0].gflops - 1e6 / 150e-6 * 1e-9) < 1e-9);
    QVERIFY(std::abs(s.kernels[0].gbps - 4e5 / 150e-6 * 1e-9) < 1e-9);
    QCOMPARE(s.kernels[1].intensity(), 2e6 / 4e5);
    // An outlier run moves the mean, not the median the shares and rates use.
    const ProfileSummary o = summarizeProfile(syntheticProfile({{100, 300}, {110, 310}, {5000, 320}}, {{1}, {2}}));
    QCOMPARE(o.kernels[0].medianUs, 110.0);
    QCOMPARE(o.kernels[1].medianUs, 310.0);
    QCOMPARE(o.kernels[0].meanUs, 5210.0 / 3);
    QCOMPARE(o.totalUs, 420.0);
    QVERIFY(std::abs(o.kernels[0].gflops - 1e6 / 110e-6 * 1e-9) < 1e-9);
    QVERIFY(std::abs(o.totalMeanUs - (5210.0 + 930.0) / 3) < 1e-9);
  }

  /// Three unfused kernels against the fused one that replaced them are one row; work that
  /// disappeared is a row of its own; totals add up.
  void profileComparisonMatchesKernelsByProvenance() {
    // Before: Conv (#1), Relu (#2), Add (#3) as separate ops; after: one group of #1 and #2,
    // and #3 unchanged.
    Graph before;
    Value* x = before.addInput("x", TensorType(DType::F32, {Dim(4)}));
    Node* a = before.addNodeWithId(1, OpKind::Relu, {x}, 1, {"a"}, "a");
    Node* b = before.addNodeWithId(2, OpKind::Relu, {a->output(0)}, 1, {"b"}, "b");
    Node* c = before.addNodeWithId(3, OpKind::Relu, {b->output(0)}, 1, {"c"}, "c");
    before.addOutput(c->output(0));
    // After: a group made from #1 and #2 (its body keeps their ids), #3 as it was.
    Graph fused;
    Value* fx = fused.addInput("x", TensorType(DType::F32, {Dim(4)}));
    Node* g = fused.addNodeWithId(10, OpKind::Fused, {fx}, 1, {"ab"}, "ab");
    auto body = std::make_unique<Graph>("body");
    Value* bx = body->addInput("x", TensorType(DType::F32, {Dim(4)}));
    Node* b1 = body->addNodeWithId(1, OpKind::Relu, {bx}, 1, {"a"}, "a");
    Node* b2 = body->addNodeWithId(2, OpKind::Relu, {b1->output(0)}, 1, {"b"}, "b");
    body->addOutput(b2->output(0));
    g->setBody(std::move(body));
    g->setProvenance({1, 2});
    Node* fc = fused.addNodeWithId(3, OpKind::Relu, {g->output(0)}, 1, {"c"}, "c");
    fused.addOutput(fc->output(0));

    const ProfileSummary sb = summarizeProfile(syntheticProfile({{100, 200, 50}}, {{1}, {2}, {3}}));
    const ProfileSummary sa = summarizeProfile(syntheticProfile({{180, 50}}, {{1, 2}, {3}}));
    const ProfileComparison cmp = compareProfiles(sb, before, sa, fused);
    QCOMPARE(cmp.rows.size(), size_t(2));
    // Sorted by time saved: the fusion first.
    QCOMPARE(cmp.rows[0].before, (std::vector<int>{0, 1}));
    QCOMPARE(cmp.rows[0].after, (std::vector<int>{0}));
    QCOMPARE(cmp.rows[0].savedUs(), 120.0);
    QCOMPARE(cmp.rows[1].savedUs(), 0.0);
    QCOMPARE(cmp.beforeTotalUs, 350.0);
    QCOMPARE(cmp.afterTotalUs, 230.0);

    // The group of #1 and #2 stands for both originals, and each gets the group's share.
    QCOMPARE(correspondingNodes(before, 1, fused), std::vector<NodeId>{10});
    QCOMPARE(correspondingNodes(fused, 10, before), (std::vector<NodeId>{1, 2}));
    QCOMPARE(correspondingNodes(fused, 3, before), std::vector<NodeId>{3});
    const auto shares = timeShareByNode(sa, fused, before);
    QVERIFY(std::abs(shares.at(1) - 180.0 / 230) < 1e-12);
    QVERIFY(std::abs(shares.at(2) - 180.0 / 230) < 1e-12);
    QVERIFY(std::abs(shares.at(3) - 50.0 / 230) < 1e-12);
    QCOMPARE(kernelsOfNode(sb, before, fused, 10), (std::vector<int>{0, 1}));
  }

  /// On a real model: the summary has a row per kernel; each top-level node of the profiled
  /// snapshot gets its kernel's share (they add up to one); the imported model's nodes get the
  /// shares of the kernels that now compute them; a comparison accounts for every kernel.
  void realProfilesSummarizeAndCompare() {
    auto s = sessionAfter("resnet_block.onnx", "O3");
    QVERIFY(s);
    const Graph& opt = *s->graph(s->snapshotCount() - 1);
    const Graph& orig = *s->graph(0);
    auto pa = profileOf(opt, 2);
    QVERIFY2(pa.ok(), pa.ok() ? "" : pa.error().message().c_str());
    auto pb = profileOf(orig, 2);
    QVERIFY2(pb.ok(), pb.ok() ? "" : pb.error().message().c_str());
    const ProfileSummary after = summarizeProfile(*pa), before = summarizeProfile(*pb);
    QCOMPARE(after.kernels.size(), pa->kernels.size());
    double percent = 0;
    for (const KernelTiming& k : after.kernels)
      percent += k.percent;
    QVERIFY(std::abs(percent - 100) < 1e-9);

    const auto onItself = timeShareByNode(after, opt, opt);
    double total = 0;
    for (const auto& n : opt.nodes())
      total += onItself.count(n->id()) ? onItself.at(n->id()) : 0.0;
    QVERIFY2(std::abs(total - 1) < 1e-9, qPrintable(QString::number(total)));
    const auto onOriginal = timeShareByNode(after, opt, orig);
    for (const auto& n : orig.nodes())
      QVERIFY2(onOriginal.count(n->id()), n->describe().c_str()); // every op is computed somewhere

    const ProfileComparison cmp = compareProfiles(before, orig, after, opt);
    double b = 0, a = 0;
    std::vector<int> seenBefore(before.kernels.size()), seenAfter(after.kernels.size());
    for (const KernelSaving& r : cmp.rows) {
      b += r.beforeUs;
      a += r.afterUs;
      for (int k : r.before)
        ++seenBefore[size_t(k)];
      for (int k : r.after)
        ++seenAfter[size_t(k)];
    }
    QVERIFY(std::abs(b - before.totalUs) < 1e-6);
    QVERIFY(std::abs(a - after.totalUs) < 1e-6);
    for (int n : seenBefore)
      QCOMPARE(n, 1);
    for (int n : seenAfter)
      QCOMPARE(n, 1);
    QVERIFY(cmp.afterKernels < cmp.beforeKernels); // fusion made fewer kernels
  }

  /// Two snapshots profiled in alternation: each profile has every run and every kernel of its
  /// own model; a cancelled profile says so; the median run is the middle one.
  void profilesRunInAlternation() {
    auto s = sessionAfter("small_cnn.onnx", "O3");
    QVERIFY(s);
    std::vector<ProfileTarget> targets;
    for (size_t i : {size_t(0), s->snapshotCount() - 1}) {
      ProfileTarget t;
      auto inputs = gatherInputs(*s->graph(i), {}, 1, {});
      QVERIFY(inputs.ok());
      t.inputs = *inputs;
      auto model = compileGraph(*s->graph(i), CompileSettings{}, t.inputs);
      QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
      t.model = *model;
      targets.push_back(std::move(t));
    }
    auto profiles = profileAlternating(targets, 3, 1);
    QVERIFY2(profiles.ok(), profiles.ok() ? "" : profiles.error().message().c_str());
    QCOMPARE(profiles->size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
      const cg::Profile& p = (*profiles)[i];
      QCOMPARE(p.runs.size(), size_t(3));
      QCOMPARE(p.kernels.size(), targets[i].model->kernels().size());
      QCOMPARE(p.events.size(), 3 * p.kernels.size());
    }
    QVERIFY((*profiles)[0].kernels.size() > (*profiles)[1].kernels.size());
    JobControl job;
    job.cancel();
    auto cancelled = profileAlternating(targets, 3, 0, &job);
    QVERIFY(!cancelled.ok() && cancelled.error().message().find("cancelled") != std::string::npos);
    QVERIFY(!profileAlternating(targets, 0, 0).ok());
    cg::Profile p;
    p.runs = {{0, 3000}, {3000, 1000}, {4000, 9000}};
    QCOMPARE(medianRunMs(p), 3.0);
    QCOMPARE(medianRunMs(cg::Profile{}), 0.0);
  }

  /// Statistics leave out non-finite values and count them; the preview is the first values.
  void outputSummariesCountNonFiniteValues() {
    Graph g;
    Value* x = g.addInput("x", TensorType(DType::F32, {Dim(5)}));
    Node* n = g.addNode(OpKind::Relu, {x}, 1, {"y"});
    g.addOutput(n->output(0));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor t = Tensor::fromVector<float>({5}, {1, -2, nan, 4, 0.5f});
    auto s = summarizeOutputs(g, {t}, 3);
    QCOMPARE(s.size(), size_t(1));
    QCOMPARE(s[0].name, std::string("y"));
    QCOMPARE(s[0].type, std::string("f32[5]"));
    QCOMPARE(s[0].nonFinite, int64_t(1));
    QCOMPARE(s[0].min, -2.0);
    QCOMPARE(s[0].max, 4.0);
    QCOMPARE(s[0].mean, 3.5 / 4);
    QCOMPARE(s[0].preview.size(), size_t(3));
    QCOMPARE(s[0].preview[1], -2.0);
  }

  /// An empty file entry is that input's seeded random tensor; a file must fit its input.
  void inputsMixFilesAndSeeds() {
    auto s = sessionAfter("transformer_block.onnx", "");
    QVERIFY(s);
    const Graph& g = *s->graph(0);
    QVERIFY(!g.inputs().empty());
    auto random = gatherInputs(g, {}, 5, {});
    QVERIFY(random.ok());
    QTemporaryDir dir;
    const std::string path = dir.filePath("x.npy").toStdString();
    Tensor ones = (*random)[0];
    for (int64_t i = 0; i < ones.numElements(); ++i)
      ones.setFromDouble(i, 1.0);
    QVERIFY(writeNpy(path, ones).ok());
    std::vector<std::string> files(g.inputs().size());
    files[0] = path;
    auto mixed = gatherInputs(g, files, 5, {});
    QVERIFY2(mixed.ok(), mixed.ok() ? "" : mixed.error().message().c_str());
    QVERIFY((*mixed)[0].identical(ones));
    for (size_t i = 1; i < g.inputs().size(); ++i)
      QVERIFY((*mixed)[i].identical((*random)[i]));
    // A tensor of another shape is refused, naming the file and the input.
    const std::string wrong = dir.filePath("wrong.npy").toStdString();
    QVERIFY(writeNpy(wrong, Tensor::fromVector<float>({2}, {1, 2})).ok());
    files[0] = wrong;
    auto refused = gatherInputs(g, files, 5, {});
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message().find("wrong.npy") != std::string::npos &&
                 refused.error().message().find(g.inputs()[0]->name()) != std::string::npos,
             refused.error().message().c_str());
  }

  /// The micro-benchmark measures positive roofs once; the cache serves them afterwards per CPU
  /// and thread count; a cancelled measurement says so.
  void machinePeaksAreMeasuredOnceAndCached() {
    QTemporaryDir dir;
    const std::string cache = dir.filePath("sub/machine-peaks.txt").toStdString();
    QVERIFY(!cachedMachinePeaks(1, cache));
    auto measured = machinePeaks(1, cache);
    QVERIFY2(measured.ok(), measured.ok() ? "" : measured.error().message().c_str());
    qInfo("peaks on 1 thread: %.1f GFLOP/s (%s), %.1f GB/s DRAM, %.1f GB/s L2", measured->gflops,
          measured->isa.c_str(), measured->gbps, measured->cacheGbps);
    QVERIFY(measured->gflops > 0.5 && measured->gflops < 1e5);
    QVERIFY(measured->gbps > 0.5 && measured->gbps < 1e4);
    QVERIFY2(measured->cacheGbps > measured->gbps, "the L2 cache is faster than DRAM");
    QVERIFY(!measured->fromCache);
    QCOMPARE(measured->cachePath, cache);
    auto again = machinePeaks(1, cache);
    QVERIFY(again.ok() && again->fromCache);
    QVERIFY(std::abs(again->gflops - measured->gflops) <= 1e-6 * measured->gflops);
    QCOMPARE(again->measuredAt, measured->measuredAt);
    QVERIFY(!cachedMachinePeaks(2, cache)); // another thread count is measured afresh
    const std::string text = describeMachinePeaks(*again);
    QVERIFY2(text.find("measured") != std::string::npos && text.find(cache) != std::string::npos,
             text.c_str());
    // A line for another CPU, of another version of the benchmark, or damaged is ignored.
    {
      std::ofstream out(cache, std::ios::app);
      out << "fma12-triad64M-l2triad-wide-cpu some-other-cpu 3 100 10 50 avx2 2020-01-01 00:00\n"
          << "old-benchmark " << again->cpu << " 3 100 10 50 avx2 2020-01-01 00:00\ngarbage\n"
          << "fma12-triad64M-l2triad-wide-cpu " << again->cpu << " 4 100 10 50 avx2 2020-01-01 00:00\n";
    }
    QVERIFY(!cachedMachinePeaks(3, cache));
    QVERIFY(cachedMachinePeaks(4, cache).has_value());
    QCOMPARE(cachedMachinePeaks(4, cache)->gflops, 100.0);
    JobControl job;
    job.cancel();
    auto cancelled = measureMachinePeaks(1, &job);
    QVERIFY(!cancelled.ok());
    QVERIFY(cancelled.error().message().find("cancelled") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestBackHalfReports)
#include "TestBackHalfReports.moc"
