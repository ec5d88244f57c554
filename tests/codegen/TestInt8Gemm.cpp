// Tests of the int8 GEMM generator: compiled QLinearConv and QLinearMatMul (and ConvInteger,
// MatMulInteger) against the interpreter, bit for bit, over odd sizes, strides, pads, dilations,
// groups and depthwise, per-tensor and per-channel weight scales and zero points, u8 and i8
// operands and outputs, ties in rounding, saturation at both ends, 1 and 2 threads, the VNNI and
// the i16 forms, on the host and (when the host runs it) on an AVX2-only CPU's code.
#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/loops/Lower.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <QtTest/QtTest>

#include <cstring>

using namespace fb;
using namespace fb::cg;

namespace {

/// Deterministic integers in [lo, hi].
std::vector<int64_t> randomInts(int64_t n, int64_t lo, int64_t hi, uint64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = lo + int64_t((x >> 33) % uint64_t(hi - lo + 1));
  }
  return v;
}

Tensor intTensor(DType dtype, std::vector<int64_t> sizes, const std::vector<int64_t>& v) {
  Tensor t(dtype, std::move(sizes));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, double(v[size_t(i)]));
  return t;
}

Tensor int8Random(DType dtype, std::vector<int64_t> sizes, uint64_t seed, int64_t lo = -1,
                  int64_t hi = -1) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  if (lo == -1 && hi == -1) {
    lo = dtype == DType::U8 ? 0 : -128;
    hi = dtype == DType::U8 ? 255 : 127;
  }
  return intTensor(dtype, std::move(sizes), randomInts(n, lo, hi, seed));
}

Tensor f32Values(std::vector<int64_t> sizes, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(sizes), v);
}

/// One QLinearConv or QLinearMatMul case.
struct Case {
  std::string name;
  bool conv = true;
  // Conv: x [n, c, h, w], weights [cout, c/groups, kh, kw]; MatMul: x = A sizes, B [K, N].
  std::vector<int64_t> x, w;
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
  DType xType = DType::U8, wType = DType::I8, yType = DType::U8;
  int64_t xZp = 0, yZp = 0;
  bool perChannel = false;        ///< per-channel weight scales
  std::vector<int64_t> wZp = {0}; ///< one, or per channel
  bool bias = false;
  float xScale = 0.02f, yScale = 0.05f;
  float wScaleBase = 0.01f;
  int64_t wLo = -1, wHi = -1; ///< weight value range (default: the type's)
  uint64_t seed = 1;
  bool integer = false; ///< ConvInteger / MatMulInteger (int32 out) instead of the QLinear op
};

