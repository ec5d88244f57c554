// Tests of the direct depthwise-convolution generator (codegen/gemm/DepthwiseEmitter): small
// depthwise Conv graphs with fused epilogues compiled for the CPU against the reference
// interpreter, over kernel sizes, strides, pads, dilations, odd widths and heights.
#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/gemm/DepthwiseEmitter.h"
#include "codegen/loops/LoopPrinter.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

#include <sstream>

using namespace fb;
using namespace fb::cg;

namespace {

enum class Epilogue { None, Relu, Clip, AddRelu };

/// One depthwise convolution: X[batch, channels, h, w] * W[channels*multiplier, 1, k, k].
struct DwCase {
  int64_t batch = 1, channels = 3, multiplier = 1, h = 8, w = 8;
  int64_t k = 3, stride = 1, dilation = 1;
  int64_t padTop = 1, padLeft = 1, padBottom = 1, padRight = 1;
  bool bias = true;
  Epilogue epilogue = Epilogue::None;
  int64_t strideH = 0; ///< 0: same as stride
  int64_t kW = 0;      ///< kernel width; 0: same as k

  std::string name() const {
    std::ostringstream os;
    os << "b" << batch << " c" << channels << "x" << multiplier << " " << h << "x" << w << " k" << k
       << "x" << (kW ? kW : k) << " s" << (strideH ? strideH : stride) << "," << stride << " d"
       << dilation << " p" << padTop << padLeft << padBottom << padRight << (bias ? " +bias" : "")
       << (epilogue == Epilogue::Relu      ? " relu"
           : epilogue == Epilogue::Clip    ? " clip"
           : epilogue == Epilogue::AddRelu ? " add+relu"
                                           : "");
    return os.str();
  }
};

/// The graph of a case; `withBias` false leaves the bias out (the mutation check).
std::unique_ptr<Graph> buildGraph(const DwCase& c, bool withBias = true) {
  SeededRandom rng(uint64_t(c.h * 131 + c.w * 7 + c.k + c.stride * 1000 + c.channels));
  auto g = std::make_unique<Graph>("depthwise");
  Value* x = g->addInput("x", TensorType::of(DType::F32, {c.batch, c.channels, c.h, c.w}));
  int64_t cout = c.channels * c.multiplier;
  std::vector<Value*> ins = {
      x, g->addConstant("w", randomTensor(DType::F32, {cout, 1, c.k, c.kW ? c.kW : c.k}, rng))};
  Tensor bias = randomTensor(DType::F32, {cout}, rng);
  if (c.bias && withBias)
    ins.push_back(g->addConstant("bias", bias));
  Node* conv = g->addNode(OpKind::Conv, ins, 1);
  conv->attrs().set("group", c.channels);
  conv->attrs().set("pads", std::vector<int64_t>{c.padTop, c.padLeft, c.padBottom, c.padRight});
  conv->attrs().set("strides", std::vector<int64_t>{c.strideH ? c.strideH : c.stride, c.stride});
  conv->attrs().set("dilations", std::vector<int64_t>{c.dilation, c.dilation});
  Value* y = conv->output(0);
  if (Status st = inferShapes(*g); !st.ok())
    qFatal("%s: %s", c.name().c_str(), st.error().message().c_str());
  switch (c.epilogue) {
  case Epilogue::None:
    break;
  case Epilogue::Relu:
    y = g->addNode(OpKind::Relu, {y}, 1)->output(0);
    break;
  case Epilogue::Clip:
    y = g->addNode(OpKind::Clip,
                   {y, g->addConstant("lo", Tensor::scalar(0.0f)),
                    g->addConstant("hi", Tensor::scalar(6.0f))},
                   1)
            ->output(0);
    break;
  case Epilogue::AddRelu: {
    Value* skip = g->addInput("skip", y->type());
    y = g->addNode(OpKind::Add, {y, skip}, 1)->output(0);
    y = g->addNode(OpKind::Relu, {y}, 1)->output(0);
    break;
  }
  }
  if (Status st = inferShapes(*g); !st.ok())
    qFatal("%s: %s", c.name().c_str(), st.error().message().c_str());
  g->addOutput(y);
  return g;
}

/// Compiles a case through the -O3 graph pipeline and runs it on random inputs.
struct Compiled {
  std::string error;
  std::vector<Tensor> inputs, outputs;
  std::vector<std::string> generators; ///< per kernel
  std::vector<std::string> ops;        ///< per kernel: "Conv+Clip"
};

Compiled compileAndRun(const Graph& graph, int threads, bool useGemm = true, int llvmLevel = 3) {
  Compiled r;
  auto fail = [&](std::string why) {
    r.error = std::move(why);
    return r;
  };
  auto steps = namedPipeline("O3");
  if (!steps.ok())
    return fail(steps.error().message());
  PipelineResult pr = PassManager().run(graph.clone(), *steps);
  if (pr.error)
    return fail("pipeline: " + pr.error->message());
  auto inputs = makeRandomInputs(graph, 11);
  if (!inputs.ok())
    return fail(inputs.error().message());
  r.inputs = *inputs;
  CompileOptions co;
  co.threads = threads;
  co.llvmOptLevel = llvmLevel;
  co.useCache = false;
  co.emit.useGemm = useGemm;
  co.lower.gemmSpecs = useGemm;
  auto model = CompiledModel::compile(pr.finalGraph(), co);
  if (!model.ok())
    return fail("compile: " + model.error().message());
  auto got = (*model)->run(r.inputs);
  if (!got.ok())
    return fail("run: " + got.error().message());
  r.outputs = *got;
  Profile p = (*model)->newProfile();
  for (const KernelProfileInfo& k : p.kernels) {
    r.generators.push_back(k.generator);
    r.ops.push_back(k.op);
  }
  return r;
}

/// "" when `got` matches the interpreter on `graph` with the same inputs.
std::string compareWith(const Graph& graph, const Compiled& got) {
  auto ref = interpret(graph, got.inputs);
  if (!ref.ok())
    return "interpreter: " + ref.error().message();
  if (ref->outputs.size() != got.outputs.size())
    return "output count differs";
  const Tensor& r = ref->outputs[0];
  TensorComparison c = compareTensors(r, got.outputs[0], defaultTolerance(r.dtype()));
  return c.ok ? "" : c.reason + " (max abs " + std::to_string(c.maxAbs) + ")";
}

/// The cases: each width and height of the brief at least once, with every load path (stride
/// 1 contiguous, 2 even lanes, 3 wide load + shuffle, 5 gather), pads 0-2, dilation 2.
std::vector<DwCase> cases() {
  std::vector<DwCase> v;
  const int64_t sizes[] = {1, 7, 8, 13, 14, 56, 112};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    DwCase c;
    c.w = sizes[i];
    c.h = sizes[std::size(sizes) - 1 - i];
    c.channels = i % 2 ? 3 : 32;
    c.epilogue = Epilogue::Clip;
    v.push_back(c); // 3x3 stride 1 pad 1
    c.stride = 2;
    c.bias = i % 2 == 0;
    c.epilogue = Epilogue::Relu;
    v.push_back(c); // 3x3 stride 2 pad 1
  }
  auto add = [&](auto edit) {
    DwCase c;
    edit(c);
    v.push_back(c);
  };
  add([](DwCase& c) {
    c.k = 5, c.padTop = c.padLeft = c.padBottom = c.padRight = 2, c.h = 14, c.w = 14;
  });
  add([](DwCase& c) {
    c.k = 5, c.padTop = c.padLeft = c.padBottom = c.padRight = 2, c.h = 13, c.w = 56, c.stride = 2;
  });
  add([](DwCase& c) {
    c.k = 5, c.padTop = c.padLeft = c.padBottom = c.padRight = 2, c.h = 7, c.w = 13,
    c.channels = 32, c.epilogue = Epilogue::Clip;
  });
  add([](DwCase& c) { c.padTop = c.padLeft = c.padBottom = c.padRight = 0, c.h = 13, c.w = 13; });
  add([](DwCase& c) {
    c.padTop = c.padLeft = c.padBottom = c.padRight = 0, c.h = 8, c.w = 8, c.stride = 2;
  });
  add([](DwCase& c) { c.padTop = c.padLeft = c.padBottom = c.padRight = 2, c.h = 14, c.w = 13; });
  add([](DwCase& c) {
    c.dilation = 2, c.padTop = c.padLeft = c.padBottom = c.padRight = 2, c.h = 14, c.w = 14;
  });
  add([](DwCase& c) {
    c.dilation = 2, c.padTop = c.padLeft = c.padBottom = c.padRight = 2, c.h = 13, c.w = 56,
    c.stride = 2;
  });
  add([](DwCase& c) { c.stride = 3, c.h = 13, c.w = 56; });
  add([](DwCase& c) { c.stride = 5, c.strideH = 1, c.h = 8, c.w = 56; });
  add([](DwCase& c) {
    c.padTop = 0, c.padLeft = 0, c.padBottom = 1, c.padRight = 2, c.h = 13, c.w = 14;
  });
  add([](DwCase& c) { c.channels = 1, c.h = 14, c.w = 13, c.epilogue = Epilogue::Relu; });
  add([](DwCase& c) {
    c.batch = 2, c.channels = 3, c.h = 14, c.w = 14, c.epilogue = Epilogue::Clip;
  });
  add([](DwCase& c) { c.batch = 2, c.channels = 32, c.h = 7, c.w = 7, c.stride = 2; });
  add([](DwCase& c) { c.epilogue = Epilogue::AddRelu, c.channels = 32, c.h = 14, c.w = 14; });
  add([](DwCase& c) {
    c.epilogue = Epilogue::AddRelu, c.bias = false, c.h = 13, c.w = 7, c.stride = 2;
  });
  add([](DwCase& c) { c.multiplier = 2, c.h = 14, c.w = 13; });
  add([](DwCase& c) {
    c.multiplier = 2, c.channels = 32, c.batch = 2, c.h = 7, c.w = 7, c.stride = 2,
    c.epilogue = Epilogue::Clip;
  });
  return v;
}

