// Tests of quantize and lower-quantized: observers against hand-computed and NumPy-computed
// values, scale/zero-point and weight/bias quantization, QDQ insertion on the samples (accuracy
// against fp32, size), lowering equal to the QDQ graph within one quantum, and the errors.
#include "PassTestUtil.h"

#include "core/Interpreter.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"
#include "core/TensorCompare.h"
#include "core/Verifier.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"
#include "passes/Calibration.h"
#include "passes/QuantizationParams.h"

#include <QtTest/QtTest>

#include <cmath>
#include <set>

using namespace fb;
using namespace fb::test;

namespace {

/// Runs `pipeline`, warning with the error when it fails.
PipelineResult run(const Graph& g, const std::string& pipeline) {
  PipelineResult r = runPipeline(g, pipeline);
  if (r.error)
    qWarning("%s failed: %s", pipeline.c_str(), r.error->message().c_str());
  return r;
}

/// A statistic of pass application `index` (counted from the end: 1 = last), 0 when absent.
double statistic(const PipelineResult& r, const std::string& name, size_t fromEnd = 1) {
  const auto& stats = r.snapshots[r.snapshots.size() - fromEnd].record->statistics;
  auto it = stats.find(name);
  return it == stats.end() ? 0.0 : it->second;
}

Tensor floats(std::vector<int64_t> sizes, const std::vector<float>& v) {
  return Tensor::fromVector<float>(std::move(sizes), v);
}

/// Smallest cosine similarity of the outputs of two graphs over `seeds` seeded inputs.
double minCosine(const Graph& a, const Graph& b, int seeds) {
  double worst = 1;
  for (int s = 0; s < seeds; ++s) {
    auto in = makeRandomInputs(a, 5000 + uint64_t(s));
    auto ra = interpret(a, *in);
    auto rb = interpret(b, *in);
    if (!ra.ok() || !rb.ok())
      return -1;
    for (size_t o = 0; o < ra->outputs.size(); ++o)
      worst = std::min(worst, compareTensors(ra->outputs[o], rb->outputs[o], {}).cosine);
  }
  return worst;
}

/// Bytes of the constants that Conv/Gemm/MatMul read as weights (operand 1), looking through a
/// DequantizeLinear to its quantized constant.
int64_t weightOperandBytes(const Graph& g) {
  int64_t total = 0;
  for (const auto& n : g.nodes()) {
    if (n->op() != OpKind::Conv && n->op() != OpKind::Gemm && n->op() != OpKind::MatMul)
      continue;
    const Value* w = n->input(1);
    if (w->producer() && w->producer()->op() == OpKind::DequantizeLinear)
      w = w->producer()->input(0);
    if (w->isConstant())
      total += int64_t(w->constantData().byteSize());
  }
  return total;
}

/// Collects into `frontier` the values `v` is computed from in `lowered`: walking back through
/// producers, stopping at graph inputs and at values `qdq` also holds as a QuantizeLinear result
/// (the integer activations both graphs share by name). Constants are skipped.
void frontierOf(const Value* v, const Graph& qdq, std::set<std::string>& frontier, bool top) {
  if (v->isConstant())
    return;
  const Value* twin = qdq.findValue(v->name());
  if (v->isInput() || (!top && twin && twin->producer() &&
                       twin->producer()->op() == OpKind::QuantizeLinear)) {
    frontier.insert(v->name());
    return;
  }
  for (const Value* in : v->producer()->inputs())
    if (in)
      frontierOf(in, qdq, frontier, false);
}

/// The largest difference, in quanta, between an integer activation of the QDQ graph and the
/// same-named one of the lowered graph, over activations whose own integer inputs agree exactly
/// in both runs (so a rounding difference upstream does not cascade into the comparison). Every
/// lowered op is checked where its inputs agree; `compared` counts the comparisons made.
int64_t maxQuantumDifference(const Graph& qdq, const Graph& lowered, int seeds, int& compared) {
  int64_t worst = 0;
  compared = 0;
  InterpretOptions keep;
  keep.keepIntermediates = true;
  for (int s = 0; s < seeds; ++s) {
    auto in = makeRandomInputs(qdq, 7000 + uint64_t(s));
    auto a = interpret(qdq, *in, keep);
    auto b = interpret(lowered, *in, keep);
    if (!a.ok() || !b.ok())
      return 1 << 30;
    for (const auto& n : qdq.nodes()) {
      if (n->op() != OpKind::QuantizeLinear || n->input(0)->isConstant())
        continue;
      const std::string name = n->output(0)->name();
      const Value* v = lowered.findValue(name);
      if (!v || !v->producer())
        continue;
      std::set<std::string> frontier;
      frontierOf(v, qdq, frontier, /*top=*/true);
      bool inputsAgree = true;
      for (const std::string& f : frontier)
        inputsAgree = inputsAgree && a->values.at(f).identical(b->values.at(f));
      if (!inputsAgree)
        continue;
      const Tensor& x = a->values.at(name);
      const Tensor& y = b->values.at(name);
      if (x.sizes() != y.sizes() || x.dtype() != y.dtype())
        return 1 << 30;
      for (int64_t i = 0; i < x.numElements(); ++i)
        worst = std::max(worst, std::abs(x.getAsInt64(i) - y.getAsInt64(i)));
      ++compared;
    }
  }
  return worst;
}

} // namespace

