// Tests of graph → loop-IR lowering: every kernel set is run with the loop-IR evaluator and
// compared with the reference interpreter, unfused (-O0) and fused (-O3), scheduled and not;
// GEMM specs and fused epilogues are checked on their own.
#include "codegen/loops/LoopEvaluator.h"
#include "codegen/loops/LoopPrinter.h"
#include "codegen/loops/Lower.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "core/text/IrParser.h"
#include "passes/PassManager.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::cg;

namespace {

std::unique_ptr<Graph> parse(const std::string& text) {
  auto g = parseGraph(text, "<test>");
  if (!g.ok()) {
    qWarning("%s", g.error().message().c_str());
    return nullptr;
  }
  Status st = inferShapes(**g);
  if (!st.ok()) {
    qWarning("%s", st.error().message().c_str());
    return nullptr;
  }
  return std::move(*g);
}

/// Runs the named level (O0..O3) on a copy of g.
std::shared_ptr<const Graph> optimize(const Graph& g, const std::string& level) {
  auto steps = namedPipeline(level);
  if (!steps.ok())
    return nullptr;
  PipelineResult r = PassManager().run(g.clone(), *steps);
  if (r.error) {
    qWarning("%s", r.error->message().c_str());
    return nullptr;
  }
  return r.snapshots.back().graph;
}

/// Lowers the graph after `level`, runs the kernels on the loop-IR evaluator and compares every
/// output with the interpreter on the original graph. Returns "" or what went wrong.
std::string checkAgainstInterpreter(const Graph& g, const std::string& level, bool schedules,
                                    uint64_t seed = 1, std::vector<Kernel>* kernelsOut = nullptr) {
  auto inputs = makeRandomInputs(g, seed);
  if (!inputs.ok())
    return inputs.error().message();
  auto ref = interpret(g, *inputs);
  if (!ref.ok())
    return "interpreter: " + ref.error().message();
  std::shared_ptr<const Graph> opt = optimize(g, level);
  if (!opt)
    return "pipeline failed";
  LowerOptions options;
  options.defaultSchedules = schedules;
  options.parallelThreshold = 64;
  auto kernels = lowerGraph(*opt, options);
  if (!kernels.ok())
    return "lowering: " + kernels.error().message();
  std::unordered_map<std::string, Tensor> values;
  for (size_t i = 0; i < opt->inputs().size(); ++i)
    values[opt->inputs()[i]->name()] = (*inputs)[i];
  Status st = evaluateKernels(*kernels, values);
  if (!st.ok())
    return "evaluation: " + st.error().message() + "\n" + printKernels(*kernels);
  for (size_t i = 0; i < opt->outputs().size(); ++i) {
    const std::string& name = opt->outputs()[i]->name();
    auto it = values.find(name);
    if (it == values.end())
      return "output " + name + " was not computed";
    const Tensor& want = ref->outputs[i];
    TensorComparison c = compareTensors(want, it->second, defaultTolerance(want.dtype()));
    if (!c.ok)
      return level + (schedules ? " scheduled" : " textbook") + ": output " + name + ": " +
             c.reason + " (max abs " + std::to_string(c.maxAbs) + ")\n" + printKernels(*kernels);
  }
  if (kernelsOut)
    *kernelsOut = std::move(*kernels);
  return "";
}

std::string checkAllModes(const Graph& g) {
  for (const char* level : {"O0", "O3"})
    for (bool schedules : {false, true}) {
      std::string r = checkAgainstInterpreter(g, level, schedules);
      if (!r.empty())
        return r;
    }
  return "";
}

} // namespace

