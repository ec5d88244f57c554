// Activations that exporters write as several elementwise ops (GELU's erf form as torch and
// Hugging Face write it, GPT-2's tanh approximation) after a MatMul become one GEMM epilogue
// op, computed as the interpreter computes the ops; near misses (another constant, an
// intermediate used elsewhere) are left to loop nests and stay correct.
#include "PipelineCompare.h"

#include "codegen/loops/Lower.h"
#include "core/ShapeInference.h"
#include "core/text/IrParser.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::cg;

namespace {

/// A dense<[...]> literal of n varied values.
std::string dense(int n, double scale) {
  std::string t = "dense<[";
  for (int e = 0; e < n; ++e)
    t += (e ? ", " : "") + std::to_string(scale * double(e % 11 - 5));
  return t + "]>";
}

/// The graph: y = activation(x·W + b) for x [2, 7, 37], W [37, 50], with `body` the
/// activation's nodes from %h to %y (and any extra outputs).
std::string matmulThen(const std::string& consts, const std::string& body,
                       const std::string& outputs = "%y") {
  return R"(graph @g opset 17 {
  input %x : f32[2, 7, 37]
  const %w : f32[37, 50] = )" +
         dense(37 * 50, 0.02) + R"(
  const %b : f32[50] = )" +
         dense(50, 0.05) + "\n" + consts + R"(
  %m : f32[2, 7, 50] = MatMul(%x, %w)
  %h : f32[2, 7, 50] = Add(%m, %b)
)" + body +
         "  output " + outputs + "\n}\n";
}

/// torch.nn.GELU(): x / sqrt(2) -> Erf -> + 1 -> x * . -> * 0.5, on %h.
const char* kGeluConstants = R"(  const %sqrt2 : f32[] = dense<[1.41421354]>
  const %one : f32[] = dense<[1.0]>
  const %half : f32[] = dense<[0.5]>)";
const char* kGeluBody = R"(  %d : f32[2, 7, 50] = Div(%h, %sqrt2)
  %e : f32[2, 7, 50] = Erf(%d)
  %a : f32[2, 7, 50] = Add(%e, %one)
  %p : f32[2, 7, 50] = Mul(%h, %a)
  %y : f32[2, 7, 50] = Mul(%p, %half)
)";

/// The epilogue kinds of every GEMM kernel of `g` after -O3.
std::vector<EpilogueOp::Kind> epilogueKinds(const Graph& g) {
  std::vector<EpilogueOp::Kind> kinds;
  auto steps = namedPipeline("O3");
  if (!steps.ok())
    return kinds;
  PipelineResult pr = PassManager().run(g.clone(), *steps);
  if (pr.error)
    return kinds;
  auto kernels = lowerGraph(pr.finalGraph(), LowerOptions());
  if (!kernels.ok())
    return kinds;
  for (const Kernel& k : *kernels)
    if (k.gemm)
      for (const EpilogueOp& op : k.gemm->epilogue)
        kinds.push_back(op.kind);
  return kinds;
}

} // namespace

class TestActivationEpilogues : public QObject {
  Q_OBJECT

  void check(const std::string& ir, std::vector<EpilogueOp::Kind> want) {
    auto g = parseGraph(ir, "<activation>");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QVERIFY(inferShapes(**g).ok());
    for (int threads : {1, 2}) {
      std::string r = test::compareWithInterpreter(**g, "O3", 3, threads);
      QVERIFY2(r.empty(), r.c_str());
    }
    QCOMPARE(epilogueKinds(**g), want);
  }

private Q_SLOTS:
  void geluAsTorchExportsIt() {
    // torch.nn.GELU(): x / sqrt(2) -> Erf -> + 1 -> x * . -> * 0.5
    check(matmulThen(kGeluConstants, kGeluBody), {EpilogueOp::Kind::Gelu});
  }

  void geluWithTheHalfFirst() {
    // 0.5 * x * (1 + erf(x * 0.7071)), the constants as one-element tensors.
    check(matmulThen(R"(  const %rsqrt2 : f32[1] = dense<[0.707106769]>
  const %one : f32[1] = dense<[1.0]>
  const %half : f32[1] = dense<[0.5]>)",
                     R"(  %hh : f32[2, 7, 50] = Mul(%half, %h)
  %d : f32[2, 7, 50] = Mul(%h, %rsqrt2)
  %e : f32[2, 7, 50] = Erf(%d)
  %a : f32[2, 7, 50] = Add(%one, %e)
  %y : f32[2, 7, 50] = Mul(%hh, %a)
)"),
          {EpilogueOp::Kind::Gelu});
  }

  void geluTanhApproximation() {
    // GPT-2: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    check(matmulThen(R"(  const %three : f32[] = dense<[3.0]>
  const %k : f32[] = dense<[0.044715]>
  const %s : f32[] = dense<[0.797884583]>
  const %one : f32[] = dense<[1.0]>
  const %half : f32[] = dense<[0.5]>)",
                     R"(  %c : f32[2, 7, 50] = Pow(%h, %three)
  %ck : f32[2, 7, 50] = Mul(%c, %k)
  %in : f32[2, 7, 50] = Add(%h, %ck)
  %u : f32[2, 7, 50] = Mul(%in, %s)
  %t : f32[2, 7, 50] = Tanh(%u)
  %a : f32[2, 7, 50] = Add(%t, %one)
  %hh : f32[2, 7, 50] = Mul(%h, %half)
  %y : f32[2, 7, 50] = Mul(%hh, %a)
)"),
          {EpilogueOp::Kind::GeluTanh});
  }

  void nearMissesAreNotGelu() {
    // Divided by 1.5 instead of sqrt(2): a different function, computed by loop nests.
    check(matmulThen(R"(  const %c : f32[] = dense<[1.5]>
  const %one : f32[] = dense<[1.0]>
  const %half : f32[] = dense<[0.5]>)",
                     R"(  %d : f32[2, 7, 50] = Div(%h, %c)
  %e : f32[2, 7, 50] = Erf(%d)
  %a : f32[2, 7, 50] = Add(%e, %one)
  %p : f32[2, 7, 50] = Mul(%h, %a)
  %y : f32[2, 7, 50] = Mul(%p, %half)
)"),
          {});
    // The Erf's result is also an output of the model: the subgraph has two exits.
    check(matmulThen(kGeluConstants, kGeluBody, "%y, %e"), {});
  }
};

QTEST_GUILESS_MAIN(TestActivationEpilogues)
#include "TestActivationEpilogues.moc"