/// The one-node graph of a case; `feeds` gets the input's value. With `runtimeZeroPoint` the
/// activation's zero point is a graph input (the generator cannot take it).
std::unique_ptr<Graph> buildCase(const Case& c, std::vector<Tensor>& feeds,
                                 bool runtimeZeroPoint = false) {
  auto g = std::make_unique<Graph>("int8");
  Tensor xt = int8Random(c.xType, c.x, c.seed);
  feeds.push_back(xt);
  Value* x = g->addInput("x", xt.type());
  const int64_t channels = c.conv ? c.w[0] : c.w[1];
  std::vector<float> ws;
  for (int64_t i = 0; i < (c.perChannel ? channels : 1); ++i)
    ws.push_back(c.wScaleBase * float(1 + (i * 7) % 5) * (i % 3 == 2 ? 0.5f : 1.0f));
  auto scalar = [&](DType d, int64_t v) { return intTensor(d, {}, {v}); };
  Value* xs = g->addConstant("xs", f32Values({}, {c.xScale}));
  Value* xzp;
  if (runtimeZeroPoint) {
    Tensor z = scalar(c.xType, c.xZp);
    feeds.push_back(z);
    xzp = g->addInput("xzp", z.type());
  } else {
    xzp = g->addConstant("xzp", scalar(c.xType, c.xZp));
  }
  Value* w = g->addConstant("w", int8Random(c.wType, c.w, c.seed + 1, c.wLo, c.wHi));
  Value* wsV = g->addConstant("ws", c.perChannel ? f32Values({channels}, ws) : f32Values({}, ws));
  Value* wzp =
      g->addConstant("wzp", c.wZp.size() == 1 ? scalar(c.wType, c.wZp[0])
                                              : intTensor(c.wType, {int64_t(c.wZp.size())}, c.wZp));
  Value* ys = g->addConstant("ys", f32Values({}, {c.yScale}));
  Value* yzp = g->addConstant("yzp", scalar(c.yType, c.yZp));
  std::vector<Value*> ins = {x, xs, xzp, w, wsV, wzp, ys, yzp};
  if (c.integer)
    ins = {x, w, xzp, wzp};
  if (c.bias && !c.integer)
    ins.push_back(g->addConstant(
        "b", intTensor(DType::I32, {channels}, randomInts(channels, -3000, 3000, c.seed + 2))));
  const OpKind op = c.integer ? (c.conv ? OpKind::ConvInteger : OpKind::MatMulInteger)
                              : (c.conv ? OpKind::QLinearConv : OpKind::QLinearMatMul);
  Node* n = g->addNode(op, ins, 1, {}, "q");
  if (c.conv) {
    n->attrs().set("strides", std::vector<int64_t>{c.stride, c.stride});
    n->attrs().set("pads", std::vector<int64_t>(4, c.pad));
    n->attrs().set("dilations", std::vector<int64_t>{c.dilation, c.dilation});
    n->attrs().set("group", c.groups);
  }
  g->addOutput(n->output(0));
  return g;
}