/// The fused ops a case's single kernel should carry.
std::string expectedOps(const DwCase& c) {
  switch (c.epilogue) {
  case Epilogue::None:
    return "Conv";
  case Epilogue::Relu:
    return "Conv+Relu";
  case Epilogue::Clip:
    return "Conv+Clip";
  case Epilogue::AddRelu:
    return "Conv+Add+Relu";
  }
  return "";
}

} // namespace

class TestDepthwise : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Every case compiles to one kernel from the depthwise generator, with its epilogue fused,
  /// and matches the interpreter (1 and 2 threads alternate; every fifth case at LLVM O0).
  void matchesInterpreter() {
    int n = 0;
    for (const DwCase& c : cases()) {
      auto g = buildGraph(c);
      Compiled got = compileAndRun(*g, 1 + n % 2, /*useGemm=*/true, n % 5 == 0 ? 0 : 3);
      ++n;
      QVERIFY2(got.error.empty(), qPrintable(QString::fromStdString(c.name() + ": " + got.error)));
      QCOMPARE(got.generators.size(), size_t(1));
      QVERIFY2(got.generators[0] == "dwconv",
               qPrintable(QString::fromStdString(c.name() + ": generator " + got.generators[0])));
      QCOMPARE(QString::fromStdString(got.ops[0]), QString::fromStdString(expectedOps(c)));
      std::string why = compareWith(*g, got);
      QVERIFY2(why.empty(), qPrintable(QString::fromStdString(c.name() + ": " + why)));
    }
    QVERIFY(n >= 30);
  }

  /// Random geometries (seeded): kernel 1-5 (not always square), strides 1-3, asymmetric pads,
  /// dilation 1-2, images 1-20 wide and high, batch 1-2, multiplier 1-2, random epilogue.
  void randomGeometriesMatchInterpreter() {
    SeededRandom rng(2024);
    auto pick = [&](int64_t lo, int64_t hi) {
      return lo + int64_t(rng.next() % uint64_t(hi - lo + 1));
    };
    int compared = 0;
    for (int attempt = 0; attempt < 200 && compared < 40; ++attempt) {
      DwCase c;
      c.batch = pick(1, 2);
      c.channels = pick(1, 9);
      c.multiplier = pick(1, 2);
      c.h = pick(1, 20);
      c.w = pick(1, 20);
      c.k = pick(1, 5);
      c.kW = pick(1, 5);
      c.stride = pick(1, 3);
      c.strideH = pick(1, 3);
      c.dilation = pick(1, 2);
      c.padTop = pick(0, c.k - 1);
      c.padBottom = pick(0, c.k - 1);
      c.padLeft = pick(0, c.kW - 1);
      c.padRight = pick(0, c.kW - 1);
      c.bias = pick(0, 1) == 1;
      c.epilogue = Epilogue(pick(0, 3));
      if (c.h + c.padTop + c.padBottom < c.dilation * (c.k - 1) + 1 ||
          c.w + c.padLeft + c.padRight < c.dilation * (c.kW - 1) + 1)
        continue; // no output
      auto g = buildGraph(c);
      Compiled got = compileAndRun(*g, 1 + compared % 2);
      QVERIFY2(got.error.empty(), qPrintable(QString::fromStdString(c.name() + ": " + got.error)));
      // One input channel with several outputs is an ordinary implicit GEMM.
      std::string expected = c.channels > 1 || c.multiplier == 1 ? "dwconv" : "gemm";
      QVERIFY2(got.generators[0] == expected,
               qPrintable(QString::fromStdString(c.name() + ": generator " + got.generators[0])));
      std::string why = compareWith(*g, got);
      QVERIFY2(why.empty(), qPrintable(QString::fromStdString(c.name() + ": " + why)));
      ++compared;
    }
    QCOMPARE(compared, 40);
  }

  /// The comparison can fail: the compiled kernel (with bias) does not match the interpreter
  /// on the graph without the bias, nor without its Clip.
  void comparisonCatchesMutations() {
    DwCase c;
    c.h = 14;
    c.w = 13;
    c.channels = 32;
    c.epilogue = Epilogue::Clip;
    auto g = buildGraph(c);
    Compiled got = compileAndRun(*g, 2);
    QVERIFY2(got.error.empty(), got.error.c_str());
    QVERIFY(compareWith(*g, got).empty());
    QVERIFY(!compareWith(*buildGraph(c, /*withBias=*/false), got).empty());
    DwCase noClip = c;
    noClip.epilogue = Epilogue::None;
    // Random inputs reach outside [0, 6] after the conv, so a dropped Clip shows.
    QVERIFY(!compareWith(*buildGraph(noClip), got).empty());
  }

  /// Without GEMM specs (--no-gemm) the same convolutions compile from their loop nests and
  /// agree too.
  void loopNestFallbackAgrees() {
    DwCase c;
    c.h = 13;
    c.w = 14;
    c.stride = 2;
    c.epilogue = Epilogue::Clip;
    auto g = buildGraph(c);
    Compiled got = compileAndRun(*g, 2, /*useGemm=*/false);
    QVERIFY2(got.error.empty(), got.error.c_str());
    QCOMPARE(got.generators[0], std::string("loops"));
    QVERIFY(compareWith(*g, got).empty());
  }

  /// The loop-nest print says which generator compiles the kernel, and GEMM blocking
  /// overrides are refused with a reason.
  void describesAndRejectsGemmBlocking() {
    DwCase c;
    auto g = buildGraph(c);
    auto steps = namedPipeline("O3");
    QVERIFY(steps.ok());
    PipelineResult pr = PassManager().run(g->clone(), *steps);
    QVERIFY(!pr.error);
    auto model = CompiledModel::compile(pr.finalGraph());
    QVERIFY(model.ok());
    const Kernel& k = (*model)->kernels().at(0);
    QVERIFY(k.gemm && isDepthwise(*k.gemm));
    std::string text = printKernel(k);
    QVERIFY2(text.find("direct depthwise generator") != std::string::npos, text.c_str());
    QVERIFY(text.find("for ") != std::string::npos); // the loop nest is still printed

    CompileOptions co;
    co.lower.scheduleOverrides = *parseScheduleOverrides(k.name + ":mr=4");
    auto refused = CompiledModel::compile(pr.finalGraph(), co);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message().find("depthwise") != std::string::npos,
             refused.error().message().c_str());
  }
};

QTEST_GUILESS_MAIN(TestDepthwise)
#include "TestDepthwise.moc"
