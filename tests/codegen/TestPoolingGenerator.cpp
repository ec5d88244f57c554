// Tests of MaxPool and AveragePool through the direct depthwise generator (a window without
// weights, codegen/gemm/DepthwiseEmitter): which pools it takes, and that they equal the
// reference interpreter on every load path, at the image edges, in ceil mode, with NaN and
// infinities in the input, with a fused Relu, and at 1 and 2 threads.
#include "OneNodeCompare.h"

#include "codegen/gemm/GemmEmitter.h"
#include "codegen/loops/LoopPrinter.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/RandomInputs.h"

#include <cmath>
#include <limits>

using namespace fb;
using namespace fb::test;

namespace {

struct PoolCase {
  OpKind op = OpKind::MaxPool;
  int64_t channels = 8, h = 12, w = 12;
  int64_t kernel = 3, stride = 1, pad = 1, dilation = 1;
  bool ceilMode = false, includePad = false;

  std::string name() const {
    return std::string(opName(op)) + " c" + std::to_string(channels) + " " + std::to_string(h) +
           "x" + std::to_string(w) + " k" + std::to_string(kernel) + " s" + std::to_string(stride) +
           " p" + std::to_string(pad) + " d" + std::to_string(dilation) +
           (ceilMode ? " ceil" : "") + (includePad ? " include_pad" : "");
  }
  Attrs attrs() const {
    Attrs a = {{"kernel_shape", std::vector<int64_t>{kernel, kernel}},
               {"strides", std::vector<int64_t>{stride, stride}},
               {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
               {"ceil_mode", int64_t(ceilMode)}};
    if (op == OpKind::MaxPool)
      a.push_back({"dilations", std::vector<int64_t>{dilation, dilation}});
    else
      a.push_back({"count_include_pad", int64_t(includePad)});
    return a;
  }
};

/// Random values in [-1, 1) with, when `specials`, a NaN, +inf and -inf planted in each
/// channel (a window whose only finite values are smaller still yields them).
Tensor input(const PoolCase& c, bool specials) {
  SeededRandom rng(uint64_t(c.h * 31 + c.w + c.kernel * 7 + c.stride));
  Tensor t = randomTensor(DType::F32, {2, c.channels, c.h, c.w}, rng);
  if (specials) {
    const int64_t plane = c.h * c.w;
    for (int64_t ch = 0; ch < 2 * c.channels; ++ch) {
      t.setFromDouble(ch * plane + (ch * 5) % plane, std::nan(""));
      t.setFromDouble(ch * plane + (ch * 7 + 3) % plane, -std::numeric_limits<double>::infinity());
      if (ch % 3 == 0)
        t.setFromDouble(ch * plane + (ch * 11 + 1) % plane,
                        std::numeric_limits<double>::infinity());
    }
  }
  return t;
}

/// The O3 kernels of the case's graph (with a Relu after it when `relu`).
std::vector<Kernel> kernelsOf(const PoolCase& c, bool relu) {
  std::vector<Tensor> feeds;
  auto g = oneNode(c.op, {in(input(c, false))}, c.attrs(), 1, feeds, relu);
  if (Status st = inferShapes(*g); !st.ok())
    qFatal("%s: %s", c.name().c_str(), st.error().message().c_str());
  auto steps = namedPipeline("O3");
  PipelineResult pr = PassManager().run(g->clone(), *steps);
  if (pr.error)
    qFatal("%s: %s", c.name().c_str(), pr.error->message().c_str());
  CompileOptions co;
  co.useCache = false;
  auto model = CompiledModel::compile(pr.finalGraph(), co);
  if (!model.ok())
    qFatal("%s: %s", c.name().c_str(), model.error().message().c_str());
  return (*model)->kernels();
}

/// Whether the case's pool kernel is compiled by the direct generator.
bool direct(const PoolCase& c) {
  for (const Kernel& k : kernelsOf(c, false))
    if (k.gemm && k.gemm->pooling != GemmSpec::Pooling::None)
      return true;
  return false;
}

std::vector<PoolCase> directCases() {
  std::vector<PoolCase> v;
  auto add = [&](auto edit) {
    PoolCase c;
    edit(c);
    v.push_back(c);
  };
  // GoogLeNet's and Inception's branch pools on 12×12, 6×6 and 3×3 maps: 3×3 stride 1 pad 1.
  for (int64_t s : {12, 6, 3, 1})
    add([&](PoolCase& c) { c.h = c.w = s; });
  add([](PoolCase& c) { c.h = 56, c.w = 56, c.stride = 2; }); // ResNet's stem pool
  add([](PoolCase& c) { c.h = c.w = 13, c.stride = 2, c.pad = 0, c.ceilMode = true; });
  // SqueezeNet's last pool at 64x64: 7x7 to 3x3, rows narrower than a vector.
  add([](PoolCase& c) { c.h = c.w = 7, c.stride = 2, c.pad = 0, c.ceilMode = true; });
  add([](PoolCase& c) { c.h = 5, c.w = 11, c.stride = 1, c.pad = 0; });
  add([](PoolCase& c) { c.h = 7, c.w = 9, c.kernel = 2, c.stride = 2, c.pad = 0; });
  add([](PoolCase& c) { c.h = 20, c.w = 21, c.kernel = 3, c.stride = 3, c.pad = 1; });
  add([](PoolCase& c) { c.h = 20, c.w = 40, c.kernel = 5, c.stride = 5, c.pad = 2; }); // gathers
  add([](PoolCase& c) { c.h = c.w = 14, c.dilation = 2, c.pad = 2; });
  add([](PoolCase& c) { c.h = 17, c.w = 30, c.kernel = 5, c.pad = 2; });
  // AveragePool where every window counts the whole kernel.
  add([](PoolCase& c) { c.op = OpKind::AveragePool, c.includePad = true; }); // Inception's
  add([](PoolCase& c) { c.op = OpKind::AveragePool, c.h = c.w = 6, c.includePad = true; });
  add([](PoolCase& c) {
    c.op = OpKind::AveragePool, c.h = c.w = 16, c.kernel = 2, c.stride = 2, c.pad = 0;
  }); // DenseNet's transition
  add([](PoolCase& c) {
    c.op = OpKind::AveragePool, c.h = 9, c.w = 35, c.kernel = 3, c.stride = 3, c.pad = 0;
  });
  return v;
}

} // namespace

class TestPoolingGenerator : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Every case is compiled by the direct generator (the loop print says so) and equals the
  /// interpreter, alone and with a fused Relu, on random input and on input with NaN and
  /// infinities, with 1 and 2 threads.
  void matchesInterpreter() {
    int n = 0;
    for (const PoolCase& c : directCases()) {
      QVERIFY2(direct(c), qPrintable(QString::fromStdString(c.name() + ": not direct")));
      for (bool specials : {false, true})
        for (bool relu : {false, true}) {
          std::vector<Tensor> feeds;
          auto g = oneNode(c.op, {in(input(c, specials))}, c.attrs(), 1, feeds, relu);
          std::string why = compare(*g, feeds, "O3");
          QVERIFY2(why.empty(),
                   qPrintable(QString::fromStdString(c.name() + (specials ? " nan/inf" : "") +
                                                     (relu ? " +relu" : "") + ": " + why)));
        }
      ++n;
    }
    QVERIFY(n >= 15);
  }