std::vector<Case> convCases() {
  std::vector<Case> cs;
  auto add = [&](Case c) { cs.push_back(std::move(c)); };
  add({.name = "3x3 pad 1, per-channel, bias, zero points",
       .x = {1, 3, 7, 9},
       .w = {5, 3, 3, 3},
       .pad = 1,
       .xZp = 3,
       .yZp = 100,
       .perChannel = true,
       .bias = true});
  add({.name = "3x3 stride 2, groups 2, i8 in and out",
       .x = {2, 4, 11, 6},
       .w = {10, 2, 3, 3},
       .stride = 2,
       .pad = 1,
       .groups = 2,
       .xType = DType::I8,
       .yType = DType::I8,
       .xZp = -5,
       .yZp = 3,
       .bias = true,
       .seed = 2});
  add({.name = "depthwise 3x3",
       .x = {1, 8, 5, 5},
       .w = {8, 1, 3, 3},
       .pad = 1,
       .groups = 8,
       .xZp = 128,
       .yZp = 128,
       .perChannel = true,
       .bias = true,
       .seed = 3});
  add({.name = "1x1, odd M, per-channel weight zero points",
       .x = {1, 16, 4, 5},
       .w = {33, 16, 1, 1},
       .xZp = 7,
       .yZp = 9,
       .perChannel = true,
       .wZp = randomInts(33, -6, 6, 9),
       .bias = true,
       .wLo = -100,
       .wHi = 100,
       .seed = 4});
  add({.name = "7x7 stride 2 pad 3",
       .x = {1, 3, 13, 13},
       .w = {17, 3, 7, 7},
       .stride = 2,
       .pad = 3,
       .xZp = 120,
       .yZp = 50,
       .perChannel = true,
       .bias = true,
       .seed = 5});
  add({.name = "3x3 stride 2, 15 output columns (panels by output rows)",
       .x = {1, 8, 30, 30},
       .w = {12, 8, 3, 3},
       .stride = 2,
       .pad = 1,
       .xType = DType::I8,
       .xZp = -20,
       .yZp = 30,
       .perChannel = true,
       .bias = true,
       .seed = 18});
  add({.name = "dilation 2",
       .x = {1, 5, 9, 9},
       .w = {6, 5, 3, 3},
       .pad = 2,
       .dilation = 2,
       .xType = DType::I8,
       .xZp = 0,
       .yZp = 0,
       .seed = 6});
  add({.name = "ties: multiplier 0.5",
       .x = {1, 2, 5, 5},
       .w = {3, 2, 3, 3},
       .pad = 1,
       .yType = DType::I8,
       .xZp = 1,
       .yZp = 0,
       .xScale = 1.0f,
       .yScale = 1.0f,
       .wScaleBase = 0.5f,
       .wLo = -3,
       .wHi = 3,
       .seed = 7});
  add({.name = "saturation at both ends",
       .x = {1, 4, 6, 6},
       .w = {9, 4, 3, 3},
       .pad = 1,
       .xZp = 128,
       .yZp = 128,
       .bias = true,
       .yScale = 0.0005f,
       .seed = 8});
  add({.name = "u8 weights, zero point 128 (VNNI after the shift)",
       .x = {1, 6, 5, 7},
       .w = {7, 6, 3, 3},
       .pad = 1,
       .wType = DType::U8,
       .xZp = 10,
       .yZp = 20,
       .wZp = {128},
       .bias = true,
       .seed = 9});
  add({.name = "u8 weights, zero point 0 (the i16 form)",
       .x = {1, 6, 5, 7},
       .w = {7, 6, 3, 3},
       .pad = 1,
       .wType = DType::U8,
       .xZp = 10,
       .yZp = 20,
       .wZp = {0},
       .bias = true,
       .yScale = 2.0f,
       .seed = 10});
  add({.name = "batch 3, 2x2 stride 2, 20 channels (two register tiles)",
       .x = {3, 12, 8, 8},
       .w = {20, 12, 2, 2},
       .stride = 2,
       .xZp = 2,
       .yZp = 77,
       .perChannel = true,
       .bias = true,
       .seed = 11});
  add({.name = "ConvInteger, groups 3, stride 2, per-channel zero points",
       .x = {2, 6, 9, 8},
       .w = {9, 2, 3, 3},
       .stride = 2,
       .pad = 1,
       .groups = 3,
       .xZp = 9,
       .wZp = randomInts(9, -5, 5, 4),
       .wLo = -100,
       .wHi = 100,
       .seed = 13,
       .integer = true});
  add({.name = "ConvInteger, i8 data, u8 weights (the i16 form)",
       .x = {1, 3, 6, 6},
       .w = {4, 3, 3, 3},
       .pad = 1,
       .xType = DType::I8,
       .wType = DType::U8,
       .xZp = -7,
       .wZp = {0},
       .seed = 14,
       .integer = true});
  add({.name = "depthwise 3x3 stride 2, i8, wide rows",
       .x = {2, 5, 9, 37},
       .w = {5, 1, 3, 3},
       .stride = 2,
       .pad = 1,
       .groups = 5,
       .xType = DType::I8,
       .yType = DType::I8,
       .xZp = -3,
       .yZp = 4,
       .perChannel = true,
       .bias = true,
       .seed = 15});
  add({.name = "depthwise 3x3 stride 1, wide rows, saturating",
       .x = {1, 4, 6, 40},
       .w = {4, 1, 3, 3},
       .pad = 1,
       .groups = 4,
       .xZp = 200,
       .yZp = 9,
       .bias = true,
       .yScale = 0.002f,
       .seed = 16});
  add({.name = "depthwise 5x5 dilation 2, per-channel zero points",
       .x = {1, 3, 12, 30},
       .w = {3, 1, 5, 5},
       .pad = 2,
       .dilation = 2,
       .groups = 3,
       .xZp = 5,
       .yZp = 100,
       .perChannel = true,
       .wZp = {3, -2, 0},
       .bias = true,
       .seed = 17});
  add({.name = "depthwise, a plane too large for the padded copy (masked edges)",
       .x = {1, 2, 258, 270},
       .w = {2, 1, 3, 3},
       .pad = 1,
       .groups = 2,
       .xZp = 60,
       .yZp = 70,
       .perChannel = true,
       .bias = true,
       .seed = 19});
  add({.name = "multiplier 40, K 576: requantized in double (products past 2^30)",
       .x = {1, 64, 3, 3},
       .w = {8, 64, 3, 3},
       .pad = 1,
       .yType = DType::I8,
       .xZp = 128,
       .yZp = -3,
       .bias = true,
       .xScale = 1.0f,
       .yScale = 0.025f,
       .wScaleBase = 1.0f,
       .wLo = -1,
       .wHi = 1,
       .seed = 20});
  add({.name = "deep: K 576, 64 channels, 4x4 output",
       .x = {1, 64, 4, 4},
       .w = {64, 64, 3, 3},
       .pad = 1,
       .xZp = 0,
       .yZp = 0,
       .perChannel = true,
       .bias = true,
       .yScale = 0.5f,
       .seed = 12});
  return cs;
}

