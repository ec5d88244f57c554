// Tests of the pass manager: pipeline parsing, failure handling, verification, limits,
// fixed-point iteration, reproducers, the numeric check and snapshot memory sharing.
#include "PassTestUtil.h"

#include "core/ModelIO.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"
#include "passes/RewriteUtil.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <sstream>

using namespace fb;
using namespace fb::test;

namespace {

/// Three Identities in a row, then x + 1.
const char* kChain = R"(graph @chain opset 17 {
  input %x : f32[2, 3]
  const %one : f32[] = dense<[1.0]>
  %a : f32[2, 3] = Identity(%x)  #1
  %b : f32[2, 3] = Identity(%a)  #2
  %c : f32[2, 3] = Identity(%b)  #3
  %y : f32[2, 3] = Add(%c, %one)  #4
  output %y
}
)";

/// kChain with a symbolic batch: plan-memory fails on it at run time (it needs static shapes),
/// after canonicalize has succeeded.
const char* kDynamicChain = R"(graph @chain opset 17 {
  input %x : f32[N, 3]
  const %one : f32[] = dense<[1.0]>
  %a : f32[N, 3] = Identity(%x)  #1
  %b : f32[N, 3] = Identity(%a)  #2
  %c : f32[N, 3] = Identity(%b)  #3
  %r : f32[N, 3] = Relu(%c)  #4
  %y : f32[N, 3] = Add(%r, %one)  #5
  output %y
}
)";

/// A pass that leaves an invalid graph: it gives a node output a dtype its op cannot produce.
class CorruptTypePass : public Pass {
public:
  std::string name() const override { return "corrupt-type"; }
  std::string summary() const override { return "test only: corrupts a type"; }
  std::string description() const override { return "Gives the last node output the type i32."; }
  Expected<bool> run(Graph& graph, PassContext&) override {
    Value* v = graph.nodes().back()->output(0);
    TensorType t = v->type();
    t.dtype = DType::I32;
    v->setType(t);
    return true;
  }
};

/// A pass that changes the graph and then fails: the manager must drop the half-done work.
class FailHalfwayPass : public Pass {
public:
  std::string name() const override { return "fail-halfway"; }
  std::string summary() const override { return "test only: edits, then fails"; }
  std::string description() const override { return "Removes an Identity, then fails."; }
  Expected<bool> run(Graph& graph, PassContext&) override {
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::Identity) {
        Node* node = n.get();
        replaceValue(graph, node->output(0), node->input(0));
        graph.eraseNode(node);
        break;
      }
    return makeError("fail-halfway gave up\nsecond line of the message");
  }
};

/// Removes one Identity per run and asks to be run to a fixed point.
class RemoveOneIdentityPass : public Pass {
public:
  std::string name() const override { return "remove-one-identity"; }
  std::string summary() const override { return "test only"; }
  std::string description() const override { return "Removes the first Identity."; }
  bool runToFixedPoint() const override { return true; }
  Expected<bool> run(Graph& graph, PassContext& ctx) override {
    ++m_runs;
    for (const auto& n : graph.nodes())
      if (n->op() == OpKind::Identity) {
        Node* node = n.get();
        replaceValue(graph, node->output(0), node->input(0));
        graph.eraseNode(node);
        ctx.addStatistic("identities removed");
        return true;
      }
    return false;
  }
  int m_runs = 0;
};

/// Changes every f32 constant's first element by +0.5 (a deliberate miscompile).
class ShiftConstantPass : public Pass {
public:
  std::string name() const override { return "shift-constant"; }
  std::string summary() const override { return "test only"; }
  std::string description() const override { return "Adds 0.5 to a constant."; }
  Expected<bool> run(Graph& graph, PassContext&) override {
    for (Value* c : graph.constants()) {
      Tensor t = c->constantData();
      if (t.dtype() != DType::F32)
        continue;
      Tensor copy(DType::F32, t.sizes());
      std::span<float> dst = copy.mutableData<float>();
      std::span<const float> src = t.data<float>();
      for (size_t i = 0; i < dst.size(); ++i)
        dst[i] = src[i] + (i == 0 ? 0.5f : 0.f);
      c->setConstantData(copy);
    }
    return true;
  }
};