class TestLowering : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void matchesInterpreter_data() {
    QTest::addColumn<QString>("ir");
    QTest::newRow("elementwise-broadcast") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 3, 9]
  input %b : f32[9]
  input %c : f32[3, 1]
  %a : f32[2, 3, 9] = Add(%x, %b)
  %r : f32[2, 3, 9] = Relu(%a)
  %m : f32[2, 3, 9] = Mul(%r, %c)
  %s : f32[2, 3, 9] = Sigmoid(%m)
  %t : f32[2, 3, 9] = Tanh(%x)
  %e : f32[2, 3, 9] = Sub(%s, %t)
  %l : f32[2, 3, 9] = LeakyRelu(%e) {alpha = 0.1}
  %h : f32[2, 3, 9] = HardSwish(%l)
  %q : f32[2, 3, 9] = Div(%h, %c)
  %n : f32[2, 3, 9] = Neg(%q)
  %ab : f32[2, 3, 9] = Abs(%n)
  %sq : f32[2, 3, 9] = Sqrt(%ab)
  %er : f32[2, 3, 9] = Erf(%sq)
  %mx : f32[2, 3, 9] = Max(%er, %x, %b)
  output %mx
  output %a
})");
    QTest::newRow("matmul-add-relu") << QString(R"(graph @g opset 17 {
  input %x : f32[3, 20]
  input %w : f32[20, 11]
  input %b : f32[11]
  %y : f32[3, 11] = MatMul(%x, %w)
  %a : f32[3, 11] = Add(%y, %b)
  %r : f32[3, 11] = Relu(%a)
  output %r
})");
    QTest::newRow("batched-matmul") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 4, 5, 6]
  input %w : f32[2, 4, 6, 3]
  input %v : f32[6]
  %y : f32[2, 4, 5, 3] = MatMul(%x, %w)
  %z : f32[2, 4, 5] = MatMul(%x, %v)
  output %y
  output %z
})");
    QTest::newRow("gemm") << QString(R"(graph @g opset 17 {
  input %a : f32[7, 5]
  input %b : f32[6, 5]
  input %c : f32[6]
  %y : f32[7, 6] = Gemm(%a, %b, %c) {alpha = 0.5, beta = 2.0, transB = 1}
  %r : f32[7, 6] = Relu(%y)
  output %r
})");
    QTest::newRow("conv-bias-relu-residual") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 3, 9, 9]
  input %w : f32[4, 3, 3, 3]
  input %b : f32[4]
  input %skip : f32[2, 4, 5, 5]
  %c : f32[2, 4, 5, 5] = Conv(%x, %w, %b) {pads = [1, 1, 1, 1], strides = [2, 2]}
  %a : f32[2, 4, 5, 5] = Add(%c, %skip)
  %r : f32[2, 4, 5, 5] = Relu(%a)
  output %r
})");
    QTest::newRow("conv-depthwise-dilated") << QString(R"(graph @g opset 17 {
  input %x : f32[1, 4, 8, 8]
  input %w : f32[4, 1, 3, 3]
  input %w2 : f32[6, 2, 2, 2]
  const %lo : f32[] = dense<[0.0]>
  const %hi : f32[] = dense<[0.5]>
  %c : f32[1, 4, 8, 8] = Conv(%x, %w) {group = 4, pads = [1, 1, 1, 1]}
  %k : f32[1, 4, 8, 8] = Clip(%c, %lo, %hi)
  %d : f32[1, 6, 6, 6] = Conv(%k, %w2) {group = 2, dilations = [2, 2]}
  %e : f32[1, 4, 4, 4] = Conv(%k, %w) {group = 4, strides = [2, 2], dilations = [2, 2], pads = [2, 1, 1, 2]}
  input %wm : f32[8, 1, 3, 3]
  %f : f32[1, 8, 8, 8] = Conv(%x, %wm) {group = 4, pads = [1, 1, 1, 1]}
  output %d
  output %e
  output %f
})");
    QTest::newRow("conv-transpose") << QString(R"(graph @g opset 17 {
  input %x : f32[1, 4, 4, 4]
  input %w : f32[4, 3, 3, 3]
  input %b : f32[6]
  input %x2 : f32[2, 2, 4, 5]
  input %w2 : f32[2, 2, 3, 2]
  %y : f32[1, 6, 8, 8] = ConvTranspose(%x, %w, %b) {group = 2, output_padding = [1, 1], pads = [1, 1, 1, 1], strides = [2, 2]}
  %r : f32[1, 6, 8, 8] = Relu(%y)
  %z : f32[2, 2, 6, 6] = ConvTranspose(%x2, %w2)
  output %r
  output %z
})");
    QTest::newRow("resize") << QString(R"(graph @g opset 17 {
  input %x : f32[1, 2, 5, 6]
  const %roi : f32[0] = dense<[]>
  const %scales : f32[4] = dense<[1.0, 1.0, 2.0, 1.5]>
  const %sizes : i64[4] = dense<[1, 2, 3, 4]>
  %n : f32[1, 2, 10, 9] = Resize(%x, %roi, %scales) {mode = "nearest"}
  %a : f32[1, 2, 10, 9] = Resize(%x, %roi, %scales) {coordinate_transformation_mode = "asymmetric", mode = "nearest", nearest_mode = "floor"}
  %l : f32[1, 2, 10, 9] = Resize(%x, %roi, %scales) {mode = "linear"}
  %c : f32[1, 2, 10, 9] = Resize(%x, %roi, %scales) {coordinate_transformation_mode = "align_corners", mode = "linear"}
  %d : f32[1, 2, 3, 4] = Resize(%x, %roi, %roi, %sizes) {mode = "linear"}
  output %n
  output %a
  output %l
  output %c
  output %d
})");
    QTest::newRow("integer") << QString(R"(graph @g opset 17 {
  input %a : u8[3, 5]
  input %b : u8[5, 4]
  const %azp : u8[3] = dense<[1, 7, 200]>
  const %bzp : u8[] = dense<[128]>
  input %x : u8[1, 2, 5, 5]
  input %w : u8[3, 2, 3, 3]
  const %xzp : u8[] = dense<[3]>
  const %wzp : u8[3] = dense<[0, 5, 250]>
  %y : i32[3, 4] = MatMulInteger(%a, %b, %azp, %bzp)
  %y2 : i32[3, 4] = MatMulInteger(%a, %b)
  %c : i32[1, 3, 3, 3] = ConvInteger(%x, %w, %xzp, %wzp)
  output %y
  output %y2
  output %c
})");
    QTest::newRow("pools") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 3, 7, 7]
  %m : f32[2, 3, 4, 4] = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
  %a : f32[2, 3, 4, 4] = AveragePool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
  %i : f32[2, 3, 4, 4] = AveragePool(%x) {count_include_pad = 1, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
  %g : f32[2, 3, 1, 1] = GlobalAveragePool(%x)
  %h : f32[2, 3, 1, 1] = GlobalMaxPool(%x)
  %md : f32[2, 3, 3, 3] = MaxPool(%x) {ceil_mode = 1, dilations = [2, 2], kernel_shape = [2, 2], strides = [2, 2]}
  %ar : f32[2, 3, 3, 4] = AveragePool(%x) {kernel_shape = [3, 2], pads = [0, 1, 0, 0], strides = [2, 2]}
  %mi : f32[2, 3, 4, 4], %ix : i64[2, 3, 4, 4] = MaxPool(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}
  %mc : f32[2, 3, 3, 3], %ic : i64[2, 3, 3, 3] = MaxPool(%x) {kernel_shape = [2, 3], storage_order = 1, strides = [2, 2]}
  output %md
  output %ar
  output %mi
  output %ix
  output %ic
  output %m
  output %a
  output %i
  output %g
  output %h
})");
    QTest::newRow("softmax-norm-reduce") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 5, 6]
  input %s : f32[6]
  input %bb : f32[6]
  input %is : f32[5]
  %sm : f32[2, 5, 6] = Softmax(%x) {axis = -1}
  %s1 : f32[2, 5, 6] = Softmax(%x) {axis = 1}
  %ls : f32[2, 5, 6] = LogSoftmax(%x) {axis = 2}
  %ln : f32[2, 5, 6] = LayerNormalization(%x, %s, %bb) {axis = -1, epsilon = 1e-05}
  input %s2 : f32[5, 6]
  %ln2 : f32[2, 5, 6], %mean : f32[2, 1, 1], %inv : f32[2, 1, 1] = LayerNormalization(%x, %s2) {axis = 1}
  const %two : i64[] = dense<[2]>
  %pw : f32[2, 5, 6] = Pow(%x, %two)
  %dr : f32[2, 5, 6], %mask : bool[2, 5, 6] = Dropout(%x)
  output %ln2
  output %mean
  output %inv
  output %pw
  output %mask
  %in : f32[2, 5, 6] = InstanceNormalization(%x, %is, %is) {epsilon = 1e-05}
  %rm : f32[2, 6] = ReduceMean(%x) {axes = [1], keepdims = 0}
  %rx : f32[2, 1, 1] = ReduceMax(%x) {axes = [1, 2], keepdims = 1}
  %am : i64[2, 6] = ArgMax(%x) {axis = 1, keepdims = 0}
  output %sm
  output %s1
  output %ls
  output %ln
  output %in
  output %rm
  output %rx
  output %am
})");
    QTest::newRow("data-movement") << QString(R"(graph @g opset 17 {
  input %x : f32[2, 3, 4]
  input %y : f32[2, 2, 4]
  const %idx : i64[2] = dense<[2, -3]>
  const %shape : i64[2] = dense<[6, 4]>
  const %starts : i64[2] = dense<[1, 0]>
  const %ends : i64[2] = dense<[3, 100]>
  const %axes : i64[2] = dense<[1, 2]>
  const %steps : i64[2] = dense<[1, 2]>
  const %pads : i64[6] = dense<[0, 1, 0, 0, 1, 2]>
  const %reps : i64[3] = dense<[1, 2, 1]>
  %t : f32[4, 3, 2] = Transpose(%x) {perm = [2, 1, 0]}
  %r : f32[6, 4] = Reshape(%x, %shape)
  %c : f32[2, 5, 4] = Concat(%x, %y) {axis = 1}
  %s : f32[2, 2, 2] = Slice(%x, %starts, %ends, %axes, %steps)
  %g : f32[2, 2, 4] = Gather(%x, %idx) {axis = 1}
  %p : f32[2, 5, 6] = Pad(%x, %pads)
  %pr : f32[2, 5, 6] = Pad(%x, %pads) {mode = "reflect"}
  %pe : f32[2, 5, 6] = Pad(%x, %pads) {mode = "edge"}
  %f : f32[2, 12] = Flatten(%x) {axis = 1}
  %ti : f32[2, 6, 4] = Tile(%x, %reps)
  const %sizes : i64[2] = dense<[1, 2]>
  %s0 : f32[2, 1, 4], %s1 : f32[2, 2, 4] = Split(%x, %sizes) {axis = 1}
  %gt : bool[2, 3, 4] = Greater(%x, %s0)
  %w : f32[2, 3, 4] = Where(%gt, %x, %s0)
  %ci : i32[2, 3, 4] = Cast(%w) {to = 6}
  output %t
  output %r
  output %c
  output %s
  output %g
  output %p
  output %pr
  output %pe
  output %f
  output %ti
  output %s1
  output %ci
})");
  }

  void matchesInterpreter() {
    QFETCH(QString, ir);
    auto g = parse(ir.toStdString());
    QVERIFY(g);
    std::string r = checkAllModes(*g);
    QVERIFY2(r.empty(), r.c_str());
  }

  void samplesMatchInterpreter_data() {
    QTest::addColumn<QString>("sample");
    for (const char* s : {"mlp.onnx", "small_cnn.onnx", "transformer_block.onnx"})
      QTest::newRow(s) << QString(s);
  }

  void samplesMatchInterpreter() {
    QFETCH(QString, sample);
    auto g = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/" + sample.toStdString());
    QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
    for (const char* level : {"O0", "O3"}) {
      std::string r = checkAgainstInterpreter(**g, level, /*schedules=*/true);
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void fusedEpilogueInitialisesAccumulatorWithBias() {
    auto g = parse(R"(graph @g opset 17 {
  input %x : f32[4, 8]
  input %w : f32[8, 16]
  input %b : f32[16]
  %y : f32[4, 16] = MatMul(%x, %w)
  %a : f32[4, 16] = Add(%y, %b)
  %r : f32[4, 16] = Relu(%a)
  output %r
})");
    QVERIFY(g);
    std::vector<Kernel> kernels;
    std::string r = checkAgainstInterpreter(*g, "O3", /*schedules=*/false, 1, &kernels);
    QVERIFY2(r.empty(), r.c_str());
    QCOMPARE(kernels.size(), size_t(1));
    const Kernel& k = kernels[0];
    std::string text = printKernel(k);
    QVERIFY2(text.find("for i, j in grid(4, 16):\n    r[i, j] = b[j]") != std::string::npos, text.c_str());
    QVERIFY2(text.find("r[i, j] += x[i, k] * w[k, j]") != std::string::npos, text.c_str());
    QVERIFY2(text.find("r[i, j] = max(r[i, j], 0.0)") != std::string::npos, text.c_str());
    // No scratch buffer: the MatMul result never leaves the output loop.
    for (const KernelArg& a : k.args)
      QVERIFY(a.role != KernelArg::Role::Scratch);
    QVERIFY(k.gemm.has_value());
    QCOMPARE(k.gemm->M, int64_t(4));
    QCOMPARE(k.gemm->N, int64_t(16));
    QCOMPARE(k.gemm->K, int64_t(8));
    QVERIFY(k.gemm->bias == GemmSpec::Bias::PerColumn);
    QCOMPARE(k.gemm->epilogue.size(), size_t(1));
    QVERIFY(k.gemm->epilogue[0].kind == EpilogueOp::Kind::Relu);
    QCOMPARE(k.args[size_t(k.gemm->biasArg)].name, std::string("b"));
    QCOMPARE(k.args[size_t(k.gemm->cArg)].name, std::string("r"));
  }

  void convGemmSpecWithResidual() {
    auto g = parse(R"(graph @g opset 17 {
  input %x : f32[2, 3, 9, 9]
  input %w : f32[4, 3, 3, 3]
  input %b : f32[4]
  input %skip : f32[2, 4, 5, 5]
  %c : f32[2, 4, 5, 5] = Conv(%x, %w, %b) {pads = [1, 1, 1, 1], strides = [2, 2]}
  %a : f32[2, 4, 5, 5] = Add(%c, %skip)
  %r : f32[2, 4, 5, 5] = Relu(%a)
  output %r
})");
    QVERIFY(g);
    std::vector<Kernel> kernels;
    std::string r = checkAgainstInterpreter(*g, "O3", true, 2, &kernels);
    QVERIFY2(r.empty(), r.c_str());
    QCOMPARE(kernels.size(), size_t(1));
    const Kernel& k = kernels[0];
    QVERIFY(k.gemm.has_value());
    QVERIFY(k.gemm->conv.has_value());
    QCOMPARE(k.gemm->M, int64_t(4));
    QCOMPARE(k.gemm->N, int64_t(25));
    QCOMPARE(k.gemm->K, int64_t(27));
    QCOMPARE(k.gemm->batch, int64_t(2));
    QCOMPARE(k.gemm->conv->strideH, int64_t(2));
    QCOMPARE(k.gemm->conv->padTop, int64_t(1));
    QVERIFY(k.gemm->bias == GemmSpec::Bias::PerRow);
    QCOMPARE(k.gemm->epilogue.size(), size_t(2));
    QVERIFY(k.gemm->epilogue[0].kind == EpilogueOp::Kind::AddTensor);
    QCOMPARE(k.args[size_t(k.gemm->epilogue[0].arg)].name, std::string("skip"));
    QVERIFY(k.gemm->epilogue[1].kind == EpilogueOp::Kind::Relu);
  }

  void scheduleOverrideByKernelName() {
    auto g = parse(R"(graph @g opset 17 {
  input %x : f32[16, 40]
  %r : f32[16, 40] = Relu(%x)
  output %r
})");
    QVERIFY(g);
    LowerOptions o;
    o.scheduleOverrides = *parseScheduleOverrides("k0:none,tile=4x16,vectorize=8");
    auto ks = lowerGraph(*g, o);
    QVERIFY2(ks.ok(), ks.ok() ? "" : ks.error().message().c_str());
    std::string text = printKernels(*ks);
    QVERIFY2(text.find("kernel k0_relu(") != std::string::npos, text.c_str());
    QVERIFY2(text.find("for i_o, j_o, i_i, j_i_o in grid(4, 3, 4, 2):") != std::string::npos, text.c_str());
    QVERIFY2(text.find("vectorized(8)") != std::string::npos, text.c_str());
    o.scheduleOverrides = *parseScheduleOverrides("k9:tile=4");
    auto bad = lowerGraph(*g, o);
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().message().find("k9") != std::string::npos, bad.error().message().c_str());
  }

  void unsupportedOpNamesOpAndNode() {
    auto g = parse(R"(graph @g opset 17 {
  input %x : f16[1, 1, 4, 4]
  const %roi : f32[0] = dense<[]>
  const %scales : f32[4] = dense<[1.0, 1.0, 2.0, 2.0]>
  %y : f16[1, 1, 8, 8] = Resize(%x, %roi, %scales) {mode = "cubic"}  #5 "/up/Resize"
  output %y
})");
    QVERIFY(g);
    auto ks = lowerGraph(*g);
    QVERIFY(!ks.ok());
    QVERIFY(ks.error().isUnsupported());
    const std::string& m = ks.error().message();
    QVERIFY2(m.find("Resize") != std::string::npos && m.find("/up/Resize") != std::string::npos,
             m.c_str());
  }

  void symbolicShapesAreRejected() {
    auto g = parse(R"(graph @g opset 17 {
  input %x : f32[N, 4]
  %r : f32[N, 4] = Relu(%x)
  output %r
})");
    QVERIFY(g);
    auto ks = lowerGraph(*g);
    QVERIFY(!ks.ok());
    QVERIFY2(ks.error().message().find("static") != std::string::npos, ks.error().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestLowering)
#include "TestLowering.moc"