  /// A Relu after the pool is its fused epilogue, and `--emit loops` names the generator.
  void fusesAndDescribes() {
    PoolCase c;
    std::vector<Kernel> ks = kernelsOf(c, true);
    QCOMPARE(ks.size(), size_t(1));
    QVERIFY(ks[0].gemm && ks[0].gemm->pooling == GemmSpec::Pooling::Max);
    QCOMPARE(ks[0].gemm->epilogue.size(), size_t(1));
    std::string text = printKernel(ks[0], describeGemmBlocking);
    QVERIFY2(text.find("direct max pool 3x3 stride 1x1") != std::string::npos, text.c_str());
  }

  /// Pools the generator does not take keep their loop nests: an AveragePool whose edge
  /// windows count fewer taps, and one that counts padding but overhangs it in ceil mode.
  void othersStayLoopNests() {
    PoolCase edgeCounts;
    edgeCounts.op = OpKind::AveragePool;
    QVERIFY(!direct(edgeCounts));
    PoolCase overhang = edgeCounts;
    overhang.includePad = true;
    overhang.h = overhang.w = 8;
    overhang.stride = 2;
    overhang.ceilMode = true;
    QVERIFY(!direct(overhang));
    for (const PoolCase& c : {edgeCounts, overhang}) {
      std::vector<Tensor> feeds;
      auto g = oneNode(c.op, {in(input(c, false))}, c.attrs(), 1, feeds);
      std::string why = compare(*g, feeds, "O3");
      QVERIFY2(why.empty(), why.c_str());
    }
  }

