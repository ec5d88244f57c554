// Tests of the workbench Session: loading, pipeline editing, stepping, stale jobs, statistics,
// diffs, node inspection and the IR text map, checked against the libraries used directly.
#include "app/workbench/IrText.h"
#include "app/workbench/NodeInspection.h"
#include "app/workbench/Session.h"

#include "core/Cost.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/TensorCompare.h"
#include "core/text/IrPrinter.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <set>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) { return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name; }

const char* kTeachingPipeline = "canonicalize,fold-constants,fold-batchnorm,fuse";

size_t countOp(const Graph& g, OpKind op) {
  size_t n = 0;
  for (const auto& node : g.nodes())
    n += node->op() == op;
  return n;
}

} // namespace

class TestSession : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void loadsEverySample() {
    for (const char* name : {"mlp", "small_cnn", "resnet_block", "mobilenet_v2_block",
                             "transformer_block", "dynamic_batch"}) {
      for (const char* ext : {".onnx", ".fbir"}) {
        Session s;
        std::string path = sample(name) + ext;
        Status st = s.load(path);
        QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
        QCOMPARE(s.snapshotCount(), size_t(1));
        QCOMPARE(s.displayName(), std::string(name) + ext);
        auto direct = loadModel(path);
        QVERIFY(direct.ok());
        QCOMPARE(printGraph(*s.graph(0)), printGraph(**direct));
      }
    }
  }

  void failedLoadKeepsThePreviousModel() {
    QTemporaryDir dir;
    std::string broken = dir.filePath("broken.fbir").toStdString();
    std::ofstream(broken) << "graph @g opset 17 {\n  input %x : f32[2\n";
    Session s;
    QVERIFY(s.load(sample("mlp.onnx")).ok());
    QVERIFY(s.setPipeline("canonicalize,fuse").ok());
    QVERIFY(s.step().ok());
    const std::string before = printGraph(*s.current().graph);
    const uint64_t gen = s.generation();
    Status st = s.load(broken);
    QVERIFY(!st.ok());
    QVERIFY2(st.error().message().find("broken.fbir") != std::string::npos,
             st.error().message().c_str());
    QCOMPARE(s.displayName(), std::string("mlp.onnx"));
    QCOMPARE(s.snapshotCount(), size_t(2));
    QCOMPARE(s.currentIndex(), size_t(1));
    QCOMPARE(s.generation(), gen);
    QCOMPARE(printGraph(*s.current().graph), before);
    QVERIFY(!s.load(dir.filePath("missing.onnx").toStdString()).ok());
  }

  void steppingMatchesThePassManager() {
    Session s;
    QVERIFY(s.load(sample("resnet_block.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QCOMPARE(s.pipeline().size(), size_t(4));
    auto model = loadModel(sample("resnet_block.onnx"));
    QVERIFY(model.ok());
    PipelineResult ref = PassManager().run(std::move(model).value(), *parsePipeline(kTeachingPipeline));
    QVERIFY(!ref.error);
    QCOMPARE(ref.snapshots.size(), size_t(5));

    for (size_t k = 1; k <= 4; ++k) {
      QVERIFY(s.canStep());
      auto r = s.step();
      QVERIFY(r.ok());
      QCOMPARE(*r, k);
      QCOMPARE(printGraph(*s.current().graph), printGraph(*ref.snapshots[k].graph));
    }
    QVERIFY(!s.canStep());
    QVERIFY(!s.step().ok());
    // Back and forward move between computed snapshots without recomputing them.
    auto fused = s.graph(4);
    QVERIFY(s.back());
    QVERIFY(s.back());
    QCOMPARE(s.currentIndex(), size_t(2));
    QVERIFY(s.canStep());
    QCOMPARE(*s.step(), size_t(3));
    QVERIFY(s.forward());
    QVERIFY(!s.forward());
    QCOMPARE(s.graph(4).get(), fused.get());
    s.reset();
    QCOMPARE(s.snapshotCount(), size_t(1));
    QCOMPARE(s.currentIndex(), size_t(0));
    QVERIFY(s.runToEnd().ok());
    QCOMPARE(s.currentIndex(), size_t(4));
    QCOMPARE(printGraph(*s.graph(4)), printGraph(*ref.snapshots[4].graph));
  }

  void changeSetOfFoldBatchNormIsTheFoldedConvs() {
    Session s;
    QVERIFY(s.load(sample("resnet_block.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runToEnd().ok());
    const Graph& before = *s.graph(2);
    const Graph& after = *s.graph(3);
    QCOMPARE(countOp(before, OpKind::BatchNormalization), size_t(2));
    QCOMPARE(countOp(after, OpKind::BatchNormalization), size_t(0));
    GraphDiff d = s.structuralDiff(2, 3);
    QCOMPARE(d.removed.size(), size_t(2));
    for (NodeId id : d.removed)
      QCOMPARE(before.findNode(id)->op(), OpKind::BatchNormalization);
    // The highlighted set, derived by hand: each folded BatchNormalization's producer (the Conv
    // that absorbed it) and its consumers (now reading the Conv directly).
    std::set<NodeId> expected;
    for (NodeId id : d.removed) {
      const Node* bn = before.findNode(id);
      expected.insert(bn->input(0)->producer()->id());
      for (const Use& u : bn->output(0)->uses())
        expected.insert(u.user->id());
    }
    std::vector<NodeId> changed = s.changedByStep(3);
    QCOMPARE(std::set<NodeId>(changed.begin(), changed.end()), expected);
    QCOMPARE(changed.size(), size_t(4));
    for (NodeId id : d.removed) {
      const Node* conv = after.findNode(before.findNode(id)->input(0)->producer()->id());
      QCOMPARE(conv->op(), OpKind::Conv);
      QVERIFY(std::count(conv->provenance().begin(), conv->provenance().end(), id) == 1);
    }
    QVERIFY(s.summary(3).summary.find("fold-batchnorm") == 0);
    QCOMPARE(s.summary(3).stats.nodes + 2, s.summary(2).stats.nodes);
    QVERIFY(s.changedByStep(0).empty());
  }

  /// A one-shot command keeps only the pipeline's result: the imported graph (and the weights
  /// only it holds, replaced by fold-batchnorm) is released, and nothing is left to step.
  void droppingTheHistoryReleasesEarlierSnapshots() {
    Session s;
    QVERIFY(s.load(sample("resnet_block.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runPipeline().ok());
    const size_t last = s.snapshotCount() - 1;
    QVERIFY(last >= 3);
    std::weak_ptr<const Graph> imported = s.graph(0);
    std::shared_ptr<const Graph> result = s.graph(last);
    const ModelStats stats = s.summary(last).stats;
    s.dropHistory();
    QCOMPARE(s.snapshotCount(), size_t(1));
    QCOMPARE(s.graph(0), result);
    QVERIFY(imported.expired());
    QVERIFY(!s.canStep());
    QCOMPARE(s.summary(0).stats.nodes, stats.nodes);
    QCOMPARE(countOp(*s.graph(0), OpKind::BatchNormalization), size_t(0));
  }

  void editingThePipelineDropsLaterSnapshots() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runToEnd().ok());
    QCOMPARE(s.snapshotCount(), size_t(5));
    s.removeStep(2); // fold-batchnorm
    QCOMPARE(s.pipelineString(), std::string("canonicalize,fold-constants,fuse"));
    QCOMPARE(s.snapshotCount(), size_t(3));
    QCOMPARE(s.currentIndex(), size_t(2));
    s.insertStep(0, PipelineStep{"dce", {}});
    QCOMPARE(s.snapshotCount(), size_t(1));
    s.moveStep(0, 3);
    QCOMPARE(s.pipelineString(), std::string("canonicalize,fold-constants,fuse,dce"));
    QVERIFY(s.setStepOptions(2, "").ok());
    QVERIFY(!s.setStepOptions(9, "").ok());
    // Replacing the pipeline keeps the snapshots of the unchanged prefix.
    QVERIFY(s.runToEnd().ok());
    QVERIFY(s.setPipeline("canonicalize,fold-constants,cse").ok());
    QCOMPARE(s.snapshotCount(), size_t(3));
    QVERIFY(!s.setPipeline("canonicalize,no-such-pass").ok());
    QCOMPARE(s.pipeline().size(), size_t(3));
    QVERIFY(s.setPipeline("O2").ok());
    QVERIFY(s.pipeline().size() > 2);
  }

  void staleStepResultsAreDropped() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    auto job = s.prepareStep();
    QVERIFY(job.has_value());
    auto snap = runStepJob(*job);
    QVERIFY(snap.ok());
    s.insertStep(0, PipelineStep{"dce", {}}); // the user edited the pipeline meanwhile
    QVERIFY(!s.commitStep(*job, *snap));
    QCOMPARE(s.snapshotCount(), size_t(1));
    auto fresh = s.prepareStep();
    QVERIFY(fresh.has_value());
    QCOMPARE(fresh->step.passName, std::string("dce"));
    auto freshSnap = runStepJob(*fresh);
    QVERIFY(freshSnap.ok());
    QVERIFY(s.commitStep(*fresh, *freshSnap));
    QCOMPARE(s.currentIndex(), size_t(1));
    QVERIFY(!s.commitStep(*fresh, *freshSnap)); // the same result twice is stale too
  }

  void statsAgreeWithTheCostModel() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runToEnd().ok());
    for (size_t i = 0; i < s.snapshotCount(); ++i) {
      SnapshotSummary st = s.summary(i);
      ModelStats ms = computeModelStats(*s.graph(i));
      QCOMPARE(st.stats.nodes, ms.nodes);
      QCOMPARE(st.stats.flops, ms.flops);
      QCOMPARE(st.stats.params, ms.params);
      QCOMPARE(st.stats.peakActivationBytes, peakActivationBytes(*s.graph(i)));
      QCOMPARE(st.label, i == 0 ? std::string("imported") : s.pipeline()[i - 1].str());
    }
    QVERIFY(s.summary(4).stats.nodes < s.summary(0).stats.nodes);
    QVERIFY(s.summary(4).stats.bytesMoved < s.summary(0).stats.bytesMoved); // fusion saves memory traffic
  }

  void textAndNumericDiffs() {
    Session s;
    QVERIFY(s.load(sample("resnet_block.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runToEnd().ok());
    QVERIFY(s.textDiff(1, 1).empty());
    std::string td = s.textDiff(2, 3);
    QVERIFY(td.find("--- snapshot 2") == 0);
    QVERIFY(td.find("-  %") != std::string::npos);
    QVERIFY(td.find("BatchNormalization") != std::string::npos);

    auto nd = s.numericDiff(0, 4, /*seed=*/7);
    QVERIFY2(nd.ok(), nd.ok() ? "" : nd.error().message().c_str());
    QVERIFY(nd->ok());
    QVERIFY(!nd->values.empty());
    // The output comparison equals running both graphs by hand.
    auto inputs = makeRandomInputs(*s.graph(0), 7);
    QVERIFY(inputs.ok());
    auto ra = interpret(*s.graph(0), *inputs);
    auto rb = interpret(*s.graph(4), *inputs);
    QVERIFY(ra.ok() && rb.ok());
    TensorComparison c = compareTensors(ra->outputs[0], rb->outputs[0], Tolerance{});
    const ValueComparison* out = nullptr;
    for (const ValueComparison& v : nd->values)
      if (v.match == ValueMatch::GraphOutput)
        out = &v;
    QVERIFY(out);
    QCOMPARE(out->maxAbs, c.maxAbs);
    QVERIFY(!s.numericDiff(0, 9).ok());
  }

  void inspectsNodesAndConstants() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    const Graph& g = *s.graph(0);
    const Node* conv = nullptr;
    for (const auto& n : g.nodes())
      if (n->op() == OpKind::Conv && !conv)
        conv = n.get();
    QVERIFY(conv);
    auto ins = inspectNode(s, 0, conv->id());
    QVERIFY(ins.has_value());
    QCOMPARE(ins->op, std::string("Conv"));
    QCOMPARE(ins->inputs.size(), conv->numInputs());
    QCOMPARE(ins->inputs[0].kind, std::string("input"));
    QCOMPARE(ins->inputs[1].kind, std::string("constant"));
    QCOMPARE(ins->outputs[0].type, conv->output(0)->type().str());
    QCOMPARE(ins->outputs[0].consumers.size(), size_t(1));
    QCOMPARE(ins->flops, nodeCost(*conv).flops);
    QVERIFY(ins->flops > 0 && ins->intensity > 0);
    bool hasPads = false;
    for (const auto& [k, v] : ins->attributes)
      if (k == "pads")
        hasPads = v == "[1, 1, 1, 1]";
    QVERIFY(hasPads);

    // Constant statistics against a direct computation.
    const Value* w = conv->input(1);
    const Tensor& t = w->constantData();
    double sum = 0, mn = 1e300, mx = -1e300;
    for (int64_t i = 0; i < t.numElements(); ++i) {
      double x = t.getAsDouble(i);
      sum += x;
      mn = std::min(mn, x);
      mx = std::max(mx, x);
    }
    double mean = sum / double(t.numElements());
    double var = 0;
    for (int64_t i = 0; i < t.numElements(); ++i)
      var += (t.getAsDouble(i) - mean) * (t.getAsDouble(i) - mean);
    QVERIFY(!ins->constants.empty());
    const ConstantStats& cs = ins->constants[0];
    QCOMPARE(cs.name, w->name());
    QCOMPARE(cs.elements, t.numElements());
    QCOMPARE(cs.min, mn);
    QCOMPARE(cs.max, mx);
    QVERIFY(std::abs(cs.mean - mean) < 1e-12);
    QVERIFY(std::abs(cs.stddev - std::sqrt(var / double(t.numElements()))) < 1e-12);
    int64_t total = 0;
    for (int64_t h : cs.histogram)
      total += h;
    QCOMPARE(total, t.numElements());
    QCOMPARE(cs.preview.size(), size_t(16));
    QCOMPARE(cs.preview[3], t.getAsDouble(3));
    QVERIFY(!inspectNode(s, 0, 99999).has_value());
    QVERIFY(!inspectNode(s, 5, conv->id()).has_value());
  }

  /// The inspector names an If's and a Loop's bodies and what feeds and leaves each of them.
  void inspectsControlFlowBodies() {
    Session s;
    QVERIFY(s.load(sample("control_flow.onnx")).ok());
    const Graph& g = *s.graph(0);
    const Node* loop = nullptr;
    const Node* ifNode = nullptr;
    for (const auto& n : g.nodes()) {
      if (n->op() == OpKind::Loop)
        loop = n.get();
      if (n->op() == OpKind::If)
        ifNode = n.get();
    }
    QVERIFY(loop && ifNode);
    auto ifIns = inspectNode(s, 0, ifNode->id());
    QVERIFY(ifIns.has_value());
    QCOMPARE(ifIns->bodies.size(), size_t(2));
    QCOMPARE(ifIns->bodies[0].role, std::string("then_branch"));
    QCOMPARE(ifIns->bodies[1].role, std::string("else_branch"));
    QCOMPARE(ifIns->bodies[0].inputs[0].second, "capture of %" + ifNode->input(1)->name());
    QCOMPARE(ifIns->bodies[0].outputs[0].second, std::string("result 0 (%branch_out)"));
    auto loopIns = inspectNode(s, 0, loop->id());
    QVERIFY(loopIns.has_value());
    QCOMPARE(loopIns->bodies.size(), size_t(1));
    const BodyInspection& body = loopIns->bodies[0];
    QCOMPARE(body.inputs.size(), size_t(4));
    QCOMPARE(body.inputs[0].second, std::string("iteration number"));
    QCOMPARE(body.inputs[2].second, std::string("carried value 0 (starts as %branch_out)"));
    QCOMPARE(body.inputs[3].second, std::string("capture of %w"));
    QCOMPARE(body.outputs[0].second, std::string("condition of the next iteration"));
    QCOMPARE(body.outputs[2].second, std::string("scan output 0, stacked into %steps"));
  }

  void provenanceLinksPointToEarlierSnapshots() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runToEnd().ok());
    const Graph& fused = *s.graph(4);
    const Node* group = nullptr;
    for (const auto& n : fused.nodes())
      if (n->body() && !group)
        group = n.get();
    QVERIFY(group);
    auto ins = inspectNode(s, 4, group->id());
    QVERIFY(ins.has_value());
    QCOMPARE(ins->bodyNodes, group->body()->numNodes());
    QCOMPARE(ins->provenance.size(), group->provenance().size());
    QVERIFY(!ins->provenance.empty());
    for (const ProvenanceLink& link : ins->provenance) {
      QVERIFY2(link.snapshot.has_value(), link.text.c_str());
      QVERIFY(*link.snapshot < 4);
      QVERIFY(s.graph(*link.snapshot)->findNode(link.id));
      // It is the latest such snapshot: the next one no longer has it at top level or at all.
      QVERIFY(link.text.find("#" + std::to_string(link.id)) == 0);
    }
  }

  void irTextMapsNodesToLines() {
    Session s;
    QVERIFY(s.load(sample("small_cnn.onnx")).ok());
    QVERIFY(s.setPipeline(kTeachingPipeline).ok());
    QVERIFY(s.runToEnd().ok());
    for (size_t snap : {size_t(0), size_t(4)}) {
      const Graph& g = *s.graph(snap);
      IrText ir = irTextOf(g);
      QCOMPARE(ir.text, printGraph(g));
      QCOMPARE(ir.nodeOfLine.size(), size_t(std::count(ir.text.begin(), ir.text.end(), '\n')));
      QStringList lines = QString::fromStdString(ir.text).split('\n');
      for (const auto& n : g.nodes()) {
        QVERIFY(ir.lineOfNode.count(n->id()));
        size_t line = ir.lineOfNode.at(n->id());
        QCOMPARE(ir.nodeAtLine(line), n->id());
        QString text = lines[int(line)];
        QVERIFY2(text.contains(QString(" = %1(").arg(opName(n->op()))), qPrintable(text));
        QVERIFY(text.contains(QString("  #%1").arg(n->id())));
        if (n->body())
          for (const auto& inner : n->body()->nodes())
            QVERIFY(ir.lineOfNode.at(inner->id()) > line);
      }
      QCOMPARE(ir.nodeAtLine(0), NodeId(0)); // the graph header
    }
  }

  void adoptsModelsLoadedElsewhere() {
    Session s;
    QVERIFY(s.load(sample("mlp.onnx")).ok());
    QVERIFY(s.setPipeline("canonicalize,fuse").ok());
    QVERIFY(s.runToEnd().ok());
    const uint64_t gen = s.generation();
    auto loaded = loadModel(sample("small_cnn.fbir"));
    QVERIFY(loaded.ok());
    std::shared_ptr<const Graph> g(std::move(loaded).value());
    s.adoptLoadedModel(g, sample("small_cnn.fbir"));
    QVERIFY(s.generation() > gen);
    QCOMPARE(s.snapshotCount(), size_t(1));
    QCOMPARE(s.graph(0).get(), g.get());
    QCOMPARE(s.displayName(), std::string("small_cnn.fbir"));
    QCOMPARE(s.modelPath(), sample("small_cnn.fbir"));
    QCOMPARE(s.pipelineString(), std::string("canonicalize,fuse")); // the pipeline stays
    QVERIFY(s.canStep());
    s.loadGraph(std::make_unique<Graph>("empty"), "generated");
    QCOMPARE(s.displayName(), std::string("generated"));
    QVERIFY(s.modelPath().empty());
  }

  void passDescriptionsForStudents() {
    auto passes = passDescriptions();
    QCOMPARE(passes.size(), allPasses().size());
    bool found = false;
    for (const PassDescription& p : passes) {
      QVERIFY(!p.summary.empty());
      QVERIFY(p.description.size() > p.summary.size());
      if (p.name == "fold-batchnorm")
        found = !p.analysis;
    }
    QVERIFY(found);
  }
};

QTEST_GUILESS_MAIN(TestSession)
#include "TestSession.moc"
