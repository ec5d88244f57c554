// Compiled models against the interpreter on patterns real exports are made of: EfficientNet's
// SiLU as a GEMM epilogue, Swin's batched attention with a repeating position bias, Concats
// computed in place, and max/min reductions in vector lanes with NaN inputs.
#include "PipelineCompare.h"

#include "codegen/exec/CompiledModel.h"
#include "codegen/loops/LoopPrinter.h"
#include "codegen/loops/Lower.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "core/text/IrParser.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace fb;
using namespace fb::cg;
using namespace fb::cg::test;

class TestCpuModelPatterns : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// x·Sigmoid(x) after a Conv (EfficientNet's SiLU, either operand order of the Mul) becomes
  /// one Silu GEMM epilogue — and a depthwise conv's too — computed as the interpreter does;
  /// a Mul by the Sigmoid of something else is not mistaken for it.
  void siluEpilogues() {
    auto dense = [](int n, double scale) { return denseText(n, scale, 7); };
    const std::string graphs[] = {
        R"(graph @g opset 17 {
  input %x : f32[1, 8, 13, 13]
  const %w : f32[24, 8, 3, 3] = )" +
            dense(24 * 8 * 9, 0.02) + R"(
  const %b : f32[24] = )" +
            dense(24, 0.1) + R"(
  %c : f32[1, 24, 13, 13] = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]}
  %s : f32[1, 24, 13, 13] = Sigmoid(%c)
  %y : f32[1, 24, 13, 13] = Mul(%c, %s)
  output %y
})",
        R"(graph @g opset 17 {
  input %x : f32[2, 16, 9, 9]
  const %w : f32[16, 1, 3, 3] = )" +
            dense(16 * 9, 0.2) + R"(
  %c : f32[2, 16, 5, 5] = Conv(%x, %w) {group = 16, pads = [1, 1, 1, 1], strides = [2, 2]}
  %s : f32[2, 16, 5, 5] = Sigmoid(%c)
  %y : f32[2, 16, 5, 5] = Mul(%s, %c)
  output %y
})",
        R"(graph @g opset 17 {
  input %x : f32[1, 8, 6, 6]
  input %z : f32[1, 24, 6, 6]
  const %w : f32[24, 8, 1, 1] = )" +
            dense(24 * 8, 0.1) + R"(
  %c : f32[1, 24, 6, 6] = Conv(%x, %w)
  %s : f32[1, 24, 6, 6] = Sigmoid(%z)
  %y : f32[1, 24, 6, 6] = Mul(%c, %s)
  output %y
})"};
    for (int i = 0; i < 3; ++i) {
      auto g = parseGraph(graphs[i], "<silu>");
      QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
      QVERIFY(inferShapes(**g).ok());
      for (int threads : {1, 2}) {
        std::string r = compareWithInterpreter(**g, "O3", 3, threads);
        QVERIFY2(r.empty(), r.c_str());
      }
      auto steps = namedPipeline("O3");
      QVERIFY(steps.ok());
      PipelineResult pr = PassManager().run((*g)->clone(), *steps);
      QVERIFY(!pr.error);
      auto kernels = lowerGraph(pr.finalGraph(), LowerOptions());
      QVERIFY(kernels.ok());
      bool silu = false;
      for (const Kernel& k : *kernels)
        if (k.gemm)
          for (const EpilogueOp& op : k.gemm->epilogue)
            silu = silu || op.kind == EpilogueOp::Kind::Silu;
      QCOMPARE(silu, i < 2);
    }
  }

  /// A batched MatMul + Add whose other operand repeats over some batch dims (Swin's position
  /// bias [1, heads, 49, 49], its shifted-window mask [windows, 1, 49, 49]) stays one GEMM kernel
  /// with the operand in its epilogue; operands it cannot address (two separate runs of batch
  /// dims, a broadcast row) leave a loop nest. All match the interpreter.
  void batchedMatMulRepeatingOperands() {
    struct Case {
      const char* out;     // the MatMul's batch dims
      const char* operand; // the Add's other operand
      int64_t div, mod;    // the epilogue's repeat, or mod 0: no GEMM epilogue
    };
    const Case cases[] = {{"4, 3", "1, 3, 5, 6", 1, 3},
                          {"4, 3", "4, 1, 5, 6", 3, 4},
                          {"4, 3", "5, 6", 12, 1},
                          {"4, 3", "3, 5, 6", 1, 3},
                          {"2, 3, 4", "1, 3, 4, 5, 6", 1, 12},
                          {"2, 3, 4", "1, 3, 1, 5, 6", 4, 3},
                          {"2, 3, 4", "2, 3, 1, 5, 6", 4, 6},
                          {"2, 3, 4", "2, 1, 4, 5, 6", 0, 0},
                          {"4, 3", "1, 3, 1, 6", 0, 0}};
    for (const Case& c : cases) {
      const std::string text = std::string("graph @g opset 17 {\n  input %a : f32[") + c.out +
                               ", 5, 7]\n  input %b : f32[" + c.out + ", 7, 6]\n  input %p : f32[" +
                               c.operand + "]\n  %m : f32[" + c.out +
                               ", 5, 6] = MatMul(%a, %b)\n  %y : f32[" + c.out +
                               ", 5, 6] = Add(%m, %p)\n  output %y\n}";
      auto g = parseGraph(text, "<batched>");
      QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
      QVERIFY(inferShapes(**g).ok());
      for (int threads : {1, 2}) {
        std::string r = compareWithInterpreter(**g, "O3", 3, threads);
        QVERIFY2(r.empty(), (std::string(c.operand) + ": " + r).c_str());
      }
      auto optimized = afterPipeline(**g, "O3");
      QVERIFY(optimized.ok());
      auto kernels = lowerGraph(**optimized, LowerOptions());
      QVERIFY(kernels.ok());
      int64_t div = 0, mod = 0;
      for (const Kernel& k : *kernels)
        if (k.gemm)
          for (const EpilogueOp& op : k.gemm->epilogue)
            if (op.kind == EpilogueOp::Kind::AddTensor)
              std::tie(div, mod) = std::make_pair(op.batchDiv, op.batchMod);
      QVERIFY2(div == (c.mod ? c.div : 0) && mod == c.mod,
               (std::string(c.operand) + ": epilogue b / " + std::to_string(div) + " % " +
                std::to_string(mod))
                   .c_str());
    }
  }

  /// ReduceMax/ReduceMin over a row keep 8 partial results in vector lanes and still give the
  /// interpreter's answer for every row: a NaN in the lanes or in the tail propagates, -inf
  /// and +inf rows, signed zeros; the Softmax of a row with a NaN is NaN, as interpreted.
  void extremaKeepTheInterpretersNaNs() {
    auto g = parseGraph(R"(graph @g opset 17 {
  input %x : f32[6, 37]
  %mx : f32[6] = ReduceMax(%x) {axes = [-1], keepdims = 0}
  %mn : f32[6] = ReduceMin(%x) {axes = [-1], keepdims = 0}
  %gm : f32[6, 1] = ReduceMax(%x) {axes = [1], keepdims = 1}
  %sm : f32[6, 37] = Softmax(%x) {axis = -1}
  output %mx
  output %mn
  output %gm
  output %sm
})",
                        "<extrema>");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QVERIFY(inferShapes(**g).ok());
    std::vector<float> x(6 * 37);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(std::sin(double(i) * 0.7) * 3.0);
    const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
    x[0 * 37 + 3] = nan;  // in the vector lanes
    x[1 * 37 + 35] = nan; // in the tail
    for (int c = 0; c < 37; ++c) {
      x[size_t(2 * 37 + c)] = c % 2 ? 0.0f : -0.0f; // zeros of both signs
      x[size_t(3 * 37 + c)] = -inf;
    }
    x[4 * 37 + 20] = inf;
    x[5 * 37 + 0] = nan; // the first element
    x[5 * 37 + 36] = inf;
    std::vector<Tensor> inputs{Tensor::fromVector<float>({6, 37}, x)};
    auto ref = interpret(**g, inputs);
    QVERIFY(ref.ok());
    QVERIFY(std::isnan(ref->outputs[0].data<float>()[0]) &&
            std::isnan(ref->outputs[1].data<float>()[1]));
    for (const char* level : {"O0", "O3"}) {
      auto optimized = afterPipeline(**g, level);
      QVERIFY(optimized.ok());
      for (int llvmLevel : {0, 3}) {
        CompileOptions co;
        co.llvmOptLevel = llvmLevel;
        auto model = CompiledModel::compile(**optimized, co);
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
        auto got = (*model)->run(inputs);
        QVERIFY(got.ok());
        for (size_t o = 0; o < got->size(); ++o) {
          TensorComparison c =
              compareTensors(ref->outputs[o], (*got)[o], defaultTolerance(DType::F32));
          QVERIFY2(c.ok,
                   (std::string(level) + " output " + std::to_string(o) + ": " + c.reason).c_str());
        }
      }
    }
    // The row reductions are the lane form.
    auto optimized = afterPipeline(**g, "O3");
    QVERIFY(optimized.ok());
    auto kernels = lowerGraph(**optimized, LowerOptions());
    QVERIFY(kernels.ok());
    int laneForms = 0;
    for (const Kernel& k : *kernels)
      laneForms += printKernel(k).find("_lanes") != std::string::npos;
    QCOMPARE(laneForms, int(kernels->size()));
  }

  void concatsInPlaceMatchInterpreter() {
    // The convolutions and the pool write straight into their slices of c (GEMM, direct and
    // pooling kernels at offsets of 1152 and 2304 bytes), the Concat runs no kernel, and b is
    // read again after it.
    auto dense = [](int n, double scale) { return denseText(n, scale, 5); };
    const std::string text = R"(graph @g opset 17 {
  input %x : f32[1, 8, 6, 6]
  const %w1 : f32[8, 8, 3, 3] = )" +
                             dense(8 * 8 * 9, 0.05) + R"(
  const %w2 : f32[8, 8, 1, 1] = )" +
                             dense(64, 0.1) + R"(
  const %w3 : f32[4, 24, 1, 1] = )" +
                             dense(96, 0.1) + R"(
  %c1 : f32[1, 8, 6, 6] = Conv(%x, %w1) {pads = [1, 1, 1, 1]}
  %a : f32[1, 8, 6, 6] = Relu(%c1)
  %b : f32[1, 8, 6, 6] = Conv(%x, %w2)
  %p : f32[1, 8, 6, 6] = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
  %c : f32[1, 24, 6, 6] = Concat(%a, %b, %p) {axis = 1}
  %y : f32[1, 4, 6, 6] = Conv(%c, %w3)
  %z : f32[1, 8, 6, 6] = Abs(%b)
  output %y
  output %z
})";
    auto g = parseGraph(text, "<concat>");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    QVERIFY(inferShapes(**g).ok());
    for (int threads : {1, 2}) {
      std::string r = compareWithInterpreter(**g, "O3", 3, threads);
      QVERIFY2(r.empty(), r.c_str());
    }
    auto optimized = afterPipeline(**g, "O3");
    QVERIFY(optimized.ok());
    auto compiled = CompiledModel::compile(**optimized);
    QVERIFY(compiled.ok());
    bool inPlace = false;
    for (const std::string& note : (*compiled)->stats().notes)
      inPlace = inPlace || note.rfind("1 Concat(s) in place", 0) == 0;
    QVERIFY(inPlace);
  }

  /// A convolution's residual Add stores its result over the residual where that dies at it
  /// (a direct convolution, a one-K-block GEMM), not where the residual is the convolution's
  /// own input or is read again later; the results are the interpreter's.
  void residualAddsInPlaceMatchInterpreter() {
    auto dense = [](int n, double scale) { return denseText(n, scale, 7); };
    const std::string text = R"(graph @g opset 17 {
  input %x : f32[1, 16, 20, 20]
  const %w0 : f32[32, 16, 1, 1] = )" +
                             dense(32 * 16, 0.1) + R"(
  const %w1 : f32[32, 32, 3, 3] = )" +
                             dense(32 * 32 * 9, 0.03) + R"(
  const %w2 : f32[32, 32, 3, 3] = )" +
                             dense(32 * 32 * 9, 0.03) + R"(
  const %w3 : f32[64, 32, 1, 1] = )" +
                             dense(64 * 32, 0.1) + R"(
  const %w4 : f32[64, 16, 1, 1] = )" +
                             dense(64 * 16, 0.1) + R"(
  const %w5 : f32[64, 64, 3, 3] = )" +
                             dense(64 * 64 * 9, 0.02) + R"(
  const %w6 : f32[32, 16, 1, 1] = )" +
                             dense(32 * 16, 0.1) + R"(
  %s : f32[1, 32, 20, 20] = Conv(%x, %w0)
  %r1 : f32[1, 32, 20, 20] = Relu(%s)
  %r2 : f32[1, 32, 20, 20] = Conv(%x, %w6)
  %q : f32[1, 32, 1, 1] = GlobalAveragePool(%r2)
  %r3 : f32[1, 64, 20, 20] = Conv(%x, %w4)
  %c1 : f32[1, 32, 20, 20] = Conv(%r1, %w1) {pads = [1, 1, 1, 1]}
  %a1 : f32[1, 32, 20, 20] = Add(%c1, %r1)
  %t : f32[1, 32, 20, 20] = Relu(%a1)
  %c2 : f32[1, 32, 20, 20] = Conv(%t, %w2) {pads = [1, 1, 1, 1]}
  %u : f32[1, 32, 20, 20] = Add(%c2, %r2)
  %c3 : f32[1, 64, 20, 20] = Conv(%u, %w3)
  %v : f32[1, 64, 20, 20] = Add(%c3, %r3)
  %c4 : f32[1, 64, 20, 20] = Conv(%v, %w5) {pads = [1, 1, 1, 1]}
  %y : f32[1, 64, 20, 20] = Add(%c4, %r3)
  %z : f32[1, 32, 20, 20] = Abs(%r2)
  %o : f32[1, 64, 10, 10] = MaxPool(%y) {kernel_shape = [2, 2], strides = [2, 2]}
  output %o
  output %z
  output %q
})";
    // c1 + r1: r1 is the convolution's input. c2 + r2: direct, but r2 is read again by z.
    // c3 + r3: a GEMM of K = 32, but r3 is read again by y. Only y's Conv (c4 + r3, Winograd)
    // may store over its residual (a graph output, as o is, has a buffer of its own).
    QCOMPARE(residualsInPlace(text), std::string("1 kernel(s)"));

    // Without the later reads of r2 and r3, the direct convolution (c2) stores over r2, and the
    // fuser makes v one GEMM of K = 16 (r3's Conv) adding c3, which it stores over; y's Conv,
    // whose residual is now its own input, does not.
    std::string freed = text;
    freed.replace(freed.find("  %z : f32[1, 32, 20, 20] = Abs(%r2)\n"),
                  std::string("  %z : f32[1, 32, 20, 20] = Abs(%r2)\n").size(),
                  "  %z : f32[1, 32, 20, 20] = Abs(%u)\n");
    freed.replace(freed.find("Add(%c4, %r3)"), std::string("Add(%c4, %r3)").size(), "Add(%c4, %v)");
    QCOMPARE(residualsInPlace(freed), std::string("2 kernel(s)"));
  }

private:
  /// Compiles `text` at -O3, checks it against the interpreter on 1 and 2 threads, and returns
  /// the count that starts the executor's note on results stored over epilogue operands
  /// ("2 kernel(s)"), "none" without that note, or what failed.
  static std::string residualsInPlace(const std::string& text) {
    auto g = parseGraph(text, "<residual>");
    if (!g.ok())
      return g.error().message();
    if (!inferShapes(**g).ok())
      return "shape inference failed";
    for (int threads : {1, 2})
      if (std::string r = compareWithInterpreter(**g, "O3", 3, threads); !r.empty())
        return r;
    auto optimized = afterPipeline(**g, "O3");
    if (!optimized.ok())
      return "the O3 pipeline failed";
    auto compiled = CompiledModel::compile(**optimized);
    if (!compiled.ok())
      return compiled.error().message();
    for (const std::string& note : (*compiled)->stats().notes)
      if (note.find("over their epilogue's operand") != std::string::npos)
        return note.substr(0, note.find(" store"));
    return "none";
  }
};

QTEST_GUILESS_MAIN(TestCpuModelPatterns)
#include "TestCpuModelPatterns.moc"
