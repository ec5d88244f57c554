// Tests of quantized integer graphs on the CPU backend: QLinearConv and QLinearMatMul compile
// to int8 kernels of their own inside compiled models, never fused, with the interpreter's
// results; a sample through quantize and lower-quantized runs at every level.
#include "PipelineCompare.h"

#include "codegen/exec/CompiledModel.h"
#include "codegen/loops/Lower.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/text/IrParser.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::cg;
using namespace fb::cg::test;

class TestQuantizedOps : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void quantizedOpsRunAsInt8Kernels() {
    // QLinearConv and QLinearMatMul compile to int8 kernels of their own at every level (never
    // fused), and the results are the interpreter's (TestInt8Gemm checks them bit for bit).
    auto g = parseGraph(R"(graph @g opset 17 {
  input %x : u8[1, 2, 5, 5]
  const %xs : f32[] = dense<[0.05]>
  const %xzp : u8[] = dense<[128]>
  const %w : i8[3, 2, 3, 3] = dense<[1, -2, 3, -4, 5, -6, 7, -8, 9, 10, -11, 12, -13, 14, -15, 16, -17, 18, 19, -20, 21, -22, 23, -24, 25, -26, 27, 28, -29, 30, -31, 32, -33, 34, -35, 36, 37, -38, 39, -40, 41, -42, 43, -44, 45, 46, -47, 48, -49, 50, -51, 52, -53, 54]>
  const %ws : f32[3] = dense<[0.01, 0.02, 0.03]>
  const %wzp : i8[3] = dense<[0, 0, 0]>
  const %ys : f32[] = dense<[0.1]>
  const %yzp : u8[] = dense<[120]>
  const %bias : i32[3] = dense<[100, -200, 300]>
  %c : u8[1, 3, 5, 5] = QLinearConv(%x, %xs, %xzp, %w, %ws, %wzp, %ys, %yzp, %bias) {pads = [1, 1, 1, 1]}
  %cf : f32[1, 3, 5, 5] = Cast(%c) {to = 1}
  %r : f32[1, 3, 5, 5] = Sqrt(%cf)
  input %a : u8[3, 5]
  const %b : u8[5, 4] = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]>
  const %bs : f32[] = dense<[0.2]>
  const %bzp : u8[] = dense<[10]>
  %m : u8[3, 4] = QLinearMatMul(%a, %xs, %xzp, %b, %bs, %bzp, %ys, %yzp)
  output %r
  output %m
})",
                        "qlinear.fbir");
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    for (const char* level : {"O0", "O1", "O2", "O3"}) {
      std::string r = compareWithInterpreter(**g, level, 2, 1);
      QVERIFY2(r.empty(), (std::string(level) + ": " + r).c_str());
    }
    CompileOptions co;
    auto inputs = makeRandomInputs(**g, 7);
    QVERIFY(inputs.ok());
    co.specializeInputs = *inputs;
    auto steps = namedPipeline("O3");
    QVERIFY(steps.ok());
    PipelineResult pr = PassManager().run((*g)->clone(), *steps);
    QVERIFY(!pr.error);
    auto model = CompiledModel::compile(pr.finalGraph(), co);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
    QCOMPARE((*model)->stats().interpretedKernels, 0);
    int int8Kernels = 0;
    for (size_t k = 0; k < (*model)->kernels().size(); ++k) {
      auto code = (*model)->kernelCode(k);
      QVERIFY(code.ok());
      int8Kernels += code->generator == "int8gemm" ? 1 : 0;
    }
    QCOMPARE(int8Kernels, 2);
  }

  void lowerQuantizedModelRunsOnCpu() {
    // A sample through quantize and lower-quantized: the integer graph runs on the CPU at
    // every level and agrees with the interpreter on that same graph.
    auto model = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/small_cnn.onnx");
    QVERIFY(model.ok());
    auto steps =
        parsePipeline("canonicalize,fold-batchnorm,quantize{samples=4,eval=0},lower-quantized");
    QVERIFY(steps.ok());
    PipelineResult pr = PassManager().run(std::move(model).value(), *steps);
    QVERIFY(!pr.error);
    const Graph& q = pr.finalGraph();
    bool hasQLinear = false;
    for (const auto& n : q.nodes())
      hasQLinear |= n->op() == OpKind::QLinearConv;
    QVERIFY(hasQLinear);
    for (const char* level : {"O0", "O2", "O3"}) {
      std::string r = compareWithInterpreter(q, level, 2, 1);
      QVERIFY2(r.empty(), (std::string(level) + ": " + r).c_str());
    }
  }

  void byteFunctionsReadATable() {
    // A quantized SiLU between int8 layers (i8 and u8 in; i8 and f32 out) reads a 256-entry
    // table the interpreter computed, bit for bit the interpreter's results at -O0 and -O3; a
    // per-channel scale (not a scalar) or a small tensor keeps the computed form.
    const char* silu = R"(graph @g opset 17 {
  input %x : %T[1, 8, 16, 16]
  const %s : f32[] = dense<[0.037]>
  const %z : %T[] = dense<[%Z]>
  const %ys : f32[] = dense<[0.021]>
  const %yz : i8[] = dense<[-5]>
  %d : f32[1, 8, 16, 16] = DequantizeLinear(%x, %s, %z)
  %g : f32[1, 8, 16, 16] = Sigmoid(%d)
  %m : f32[1, 8, 16, 16] = Mul(%d, %g)
  %q : i8[1, 8, 16, 16] = QuantizeLinear(%m, %ys, %yz)
  %d2 : f32[1, 8, 16, 16] = DequantizeLinear(%x, %ys, %z)
  %g2 : f32[1, 8, 16, 16] = Sigmoid(%d2)
  %e : f32[1, 8, 16, 16] = Mul(%g2, %d2)
  output %q
  output %e
})";
    auto withTypes = [&](const char* text, const std::string& t, const std::string& zp,
                         const std::string& sizes) {
      QString q = QString::fromUtf8(text);
      q.replace("%T", QString::fromStdString(t));
      q.replace("%Z", QString::fromStdString(zp));
      q.replace("[1, 8, 16, 16]", QString::fromStdString(sizes));
      return q.toStdString();
    };
    struct Case {
      std::string type, zp, sizes;
      int tables;
    };
    for (const Case& c :
         {Case{"i8", "3", "[1, 8, 16, 16]", 2}, Case{"u8", "128", "[1, 8, 16, 16]", 2},
          Case{"u8", "128", "[1, 2, 4, 4]", 0}}) {
      auto g = parseGraph(withTypes(silu, c.type, c.zp, c.sizes), "<silu>");
      QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
      QVERIFY(inferShapes(**g).ok());
      for (const char* level : {"O0", "O3"}) {
        std::string r = compareWithInterpreter(**g, level, 3, 2);
        QVERIFY2(r.empty(), (c.type + " -" + level + ": " + r).c_str());
      }
      auto optimized = afterPipeline(**g, "O3");
      QVERIFY(optimized.ok());
      auto kernels = lowerGraph(**optimized, LowerOptions());
      QVERIFY(kernels.ok());
      int tables = 0;
      for (const Kernel& k : *kernels)
        for (const KernelArg& a : k.args)
          tables += a.name == k.name + ".table" ? 1 : 0;
      QCOMPARE(tables, c.tables);
      // The textbook loops (no GEMM specs) keep the arithmetic.
      LowerOptions textbook;
      textbook.gemmSpecs = false;
      auto plain = lowerGraph(**g, textbook);
      QVERIFY(plain.ok());
      for (const Kernel& k : *plain)
        for (const KernelArg& a : k.args)
          QVERIFY(a.name.find(".table") == std::string::npos);
    }
    // Exact, not within a tolerance: the tables hold the interpreter's own values (the
    // Sigmoid computed in a kernel may differ from the interpreter's in the last bits).
    auto g = parseGraph(withTypes(silu, "i8", "3", "[1, 8, 16, 16]"), "<silu>");
    QVERIFY(g.ok() && inferShapes(**g).ok());
    Tensor x(DType::I8, {1, 8, 16, 16});
    for (int64_t i = 0; i < x.numElements(); ++i)
      x.setFromDouble(i, double(i % 256 - 128));
    auto ref = interpret(**g, {x});
    QVERIFY(ref.ok());
    auto optimized = afterPipeline(**g, "O3"); // each chain one fused group: one table each
    QVERIFY(optimized.ok());
    auto model = CompiledModel::compile(**optimized);
    QVERIFY(model.ok());
    auto got = (*model)->run({x});
    QVERIFY(got.ok());
    QVERIFY((*got)[0].identical(ref->outputs[0]));
    QVERIFY((*got)[1].identical(ref->outputs[1]));
  }
};

QTEST_GUILESS_MAIN(TestQuantizedOps)
#include "TestQuantizedOps.moc"
