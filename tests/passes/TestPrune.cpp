// Tests of prune: exact sparsity and exactly the smallest weights (unstructured, global and per
// layer), which channels structured pruning removes and how consumers shrink, and what must not
// be pruned.
#include "PassTestUtil.h"

#include "core/Cost.h"
#include "passes/OutputDeviation.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace fb;
using namespace fb::test;

namespace {

/// Runs `pipeline`, warning with the error when it fails.
PipelineResult prune(const Graph& g, const std::string& pipeline) {
  PipelineResult r = runPipeline(g, pipeline);
  if (r.error)
    qWarning("%s failed: %s", pipeline.c_str(), r.error->message().c_str());
  return r;
}

/// A statistic of the last pass application, 0 when absent.
double statistic(const PipelineResult& r, const std::string& name) {
  const auto& stats = r.snapshots.back().record->statistics;
  auto it = stats.find(name);
  return it == stats.end() ? 0.0 : it->second;
}

std::vector<float> floatsOf(const Value* v) {
  auto d = v->constantData().data<float>();
  return {d.begin(), d.end()};
}

/// The node named `name` (ONNX node name), or nullptr.
const Node* nodeNamed(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes())
    if (n->name() == name)
      return n.get();
  return nullptr;
}

/// Rows `keep` of a row-major [rows, per] float vector.
std::vector<float> rowsOf(const std::vector<float>& w, int64_t per, const std::vector<int64_t>& keep) {
  std::vector<float> out;
  for (int64_t r : keep)
    out.insert(out.end(), w.begin() + r * per, w.begin() + (r + 1) * per);
  return out;
}

/// Columns `keep` of W [rows, cols, per...] along dim 1, as the pass should shrink a consumer.
std::vector<float> dim1Of(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t per,
                          const std::vector<int64_t>& keep) {
  std::vector<float> out;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c : keep)
      out.insert(out.end(), w.begin() + (r * cols + c) * per, w.begin() + (r * cols + c + 1) * per);
  return out;
}

/// Channels kept when the `drop` lowest-L1 rows of W [rows, per] go, computed independently of
/// the pass (ties drop the lower index).
std::vector<int64_t> keptByL1(const std::vector<float>& w, int64_t rows, int64_t drop) {
  const int64_t per = int64_t(w.size()) / rows;
  std::vector<std::pair<double, int64_t>> norms;
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t i = 0; i < per; ++i)
      s += std::fabs(double(w[size_t(r * per + i)]));
    norms.push_back({s, r});
  }
  std::sort(norms.begin(), norms.end());
  std::vector<int64_t> keep;
  for (size_t i = size_t(drop); i < norms.size(); ++i)
    keep.push_back(norms[i].second);
  std::sort(keep.begin(), keep.end());
  return keep;
}

int64_t countZeros(const std::vector<float>& v) {
  return std::count(v.begin(), v.end(), 0.0f);
}

/// Conv → BN → Relu → Conv. conv1's channels 1 and 3 have the lowest L1 norms (0 and 0.5); the
/// BN shifts them far below zero, so after Relu they contribute nothing and pruning them at 50%
/// must leave the outputs unchanged.
const char* kConvBnReluConv = R"(graph @t opset 17 {
  input %x : f32[1, 2, 4, 4]
  const %w1 : f32[4, 2, 1, 1] = dense<[1.0, 2.0, 0.0, 0.0, -3.0, 1.0, 0.25, -0.25]>
  const %b1 : f32[4] = dense<[0.5, 0.0, -0.5, 0.0]>
  const %gamma : f32[4] = dense<[1.0, 2.0, 0.5, 1.0]>
  const %beta : f32[4] = dense<[0.1, -1.0, 0.2, -10.0]>
  const %mean : f32[4] = dense<[0.0, 0.0, 0.5, 0.0]>
  const %var : f32[4] = dense<[1.0, 1.0, 1.0, 1.0]>
  const %w2 : f32[3, 4, 1, 1] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %c1 : f32[1, 4, 4, 4] = Conv(%x, %w1, %b1)  #1 "conv1"
  %y : f32[1, 4, 4, 4] = BatchNormalization(%c1, %gamma, %beta, %mean, %var)  #2 "bn"
  %r : f32[1, 4, 4, 4] = Relu(%y)  #3 "relu"
  %c2 : f32[1, 3, 4, 4] = Conv(%r, %w2)  #4 "conv2"
  output %c2
}
)";

