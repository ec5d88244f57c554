// Tests of the report of lossy passes (quantize, prune): per-layer errors recomputed from the
// interpreter's intermediate values, per-layer sparsity against the pass's own totals, the
// facts taken from the pass's statistics, and refusals.
#include "app/workbench/CompressionReport.h"
#include "app/workbench/Session.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>

using namespace fb;
using namespace fb::workbench;

namespace {

std::string sample(const char* name) {
  return std::string(FUSEBOX_SAMPLES_DIR) + "/" + name;
}

std::unique_ptr<Session> sessionAfter(const char* name, const std::string& pipeline) {
  auto s = std::make_unique<Session>();
  if (!s->load(sample(name)).ok() || !s->setPipeline(pipeline).ok() || !s->runPipeline().ok())
    return nullptr;
  return s;
}

double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    const double x = a.getAsDouble(i), y = b.getAsDouble(i);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb);
}

/// The value of the quantized graph that carries what `node`'s output meant in the float graph:
/// the DequantizeLinear after it when its output was given a Q/DQ pair, else its own output.
const Value* quantizedCounterpart(const Node& node) {
  const Value* out = node.output(0);
  for (const Use& u : out->uses())
    if (u.user->op() == OpKind::QuantizeLinear)
      for (const Use& v : u.user->output(0)->uses())
        if (v.user->op() == OpKind::DequantizeLinear)
          return v.user->output(0);
  return out;
}

int64_t nonzeros(const Tensor& t) {
  int64_t n = 0;
  for (int64_t i = 0; i < t.numElements(); ++i)
    n += t.getAsDouble(i) != 0.0;
  return n;
}

} // namespace