std::vector<Case> matmulCases() {
  std::vector<Case> cs;
  auto add = [&](Case c) {
    c.conv = false;
    cs.push_back(std::move(c));
  };
  add({.name = "3x5 times 5x4", .x = {3, 5}, .w = {5, 4}, .xZp = 128, .yZp = 120});
  add({.name = "batched i8, per-column scales and zero points",
       .x = {2, 7, 33},
       .w = {33, 19},
       .xType = DType::I8,
       .yType = DType::I8,
       .xZp = -3,
       .yZp = 5,
       .perChannel = true,
       .wZp = randomInts(19, -4, 4, 3),
       .wLo = -120,
       .wHi = 120,
       .seed = 2});
  add({.name = "one row, 1000 columns",
       .x = {1, 64},
       .w = {64, 1000},
       .xZp = 17,
       .yZp = 128,
       .perChannel = true,
       .seed = 3});
  add({.name = "u8 weights (the i16 form), saturating",
       .x = {9, 10},
       .w = {10, 13},
       .wType = DType::U8,
       .xZp = 4,
       .yZp = 10,
       .wZp = {3},
       .yScale = 0.001f,
       .seed = 4});
  add({.name = "MatMulInteger, per-column zero points",
       .x = {5, 70},
       .w = {70, 23},
       .xZp = 100,
       .wZp = randomInts(23, -9, 9, 6),
       .wLo = -110,
       .wHi = 110,
       .seed = 6,
       .integer = true});
  add({.name = "MatMulInteger, u8 x u8",
       .x = {2, 3, 17},
       .w = {17, 9},
       .wType = DType::U8,
       .xZp = 3,
       .wZp = {200},
       .seed = 7,
       .integer = true});
  add({.name = "multiplier 3000: requantized in double (products past 2^30)",
       .x = {5, 9},
       .w = {9, 40},
       .xZp = 128,
       .yZp = 7,
       .xScale = 1.0f,
       .yScale = 0.001f,
       .wScaleBase = 3.0f,
       .wLo = -1,
       .wHi = 1,
       .seed = 8});
  add({.name = "ties",
       .x = {4, 6},
       .w = {6, 9},
       .yType = DType::I8,
       .xZp = 0,
       .yZp = -1,
       .xScale = 1.0f,
       .yScale = 1.0f,
       .wScaleBase = 0.25f,
       .wLo = -2,
       .wHi = 2,
       .seed = 5});
  return cs;
}