  /// A directive that reshapes the loop nest (lesson 5 tiles and vectorizes a pool) compiles
  /// the pool from that nest, which the Code view then shows as what runs; `parallel=0` is the
  /// generator's own and keeps it.
  void nestDirectivesCompileTheNest() {
    PoolCase c;
    std::vector<Tensor> feeds;
    auto g = oneNode(c.op, {in(input(c, false))}, c.attrs(), 1, feeds);
    QVERIFY(inferShapes(*g).ok());
    auto reference = interpret(*g, feeds);
    QVERIFY(reference.ok());
    for (const char* directives : {"none,tile=4x8", "none,vectorize=ow/8", "parallel=0"}) {
      CompileOptions co;
      co.useCache = false;
      auto parsed = parseScheduleOverrides(std::string("k0:") + directives);
      QVERIFY(parsed.ok());
      co.lower.scheduleOverrides = *parsed;
      auto model = CompiledModel::compile(*g, co);
      QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
      const Kernel& k = (*model)->kernels().at(0);
      const bool generator = k.gemm && k.gemm->pooling != GemmSpec::Pooling::None;
      QCOMPARE(generator, std::string(directives) == "parallel=0");
      auto got = (*model)->run(feeds);
      QVERIFY(got.ok());
      QVERIFY2(compareTensors(reference->outputs[0], (*got)[0], defaultTolerance(DType::F32)).ok,
               directives);
    }
  }

  /// MaxPool's Indices output needs the loop nest, which computes both outputs.
  void indicesStayLoopNest() {
    PoolCase c;
    std::vector<Tensor> feeds;
    auto g = oneNode(OpKind::MaxPool, {in(input(c, false))}, c.attrs(), 2, feeds);
    std::string why = compare(*g, feeds, "O3");
    QVERIFY2(why.empty(), why.c_str());
  }

  /// The comparison can fail: a MaxPool's result is not its AveragePool's.
  void comparisonCatchesAWrongPool() {
    PoolCase c;
    std::vector<Tensor> feeds;
    auto maxGraph = oneNode(OpKind::MaxPool, {in(input(c, false))}, c.attrs(), 1, feeds);
    QVERIFY(inferShapes(*maxGraph).ok());
    auto ref = interpret(*maxGraph, feeds);
    QVERIFY(ref.ok());
    PoolCase avg = c;
    avg.op = OpKind::AveragePool;
    avg.includePad = true;
    std::vector<Tensor> unused;
    auto avgGraph = oneNode(OpKind::AveragePool, {in(input(c, false))}, avg.attrs(), 1, unused);
    QVERIFY(inferShapes(*avgGraph).ok());
    auto model = CompiledModel::compile(*avgGraph);
    QVERIFY(model.ok());
    auto got = (*model)->run(feeds);
    QVERIFY(got.ok());
    QVERIFY(!compareTensors(ref->outputs[0], (*got)[0], defaultTolerance(DType::F32)).ok);
  }
};

QTEST_GUILESS_MAIN(TestPoolingGenerator)
#include "TestPoolingGenerator.moc"