class TestQuantize : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Min/max over two batches; minmax ranges widen to include 0, symmetric ones mirror |x|.
  void minMaxObserver() {
    ActivationObserver o;
    o.observe(floats({3}, {0.5f, 2.0f, 1.0f}));
    o.observe(floats({2}, {0.25f, 3.0f}));
    QCOMPARE(o.min(), 0.25);
    QCOMPARE(o.max(), 3.0);
    CalibrationSettings s;
    s.method = CalibrationMethod::MinMax;
    Range r = o.range(s);
    QCOMPARE(r.lo, 0.0);
    QCOMPARE(r.hi, 3.0);
    ActivationObserver neg;
    neg.observe(floats({3}, {-4.0f, 1.0f, 2.0f}));
    s.symmetric = true;
    r = neg.range(s);
    QCOMPARE(r.lo, -4.0);
    QCOMPARE(r.hi, 4.0);
  }

  /// Growing the range doubles the width and merges bins exactly: the counts equal those of
  /// binning every value directly at the final width.
  void histogramMergesExactly() {
    Histogram h(64);
    std::vector<float> first, second;
    for (int i = 0; i < 200; ++i)
      first.push_back(float(i) * 0.01f - 0.7f);
    for (int i = 0; i < 50; ++i)
      second.push_back(float(i) * 3.5f - 40.0f);
    h.add(first);
    const double w0 = h.binWidth();
    h.add(second);
    QVERIFY(h.binWidth() > w0);
    QVERIFY(int64_t(h.counts().size()) <= 64);
    QCOMPARE(h.total(), 250.0);
    std::vector<double> direct(h.counts().size(), 0.0);
    for (const auto* batch : {&first, &second})
      for (float v : *batch)
        direct[size_t(int64_t(std::floor(double(v) / h.binWidth())) - h.firstBin())] += 1;
    QCOMPARE(h.counts(), direct);
    // |x| folds bin k < 0 into bin -k-1.
    std::vector<double> abs = h.absoluteCounts();
    double sum = 0;
    for (double c : abs)
      sum += c;
    QCOMPARE(sum, 250.0);
  }

  /// Percentile of 0, 1, ..., 9999: the 99% point is 9900 to within a bin (width 16 here).
  void percentileObserver() {
    std::vector<float> v;
    for (int i = 0; i < 10000; ++i)
      v.push_back(float(i));
    ActivationObserver o;
    o.observe(Tensor::fromVector<float>({10000}, v));
    QCOMPARE(o.histogram().binWidth(), 16.0);
    CalibrationSettings s;
    s.method = CalibrationMethod::Percentile;
    s.percentile = 99.0;
    Range r = o.range(s);
    QCOMPARE(r.lo, 0.0);
    QVERIFY2(std::fabs(r.hi - 9900.0) <= 16.0, std::to_string(r.hi).c_str());
    // Signed data, symmetric: the 99th percentile of |x| for -5000..4999 is 4950 (± a bin).
    for (float& x : v)
      x -= 5000.0f;
    ActivationObserver sym;
    sym.observe(Tensor::fromVector<float>({10000}, v));
    s.symmetric = true;
    r = sym.range(s);
    QVERIFY2(std::fabs(r.hi - 4950.0) <= 8.0, std::to_string(r.hi).c_str());
    QCOMPARE(r.lo, -r.hi);
  }

  /// KL thresholds against an independent NumPy implementation of the MXNet/TensorRT method
  /// (values computed once and written here), and a uniform histogram that needs no clipping.
  void entropyThresholdMatchesReference() {
    std::vector<double> laplace;
    for (int j = 0; j < 1024; ++j)
      laplace.push_back(std::round(1000.0 * std::exp(-j / 40.0)));
    QCOMPARE(entropyThreshold(laplace, 0.5, 128), 305 * 0.5);
    std::vector<double> small = {9, 7, 5, 4, 3, 2, 2, 1, 1, 0, 1, 0, 0, 0, 0, 1};
    QCOMPARE(entropyThreshold(small, 1.0, 4), 11.0);
    QCOMPARE(entropyThreshold(std::vector<double>(300, 5.0), 2.0, 128), 600.0);
    QCOMPARE(entropyThreshold(std::vector<double>(100, 5.0), 1.0, 128), 100.0);
  }

  /// Scale and zero point by hand: affine [-1, 3] in i8 is scale 4/255, zero point
  /// round(-128 + 63.75) = -64; symmetric is 3/127 and 0 (u8: 128).
  void scaleAndZeroPoint() {
    AffineParams a = chooseParams({-1.0, 3.0}, {DType::I8, false});
    QCOMPARE(a.scale, float(4.0 / 255.0));
    QCOMPARE(a.zeroPoint, -64);
    AffineParams s = chooseParams({-1.0, 3.0}, {DType::I8, true});
    QCOMPARE(s.scale, float(3.0 / 127.0));
    QCOMPARE(s.zeroPoint, 0);
    QCOMPARE(chooseParams({-1.0, 3.0}, {DType::U8, true}).zeroPoint, 128);
    AffineParams u = chooseParams({0.0, 2.55}, {DType::U8, false});
    QCOMPARE(u.scale, float(2.55 / 255.0));
    QCOMPARE(u.zeroPoint, 0);
    AffineParams z = chooseParams({0.0, 0.0}, {DType::I8, false});
    QCOMPARE(z.scale, 1.0f);
    QCOMPARE(quantizeValue(-1.0f, a, DType::I8), -128);
    QCOMPARE(quantizeValue(3.0f, a, DType::I8), 127);
    QCOMPARE(quantizeValue(0.0f, a, DType::I8), -64);
    QCOMPARE(quantizeValue(100.0f, a, DType::I8), 127); // saturates
  }

  /// Per-channel weights: channel 0 has |w|max 127 (scale 1), channel 1 has 1 (scale 1/127);
  /// the bias lands at s_x·s_w[c].
  void weightAndBias() {
    Tensor w = floats({2, 3}, {127.0f, -3.2f, 50.7f, 0.6f, -1.0f, 0.25f});
    QuantizedWeight q = quantizeWeight(w, 0, /*perChannel=*/true);
    QCOMPARE(q.scales, (std::vector<float>{1.0f, float(1.0 / 127.0)}));
    auto d = q.data.data<int8_t>();
    QCOMPARE(std::vector<int>(d.begin(), d.end()), (std::vector<int>{127, -3, 51, 76, -127, 32}));
    QuantizedWeight t = quantizeWeight(w, 0, /*perChannel=*/false);
    QCOMPARE(t.scales.size(), size_t(1));
    QCOMPARE(t.data.data<int8_t>()[4], int8_t(-1));
    std::vector<float> biasScales;
    Tensor b = quantizeBias(floats({2}, {1.0f, -2.0f}), 0.5f, {0.1f, 0.2f}, biasScales);
    QCOMPARE(b.dtype(), DType::I32);
    QCOMPARE(b.data<int32_t>()[0], 20);
    QCOMPARE(b.data<int32_t>()[1], -20);
    QCOMPARE(biasScales[1], 0.5f * 0.2f);
  }

  /// QDQ form on the samples: every Conv/Gemm reads dequantized i8 weights, outputs stay close
  /// to fp32 (cosine ≥ 0.99), weights shrink 4x and the report carries the accuracy.
  void qdqOnSamples_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("method");
    QTest::newRow("small_cnn minmax") << "small_cnn.onnx" << "minmax";
    QTest::newRow("small_cnn percentile") << "small_cnn.onnx" << "percentile";
    QTest::newRow("small_cnn entropy") << "small_cnn.onnx" << "entropy";
    QTest::newRow("mlp percentile") << "mlp.onnx" << "percentile";
    QTest::newRow("mlp entropy") << "mlp.onnx" << "entropy";
    QTest::newRow("mlp percentile symmetric") << "mlp.onnx" << "percentile,mode=symmetric";
  }
  void qdqOnSamples() {
    QFETCH(QString, sample);
    QFETCH(QString, method);
    auto g = loadSample(sample.toStdString());
    auto base = run(*g, "infer-shapes,fold-batchnorm");
    QVERIFY(!base.error);
    const Graph& fp32 = base.finalGraph();
    PipelineResult r = run(fp32, "quantize{samples=4,eval=4,calibration=" +
                                     method.toStdString() + "}");
    QVERIFY(!r.error);
    const Graph& q = r.finalGraph();
    QVERIFY(verify(q).ok());
    size_t ops = 0;
    for (const auto& n : q.nodes())
      if (n->op() == OpKind::Conv || n->op() == OpKind::Gemm) {
        ++ops;
        const Value* w = n->input(1);
        QVERIFY(w->producer() && w->producer()->op() == OpKind::DequantizeLinear);
        QCOMPARE(w->producer()->input(0)->constantData().dtype(), DType::I8);
        const Value* x = n->input(0);
        QVERIFY(x->producer() && x->producer()->op() == OpKind::DequantizeLinear);
        if (n->input(2))
          QCOMPARE(n->input(2)->producer()->input(0)->constantData().dtype(), DType::I32);
      }
    QCOMPARE(ops, countOps(fp32, OpKind::Conv) + countOps(fp32, OpKind::Gemm));
    QCOMPARE(statistic(r, "activations quantized") > 0, true);
    QCOMPARE(weightOperandBytes(fp32), 4 * weightOperandBytes(q));
    const double cos = minCosine(fp32, q, 4);
    QVERIFY2(cos >= 0.99, std::to_string(cos).c_str());
    QCOMPARE(statistic(r, "eval inputs"), 4.0);
    QVERIFY(statistic(r, "eval cosine min") >= 0.99);
    QCOMPARE(statistic(r, "eval top-1 agreement %") >= 75.0, true);
  }

  /// Whole-model size: the MLP is almost all weights, so it shrinks by more than 3.5x.
  void modelShrinks() {
    auto g = loadSample("mlp.onnx");
    PipelineResult r = run(*g, "quantize{samples=2,eval=0}");
    QVERIFY(!r.error);
    const double before = statistic(r, "weight bytes before");
    const double after = statistic(r, "weight bytes after");
    QVERIFY2(before >= 3.5 * after, (std::to_string(before) + " vs " + std::to_string(after)).c_str());
  }

  /// lower-quantized computes the same integers as the QDQ graph, to within one quantum, and
  /// leaves no float Conv/Gemm; symmetric mode keeps Relu as an integer Clip.
  void loweringMatchesQdq_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<QString>("options");
    QTest::newRow("small_cnn") << "small_cnn.onnx" << "";
    QTest::newRow("small_cnn symmetric") << "small_cnn.onnx" << ",mode=symmetric";
    QTest::newRow("small_cnn uint8") << "small_cnn.onnx" << ",dtype=uint8";
    QTest::newRow("small_cnn per-tensor weights") << "small_cnn.onnx" << ",per_channel=false";
    QTest::newRow("mobilenet_v2_block symmetric") << "mobilenet_v2_block.onnx"
                                                  << ",mode=symmetric,calibration=minmax";
    QTest::newRow("mlp") << "mlp.onnx" << "";
    QTest::newRow("resnet_block") << "resnet_block.onnx" << "";
    QTest::newRow("mobilenet_v2_block") << "mobilenet_v2_block.onnx" << "";
    QTest::newRow("transformer_block") << "transformer_block.onnx" << "";
  }
  void loweringMatchesQdq() {
    QFETCH(QString, sample);
    QFETCH(QString, options);
    auto g = loadSample(sample.toStdString());
    PipelineResult r = run(*g, "infer-shapes,fold-batchnorm,quantize{samples=2,eval=0" +
                                   options.toStdString() + "},lower-quantized");
    QVERIFY(!r.error);
    const Graph& qdq = *r.snapshots[r.snapshots.size() - 2].graph;
    const Graph& low = r.finalGraph();
    QVERIFY(verify(low).ok());
    QCOMPARE(countOps(low, OpKind::Conv), size_t(0));
    QCOMPARE(countOps(low, OpKind::Gemm), size_t(0));
    QCOMPARE(countOps(low, OpKind::MatMul), countOps(qdq, OpKind::MatMul) -
                                                size_t(statistic(r, "MatMul quantized", 2)));
    QVERIFY(countOps(low, OpKind::QLinearConv) + countOps(low, OpKind::MatMulInteger) +
                countOps(low, OpKind::ConvInteger) >
            0);
    int compared = 0;
    const int64_t quanta = maxQuantumDifference(qdq, low, 2, compared);
    qInfo("%d integer activations compared, largest difference %lld quanta", compared,
          (long long)quanta);
    QVERIFY(compared > 0);
    QVERIFY2(quanta <= 1, std::to_string(quanta).c_str());
    const double cos = minCosine(qdq, low, 2);
    QVERIFY2(cos >= 0.999, std::to_string(cos).c_str());
    // Both forms print and parse back exactly, quantization annotations included.
    for (const Graph* graph : {&qdq, &low}) {
      PrintOptions withData;
      withData.withResourceData = true;
      const std::string text = printGraph(*graph, withData);
      QVERIFY(text.find("zero_point = [") != std::string::npos);
      auto back = parseGraph(text);
      QVERIFY2(back.ok(), back.ok() ? "" : back.error().message().c_str());
      QCOMPARE(printGraph(**back, withData), text);
    }
    if (sample == "small_cnn.onnx" && options.contains("symmetric"))
      QCOMPARE(countOps(low, OpKind::Clip), size_t(2)); // the two Relus after the Convs
    if (sample == "mobilenet_v2_block.onnx") {
      QCOMPARE(countOps(low, OpKind::QLinearConv), size_t(3));
      // Relu6 (Clip 0..6) is absorbed: an integer Clip at zero point 0 in symmetric mode,
      // nothing when the zero point already sits at -128.
      QCOMPARE(countOps(low, OpKind::Clip), size_t(options.contains("symmetric") ? 2 : 0));
      for (const auto& n : low.nodes())
        if (n->op() == OpKind::Clip)
          QCOMPARE(n->input(0)->type().dtype, DType::I8);
    }
    if (sample == "small_cnn.onnx" && !options.contains("symmetric")) {
      QCOMPARE(countOps(low, OpKind::QLinearConv), size_t(2));
      QCOMPARE(countOps(low, OpKind::Relu), size_t(0)); // absorbed by zero point = qmin
    }
  }

  /// Calibration from .npy files: one file per sample (a single-input model).
  void calibratesFromFiles() {
    auto g = loadSample("small_cnn.onnx");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (int i = 0; i < 3; ++i) {
      SeededRandom rng(uint64_t(i) + 11);
      Tensor t = randomTensor(DType::F32, {1, 3, 32, 32}, rng);
      const std::string path = dir.path().toStdString() + "/in" + std::to_string(i) + ".npy";
      QVERIFY(writeNpy(path, t).ok());
    }
    PipelineResult r = run(*g, "quantize{dir=" + dir.path().toStdString() + ",eval=0}");
    QVERIFY(!r.error);
    QCOMPARE(statistic(r, "calibration samples"), 3.0);
    const std::string a = dir.path().toStdString() + "/in0.npy";
    const std::string b = dir.path().toStdString() + "/in1.npy";
    r = run(*g, "quantize{inputs=" + a + ":" + b + ",eval=0}");
    QVERIFY(!r.error);
    QCOMPARE(statistic(r, "calibration samples"), 2.0);
    r = runPipeline(*g, "quantize{dir=" + dir.path().toStdString() + "/missing}");
    QVERIFY(r.error);
    QVERIFY2(r.error->message().find("missing") != std::string::npos, errorText(r).c_str());
  }

  /// Fused groups hide the values to observe: quantize refuses and says what to do.
  void refusesFusedGroups() {
    auto g = loadSample("small_cnn.onnx");
    PipelineResult r = runPipeline(*g, "infer-shapes,fold-batchnorm,fuse,quantize");
    QVERIFY(r.error);
    QVERIFY2(r.error->message().find("run quantize before fuse") != std::string::npos,
             errorText(r).c_str());
  }

  /// Bad options fail naming the option and what it accepts.
  void badOptions_data() {
    QTest::addColumn<QString>("pipeline");
    QTest::addColumn<QString>("message");
    QTest::newRow("method") << "quantize{calibration=median}"
                            << "option 'calibration' expects one of minmax, percentile, entropy";
    QTest::newRow("unknown") << "quantize{bits=4}" << "pass 'quantize' has no option 'bits'";
    QTest::newRow("mode") << "quantize{mode=odd}"
                          << "option 'mode' expects one of asymmetric, symmetric";
    QTest::newRow("dtype") << "quantize{dtype=int4}" << "option 'dtype' expects one of int8, uint8";
    QTest::newRow("samples") << "quantize{samples=0}"
                             << "option 'samples' expects an integer in [1, 4096]";
    QTest::newRow("percentile") << "quantize{percentile=20}"
                                << "option 'percentile' expects a number in (50, 100]";
    QTest::newRow("lower") << "lower-quantized{x=1}" << "'lower-quantized' takes no options";
  }
  void badOptions() {
    QFETCH(QString, pipeline);
    QFETCH(QString, message);
    auto g = loadSample("mlp.onnx");
    PipelineResult r = runPipeline(*g, pipeline.toStdString());
    QVERIFY(r.error);
    QVERIFY2(r.error->message().find(message.toStdString()) != std::string::npos,
             errorText(r).c_str());
  }

  /// Nothing to lower without QDQ patterns; nothing to quantize twice.
  void idempotent() {
    auto g = loadSample("mlp.onnx");
    PipelineResult r = run(*g, "lower-quantized");
    QVERIFY(!r.error);
    QVERIFY(!r.snapshots.back().record->changed);
    r = run(*g, "quantize{samples=1,eval=0},quantize{samples=1,eval=0}");
    QVERIFY(!r.error);
    QVERIFY(!r.snapshots.back().record->changed);
    QCOMPARE(statistic(r, "left alone: already quantized"), 3.0);
  }
};

QTEST_GUILESS_MAIN(TestQuantize)
#include "TestQuantize.moc"
