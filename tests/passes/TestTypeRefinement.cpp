// Types stay exact through every pass: what a pass makes static (a folded shape) refines the
// types downstream, and no pass leaves a type less precise than shape inference gives.
#include "PassTestUtil.h"

#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "core/Verifier.h"
#include "core/text/IrParser.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::test;

namespace {

/// ViT's class-token Expand: its shape is a ConstantOfShape -> Mul -> Equal -> Where chain that
/// inference cannot follow (so the Expand and everything after it are partly unknown) but
/// fold-constants turns into a constant, after which every type is static.
const char* kFoldedShape = R"(graph @refine opset 17 {
  input %x : f32[1, 4, 8]
  const %rank : i64[1] = dense<[3]>
  const %minus1 : i64[3] = dense<[-1, -1, -1]>
  const %dims : i64[3] = dense<[1, 1, 8]>
  const %token : f32[1, 1, 8] = dense<[0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 3.0, -2.0]>
  %ones : i64[3] = ConstantOfShape(%rank) {value = dense<[1]> : i64[1]}
  %neg : i64[3] = Mul(%ones, %minus1)
  %eq : bool[3] = Equal(%dims, %neg)
  %where : i64[3] = Where(%eq, %ones, %dims)
  %tok : f32[?, ?, 8] = Expand(%token, %where)
  %cat : f32[1, ?, 8] = Concat(%tok, %x) {axis = 1}
  %y : f32[1, ?, 8] = Relu(%cat)
  output %y
}
)";

/// Every value's type in `after` is at least as precise as the same-named value's in `before`.
std::string lessPrecise(const Graph& before, const Graph& after) {
  for (const auto& n : after.nodes())
    for (const Value* out : n->outputs())
      if (const Value* old = before.findValue(out->name()))
        if (!old->isConstant() && !out->isConstant() &&
            !isAtLeastAsPrecise(out->type(), old->type()))
          return out->name() + ": " + old->type().str() + " -> " + out->type().str();
  return "";
}

std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs) {
  auto r = interpret(g, inputs);
  return r.ok() ? r->outputs : std::vector<Tensor>{};
}

} // namespace

class TestTypeRefinement : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Every -O level: the pipeline runs, the result is fully static, the outputs are unchanged.
  void everyLevelRefinesToStatic() {
    auto g = parseIr(kFoldedShape);
    QVERIFY(g);
    auto inputs = makeRandomInputs(*g, 3);
    QVERIFY(inputs.ok());
    const std::vector<Tensor> reference = run(*g, *inputs);
    QCOMPARE(reference.size(), size_t(1));
    for (const char* level : {"O1", "O2", "O3"}) {
      PipelineResult r = runPipeline(*g, level);
      QVERIFY2(!r.error, errorText(r).c_str());
      const Graph& out = r.finalGraph();
      QCOMPARE(out.outputs()[0]->type(), TensorType::of(DType::F32, {1, 5, 8}));
      for (size_t i = 1; i < r.snapshots.size(); ++i) {
        const std::string worse = lessPrecise(*r.snapshots[i - 1].graph, *r.snapshots[i].graph);
        QVERIFY2(worse.empty(), (std::string(level) + " step " + std::to_string(i) + ": " + worse).c_str());
        QVERIFY(verify(*r.snapshots[i].graph).ok());
      }
      std::vector<Tensor> got = run(out, *inputs);
      QCOMPARE(got.size(), size_t(1));
      QVERIFY(compareTensors(reference[0], got[0], Tolerance{0, 0}).ok);
    }
  }

  /// Every registered pass, alone and after fold-constants: it either runs, with types never
  /// less precise and the verifier satisfied, or refuses with its own reason (never a verifier
  /// or refinement failure).
  void everyPassKeepsTypesExact() {
    auto g = parseIr(kFoldedShape);
    QVERIFY(g);
    for (const PassEntry& e : allPasses()) {
      for (const std::string& pipeline : {e.name, "fold-constants," + e.name,
                                          "fold-constants," + e.name + ",dce"}) {
        PipelineResult r = runPipeline(*g, pipeline);
        const std::string err = errorText(r);
        QVERIFY2(err.find("verifier after") == std::string::npos &&
                     err.find("refining types") == std::string::npos,
                 (pipeline + ": " + err).c_str());
        for (size_t i = 1; i < r.snapshots.size(); ++i) {
          const std::string worse = lessPrecise(*r.snapshots[i - 1].graph, *r.snapshots[i].graph);
          QVERIFY2(worse.empty(), (pipeline + ": " + worse).c_str());
        }
        if (!r.error && pipeline.rfind("fold-constants", 0) == 0) {
          // After folding, the model's output is static whatever ran next.
          QVERIFY2(r.finalGraph().outputs()[0]->type().isStatic(), pipeline.c_str());
        }
      }
    }
  }

  /// Before this contract, fold-constants left the Expand typed f32[?, ?, 8] and the verifier
  /// stopped the pipeline; refinement is what makes the downstream types static.
  void foldConstantsAloneRefinesDownstream() {
    auto g = parseIr(kFoldedShape);
    QVERIFY(g);
    PipelineResult r = runPipeline(*g, "fold-constants");
    QVERIFY2(!r.error, errorText(r).c_str());
    const Value* tok = r.finalGraph().findValue("tok");
    QVERIFY(tok);
    QCOMPARE(tok->type(), TensorType::of(DType::F32, {1, 1, 8}));
    QCOMPARE(r.finalGraph().findValue("cat")->type(), TensorType::of(DType::F32, {1, 5, 8}));
  }
};

QTEST_GUILESS_MAIN(TestTypeRefinement)
#include "TestTypeRefinement.moc"