/// Compiles g for `target` with `threads` and returns "" when every output equals the
/// interpreter's bit for bit, else what differs. `int8Kernels` gets the number of kernels
/// the int8 generator compiled.
std::string compareExactly(const Graph& graph, const std::vector<Tensor>& feeds,
                           const TargetInfo& target, int threads, int& int8Kernels) {
  std::unique_ptr<Graph> g = graph.clone();
  if (Status st = inferShapes(*g); !st.ok())
    return "infer: " + st.error().message();
  auto ref = interpret(*g, feeds);
  if (!ref.ok())
    return "interpret: " + ref.error().message();
  CompileOptions co;
  co.useCache = false;
  co.target = target;
  co.threads = threads;
  auto model = CompiledModel::compile(*g, co);
  if (!model.ok())
    return "compile: " + model.error().message();
  int8Kernels = 0;
  for (size_t k = 0; k < (*model)->kernels().size(); ++k) {
    auto code = (*model)->kernelCode(k);
    if (!code.ok())
      return "kernelCode: " + code.error().message();
    int8Kernels += code->generator == "int8gemm" ? 1 : 0;
  }
  auto got = (*model)->run(feeds);
  if (!got.ok())
    return "run: " + got.error().message();
  for (size_t o = 0; o < got->size(); ++o) {
    const Tensor& r = ref->outputs[o];
    const Tensor& c = (*got)[o];
    if (r.sizes() != c.sizes() || r.dtype() != c.dtype())
      return "output " + std::to_string(o) + " has another type";
    for (int64_t i = 0; i < r.numElements(); ++i)
      if (r.getAsDouble(i) != c.getAsDouble(i))
        return "output " + std::to_string(o) + " element " + std::to_string(i) + ": interpreter " +
               std::to_string(r.getAsDouble(i)) + ", compiled " + std::to_string(c.getAsDouble(i));
  }
  return "";
}

/// The targets to check: the host, and an AVX2-only CPU (no VNNI) when the host runs its code.
std::vector<TargetInfo> targets() {
  std::vector<TargetInfo> ts = {TargetInfo::host()};
  auto avx2 = TargetInfo::forCpu("znver2");
  if (avx2.ok() && avx2->runsOnHost())
    ts.push_back(*avx2);
  else
    qInfo("znver2 code does not run on this host: only the host's path is checked");
  return ts;
}

/// The inner-product form packInt8Operands picks for the single QLinear node of g on `target`.
std::optional<Int8GemmSpec> packedSpec(const Graph& graph, const TargetInfo& target) {
  std::unique_ptr<Graph> g = graph.clone();
  if (!inferShapes(*g).ok())
    return std::nullopt;
  auto kernels = lowerGraph(*g);
  if (!kernels.ok() || !prepareKernels(*kernels, true, target).ok())
    return std::nullopt;
  for (const Kernel& k : *kernels)
    if (k.int8)
      return *k.int8;
  return std::nullopt;
}

std::optional<Int8Isa> packedIsa(const Graph& graph, const TargetInfo& target) {
  auto s = packedSpec(graph, target);
  return s ? s->isa : std::nullopt;
}

} // namespace