/// The resident set size of this process in bytes, from /proc/self/status.
int64_t residentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoll(line.substr(6)) * 1024;
  return -1;
}

/// A graph with one 40 MB weight used through a chain that the passes rewrite.
std::unique_ptr<Graph> makeBigWeightGraph() {
  auto g = std::make_unique<Graph>("big");
  Value* x = g->addInput("x", TensorType::of(DType::F32, {1, 2500}));
  Tensor w(DType::F32, {2500, 4000});
  std::span<float> p = w.mutableData<float>();
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = float(i % 7) * 0.125f; // touch every page
  Value* wv = g->addConstant("w", w);
  // Passes rewrite around the weight: an Identity to remove, a duplicate MatMul to merge, a
  // constant expression to fold, a transpose pair to cancel.
  Value* small = g->addConstant("small", Tensor::fromVector<float>({4000}, std::vector<float>(4000, 1.f)));
  Node* id = g->addNode(OpKind::Identity, {wv}, 1, {"w_copy"});
  Node* mm = g->addNode(OpKind::MatMul, {x, id->output(0)}, 1, {"mm"});
  Node* mm2 = g->addNode(OpKind::MatMul, {x, wv}, 1, {"mm2"});
  Node* twice = g->addNode(OpKind::Add, {small, small}, 1, {"twice"});
  Node* add = g->addNode(OpKind::Add, {mm->output(0), mm2->output(0)}, 1, {"sum"});
  Node* scaled = g->addNode(OpKind::Mul, {add->output(0), twice->output(0)}, 1, {"y"});
  g->addOutput(scaled->output(0));
  Status st = inferShapes(*g);
  assert(st.ok() && "the big test graph is well typed");
  (void)st;
  return g;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

class TestPassManager : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void parsesPipelines() {
    auto steps = parsePipeline(" canonicalize , dce,cse ");
    QVERIFY(steps.ok());
    QCOMPARE(steps->size(), size_t(3));
    QCOMPARE((*steps)[0].passName, std::string("canonicalize"));
    QCOMPARE((*steps)[2].passName, std::string("cse"));
    QVERIFY((*steps)[1].options.values().empty());

    auto empty = parsePipeline("");
    QVERIFY(empty.ok());
    QVERIFY(empty->empty());
  }

  void parsesOptions() {
    auto steps = parsePipeline("dce,prune{sparsity=0.25, score = l2},cse{ }");
    QVERIFY2(steps.ok(), steps.ok() ? "" : steps.error().message().c_str());
    QCOMPARE(steps->size(), size_t(3));
    const PassOptions& o = (*steps)[1].options;
    QCOMPARE(o.getString("sparsity", ""), std::string("0.25"));
    QCOMPARE(o.getString("score", ""), std::string("l2"));
    QCOMPARE(*o.getDouble("sparsity", 0), 0.25);
    QCOMPARE(*o.getInt("missing", 42), int64_t(42));
    QVERIFY(!o.getInt("score", 0).ok());
    QVERIFY(o.getInt("score", 0).error().message().find("option score expects an integer") !=
            std::string::npos);
    // Without a default of its own, a getter needs the value (the pass manager fills declared
    // defaults in before a pass runs).
    QVERIFY(!o.getInt("missing").ok());
    QCOMPARE((*steps)[1].str(), std::string("prune{score=l2,sparsity=0.25}"));
    QCOMPARE((*steps)[2].str(), std::string("cse"));
    // A step prints back as the text it was parsed from.
    auto again = parsePipeline((*steps)[1].str());
    QVERIFY(again.ok());
    QCOMPARE((*again)[0].options.values(), o.values());

    PassOptions b;
    b.set("on", "true");
    b.set("off", "0");
    b.set("bad", "maybe");
    QCOMPARE(*b.getBool("on", false), true);
    QCOMPARE(*b.getBool("off", true), false);
    QVERIFY(!b.getBool("bad", false).ok());
    b.set("d", "0.25");
    QCOMPARE(*b.getDouble("d", 0), 0.25);
    b.set("d", "1x");
    QVERIFY(!b.getDouble("d", 0).ok());
  }

  void rejectsBadPipelines() {
    auto unknown = parsePipeline("dce,superoptimize{a=1,b=x}");
    QVERIFY(!unknown.ok());
    const std::string& m = unknown.error().message();
    QVERIFY2(m.find("unknown pass 'superoptimize'") != std::string::npos, m.c_str());
    // The message lists every registered pass.
    for (const PassEntry& e : allPasses())
      QVERIFY2(m.find(e.name) != std::string::npos, (e.name + " missing in: " + m).c_str());

    auto unclosed = parsePipeline("fold-constants{max-elements=4");
    QVERIFY(!unclosed.ok());
    QVERIFY(unclosed.error().message().find("closing '}'") != std::string::npos);
    auto noValue = parsePipeline("fold-constants{max-elements}");
    QVERIFY(!noValue.ok());
    QVERIFY(noValue.error().message().find("must be key=value") != std::string::npos);
    auto emptyName = parsePipeline("dce,,cse");
    QVERIFY(!emptyName.ok());
    QVERIFY(emptyName.error().message().find("empty pass name") != std::string::npos);
    auto noComma = parsePipeline("dce cse");
    QVERIFY(!noComma.ok());
    QVERIFY(noComma.error().message().find("expected ','") != std::string::npos);
    QVERIFY(!namedPipeline("O7").ok());
    for (const char* level : {"O0", "O1", "O2", "O3"})
      QVERIFY(namedPipeline(level).ok());
  }

  void failingPassKeepsLastGoodSnapshot() {
    auto g = parseIr(kDynamicChain);
    // plan-memory fails on the symbolic batch after canonicalize succeeded.
    PipelineResult r = runPipeline(*g, "canonicalize,plan-memory,cse");
    QVERIFY(r.error.has_value());
    const std::string& m = r.error->message();
    QVERIFY2(m.find("pass 'plan-memory'") != std::string::npos, m.c_str());
    QVERIFY2(m.find("needs static shapes") != std::string::npos, m.c_str());
    QCOMPARE(r.error->kind(), ErrorKind::SymbolicShape);
    QCOMPARE(r.snapshots.size(), size_t(2));
    QCOMPARE(r.snapshots.back().record->pass, std::string("canonicalize"));
    QCOMPARE(countOps(r.finalGraph(), OpKind::Identity), size_t(0));
    QVERIFY(verify(r.finalGraph()).ok());
  }

  /// Options are declared: the parser refuses an undeclared option or a value the declaration
  /// does not accept before any pass runs, naming the pass, the option and what it accepts.
  void rejectsUndeclaredOptionsBeforeRunning() {
    auto typo = parsePipeline("canonicalize,dce,cse,fold-constants,fuse{max-group-sise=4}");
    QVERIFY(!typo.ok());
    const std::string& m = typo.error().message();
    QVERIFY2(m.find("pass 'fuse' has no option 'max-group-sise'") != std::string::npos, m.c_str());
    QVERIFY2(m.find("did you mean 'max-group-size'") != std::string::npos, m.c_str());
    QVERIFY2(m.find("max-group-size: an integer in [1, 100000], default 16") != std::string::npos,
             m.c_str());

    auto none = parsePipeline("dce{foo=1}");
    QVERIFY(!none.ok());
    QVERIFY2(none.error().message().find("pass 'dce' takes no options, got 'foo'") !=
                 std::string::npos,
             none.error().message().c_str());

    struct BadValue {
      const char* pipeline;
      const char* message;
    };
    for (const BadValue& b : {
             BadValue{"fold-constants{max-elements=lots}",
                      "option 'max-elements' expects an integer in [0, 1073741824], got 'lots'"},
             BadValue{"fuse{max-group-size=0}", "expects an integer in [1, 100000], got '0'"},
             BadValue{"plan-memory{in-place=maybe}", "expects true or false, got 'maybe'"},
             BadValue{"layout{to=nchw16c}", "expects one of nchw8c, nhwc, got 'nchw16c'"},
             BadValue{"prune{sparsity=1.5}", "expects a number in [0, 1], got '1.5'"},
             BadValue{"prune{sparsity=nan}", "expects a number in [0, 1], got 'nan'"},
             BadValue{"quantize{percentile=50}", "expects a number in (50, 100], got '50'"},
         }) {
      auto r = parsePipeline(b.pipeline);
      QVERIFY2(!r.ok(), b.pipeline);
      QVERIFY2(r.error().message().find(b.message) != std::string::npos,
               r.error().message().c_str());
    }
    // Bounds are inclusive unless declared otherwise.
    QVERIFY(parsePipeline("prune{sparsity=1}").ok());
    QVERIFY(parsePipeline("quantize{percentile=100}").ok());

    // A step built in code (not parsed) is checked by the pass manager before the graph is
    // copied, and the input stays as it was.
    auto g = parseIr(kChain);
    PipelineStep bad{"fuse", {}};
    bad.options.set("max-group-sise", "4");
    auto snap = PassManager().applyStep(*g, bad);
    QVERIFY(!snap.ok());
    QVERIFY(snap.error().message().find("max-group-sise") != std::string::npos);
  }

  /// Every pass's declared defaults are accepted by its own declaration, and every option of
  /// every pass has help text.
  void declaredOptionsAreConsistent() {
    for (const PassEntry& e : allPasses()) {
      auto pass = e.create();
      for (const PassOptionSpec& o : pass->options()) {
        QVERIFY2(!o.help.empty(), (e.name + "." + o.name).c_str());
        if (!o.defaultValue.empty())
          QVERIFY2(o.validate(o.defaultValue).ok(), (e.name + "." + o.name).c_str());
        PipelineStep step{e.name, {}};
        step.options.set(o.name, o.defaultValue.empty() ? "x" : o.defaultValue);
        QVERIFY2(validateStep(step, *pass).ok(), step.str().c_str());
      }
    }
  }

  void failingPassLeavesInputUnchanged() {
    auto g = parseIr(kChain);
    const std::string before = printGraph(*g);
    FailHalfwayPass pass;
    auto snap = PassManager().applyPass(*g, pass, PipelineStep{"fail-halfway", {}});
    QVERIFY(!snap.ok());
    QVERIFY(snap.error().message().find("pass 'fail-halfway'") != std::string::npos);
    QCOMPARE(printGraph(*g), before);
  }

  void refinementCatchesBrokenPass() {
    auto g = parseIr(kChain);
    const std::string before = printGraph(*g);
    CorruptTypePass pass;
    auto snap = PassManager().applyPass(*g, pass, PipelineStep{"corrupt-type", {}});
    QVERIFY(!snap.ok());
    const std::string& m = snap.error().message();
    QVERIFY2(m.find("refining types after pass 'corrupt-type'") != std::string::npos, m.c_str());
    QVERIFY2(m.find("was typed i32[2, 3] but now infers as f32[2, 3]") != std::string::npos, m.c_str());
    QCOMPARE(printGraph(*g), before);
    // Refinement is part of every pass's contract, not an optional check: with the verifier
    // off, a type that contradicts inference is still refused.
    PassManagerOptions off;
    off.verifyEach = false;
    QVERIFY(!PassManager(off).applyPass(*g, pass, PipelineStep{"corrupt-type", {}}).ok());
    // An empty step name falls back to the pass's own name.
    auto named = PassManager().applyPass(*g, pass, PipelineStep{});
    QVERIFY(!named.ok());
    QVERIFY(named.error().message().find("'corrupt-type'") != std::string::npos);
  }

  /// Node names stay unique through every pass: a pass that names a new node after the node it
  /// replaces (as lowering and quantization do) gets a suffixed name, inside fused bodies too.
  void nodeNamesStayUnique() {
    auto g = parseIr(kChain);
    for (const auto& n : g->nodes())
      const_cast<Node*>(n.get())->setName("same");
    class CopyNamePass : public Pass {
    public:
      std::string name() const override { return "copy-name"; }
      std::string summary() const override { return "test only"; }
      std::string description() const override { return "Adds a Relu named like the last node."; }
      Expected<bool> run(Graph& graph, PassContext&) override {
        Node* last = graph.nodes().back().get();
        Node* relu = graph.addNode(OpKind::Relu, {last->output(0)}, 1, {}, last->name());
        graph.setOutput(0, relu->output(0));
        FB_TRY(inferNodeShapes(*relu));
        return true;
      }
    } pass;
    auto snap = PassManager().applyPass(*g, pass, PipelineStep{});
    QVERIFY2(snap.ok(), snap.ok() ? "" : snap.error().message().c_str());
    std::set<std::string> names;
    for (const auto& n : snap->graph->nodes())
      QVERIFY2(names.insert(n->name()).second, n->name().c_str());
    QCOMPARE(names.size(), size_t(5));
    QVERIFY(names.count("same") && names.count("same_1") && names.count("same_4"));
  }

  /// Precision only grows: a size stays, a symbol may become a size, dtype and rank never change.
  void precisionOrder() {
    const TensorType sym(DType::F32, {Dim::symbol("N"), Dim(3)});
    const TensorType unk(DType::F32, {Dim::unknown(), Dim(3)});
    const TensorType fixed = TensorType::of(DType::F32, {2, 3});
    QVERIFY(isAtLeastAsPrecise(fixed, sym));
    QVERIFY(isAtLeastAsPrecise(fixed, unk));
    QVERIFY(isAtLeastAsPrecise(sym, unk));
    QVERIFY(isAtLeastAsPrecise(sym, sym));
    QVERIFY(!isAtLeastAsPrecise(sym, fixed));
    QVERIFY(!isAtLeastAsPrecise(unk, sym));
    QVERIFY(!isAtLeastAsPrecise(TensorType::of(DType::F32, {4, 3}), fixed));
    QVERIFY(!isAtLeastAsPrecise(TensorType::of(DType::I32, {2, 3}), fixed));
    QVERIFY(!isAtLeastAsPrecise(TensorType::of(DType::F32, {2, 3, 1}), fixed));
  }

  void passLimitAndDisabled() {
    auto g = parseIr(kChain);
    auto steps = parsePipeline("canonicalize,dce,cse,infer-shapes");
    QVERIFY(steps.ok());
    auto passNames = [](const PipelineResult& r) {
      std::vector<std::string> names;
      for (size_t i = 1; i < r.snapshots.size(); ++i)
        names.push_back(r.snapshots[i].record->pass);
      return names;
    };
    PassManagerOptions limit;
    limit.passLimit = 2;
    PipelineResult r1 = PassManager(limit).run(g->clone(), *steps);
    QVERIFY(!r1.error);
    QCOMPARE(passNames(r1), (std::vector<std::string>{"canonicalize", "dce"}));

    PassManagerOptions disabled;
    disabled.disabled = {"dce", "infer-shapes"};
    PipelineResult r2 = PassManager(disabled).run(g->clone(), *steps);
    QCOMPARE(passNames(r2), (std::vector<std::string>{"canonicalize", "cse"}));

    // Disabled passes do not count against the limit.
    PassManagerOptions both;
    both.disabled = {"canonicalize"};
    both.passLimit = 1;
    PipelineResult r3 = PassManager(both).run(g->clone(), *steps);
    QCOMPARE(passNames(r3), (std::vector<std::string>{"dce"}));
    QCOMPARE(countOps(r3.finalGraph(), OpKind::Identity), size_t(3));

    PassManagerOptions zero;
    zero.passLimit = 0;
    PipelineResult r4 = PassManager(zero).run(g->clone(), *steps);
    QCOMPARE(r4.snapshots.size(), size_t(1));

    // afterPass sees every new snapshot, in order.
    std::vector<std::string> seen;
    PassManagerOptions cb;
    cb.afterPass = [&](const Snapshot& s) { seen.push_back(s.record->pass); };
    PipelineResult r5 = PassManager(cb).run(g->clone(), *steps);
    QCOMPARE(seen, passNames(r5));
    QCOMPARE(seen.size(), size_t(4));
  }

  void fixedPointIteration() {
    auto g = parseIr(kChain);
    RemoveOneIdentityPass pass;
    auto snap = PassManager().applyPass(*g, pass, PipelineStep{"remove-one-identity", {}});
    QVERIFY(snap.ok());
    // Three runs remove the three Identities, the fourth finds nothing.
    QCOMPARE(pass.m_runs, 4);
    QCOMPARE(snap->record->iterations, 4);
    QVERIFY(snap->record->changed);
    QCOMPARE(snap->record->statistics.at("identities removed"), 3.0);
    QCOMPARE(countOps(*snap->graph, OpKind::Identity), size_t(0));
    QCOMPARE(snap->record->nodesBefore, int64_t(4));
    QCOMPARE(snap->record->nodesAfter, int64_t(1));
    QCOMPARE(snap->graph->outputs()[0]->name(), std::string("y"));

    // The bound stops a pass that keeps changing.
    PassManagerOptions bounded;
    bounded.maxFixedPointIterations = 2;
    RemoveOneIdentityPass pass2;
    auto snap2 = PassManager(bounded).applyPass(*g, pass2, PipelineStep{"remove-one-identity", {}});
    QVERIFY(snap2.ok());
    QCOMPARE(pass2.m_runs, 2);
    QCOMPARE(countOps(*snap2->graph, OpKind::Identity), size_t(1));

    // A pass that does not ask for a fixed point runs once.
    auto once = PassManager().applyStep(*g, PipelineStep{"dce", {}});
    QVERIFY(once.ok());
    QCOMPARE(once->record->iterations, 1);
    QVERIFY(!once->record->changed);
  }

  void writesParseableReproducer() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto g = parseIr(kDynamicChain);
    PassManagerOptions opts;
    opts.reproducerDir = dir.path().toStdString();
    auto steps = parsePipeline("dce,plan-memory{in-place=false},cse");
    QVERIFY(steps.ok());
    PipelineResult r = PassManager(opts).run(g->clone(), *steps);
    QVERIFY(r.error.has_value());
    QVERIFY(!r.reproducerPath.empty());
    QVERIFY(std::filesystem::exists(r.reproducerPath));
    const std::string text = readFile(r.reproducerPath);
    QVERIFY2(text.find("// pipeline: dce,plan-memory{in-place=false},cse") != std::string::npos,
             text.c_str());
    QVERIFY(text.find("--passes 'plan-memory{in-place=false}'") != std::string::npos);
    QVERIFY(text.find("needs static shapes") != std::string::npos);
    // The file is a valid model: the failing pass's input, i.e. the last good snapshot.
    auto parsed = parseGraphFile(r.reproducerPath);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().message().c_str());
    QCOMPARE(printGraph(**parsed), printGraph(r.finalGraph()));
  }

  void numericCheckRecordsMaxAbs() {
    auto g = parseIr(kChain);
    PassManagerOptions opts;
    opts.numericCheck = true;
    auto snap = PassManager(opts).applyStep(*g, PipelineStep{"canonicalize", {}});
    QVERIFY(snap.ok());
    QVERIFY(snap->record->numericMaxAbs.has_value());
    QCOMPARE(*snap->record->numericMaxAbs, 0.0);

    // y = x + 1 becomes x + 1.5: every output element moves by exactly 0.5.
    ShiftConstantPass shift;
    auto bad = PassManager(opts).applyPass(*g, shift, PipelineStep{"shift-constant", {}});
    QVERIFY(bad.ok());
    QVERIFY(bad->record->numericMaxAbs.has_value());
    QCOMPARE(*bad->record->numericMaxAbs, 0.5);

    // Off by default.
    auto plain = PassManager().applyPass(*g, shift, PipelineStep{"shift-constant", {}});
    QVERIFY(!plain->record->numericMaxAbs.has_value());
  }

  void snapshotsShareConstantStorage_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("generated 40 MB weight") << QString();
    QTest::newRow("torchvision resnet18") << QString::fromStdString(zooModel("resnet18_bn"));
  }

  void snapshotsShareConstantStorage() {
    QFETCH(QString, model);
    const int64_t rssStart = residentBytes();
    std::unique_ptr<Graph> input;
    if (model.isEmpty()) {
      input = makeBigWeightGraph();
    } else {
      QVERIFY2(std::filesystem::exists(model.toStdString()),
               qPrintable(model + " is missing: the zoo_export ctest exports it"));
      auto loaded = loadModel(model.toStdString());
      QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message().c_str());
      input = std::move(loaded).value();
    }
    size_t weightBytes = 0;
    for (const Value* c : input->constants())
      weightBytes += c->constantData().byteSize();
    QVERIFY(weightBytes > 30u << 20);
    const int64_t rssLoaded = residentBytes();

    auto steps = parsePipeline("infer-shapes,canonicalize,dce,cse,fold-constants,canonicalize,"
                               "dce,cse,infer-shapes,dce");
    QVERIFY(steps.ok());
    QCOMPARE(steps->size(), size_t(10));
    PipelineResult r = PassManager().run(std::move(input), *steps);
    QVERIFY2(!r.error, r.error ? r.error->message().c_str() : "");
    QCOMPARE(r.snapshots.size(), size_t(11));
    const int64_t rssAfter = residentBytes();

    // Every constant that a snapshot carries over from snapshot 0 shares its storage.
    std::map<std::string, const Tensor*> original;
    for (const Value* c : r.snapshots[0].graph->constants())
      original[c->name()] = &c->constantData();
    size_t sharedBig = 0;
    size_t copiedBytes = 0;
    for (size_t k = 1; k < r.snapshots.size(); ++k) {
      for (const Value* c : r.snapshots[k].graph->constants()) {
        auto it = original.find(c->name());
        if (it == original.end()) {
          copiedBytes += c->constantData().byteSize(); // made by a pass (folded)
          continue;
        }
        QVERIFY2(c->constantData().sharesStorageWith(*it->second),
                 ("snapshot " + std::to_string(k) + " copied " + c->name()).c_str());
        sharedBig += c->constantData().byteSize() >= (64u << 10);
      }
    }
    QVERIFY(sharedBig >= (model.isEmpty() ? 10u : 100u));
    QVERIFY(copiedBytes < weightBytes / 100);

    const double mb = 1024.0 * 1024.0;
    const int64_t growth = rssAfter - rssLoaded;
    std::printf("weights %.1f MB; RSS %.1f MB at start, %.1f MB loaded, %.1f MB after 10 passes "
                "(growth %.1f MB for 10 snapshots)\n",
                double(weightBytes) / mb, double(rssStart) / mb, double(rssLoaded) / mb,
                double(rssAfter) / mb, double(growth) / mb);
    QVERIFY(rssLoaded > 0 && rssAfter > 0);
    // Ten copies would be 10x the weights; sharing keeps all snapshots below one copy.
    QVERIFY2(growth < int64_t(weightBytes), "snapshots copied constant data");
  }

  void describesRecords() {
    PassRecord r;
    r.pass = "fold-batchnorm";
    r.summary = "folded 20 BatchNormalization into Conv";
    r.nodesBefore = 70;
    r.nodesAfter = 50;
    QCOMPARE(describeRecord(r),
             std::string("fold-batchnorm: folded 20 BatchNormalization into Conv; -20 nodes"));
    PassRecord s;
    s.pass = "x";
    s.statistics = {{"b", 2}, {"a", 1}};
    s.nodesBefore = 3;
    s.nodesAfter = 5;
    QCOMPARE(describeRecord(s), std::string("x: a 1, b 2; +2 nodes"));
    PassRecord t;
    t.pass = "dce";
    QCOMPARE(describeRecord(t), std::string("dce: no change"));
    t.changed = true;
    QCOMPARE(describeRecord(t), std::string("dce: changed"));

    // A real record: the three Identities of the chain.
    auto g = parseIr(kChain);
    PipelineResult run = runPipeline(*g, "canonicalize");
    QVERIFY(!run.error);
    QCOMPARE(describeRecord(*run.snapshots[1].record),
             std::string("canonicalize: applied 3 simplifications; -3 nodes"));
  }
};

QTEST_GUILESS_MAIN(TestPassManager)
#include "TestPassManager.moc"
