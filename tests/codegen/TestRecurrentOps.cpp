// Tests of the CPU backend on the recurrent ops RNN, GRU and LSTM: each configuration (cell,
// direction, layout, optional inputs, weights as constants or graph inputs, clip, input_forget,
// linear_before_reset, activations with parameters, sequence lengths including 0) compiled on
// its own and after the O3 pipeline, compared with the reference interpreter on the same inputs.
#include "codegen/exec/CompiledModel.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

using namespace fb;
using namespace fb::cg;

namespace {

/// Uniform values in [-1, 1) from a fixed seed (splitmix64).
Tensor random(std::vector<int64_t> sizes, uint64_t seed) {
  Tensor t(DType::F32, std::move(sizes));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    t.setFromDouble(i, double(z >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  return t;
}

/// One configuration of a recurrent node.
struct Config {
  OpKind op = OpKind::LSTM;
  std::string direction = "forward";
  int64_t layout = 0;
  int64_t seq = 5, batch = 3, input = 4, hidden = 5;
  bool bias = true, initial = false, peepholes = false, constWeights = true;
  std::vector<int32_t> lens; ///< sequence_lens, empty: absent
  std::vector<std::pair<std::string, AttrValue>> attrs;
  size_t outputs = 0; ///< 0: all the op has
};

std::string describe(const Config& c) {
  std::string s = std::string(opName(c.op)) + " " + c.direction + " layout " +
                  std::to_string(c.layout) + " H " + std::to_string(c.hidden);
  if (c.bias)
    s += " B";
  if (!c.lens.empty())
    s += " lens";
  if (c.initial)
    s += " initial";
  if (c.peepholes)
    s += " P";
  if (!c.constWeights)
    s += " weights-as-inputs";
  for (const auto& a : c.attrs)
    s += " " + a.first;
  return s;
}

/// The graph of one node for `c`; feeds receives the graph inputs' values.
std::unique_ptr<Graph> build(const Config& c, std::vector<Tensor>& feeds) {
  auto g = std::make_unique<Graph>("rnn");
  const int64_t nd = c.direction == "bidirectional" ? 2 : 1;
  const int64_t gates = c.op == OpKind::LSTM ? 4 : c.op == OpKind::GRU ? 3 : 1;
  uint64_t seed = 1;
  auto input = [&](const std::string& name, Tensor t) {
    feeds.push_back(t);
    return g->addInput(name, t.type());
  };
  auto weight = [&](const std::string& name, Tensor t) {
    return c.constWeights ? g->addConstant(name, t) : input(name, t);
  };
  std::vector<Value*> ins;
  ins.push_back(input("X", random(c.layout ? std::vector<int64_t>{c.batch, c.seq, c.input}
                                           : std::vector<int64_t>{c.seq, c.batch, c.input},
                                  seed++)));
  ins.push_back(weight("W", random({nd, gates * c.hidden, c.input}, seed++)));
  ins.push_back(weight("R", random({nd, gates * c.hidden, c.hidden}, seed++)));
  ins.push_back(c.bias ? weight("B", random({nd, 2 * gates * c.hidden}, seed++)) : nullptr);
  ins.push_back(c.lens.empty() ? nullptr
                               : input("L", Tensor::fromVector<int32_t>({c.batch}, c.lens)));
  const std::vector<int64_t> state = c.layout ? std::vector<int64_t>{c.batch, nd, c.hidden}
                                              : std::vector<int64_t>{nd, c.batch, c.hidden};
  ins.push_back(c.initial ? input("H0", random(state, seed++)) : nullptr);
  if (c.op == OpKind::LSTM) {
    ins.push_back(c.initial ? input("C0", random(state, seed++)) : nullptr);
    ins.push_back(c.peepholes ? weight("P", random({nd, 3 * c.hidden}, seed++)) : nullptr);
  }
  while (!ins.back())
    ins.pop_back();
  const size_t outs = c.outputs ? c.outputs : (c.op == OpKind::LSTM ? 3 : 2);
  Node* n = g->addNode(c.op, ins, outs, {}, "rnn");
  n->attrs().set("direction", c.direction);
  if (c.layout)
    n->attrs().set("layout", c.layout);
  for (const auto& [k, v] : c.attrs)
    n->attrs().set(k, v);
  for (size_t i = 0; i < outs; ++i)
    g->addOutput(n->output(i));
  return g;
}

/// Compiles g (after `pipeline` unless empty) and compares every output with the interpreter;
/// returns "" or what differs.
std::string compare(Graph& g, const std::vector<Tensor>& feeds, const std::string& pipeline) {
  Status st = inferShapes(g);
  if (!st.ok())
    return "infer: " + st.error().message();
  auto ref = interpret(g, feeds);
  if (!ref.ok())
    return "interpreter: " + ref.error().message();
  std::unique_ptr<Graph> compiled = g.clone();
  if (!pipeline.empty()) {
    auto steps = namedPipeline(pipeline);
    if (!steps.ok())
      return steps.error().message();
    PipelineResult pr = PassManager().run(g.clone(), *steps);
    if (pr.error)
      return "pipeline: " + pr.error->message();
    compiled = pr.finalGraph().clone();
  }
  CompileOptions co;
  co.useCache = false;
  auto model = CompiledModel::compile(*compiled, co);
  if (!model.ok())
    return "compile: " + model.error().message();
  auto got = (*model)->run(feeds);
  if (!got.ok())
    return "run: " + got.error().message();
  if (got->size() != ref->outputs.size())
    return "output count differs";
  for (size_t o = 0; o < got->size(); ++o) {
    const Tensor& r = ref->outputs[o];
    if (r.sizes() != (*got)[o].sizes())
      return "output " + std::to_string(o) + " has another shape";
    TensorComparison cmp = compareTensors(r, (*got)[o], defaultTolerance(r.dtype()));
    if (!cmp.ok)
      return "output " + std::to_string(o) + ": " + cmp.reason;
  }
  return "";
}

#define CHECK_CONFIG(config)                                                                       \
  do {                                                                                             \
    for (const char* pipeline_ : {"", "O3"}) {                                                     \
      std::vector<Tensor> feeds_;                                                                  \
      auto g_ = build(config, feeds_);                                                             \
      std::string r_ = compare(*g_, feeds_, pipeline_);                                            \
      QVERIFY2(r_.empty(), (describe(config) + " " + pipeline_ + ": " + r_).c_str());              \
    }                                                                                              \
  } while (0)

} // namespace

class TestRecurrentOps : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void directionsAndLayouts() {
    for (OpKind op : {OpKind::RNN, OpKind::GRU, OpKind::LSTM})
      for (const char* dir : {"forward", "reverse", "bidirectional"})
        for (int64_t layout : {0, 1}) {
          Config c;
          c.op = op;
          c.direction = dir;
          c.layout = layout;
          c.initial = layout == 1;
          c.peepholes = op == OpKind::LSTM && layout == 0;
          CHECK_CONFIG(c);
        }
  }

  void sequenceLengths() {
    for (OpKind op : {OpKind::RNN, OpKind::GRU, OpKind::LSTM})
      for (const char* dir : {"forward", "reverse", "bidirectional"}) {
        Config c;
        c.op = op;
        c.direction = dir;
        c.lens = {5, 2, 0};
        c.initial = true;
        CHECK_CONFIG(c);
      }
  }

  /// Hidden sizes that make the gate loops vectorized (G = 32, 24) and ones with tails.
  void vectorWidths() {
    for (int64_t h : {8, 9, 16}) {
      Config c;
      c.hidden = h;
      c.direction = "bidirectional";
      c.initial = true;
      CHECK_CONFIG(c);
      c.op = OpKind::GRU;
      CHECK_CONFIG(c);
      c.attrs = {{"linear_before_reset", int64_t(1)}};
      CHECK_CONFIG(c);
    }
  }

  void weightsAsInputs() {
    for (OpKind op : {OpKind::RNN, OpKind::GRU, OpKind::LSTM}) {
      Config c;
      c.op = op;
      c.constWeights = false;
      c.peepholes = op == OpKind::LSTM;
      c.lens = {3, 5, 1};
      c.direction = "reverse";
      CHECK_CONFIG(c);
    }
  }

  void attributes() {
    Config c;
    c.bias = false;
    CHECK_CONFIG(c); // no B
    c.bias = true;
    c.attrs = {{"clip", 0.6f}, {"input_forget", int64_t(1)}};
    c.peepholes = true;
    CHECK_CONFIG(c);
    c.attrs = {{"activations", std::vector<std::string>{"HardSigmoid", "Elu", "Softsign", "Sigmoid",
                                                        "ScaledTanh", "Affine"}},
               {"activation_alpha", std::vector<float>{0.3f, 0.9f, 0.7f, 0.5f}},
               {"activation_beta", std::vector<float>{0.45f, 1.3f, 0.1f}}};
    c.direction = "bidirectional";
    CHECK_CONFIG(c);
    Config g;
    g.op = OpKind::GRU;
    g.attrs = {{"activations", std::vector<std::string>{"LeakyRelu", "Softplus"}},
               {"linear_before_reset", int64_t(1)},
               {"clip", 2.0f}};
    CHECK_CONFIG(g);
    Config r;
    r.op = OpKind::RNN;
    r.attrs = {{"activations", std::vector<std::string>{"ThresholdedRelu"}},
               {"activation_alpha", std::vector<float>{0.1f}}};
    CHECK_CONFIG(r);
    r.attrs = {{"activations", std::vector<std::string>{"Relu"}}};
    r.outputs = 1; // Y alone
    CHECK_CONFIG(r);
  }

  /// Lengths outside [0, seq] are the interpreter's error, and the CPU run's too: the executor
  /// checks them before the kernel, which clamps them besides, so memory stays inside its
  /// buffers. (The kernel used to run on clamped lengths: a silently different answer.)
  void sequenceLengthsOutOfRange() {
    Config c;
    c.direction = "bidirectional";
    c.lens = {7, -2, 3};
    std::vector<Tensor> feeds;
    auto g = build(c, feeds);
    QVERIFY(inferShapes(*g).ok());
    auto ref = interpret(*g, feeds);
    QVERIFY(!ref.ok());
    QVERIFY(ref.error().message().find("sequence_lens[0] is 7, outside [0, seq_length = 5]") !=
            std::string::npos);
    CompileOptions co;
    co.useCache = false;
    auto model = CompiledModel::compile(*g, co);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().message().c_str());
    auto got = (*model)->run(feeds);
    QVERIFY(!got.ok());
    QCOMPARE(got.error().message(), ref.error().message());
    // In range, the same model runs and agrees with the interpreter.
    feeds[1] = Tensor::fromVector<int32_t>({3}, {5, 0, 3}); // feeds: X, L (weights are constants)
    auto inRange = interpret(*g, feeds);
    QVERIFY2(inRange.ok(), inRange.ok() ? "" : inRange.error().message().c_str());
    got = (*model)->run(feeds);
    QVERIFY2(got.ok(), got.ok() ? "" : got.error().message().c_str());
    for (size_t o = 0; o < got->size(); ++o)
      QVERIFY(compareTensors(inRange->outputs[o], (*got)[o], defaultTolerance(DType::F32)).ok);
  }

  /// Large enough that the input projection runs in parallel.
  void larger() {
    Config c;
    c.seq = 12;
    c.batch = 8;
    c.input = 48;
    c.hidden = 32;
    c.direction = "bidirectional";
    c.initial = true;
    c.layout = 1;
    CHECK_CONFIG(c);
  }
};

QTEST_GUILESS_MAIN(TestRecurrentOps)
#include "TestRecurrentOps.moc"