class TestCompressionReport : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void quantizeLayersCarryTheirErrorAgainstTheFloatModel() {
    auto s = sessionAfter("small_cnn.onnx", "quantize{samples=4,eval=2}");
    QVERIFY(s);
    const Snapshot& snap = s->snapshot(1);
    QVERIFY(snap.record && snap.record->changed);
    Expected<CompressionReport> r = compressionReport(*s->graph(0), *snap.graph, *snap.record, 3);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message().c_str());
    QCOMPARE(r->pass, std::string("quantize"));

    // Oracle: both graphs on the same inputs, every intermediate kept, cosines recomputed here.
    auto inputs = makeRandomInputs(*s->graph(0), 3);
    QVERIFY(inputs.ok());
    InterpretOptions keep;
    keep.keepIntermediates = true;
    auto a = interpret(*s->graph(0), *inputs, keep);
    auto b = interpret(*snap.graph, *inputs, keep);
    QVERIFY(a.ok() && b.ok());

    int64_t quantized = 0;
    for (const auto& [k, v] : snap.record->statistics)
      if (k.size() > 10 && k.substr(k.size() - 10) == " quantized" && k != "activations quantized")
        quantized += int64_t(v);
    int64_t reported = 0;
    double worst = 0;
    for (const LayerCompression& l : r->layers) {
      const Node* after = snap.graph->findNode(l.node);
      const Node* before = s->graph(0)->findNode(l.node);
      QVERIFY(after && before);
      reported += l.quantized;
      const Tensor& ref = a->values.at(before->output(0)->name());
      const Tensor& got = b->values.at(quantizedCounterpart(*after)->name());
      const double c = cosine(ref, got);
      QVERIFY2(std::abs(c - l.cosine) < 1e-9,
               qPrintable(QString("%1: %2 vs %3").arg(l.name.c_str()).arg(c).arg(l.cosine)));
      QCOMPARE(l.value, 1.0 - l.cosine);
      QVERIFY(l.cosine < 1.0 && l.cosine > 0.9); // int8 is close, but not exact
      QVERIFY(l.maxAbs > 0);
      worst = std::max(worst, l.value);
      QVERIFY(r->heat.count(l.node));
    }
    QCOMPARE(reported, quantized);
    QVERIFY(quantized > 0);
    // The worst layer is the top of the heat scale; every heat is in [0, 1].
    double top = 0;
    for (const auto& [id, h] : r->heat) {
      QVERIFY(h >= 0 && h <= 1);
      top = std::max(top, h);
    }
    QVERIFY(std::abs(top - 1.0) < 1e-9);
    QVERIFY(!r->heatLegend.empty() && !r->metric.empty());

    // Facts come from the pass's statistics.
    std::map<std::string, std::string> facts(r->facts.begin(), r->facts.end());
    QVERIFY(facts.count("weights"));
    QVERIFY2(facts["weights"].find("smaller") != std::string::npos, facts["weights"].c_str());
    QCOMPARE(facts["evaluated on"], std::string("2 seeded random inputs"));
    QVERIFY(facts.count("output cosine"));
  }

  void unstructuredPruneLayersAddUpToThePassTotal() {
    auto s = sessionAfter("small_cnn.onnx", "prune{sparsity=0.5}");
    QVERIFY(s);
    const Snapshot& snap = s->snapshot(1);
    auto r = compressionReport(*s->graph(0), *snap.graph, *snap.record);
    QVERIFY(r.ok());
    QVERIFY(!r->layers.empty());
    int64_t before = 0, removed = 0;
    for (const LayerCompression& l : r->layers) {
      const Node* n = snap.graph->findNode(l.node);
      QCOMPARE(l.weightsAfter, nonzeros(n->input(1)->constantData()));
      QCOMPARE(l.weightsBefore,
               s->graph(0)->findNode(l.node)->input(1)->constantData().numElements());
      QCOMPARE(r->heat.at(l.node), l.value);
      before += l.weightsBefore;
      removed += l.weightsBefore - l.weightsAfter;
    }
    QCOMPARE(double(removed), snap.record->statistics.at("weights zeroed"));
    QCOMPARE(double(before), snap.record->statistics.at("weights considered"));
    // A global threshold removes different fractions per layer, about half overall.
    QVERIFY(std::abs(double(removed) / double(before) - 0.5) < 0.01);
  }

  void structuredPruneShowsRemovedChannels() {
    auto s = sessionAfter("small_cnn.onnx", "prune{sparsity=0.5,structured=true}");
    QVERIFY(s);
    const Snapshot& snap = s->snapshot(1);
    auto r = compressionReport(*s->graph(0), *snap.graph, *snap.record);
    QVERIFY(r.ok());
    QVERIFY(snap.record->statistics.at("Convs pruned") > 0); // conv1 feeds conv2 only
    bool shrunk = false;
    for (const LayerCompression& l : r->layers) {
      const Node* n = snap.graph->findNode(l.node);
      QVERIFY(l.weightsAfter <= n->input(1)->constantData().numElements());
      shrunk |= n->input(1)->constantData().numElements() < l.weightsBefore;
      QVERIFY(l.value >= 0 && l.value <= 1);
    }
    QVERIFY(shrunk);
    std::map<std::string, std::string> facts(r->facts.begin(), r->facts.end());
    QVERIFY(facts.count("parameters") && facts.count("FLOPs") && facts.count("channels removed"));
  }

  void otherPassesHaveNoReport() {
    auto s = sessionAfter("small_cnn.onnx", "canonicalize");
    QVERIFY(s);
    auto r = compressionReport(*s->graph(0), *s->graph(1), *s->snapshot(1).record);
    QVERIFY(!r.ok());
    QVERIFY(r.error().message().find("canonicalize") != std::string::npos);
    QVERIFY(!isCompressionPass("canonicalize"));
    QVERIFY(isCompressionPass("quantize") && isCompressionPass("prune"));
  }

  void nothingToQuantizeGivesAnEmptyReport() {
    QTemporaryDir dir;
    const QString path = dir.filePath("relu.fbir");
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("graph @relu opset 17 {\n  input %x : f32[1, 4]\n"
              "  %y : f32[1, 4] = Relu(%x)  #1 \"relu\"\n  output %y\n}\n");
    }
    Session s;
    QVERIFY(s.load(path.toStdString()).ok());
    QVERIFY(s.setPipeline("quantize{samples=2}").ok());
    QVERIFY(s.runPipeline().ok());
    const Snapshot& snap = s.snapshot(1);
    QVERIFY(!snap.record->changed);
    auto r = compressionReport(*s.graph(0), *snap.graph, *snap.record);
    QVERIFY(r.ok());
    QVERIFY(r->layers.empty() && r->heat.empty());
    QCOMPARE(r->summary.find("nothing to quantize") != std::string::npos, true);
  }
};

QTEST_GUILESS_MAIN(TestCompressionReport)
#include "TestCompressionReport.moc"
