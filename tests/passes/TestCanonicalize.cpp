// Tests of canonicalize: every rewrite pattern, the cases it must leave alone, and numeric
// equivalence on hand-written IR, the samples, random graphs and a torchvision export.
#include "PassTestUtil.h"

#include "core/ModelIO.h"
#include "core/Verifier.h"

#include <QtTest/QtTest>

#include <filesystem>

using namespace fb;
using namespace fb::test;

namespace {

/// Runs canonicalize on `ir` and checks the result verifies and computes the same outputs.
std::shared_ptr<const Graph> canonicalize(const std::string& ir, const Graph** before = nullptr) {
  static std::unique_ptr<Graph> input;
  input = parseIr(ir);
  if (before)
    *before = input.get();
  PipelineResult r = runPipeline(*input, "canonicalize");
  if (r.error) {
    qWarning("canonicalize failed: %s", r.error->message().c_str());
    return nullptr;
  }
  if (!verify(r.finalGraph()).ok())
    return nullptr;
  double diff = maxOutputDifference(*input, r.finalGraph());
  if (diff != 0) {
    qWarning("canonicalize changed the outputs by %g", diff);
    return nullptr;
  }
  return r.snapshots.back().graph;
}

/// The producer op of the graph's output `i`, or Identity when it is an input/constant (tests
/// only ask for node outputs).
OpKind outputOp(const Graph& g, size_t i = 0) {
  const Node* p = g.outputs()[i]->producer();
  return p ? p->op() : OpKind::Identity;
}

} // namespace