/// Conv, Gemm and MatMul weights with known magnitudes; the Conv has a bias that must stay.
const char* kThreeWeights = R"(graph @t opset 17 {
  input %x : f32[1, 1, 2, 2]
  input %a : f32[1, 3]
  const %w : f32[2, 1, 1, 1] = dense<[0.1, -3.0]>
  const %b : f32[2] = dense<[0.001, 8.0]>
  const %g : f32[3, 2] = dense<[0.5, -0.2, 4.0, 1.0, -0.05, 2.0]>
  const %m : f32[3, 2] = dense<[30.0, -40.0, 60.0, 0.01, -50.0, 70.0]>
  %c : f32[1, 2, 2, 2] = Conv(%x, %w, %b)  #1 "conv"
  %gy : f32[1, 2] = Gemm(%a, %g)  #2 "gemm"
  %my : f32[1, 2] = MatMul(%a, %m)  #3 "mm"
  output %c, %gy, %my
}
)";

} // namespace

class TestPrune : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Global: the 7 smallest of all 14 magnitudes go, wherever they are; the bias stays.
  void unstructuredGlobalExact() {
    auto g = parseIr(kThreeWeights);
    PipelineResult r = prune(*g, "prune{sparsity=0.5}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(floatsOf(out.nodes()[0]->input(1)), (std::vector<float>{0.f, -3.f}));
    QCOMPARE(floatsOf(out.nodes()[0]->input(2)), (std::vector<float>{0.001f, 8.f}));
    QCOMPARE(floatsOf(out.nodes()[1]->input(1)), (std::vector<float>{0, 0, 4, 0, 0, 0}));
    QCOMPARE(floatsOf(out.nodes()[2]->input(1)), (std::vector<float>{30, -40, 60, 0, -50, 70}));
    QCOMPARE(statistic(r, "weights zeroed"), 7.0);
    QCOMPARE(statistic(r, "weights considered"), 14.0);
    // Dense storage: the parameter count does not change.
    QCOMPARE(statistic(r, "params after"), statistic(r, "params before"));
  }

  /// Per layer: half of each tensor goes (rounded), by that tensor's own threshold.
  void unstructuredPerLayerExact() {
    auto g = parseIr(kThreeWeights);
    PipelineResult r = prune(*g, "prune{sparsity=0.5,scope=layer}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(floatsOf(out.nodes()[0]->input(1)), (std::vector<float>{0.f, -3.f}));
    QCOMPARE(floatsOf(out.nodes()[1]->input(1)), (std::vector<float>{0, 0, 4, 1, 0, 2}));
    QCOMPARE(floatsOf(out.nodes()[2]->input(1)), (std::vector<float>{0, 0, 60, 0, -50, 70}));
    QCOMPARE(statistic(r, "weights zeroed"), 7.0);
    // The input graph's constants were not written to (they are shared with snapshot 0).
    QCOMPARE(floatsOf(g->findValue("m")), (std::vector<float>{30, -40, 60, 0.01f, -50, 70}));
  }

  /// On small_cnn: exactly round(s·n) zeros (globally, and per tensor with scope=layer), and the
  /// zeroed weights are exactly the smallest: none larger than any kept one.
  void unstructuredSparsityOnSample() {
    auto g = loadSample("small_cnn.onnx");
    const std::vector<std::string> names = {"/conv1/Conv", "/conv2/Conv", "/fc/Gemm"};
    for (const char* scope : {"global", "layer"}) {
      PipelineResult r = prune(*g, std::string("prune{sparsity=0.3,scope=") + scope + "}");
      QVERIFY(!r.error);
      int64_t zeros = 0, total = 0;
      float maxZeroed = 0, minKept = INFINITY;
      for (const auto& name : names) {
        auto before = floatsOf(nodeNamed(*g, name)->input(1));
        auto after = floatsOf(nodeNamed(r.finalGraph(), name)->input(1));
        QCOMPARE(after.size(), before.size());
        QCOMPARE(countZeros(before), int64_t(0));
        const int64_t z = countZeros(after);
        if (std::string(scope) == "layer") {
          QCOMPARE(z, int64_t(std::llround(0.3 * double(before.size()))));
          maxZeroed = 0;
          minKept = INFINITY;
        }
        for (size_t i = 0; i < before.size(); ++i) {
          if (after[i] == 0.f)
            maxZeroed = std::max(maxZeroed, std::fabs(before[i]));
          else {
            QCOMPARE(after[i], before[i]);
            minKept = std::min(minKept, std::fabs(before[i]));
          }
        }
        QVERIFY(maxZeroed <= minKept);
        zeros += z;
        total += int64_t(before.size());
      }
      QCOMPARE(zeros, int64_t(std::llround(0.3 * double(total))));
      QCOMPARE(statistic(r, "weights zeroed"), double(zeros));
      QVERIFY(maxOutputDifference(*g, r.finalGraph()) < INFINITY);
    }
  }

  /// Conv→BN→Relu→Conv: channels 1 and 3 go; the bias, the BN's vectors and conv2's input
  /// channels shrink to [0, 2]; conv2 feeds the output, so its channels stay.
  void structuredHandWritten() {
    auto g = parseIr(kConvBnReluConv);
    PipelineResult r = prune(*g, "prune{sparsity=0.5,structured=true}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    const Node* conv1 = out.findNode(1);
    const Node* bn = out.findNode(2);
    const Node* conv2 = out.findNode(4);
    QCOMPARE(floatsOf(conv1->input(1)), (std::vector<float>{1, 2, -3, 1}));
    QCOMPARE(floatsOf(conv1->input(2)), (std::vector<float>{0.5f, -0.5f}));
    QCOMPARE(floatsOf(bn->input(1)), (std::vector<float>{1.f, 0.5f}));
    QCOMPARE(floatsOf(bn->input(2)), (std::vector<float>{0.1f, 0.2f}));
    QCOMPARE(floatsOf(bn->input(3)), (std::vector<float>{0.f, 0.5f}));
    QCOMPARE(floatsOf(bn->input(4)), (std::vector<float>{1.f, 1.f}));
    QCOMPARE(floatsOf(conv2->input(1)), (std::vector<float>{1, 3, 5, 7, 9, 11}));
    QCOMPARE(conv1->output(0)->type().str(), std::string("f32[1, 2, 4, 4]"));
    QCOMPARE(conv2->output(0)->type().str(), std::string("f32[1, 3, 4, 4]"));
    QCOMPARE(statistic(r, "channels removed"), 2.0);
    QCOMPARE(statistic(r, "Convs pruned"), 1.0);
    QCOMPARE(statistic(r, "left alone: output channels are tied"), 1.0);
    // The removed channels were dead after Relu: nothing changes numerically, and the pass's
    // own deviation report says so.
    QVERIFY(maxOutputDifference(*g, out) < 1e-6);
    QCOMPARE(statistic(r, "eval inputs"), 4.0);
    QVERIFY(statistic(r, "eval max abs") < 1e-6);
  }

  /// torch.onnx shares equal initializers and aliases them through Identity nodes; a bias that
  /// arrives through Identity is still a constant, and the Identity is left for dce.
  void biasThroughIdentityIsPruned() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 2, 4, 4]
  const %w1 : f32[4, 2, 1, 1] = dense<[1.0, 2.0, 0.0, 0.0, -3.0, 1.0, 0.25, -0.25]>
  const %shared : f32[4] = dense<[0.5, 0.0, -0.5, 0.0]>
  const %w2 : f32[3, 4, 1, 1] = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]>
  %b1 : f32[4] = Identity(%shared)  #5 "alias"
  %c1 : f32[1, 4, 4, 4] = Conv(%x, %w1, %b1)  #1 "conv1"
  %r : f32[1, 4, 4, 4] = Relu(%c1)  #3 "relu"
  %c2 : f32[1, 3, 4, 4] = Conv(%r, %w2)  #4 "conv2"
  output %c2
}
)");
    PipelineResult r = prune(*g, "prune{sparsity=0.5,structured=true}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(statistic(r, "Convs pruned"), 1.0);
    QCOMPARE(floatsOf(out.findNode(1)->input(1)), (std::vector<float>{1, 2, -3, 1}));
    QCOMPARE(floatsOf(out.findNode(1)->input(2)), (std::vector<float>{0.5f, -0.5f}));
    QCOMPARE(floatsOf(out.findNode(4)->input(1)), (std::vector<float>{1, 3, 5, 7, 9, 11}));
    QVERIFY(out.findNode(5) != nullptr); // the Identity still stands (dce removes it)
  }

  /// L1 and L2 disagree: [3, 0, 0, 0] has L1 3 and L2 3; [1, 1, 1, 1] has L1 4 and L2 2.
  void scoreL1VersusL2() {
    const char* ir = R"(graph @t opset 17 {
  input %x : f32[1, 4, 2, 2]
  const %w1 : f32[2, 4, 1, 1] = dense<[3.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]>
  const %w2 : f32[1, 2, 1, 1] = dense<[1.0, 2.0]>
  %c1 : f32[1, 2, 2, 2] = Conv(%x, %w1)  #1
  %c2 : f32[1, 1, 2, 2] = Conv(%c1, %w2)  #2
  output %c2
}
)";
    auto g = parseIr(ir);
    PipelineResult l1 = prune(*g, "prune{sparsity=0.5,structured=true,score=l1}");
    PipelineResult l2 = prune(*g, "prune{sparsity=0.5,structured=true,score=l2}");
    QVERIFY(!l1.error && !l2.error);
    QCOMPARE(floatsOf(l1.finalGraph().findNode(1)->input(1)), (std::vector<float>{1, 1, 1, 1}));
    QCOMPARE(floatsOf(l1.finalGraph().findNode(2)->input(1)), (std::vector<float>{2}));
    QCOMPARE(floatsOf(l2.finalGraph().findNode(1)->input(1)), (std::vector<float>{3, 0, 0, 0}));
    QCOMPARE(floatsOf(l2.finalGraph().findNode(2)->input(1)), (std::vector<float>{1}));
  }

  /// small_cnn at 30%: conv1 loses floor(4.8) = 4 of 16, conv2 floor(9.6) = 9 of 32, by L1;
  /// BN, conv2's input channels and the fc weight (after GlobalAveragePool→Flatten) shrink.
  void structuredSmallCnn() {
    auto g = loadSample("small_cnn.onnx");
    PipelineResult r = prune(*g, "prune{sparsity=0.3,structured=true}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    auto w1 = floatsOf(nodeNamed(*g, "/conv1/Conv")->input(1));
    auto w2 = floatsOf(nodeNamed(*g, "/conv2/Conv")->input(1));
    auto fc = floatsOf(nodeNamed(*g, "/fc/Gemm")->input(1));
    const auto keep1 = keptByL1(w1, 16, 4);
    const auto keep2 = keptByL1(w2, 32, 9);
    QCOMPARE(keep1.size(), size_t(12));
    QCOMPARE(floatsOf(nodeNamed(out, "/conv1/Conv")->input(1)), rowsOf(w1, 27, keep1));
    // conv2 first loses input channels (conv1's), then its own output channels.
    auto w2in = dim1Of(w2, 32, 16, 9, keep1);
    QCOMPARE(floatsOf(nodeNamed(out, "/conv2/Conv")->input(1)), rowsOf(w2in, 12 * 9, keep2));
    // fc.weight is [10, 32] with transB: its columns are conv2's channels.
    QCOMPARE(floatsOf(nodeNamed(out, "/fc/Gemm")->input(1)), dim1Of(fc, 10, 32, 1, keep2));
    QCOMPARE(floatsOf(nodeNamed(out, "/bn1/BatchNormalization")->input(1)),
             rowsOf(floatsOf(nodeNamed(*g, "/bn1/BatchNormalization")->input(1)), 1, keep1));
    QCOMPARE(statistic(r, "channels removed"), 13.0);
    QCOMPARE(statistic(r, "Convs pruned"), 2.0);
    // FLOPs go down by roughly the ratio: conv2 keeps 12/16 · 23/32 of its work, conv1 12/16.
    const double before = statistic(r, "FLOPs before"), after = statistic(r, "FLOPs after");
    QCOMPARE(before, computeModelStats(*g).flops);
    QCOMPARE(after, computeModelStats(out).flops);
    QVERIFY2(after < 0.75 * before && after > 0.45 * before,
             qPrintable(QString("FLOPs %1 -> %2").arg(before).arg(after)));
    QVERIFY(statistic(r, "params after") < statistic(r, "params before"));
    // Removing live channels changes the outputs: report by how much (it runs and is finite).
    const double diff = maxOutputDifference(*g, out);
    qInfo("small_cnn structured 30%%: %s; max output difference %g",
          r.snapshots.back().record->summary.c_str(), diff);
    QVERIFY(diff > 0 && std::isfinite(diff));
    // The pass's own report measures the same deviation on its 4 evaluation inputs.
    QCOMPARE(statistic(r, "eval inputs"), 4.0);
    QVERIFY(statistic(r, "eval max abs") > 0 && statistic(r, "eval cosine min") < 1.0);
    auto deviation = measureOutputDeviation(*g, out, 4, 1000000);
    QVERIFY(deviation.ok());
    QCOMPARE(statistic(r, "eval max abs"), deviation->maxAbs);
  }

  /// sparsity=0 removes nothing, structured or not: the outputs are identical.
  void zeroSparsityIsIdentity() {
    auto g = loadSample("small_cnn.onnx");
    for (const char* p : {"prune{sparsity=0,structured=true}", "prune{sparsity=0}"}) {
      PipelineResult r = prune(*g, p);
      QVERIFY(!r.error);
      QVERIFY(!r.snapshots.back().record->changed);
      QCOMPARE(maxOutputDifference(*g, r.finalGraph()), 0.0);
    }
  }

  /// resnet_block: conv2 feeds the residual Add (its channels must match the input), so it stays;
  /// conv1 only feeds BN→Relu→conv2, so it loses floor(0.3·64) = 19 channels.
  void residualBlockLeavesTiedConvAlone() {
    auto g = loadSample("resnet_block.onnx");
    PipelineResult r = prune(*g, "prune{sparsity=0.3,structured=true}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(statistic(r, "left alone: output channels are tied"), 1.0);
    QCOMPARE(statistic(r, "channels removed"), 19.0);
    QCOMPARE(nodeNamed(out, "/conv1/Conv")->output(0)->type().str(),
             std::string("f32[1, 45, 28, 28]"));
    QCOMPARE(nodeNamed(out, "/conv2/Conv")->input(1)->type().str(),
             std::string("f32[64, 45, 3, 3]"));
    QCOMPARE(out.outputs()[0]->type().str(), std::string("f32[1, 64, 28, 28]"));
    qInfo("resnet_block: %s; max output difference %g", r.snapshots.back().record->summary.c_str(),
          maxOutputDifference(*g, out));
  }

  /// mobilenet_v2_block: the expand Conv's channels run through the depthwise Conv (whose
  /// channels and group shrink too) into the project Conv; project feeds the residual Add.
  void depthwiseChainShrinks() {
    auto g = loadSample("mobilenet_v2_block.onnx");
    PipelineResult r = prune(*g, "prune{sparsity=0.3,structured=true}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    const Node* dw = nodeNamed(out, "/depthwise/Conv");
    QCOMPARE(*dw->attrs().getInt("group", 0), int64_t(192 - 57));
    QCOMPARE(dw->input(1)->type().str(), std::string("f32[135, 1, 3, 3]"));
    QCOMPARE(nodeNamed(out, "/project/Conv")->input(1)->type().str(),
             std::string("f32[32, 135, 1, 1]"));
    QCOMPARE(statistic(r, "Convs pruned"), 1.0);
    QCOMPARE(statistic(r, "left alone: output channels are tied"), 1.0);
    qInfo("mobilenet_v2_block: %s; max output difference %g",
          r.snapshots.back().record->summary.c_str(), maxOutputDifference(*g, out));
  }

  /// Per-channel constants of elementwise ops ([C,1,1] and [1,C,1,1], on either side) shrink,
  /// shared scalars stay; at sparsity=1 one channel (the largest) is kept.
  void elementwiseConstantsShrinkAndOneChannelStays() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 1, 2, 2]
  const %w1 : f32[3, 1, 1, 1] = dense<[2.0, -5.0, 1.0]>
  const %k : f32[3, 1, 1] = dense<[10.0, 20.0, 30.0]>
  const %k4 : f32[1, 3, 1, 1] = dense<[7.0, 8.0, 9.0]>
  const %one : f32[] = dense<[1.0]>
  const %w2 : f32[1, 3, 1, 1] = dense<[1.0, 2.0, 3.0]>
  %c1 : f32[1, 3, 2, 2] = Conv(%x, %w1)  #1
  %m : f32[1, 3, 2, 2] = Mul(%c1, %k)  #2
  %s : f32[1, 3, 2, 2] = Sub(%k4, %m)  #3
  %a : f32[1, 3, 2, 2] = Add(%s, %one)  #4
  %c2 : f32[1, 1, 2, 2] = Conv(%a, %w2)  #5
  output %c2
}
)");
    PipelineResult r = prune(*g, "prune{sparsity=1,structured=true}");
    QVERIFY(!r.error);
    const Graph& out = r.finalGraph();
    QCOMPARE(floatsOf(out.findNode(1)->input(1)), (std::vector<float>{-5}));
    QCOMPARE(floatsOf(out.findNode(2)->input(1)), (std::vector<float>{20}));
    QCOMPARE(out.findNode(3)->input(0)->type().str(), std::string("f32[1, 1, 1, 1]"));
    QCOMPARE(floatsOf(out.findNode(3)->input(0)), (std::vector<float>{8}));
    QCOMPARE(out.findNode(4)->input(1)->name(), std::string("one"));
    QCOMPARE(floatsOf(out.findNode(5)->input(1)), (std::vector<float>{2}));
    QCOMPARE(out.findNode(4)->output(0)->type().str(), std::string("f32[1, 1, 2, 2]"));
    QCOMPARE(statistic(r, "channels removed"), 2.0);
    QVERIFY(std::isfinite(maxOutputDifference(*g, out)));
  }

  /// A Conv feeding a non-constant elementwise operand (the residual pattern) keeps its channels.
  void residualAddIsTied() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 2, 2, 2]
  const %w1 : f32[2, 2, 1, 1] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %w2 : f32[1, 2, 1, 1] = dense<[1.0, 1.0]>
  %c1 : f32[1, 2, 2, 2] = Conv(%x, %w1)  #1
  %r : f32[1, 2, 2, 2] = Relu(%c1)  #2
  %a : f32[1, 2, 2, 2] = Add(%r, %x)  #3
  %c2 : f32[1, 1, 2, 2] = Conv(%a, %w2)  #4
  output %c2
}
)");
    PipelineResult r = prune(*g, "prune{sparsity=0.5,structured=true}");
    QVERIFY(!r.error);
    QVERIFY(!r.snapshots.back().record->changed);
    QCOMPARE(statistic(r, "left alone: output channels are tied"), 2.0);
    QCOMPARE(maxOutputDifference(*g, r.finalGraph()), 0.0);
  }

  /// A Conv feeding a Concat or a graph output keeps its channels.
  void concatAndOutputAreTied() {
    auto g = parseIr(R"(graph @t opset 17 {
  input %x : f32[1, 2, 2, 2]
  const %w1 : f32[2, 2, 1, 1] = dense<[1.0, 2.0, 3.0, 4.0]>
  const %w2 : f32[2, 2, 1, 1] = dense<[1.0, 0.0, 0.0, 1.0]>
  %c1 : f32[1, 2, 2, 2] = Conv(%x, %w1)  #1
  %c2 : f32[1, 2, 2, 2] = Conv(%x, %w2)  #2
  %cat : f32[1, 4, 2, 2] = Concat(%c1, %x) {axis = 1}  #3
  output %cat, %c2
}
)");
    PipelineResult r = prune(*g, "prune{sparsity=0.5,structured=true}");
    QVERIFY(!r.error);
    QVERIFY(!r.snapshots.back().record->changed);
    QCOMPARE(statistic(r, "left alone: output channels are tied"), 2.0);
  }

  /// Bad options fail naming the option, and leave the model as it was.
  void badOptionsNameTheOption() {
    auto g = parseIr(kThreeWeights);
    const std::pair<const char*, const char*> cases[] = {
        {"prune{sparsity=1.5}", "sparsity"},
        {"prune{sparsity=-0.1,structured=true}", "sparsity"},
        {"prune{score=l3}", "score"},
        {"prune{scope=model}", "scope"},
        {"prune{sparsty=0.5}", "sparsty"},
    };
    for (const auto& [pipeline, option] : cases) {
      PipelineResult r = runPipeline(*g, pipeline);
      QVERIFY2(r.error, pipeline);
      QVERIFY2(errorText(r).find(option) != std::string::npos, errorText(r).c_str());
      QCOMPARE(r.snapshots.size(), size_t(1));
    }
  }
};

QTEST_GUILESS_MAIN(TestPrune)
#include "TestPrune.moc"