class TestInt8Gemm : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void convolutionsMatchTheInterpreterBitForBit_data() { cases(convCases()); }
  void convolutionsMatchTheInterpreterBitForBit() { runCase(); }
  void matmulsMatchTheInterpreterBitForBit_data() { cases(matmulCases()); }
  void matmulsMatchTheInterpreterBitForBit() { runCase(); }

  void formFollowsTargetAndWeights() {
    // VNNI when the host has it and the shifted weights fit s8; the i16 form for u8 weights
    // that do not (zero point 0), and on an AVX2-only CPU; depthwise convolutions directly.
    const TargetInfo host = TargetInfo::host();
    const bool hostVnni = host.hasFeature("avxvnni") ||
                          (host.hasFeature("avx512vnni") && host.hasFeature("avx512vl"));
    std::vector<Case> cs = convCases();
    for (const Case& c : cs) {
      std::vector<Tensor> feeds;
      auto g = buildCase(c, feeds);
      auto isa = packedIsa(*g, host);
      QVERIFY2(isa.has_value(), c.name.c_str());
      const bool fits = c.wType == DType::I8 || c.wZp[0] == 128;
      const bool depthwise = c.groups == c.x[1] && c.w[0] == c.groups;
      const Int8Isa gemm = hostVnni && fits ? Int8Isa::Vnni : Int8Isa::Int16;
      QCOMPARE(*isa, depthwise ? Int8Isa::Depthwise : gemm);
      auto avx2 = TargetInfo::forCpu("znver2");
      QVERIFY(avx2.ok());
      QCOMPARE(*packedIsa(*g, *avx2), depthwise ? Int8Isa::Depthwise : Int8Isa::Int16);
    }
    if (!hostVnni)
      qInfo("the host has no VNNI: only the i16 form runs here");
  }

  void depthwiseRowFormFollowsTarget() {
    // The vpdpbusd row form needs 512-bit VNNI and VBMI; the u8 and the i8 (stride 2) cases
    // have taps that fit s8. znver2 (AVX2) never takes it, Zen 4 always.
    const TargetInfo host = TargetInfo::host();
    const bool hostRowForm = host.hasFeature("avx512vnni") && host.hasFeature("avx512vl") &&
                             host.hasFeature("avx512vbmi");
    auto avx2 = TargetInfo::forCpu("znver2");
    auto zen4 = TargetInfo::forCpu("znver4");
    QVERIFY(avx2.ok() && zen4.ok());
    int checked = 0;
    for (const Case& c : convCases()) {
      if (c.name != "depthwise 3x3" && c.name != "depthwise 3x3 stride 2, i8, wide rows")
        continue;
      ++checked;
      std::vector<Tensor> feeds;
      auto g = buildCase(c, feeds);
      auto onHost = packedSpec(*g, host), onAvx2 = packedSpec(*g, *avx2),
           onZen4 = packedSpec(*g, *zen4);
      QVERIFY(onHost && onAvx2 && onZen4);
      QCOMPARE(onHost->tapQuadsArg >= 0, hostRowForm);
      QCOMPARE(onAvx2->tapQuadsArg, -1);
      QCOMPARE(onAvx2->nr, int64_t(8));
      QVERIFY2(onZen4->tapQuadsArg >= 0, c.name.c_str());
      QCOMPARE(onZen4->nr, int64_t(16));
    }
    QCOMPARE(checked, 2);
  }

  void requantizationPathFollowsTheBound() {
    // Products within 2^30 round straight to int32; a multiplier that can take K * 255^2 past
    // it keeps the double-precision clamp (both are checked bit for bit by the cases above).
    const TargetInfo host = TargetInfo::host();
    int checked = 0;
    for (const Case& c : convCases()) {
      std::vector<Tensor> feeds;
      auto g = buildCase(c, feeds);
      auto spec = packedSpec(*g, host);
      QVERIFY2(spec.has_value(), c.name.c_str());
      const bool large = c.name.rfind("multiplier 40", 0) == 0;
      QCOMPARE(spec->requantFitsInt32, !large && !c.integer);
      checked += large ? 1 : 0;
    }
    QCOMPARE(checked, 1);
  }

  void unsupportedOperandsKeepTheInterpretedKernel() {
    // A zero point computed at run time: the generator needs it at compile time, so the node
    // stays interpreted, with the interpreter's results.
    Case c = convCases()[0];
    std::vector<Tensor> feeds;
    auto g = buildCase(c, feeds, /*runtimeZeroPoint=*/true);
    int int8Kernels = -1;
    std::string r = compareExactly(*g, feeds, TargetInfo::host(), 1, int8Kernels);
    QVERIFY2(r.empty(), r.c_str());
    QCOMPARE(int8Kernels, 0);
  }

private:
  void cases(const std::vector<Case>& cs) {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < cs.size(); ++i)
      QTest::newRow(cs[i].name.c_str()) << int(i);
  }

  void runCase() {
    QFETCH(int, index);
    const bool conv = QString(QTest::currentTestFunction()).startsWith("conv");
    const Case c = (conv ? convCases() : matmulCases())[size_t(index)];
    std::vector<Tensor> feeds;
    auto g = buildCase(c, feeds);
    for (const TargetInfo& t : targets())
      for (int threads : {1, 2}) {
        int int8Kernels = -1;
        std::string r = compareExactly(*g, feeds, t, threads, int8Kernels);
        const std::string where =
            c.name + " on " + t.cpu + ", " + std::to_string(threads) + " thread(s): ";
        QVERIFY2(r.empty(), (where + r).c_str());
        QVERIFY2(int8Kernels == 1, (where + "not compiled by the int8 generator").c_str());
      }
  }
};

QTEST_GUILESS_MAIN(TestInt8Gemm)
#include "TestInt8Gemm.moc"