class TestCanonicalize : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void removesIdentity() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  %a : f32[2, 3] = Identity(%x)  #1
  %b : f32[2, 3] = Relu(%a)  #2
  %y : f32[2, 3] = Identity(%b)  #3
  output %y
}
)");
    QVERIFY(g);
    QCOMPARE(g->numNodes(), size_t(1));
    QCOMPARE(outputOp(*g), OpKind::Relu);
    // The output keeps its name: the Relu's result took it over.
    QCOMPARE(g->outputs()[0]->name(), std::string("y"));
    QCOMPARE(g->nodes()[0]->input(0)->name(), std::string("x"));
  }

  void keepsOutputNameOfInputPassthrough() {
    // Removing this Identity would make the output the input %x, renaming the model's output.
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  %y : f32[2, 3] = Identity(%x)  #1
  %r : f32[2, 3] = Relu(%x)  #2
  %z : f32[2, 3] = Identity(%r)  #3
  output %y, %z, %r
}
)");
    QVERIFY(g);
    QCOMPARE(g->outputs()[0]->name(), std::string("y"));
    QCOMPARE(g->outputs()[1]->name(), std::string("z"));
    QCOMPARE(g->outputs()[2]->name(), std::string("r"));
    QCOMPARE(countOps(*g, OpKind::Identity), size_t(2));
  }

  void removesInferenceDropout() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  const %ratio : f32[] = dense<[0.5]>
  const %off : bool[] = dense<[false]>
  const %zero : f32[] = dense<[0.0]>
  const %on : bool[] = dense<[true]>
  %a : f32[2, 3] = Dropout(%x)  #1
  %b : f32[2, 3] = Dropout(%a, %ratio, %off)  #2
  %c : f32[2, 3] = Dropout(%b, %zero, %on)  #4
  %y : f32[2, 3] = Neg(%c)  #3
  output %y
}
)");
    // Inference mode, and training mode with ratio 0 (a Swin export's): nothing is dropped.
    QVERIFY(g);
    QCOMPARE(countOps(*g, OpKind::Dropout), size_t(0));
    QCOMPARE(g->numNodes(), size_t(1));
  }

  void keepsTrainingDropoutAndUsedMask() {
    auto input = parseIr(R"(graph @g {
  input %x : f32[2, 3]
  input %t : bool[]
  input %ratio : f32[]
  %b : f32[2, 3] = Dropout(%x, %ratio, %t)  #2
  %c : f32[2, 3], %m : bool[2, 3] = Dropout(%b)  #3
  output %c, %m
}
)");
    PipelineResult r = runPipeline(*input, "canonicalize");
    QVERIFY(!r.error);
    // training_mode known only at run time, and a mask someone reads: both stay.
    QCOMPARE(countOps(r.finalGraph(), OpKind::Dropout), size_t(2));
    QVERIFY(!r.snapshots[1].record->changed);
  }

  void removesNoOpDataMovement() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  const %same : i64[2] = dense<[2, 3]>
  const %inferred : i64[2] = dense<[-1, 3]>
  const %ones : i64[2] = dense<[1, 3]>
  const %pads : i64[4] = dense<[0, 0, 0, 0]>
  const %starts : i64[1] = dense<[0]>
  const %ends : i64[1] = dense<[9223372036854775807]>
  const %axes : i64[1] = dense<[1]>
  %a : f32[2, 3] = Reshape(%x, %same)  #1
  %b : f32[2, 3] = Reshape(%a, %inferred)  #2
  %c : f32[2, 3] = Transpose(%b) {perm = [0, 1]}  #3
  %d : f32[2, 3] = Cast(%c) {to = 1}  #4
  %e : f32[2, 3] = Pad(%d, %pads)  #5
  %f : f32[2, 3] = Slice(%e, %starts, %ends, %axes)  #6
  %g : f32[2, 3] = Expand(%f, %ones)  #7
  %y : f32[2, 3] = Relu(%g)  #8
  output %y
}
)");
    QVERIFY(g);
    QCOMPARE(g->numNodes(), size_t(1));
    QCOMPARE(outputOp(*g), OpKind::Relu);
    QCOMPARE(g->nodes()[0]->input(0)->name(), std::string("x"));
  }

  void keepsDataMovementThatChangesSomething() {
    const char* ir = R"(graph @g {
  input %x : f32[2, 3]
  const %shape : i64[2] = dense<[3, 2]>
  const %big : i64[3] = dense<[4, 2, 3]>
  const %shift : i64[4] = dense<[0, 1, 0, -1]>
  const %rs : i64[1] = dense<[-1]>
  const %re : i64[1] = dense<[-9223372036854775807]>
  const %ra : i64[1] = dense<[1]>
  const %rstep : i64[1] = dense<[-1]>
  %a : f32[3, 2] = Reshape(%x, %shape)  #1
  %b : f32[3, 2] = Transpose(%x) {perm = [1, 0]}  #2
  %c : f16[2, 3] = Cast(%x) {to = 10}  #3
  %d : f32[2, 3] = Pad(%x, %shift)  #4
  %e : f32[2, 3] = Slice(%x, %rs, %re, %ra, %rstep)  #5
  %f : f32[4, 2, 3] = Expand(%x, %big)  #6
  output %a, %b, %c, %d, %e, %f
}
)";
    auto input = parseIr(ir);
    PipelineResult r = runPipeline(*input, "canonicalize");
    QVERIFY(!r.error);
    QCOMPARE(r.finalGraph().numNodes(), size_t(6));
    QVERIFY(!r.snapshots[1].record->changed);
    // The same-typed Pad and the reversing Slice really change the data.
    QVERIFY(maxOutputDifference(*input, r.finalGraph()) == 0);
  }

  void algebraicIdentities() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  const %one : f32[] = dense<[1.0]>
  const %zero : f32[3] = dense<[0.0, 0.0, 0.0]>
  %a : f32[2, 3] = Mul(%x, %one)  #1
  %b : f32[2, 3] = Mul(%one, %a)  #2
  %c : f32[2, 3] = Add(%b, %zero)  #3
  %d : f32[2, 3] = Add(%zero, %c)  #4
  %e : f32[2, 3] = Sub(%d, %zero)  #5
  %f : f32[2, 3] = Div(%e, %one)  #6
  %y : f32[2, 3] = Sigmoid(%f)  #7
  output %y
}
)");
    QVERIFY(g);
    QCOMPARE(g->numNodes(), size_t(1));
    QCOMPARE(outputOp(*g), OpKind::Sigmoid);
    QCOMPARE(g->nodes()[0]->input(0)->name(), std::string("x"));
  }

  void keepsNonIdentities() {
    auto input = parseIr(R"(graph @g {
  input %x : f32[3]
  const %one : f32[] = dense<[1.0]>
  const %zero : f32[] = dense<[0.0]>
  const %ones : f32[2, 3] = dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]>
  const %two : f32[] = dense<[2.0]>
  %a : f32[3] = Sub(%zero, %x)  #1
  %b : f32[3] = Div(%one, %x)  #2
  %c : f32[2, 3] = Mul(%x, %ones)  #3
  %d : f32[3] = Mul(%x, %two)  #4
  output %a, %b, %c, %d
}
)");
    PipelineResult r = runPipeline(*input, "canonicalize");
    QVERIFY(!r.error);
    // 0-x, 1/x, x*1 that broadcasts x to [2, 3], and x*2 all stay.
    QCOMPARE(r.finalGraph().numNodes(), size_t(4));
    QVERIFY(!r.snapshots[1].record->changed);
  }

  void doubleNegation() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  %a : f32[2, 3] = Neg(%x)  #1
  %b : f32[2, 3] = Neg(%a)  #2
  %c : f32[2, 3] = Neg(%b)  #3
  %y : f32[2, 3] = Relu(%c)  #4
  output %y
}
)");
    QVERIFY(g);
    // Three negations leave one.
    QCOMPARE(countOps(*g, OpKind::Neg), size_t(1));
    QCOMPARE(g->numNodes(), size_t(2));
  }

  void composesTransposes() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3, 4]
  %a : f32[3, 2, 4] = Transpose(%x) {perm = [1, 0, 2]}  #1
  %b : f32[3, 4, 2] = Transpose(%a) {perm = [0, 2, 1]}  #2
  %y : f32[3, 4, 2] = Relu(%b)  #3
  output %y
}
)");
    QVERIFY(g);
    QCOMPARE(countOps(*g, OpKind::Transpose), size_t(1));
    const Node* t = g->nodes()[0].get();
    QCOMPARE(t->input(0)->name(), std::string("x"));
    QCOMPARE(*t->attrs().getInts("perm", {}), (std::vector<int64_t>{1, 2, 0}));
    // The provenance of the merged transpose names both originals.
    QCOMPARE(t->provenance(), (std::vector<NodeId>{1, 2}));

    // A transpose and its inverse cancel (two iterations: compose, then drop the identity).
    auto h = canonicalize(R"(graph @g {
  input %x : f32[2, 3, 4]
  %a : f32[3, 4, 2] = Transpose(%x) {perm = [1, 2, 0]}  #1
  %b : f32[2, 3, 4] = Transpose(%a) {perm = [2, 0, 1]}  #2
  %c : f32[4, 3, 2] = Transpose(%b)  #3
  %d : f32[2, 3, 4] = Transpose(%c)  #4
  %y : f32[2, 3, 4] = Relu(%d)  #5
  output %y
}
)");
    QVERIFY(h);
    QCOMPARE(h->numNodes(), size_t(1));
    QCOMPARE(outputOp(*h), OpKind::Relu);
  }

  void composesReshapes() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3, 4]
  const %s1 : i64[2] = dense<[6, 4]>
  const %s2 : i64[2] = dense<[4, -1]>
  %a : f32[6, 4] = Reshape(%x, %s1)  #1
  %b : f32[4, 6] = Reshape(%a, %s2)  #2
  %y : f32[4, 6] = Relu(%b)  #3
  output %y
}
)");
    QVERIFY(g);
    QCOMPARE(countOps(*g, OpKind::Reshape), size_t(1));
    QCOMPARE(g->nodes()[0]->input(0)->name(), std::string("x"));

    // A 0 in the outer shape copies a dim of the intermediate: composing would change meaning.
    auto input = parseIr(R"(graph @g {
  input %x : f32[2, 3, 4]
  const %s1 : i64[2] = dense<[6, 4]>
  const %s2 : i64[2] = dense<[0, 4]>
  %a : f32[6, 4] = Reshape(%x, %s1)  #1
  %b : f32[6, 4] = Reshape(%a, %s2)  #2
  %y : f32[6, 4] = Relu(%b)  #3
  output %y
}
)");
    PipelineResult r = runPipeline(*input, "canonicalize");
    QVERIFY(!r.error);
    // The second Reshape is a no-op (same type) and goes; the first stays.
    QCOMPARE(countOps(r.finalGraph(), OpKind::Reshape), size_t(1));
    QCOMPARE(maxOutputDifference(*input, r.finalGraph()), 0.0);
  }

  void eliminatesZeroSizeTensors() {
    auto g = canonicalize(R"(graph @g {
  input %x : f32[2, 3]
  input %e : f32[2, 0]
  %r : f32[2, 0] = Relu(%e)  #1
  %c : f32[2, 3] = Concat(%x, %r) {axis = 1}  #2
  %y : f32[2, 3] = Neg(%c)  #3
  output %y
}
)");
    QVERIFY(g);
    QCOMPARE(countOps(*g, OpKind::Relu), size_t(0));
    // The empty operand is dropped, and then the Concat of one operand too.
    QCOMPARE(countOps(*g, OpKind::Concat), size_t(0));
    QCOMPARE(g->numNodes(), size_t(1));
    QCOMPARE(g->nodes()[0]->input(0)->name(), std::string("x"));
  }

  void keepsConcatOfTensorsEmptyOffAxis() {
    // Both operands are empty along dim 0; the axis sizes still add up to 8.
    auto g = canonicalize(R"(graph @g {
  input %a : f32[0, 3]
  input %b : f32[0, 5]
  %c : f32[0, 8] = Concat(%a, %b) {axis = 1}  #1
  output %c
}
)");
    QVERIFY(g);
    QCOMPARE(g->outputs()[0]->type().str(), std::string("f32[0, 8]"));
    QCOMPARE(g->nodes()[0]->numInputs(), size_t(2));
  }

  void samplesStayEqual() {
    std::string failure = checkSamplesUnchanged("canonicalize", 0, /*keepOutputNames=*/true);
    QVERIFY2(failure.empty(), failure.c_str());
  }

  void randomGraphsStayEqual() {
    size_t simplified = 0;
    for (uint64_t seed = 1; seed <= 150; ++seed) {
      auto g = randomRewriteGraph(seed);
      PipelineResult r = runPipeline(*g, "canonicalize");
      const std::string tag = "seed " + std::to_string(seed);
      QVERIFY2(!r.error, (tag + ": " + errorText(r)).c_str());
      QVERIFY2(verify(r.finalGraph()).ok(), tag.c_str());
      QVERIFY2(maxOutputDifference(*g, r.finalGraph(), 2) == 0, tag.c_str());
      for (size_t i = 0; i < g->outputs().size(); ++i)
        QCOMPARE(r.finalGraph().outputs()[i]->name(), g->outputs()[i]->name());
      simplified += r.snapshots[1].record->changed;
      // A second run finds nothing left: canonicalize reached its fixed point.
      PipelineResult again = runPipeline(r.finalGraph(), "canonicalize");
      QVERIFY2(!again.snapshots[1].record->changed, tag.c_str());
    }
    QVERIFY(simplified > 100);
  }

  void dropsConvTapsThatReadOnlyPadding() {
    auto dense = [](int n, const std::string& special = "") {
      std::string t = "dense<[";
      for (int e = 0; e < n; ++e)
        t += (e ? ", " : "") +
             (e == 0 && !special.empty() ? special : std::to_string(0.1 * (e % 7 - 3)));
      return t + "]>";
    };
    auto conv = [&](const std::string& xShape, const std::string& yShape,
                    const std::string& w0 = "") {
      return "graph @g {\n  input %x : f32[" + xShape +
             "]\n  const %w : f32[4, 2, 3, 3] = " + dense(72, w0) +
             "\n  const %b : f32[4] = " + dense(4) + "\n  %y : f32[" + yShape +
             "] = Conv(%x, %w, %b) {dilations = [3, 3], pads = [3, 3, 3, 3]}  #1\n  output %y\n}\n";
    };
    auto rewritten = [](const std::string& ir, std::unique_ptr<Graph>& in, bool finite = true) {
      in = parseIr(ir);
      PipelineResult r = runPipeline(*in, "canonicalize");
      QVERIFY2(!r.error, errorText(r).c_str());
      QVERIFY(verify(r.finalGraph()).ok());
      // The dropped products were weight x 0; what is left sums in another grouping.
      QVERIFY(!finite || maxOutputDifference(*in, r.finalGraph()) <= 1e-6);
      in = r.finalGraph().clone();
    };
    // ASPP on a small map: with dilation 3 and pads 3, a 3-row input is read only by the
    // kernel's centre row; along the 8 columns every tap reads data.
    std::unique_ptr<Graph> g;
    rewritten(conv("1, 2, 3, 8", "1, 4, 3, 8"), g);
    const Node* n = g->nodes()[0].get();
    QCOMPARE(n->input(1)->type().staticSizes(), (std::vector<int64_t>{4, 2, 1, 3}));
    QCOMPARE(*n->attrs().getInts("pads", {}), (std::vector<int64_t>{0, 3, 0, 3}));
    QCOMPARE(*n->attrs().getInts("dilations", {}), (std::vector<int64_t>{1, 3}));
    // A 3x3 map: only the centre tap, a 1x1 convolution.
    rewritten(conv("1, 2, 3, 3", "1, 4, 3, 3"), g);
    n = g->nodes()[0].get();
    QCOMPARE(n->input(1)->type().staticSizes(), (std::vector<int64_t>{4, 2, 1, 1}));
    QCOMPARE(*n->attrs().getInts("pads", {}), (std::vector<int64_t>{0, 0, 0, 0}));
    QCOMPARE(*n->attrs().getInts("dilations", {}), (std::vector<int64_t>{1, 1}));
    // An infinite weight on a tap that reads padding makes NaN (inf x 0): the kernel stays.
    rewritten(conv("1, 2, 3, 3", "1, 4, 3, 3", "inf"), g, false);
    QCOMPARE(g->nodes()[0]->input(1)->type().staticSizes(), (std::vector<int64_t>{4, 2, 3, 3}));
    // A 7x7 map: every tap reads data somewhere.
    rewritten(conv("1, 2, 7, 7", "1, 4, 7, 7"), g);
    QCOMPARE(g->nodes()[0]->input(1)->type().staticSizes(), (std::vector<int64_t>{4, 2, 3, 3}));
  }

  /// A zero Pad of the spatial dims becomes the padding of the Conv or AveragePool after it
  /// (Inception-v3's branch pools); the cases whose meaning would change keep their Pad.
  void foldsZeroPadIntoWindows() {
    auto graph = [](const std::string& padAttrs, const std::string& pads, const std::string& op,
                    const std::string& opAttrs, const std::string& outShape,
                    bool padIsOutput = false) {
      std::string w = op == "Conv" ? "  const %w : f32[2, 2, 3, 3] = dense<[0.5, -0.25, 0.125, "
                                     "1.0, -1.0, 0.75, 0.3, 0.2, -0.1, 0.4, 0.6, -0.7, 0.9, "
                                     "-0.3, 0.1, 0.2, 0.35, -0.45, 0.5, 0.25, -0.125, 0.8, 0.7, "
                                     "-0.6, 0.05, 0.15, -0.2, 0.3, 0.1, 0.9, -0.8, 0.6, 0.4, "
                                     "-0.2, 0.1, 0.7]>\n"
                                   : "";
      return "graph @g {\n  input %x : f32[1, 2, 4, 5]\n  const %pads : i64[8] = dense<[" + pads +
             "]>\n" + w + "  %p : f32[1, 2, 6, 7] = Pad(%x, %pads)" + padAttrs +
             "  #1\n  %y : f32[" + outShape + "] = " + op + (op == "Conv" ? "(%p, %w)" : "(%p)") +
             " {" + opAttrs + "}  #2\n  output %y\n" + (padIsOutput ? "  output %p\n" : "") + "}\n";
    };
    const std::string around = "0, 0, 1, 1, 0, 0, 1, 1";
    auto check = [&](const std::string& ir, bool folds, std::vector<int64_t> pads = {}) {
      auto g = canonicalize(ir);
      QVERIFY(g);
      bool hasPad = false;
      for (const auto& n : g->nodes())
        hasPad = hasPad || n->op() == OpKind::Pad;
      QCOMPARE(hasPad, !folds);
      if (folds) {
        const Node* window = g->outputs()[0]->producer();
        QCOMPARE(*window->attrs().getInts("pads", {}), pads);
        if (window->op() == OpKind::AveragePool)
          QCOMPARE(*window->attrs().getInt("count_include_pad", 0), int64_t(1));
      }
    };
    check(graph("", around, "AveragePool", "kernel_shape = [3, 3]", "1, 2, 4, 5"), true,
          {1, 1, 1, 1});
    check(graph("", around, "AveragePool",
                "kernel_shape = [3, 3], strides = [2, 2], pads = [1, 0, 0, 1], "
                "count_include_pad = 1",
                "1, 2, 3, 3"),
          true, {2, 1, 1, 2});
    check(graph("", "0, 0, 2, 0, 0, 0, 0, 2", "Conv", "kernel_shape = [3, 3], pads = [0, 1, 0, 1]",
                "1, 2, 4, 7"),
          true, {2, 1, 0, 3});
    // Left alone: a reflected or non-zero border, padding on the channels, a pool that would
    // count the two kinds of padding differently or hang past the input, a max, a Pad that is
    // also a graph output.
    check(graph(" {mode = \"reflect\"}", around, "AveragePool", "kernel_shape = [3, 3]",
                "1, 2, 4, 5"),
          false);
    check(graph("", "0, 0, 1, 1, 0, 0, 1, 1", "AveragePool",
                "kernel_shape = [3, 3], pads = [1, 1, 1, 1]", "1, 2, 6, 7"),
          false);
    check(graph("", around, "AveragePool", "kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1",
                "1, 2, 3, 4"),
          false);
    check(graph("", around, "MaxPool", "kernel_shape = [3, 3]", "1, 2, 4, 5"), false);
    check(graph("", around, "AveragePool", "kernel_shape = [3, 3]", "1, 2, 4, 5", true), false);
    auto channels = parseIr("graph @g {\n  input %x : f32[1, 2, 4, 5]\n  const %pads : i64[8] = "
                            "dense<[0, 1, 1, 1, 0, 0, 1, 1]>\n  %p : f32[1, 3, 6, 7] = Pad(%x, "
                            "%pads)  #1\n  %y : f32[1, 3, 4, 5] = AveragePool(%p) {kernel_shape = "
                            "[3, 3]}  #2\n  output %y\n}\n");
    PipelineResult r = runPipeline(*channels, "canonicalize");
    QVERIFY(!r.error);
    QCOMPARE(r.finalGraph().outputs()[0]->producer()->input(0)->producer()->op(), OpKind::Pad);
  }

  void torchvisionResnet18() {
    const std::string path = zooModel("resnet18_bn");
    QVERIFY2(std::filesystem::exists(path),
             (path + " is missing: the zoo_export ctest exports it (needs python3-torch)").c_str());
    auto loaded = loadModel(path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message().c_str());
    const Graph& g = **loaded;
    // torch shares equal initializers through Identity nodes, so how many there are depends on
    // the weights (72 with identity BatchNorm statistics, 32 with calibrated ones): every one
    // of them must go, and nothing else.
    const size_t identities = countOps(g, OpKind::Identity);
    QVERIFY(identities >= 20);
    PipelineResult r = runPipeline(g, "canonicalize");
    QVERIFY(!r.error);
    QCOMPARE(countOps(r.finalGraph(), OpKind::Identity), size_t(0));
    QCOMPARE(r.finalGraph().numNodes(), g.numNodes() - identities);
    QCOMPARE(r.finalGraph().outputs()[0]->name(), g.outputs()[0]->name());
    QCOMPARE(maxOutputDifference(g, r.finalGraph(), 1, {{"N", 1}}), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestCanonicalize)
#include "TestCanonicalize.moc"
