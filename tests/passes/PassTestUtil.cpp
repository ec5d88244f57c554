// Pass test helpers.
#include "PassTestUtil.h"

#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/text/IrParser.h"
#include "core/Verifier.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace fb::test {

std::unique_ptr<Graph> loadSample(const std::string& name) {
  std::string path = std::string(FUSEBOX_SAMPLES_DIR) + "/" + name;
  auto g = loadModel(path);
  if (!g.ok()) {
    std::fprintf(stderr, "loadSample(%s): %s\n", name.c_str(), g.error().message().c_str());
    std::abort();
  }
  return std::move(g).value();
}

std::unique_ptr<Graph> parseIr(const std::string& text) {
  auto g = parseGraph(text, "<test>");
  if (!g.ok()) {
    std::fprintf(stderr, "parseIr: %s\n", g.error().message().c_str());
    std::abort();
  }
  Status st = verify(**g);
  if (!st.ok()) {
    std::fprintf(stderr, "parseIr: verify: %s\n", st.error().message().c_str());
    std::abort();
  }
  return std::move(g).value();
}

std::string zooModel(const std::string& name) {
  return std::string(FUSEBOX_ZOO_DIR) + "/" + name + ".onnx";
}

PipelineResult runPipeline(const Graph& graph, const std::string& pipeline) {
  auto steps = parsePipeline(pipeline);
  if (!steps.ok()) {
    PipelineResult r;
    r.snapshots.push_back(Snapshot{std::shared_ptr<const Graph>(graph.clone()), {}});
    r.error = steps.error();
    return r;
  }
  return PassManager().run(graph.clone(), *steps);
}

std::string errorText(const PipelineResult& result) {
  return result.error ? result.error->message() : std::string();
}

double maxOutputDifference(const Graph& before, const Graph& after, int seeds,
                           const std::map<std::string, int64_t>& dims) {
  std::map<std::string, int64_t> bindings = dims;
  for (const Value* in : before.inputs())
    for (const Dim& d : in->type().dims)
      if (d.isSymbol() && !bindings.count(d.symbolName()))
        bindings[d.symbolName()] = 2;
  double worst = 0;
  const double inf = std::numeric_limits<double>::infinity();
  for (int s = 0; s < seeds; ++s) {
    auto inputs = makeRandomInputs(before, uint64_t(s) + 1, bindings);
    if (!inputs.ok())
      return inf;
    auto a = interpret(before, *inputs);
    auto b = interpret(after, *inputs);
    if (!a.ok() || !b.ok()) {
      std::fprintf(stderr, "maxOutputDifference: %s\n",
                   (!a.ok() ? a.error() : b.error()).message().c_str());
      return inf;
    }
    if (a->outputs.size() != b->outputs.size())
      return inf;
    for (size_t i = 0; i < a->outputs.size(); ++i) {
      const Tensor& x = a->outputs[i];
      const Tensor& y = b->outputs[i];
      if (x.dtype() != y.dtype() || x.sizes() != y.sizes())
        return inf;
      for (int64_t k = 0; k < x.numElements(); ++k) {
        double d = std::fabs(x.getAsDouble(k) - y.getAsDouble(k));
        worst = std::max(worst, std::isnan(d) ? inf : d);
      }
    }
  }
  return worst;
}

std::string checkSamplesUnchanged(const std::string& pipeline, double tolerance,
                                  bool keepOutputNames) {
  for (const char* name : {"mlp.onnx", "small_cnn.onnx", "resnet_block.onnx",
                           "mobilenet_v2_block.onnx", "transformer_block.onnx",
                           "dynamic_batch.onnx"}) {
    auto g = loadSample(name);
    PipelineResult r = runPipeline(*g, pipeline);
    std::string where = std::string(name) + " under " + pipeline + ": ";
    if (r.error)
      return where + r.error->message();
    Status st = verify(r.finalGraph());
    if (!st.ok())
      return where + "verifier: " + st.error().message();
    double diff = maxOutputDifference(*g, r.finalGraph(), 2);
    if (!(diff <= tolerance))
      return where + "outputs differ by " + std::to_string(diff);
    if (keepOutputNames)
      for (size_t i = 0; i < g->outputs().size(); ++i)
        if (r.finalGraph().outputs()[i]->name() != g->outputs()[i]->name())
          return where + "output " + std::to_string(i) + " renamed to " +
                 r.finalGraph().outputs()[i]->name();
  }
  return "";
}

size_t countOps(const Graph& graph, OpKind op) {
  size_t n = 0;
  for (const auto& node : graph.nodes())
    n += node->op() == op;
  return n;
}

std::unique_ptr<Graph> randomRewriteGraph(uint64_t seed) {
  SeededRandom rng(seed * 7919 + 17);
  auto pick = [&](size_t n) { return size_t(rng.next() % n); };
  auto g = std::make_unique<Graph>("random_rewrite");
  const std::vector<int64_t> shape = {2, 3, 4};
  std::vector<Value*> pool = {g->addInput("x", TensorType::of(DType::F32, shape)),
                              g->addInput("z", TensorType::of(DType::F32, shape))};
  auto any = [&] { return pool[pick(pool.size())]; };
  auto splat = [&](float v, std::vector<int64_t> sizes) {
    Tensor t(DType::F32, sizes);
    for (float& e : t.mutableData<float>())
      e = v;
    return g->addConstant(g->uniqueValueName("c"), t);
  };
  auto randomConst = [&](std::vector<int64_t> sizes) {
    Tensor t(DType::F32, sizes);
    for (float& e : t.mutableData<float>())
      e = float(int(rng.next() % 9) - 4) * 0.25f;
    return g->addConstant(g->uniqueValueName("k"), t);
  };
  auto ints = [&](std::vector<int64_t> v) {
    return g->addConstant(g->uniqueValueName("s"),
                          Tensor::fromVector<int64_t>({int64_t(v.size())}, v));
  };
  auto node = [&](OpKind op, std::vector<Value*> ins) {
    return g->addNode(op, ins, 1)->output(0);
  };
  const int steps = 6 + int(pick(10));
  for (int s = 0; s < steps; ++s) {
    Value* v = any();
    Value* out = nullptr;
    switch (pick(14)) {
    case 0: out = node(OpKind::Identity, {v}); break;
    case 1: out = node(OpKind::Dropout, {v}); break;
    case 2: {
      static const OpKind ops[] = {OpKind::Mul, OpKind::Add, OpKind::Sub, OpKind::Div};
      OpKind op = ops[pick(4)];
      float neutral = (op == OpKind::Mul || op == OpKind::Div) ? 1.f : 0.f;
      std::vector<int64_t> cs = pick(2) ? std::vector<int64_t>{} : std::vector<int64_t>{4};
      Value* c = splat(neutral, cs);
      bool swap = (op == OpKind::Mul || op == OpKind::Add) && pick(2);
      out = node(op, swap ? std::vector<Value*>{c, v} : std::vector<Value*>{v, c});
      break;
    }
    case 3: out = node(OpKind::Neg, {node(OpKind::Neg, {v})}); break;
    case 4: {
      std::vector<int64_t> p = {0, 1, 2};
      for (size_t i = 2; i > 0; --i)
        std::swap(p[i], p[pick(i + 1)]);
      Node* t1 = g->addNode(OpKind::Transpose, {v}, 1);
      t1->attrs().set("perm", p);
      std::vector<int64_t> inv(3);
      for (size_t i = 0; i < 3; ++i)
        inv[size_t(p[i])] = int64_t(i);
      Node* t2 = g->addNode(OpKind::Transpose, {t1->output(0)}, 1);
      t2->attrs().set("perm", inv);
      out = t2->output(0);
      break;
    }
    case 5: {
      Value* r1 = node(OpKind::Reshape, {v, ints(pick(2) ? std::vector<int64_t>{6, 4}
                                                          : std::vector<int64_t>{2, 12})});
      out = node(OpKind::Reshape, {r1, ints({2, -1, 4})});
      break;
    }
    case 6: {
      Node* c = g->addNode(OpKind::Cast, {v}, 1);
      c->attrs().set("to", int64_t(1)); // FLOAT
      out = c->output(0);
      break;
    }
    case 7: {
      // The same expression twice, once commuted.
      Value* w = any();
      static const OpKind ops[] = {OpKind::Add, OpKind::Mul, OpKind::Max, OpKind::Min};
      OpKind op = ops[pick(4)];
      Value* a = node(op, {v, w});
      Value* b = node(op, {w, v});
      out = node(OpKind::Sub, {a, b}); // zero, but only a pass knows that
      out = node(OpKind::Add, {out, v});
      break;
    }
    case 8: {
      // A constant sub-graph, and a duplicate of one of its constants.
      Value* k1 = randomConst({4});
      Value* k2 = randomConst({3, 1});
      Value* k = node(OpKind::Mul, {node(OpKind::Add, {k1, k2}), k1});
      Tensor copy = k1->constantData();
      Value* k1dup = g->addConstant(g->uniqueValueName("k"), Tensor::fromVector<float>(
          {4}, std::vector<float>(copy.data<float>().begin(), copy.data<float>().end())));
      out = node(OpKind::Add, {node(OpKind::Mul, {v, k}), k1dup});
      break;
    }
    case 9: {
      // The exporters' flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
      Value* sh = node(OpKind::Shape, {v});
      Node* gat = g->addNode(OpKind::Gather, {sh, g->addConstant(g->uniqueValueName("i"),
                                                                   Tensor::scalar<int64_t>(0))},
                             1);
      gat->attrs().set("axis", int64_t(0));
      Value* uns = node(OpKind::Unsqueeze, {gat->output(0), ints({0})});
      Node* cat = g->addNode(OpKind::Concat, {uns, ints({-1})}, 1);
      cat->attrs().set("axis", int64_t(0));
      Value* flat = node(OpKind::Reshape, {v, cat->output(0)});
      out = node(OpKind::Reshape, {node(OpKind::Relu, {flat}), ints({2, 3, 4})});
      break;
    }
    case 10: node(OpKind::Exp, {v}); continue; // dead
    case 11: out = node(OpKind::Relu, {v}); break;
    case 12: out = node(OpKind::Mul, {v, randomConst({3, 4})}); break;
    default: out = node(OpKind::Add, {v, any()}); break;
    }
    pool.push_back(out);
  }
  g->addOutput(pool.back());
  if (pool.size() > 3 && pick(2))
    g->addOutput(pool[2 + pick(pool.size() - 3)]);
  Status st = inferShapes(*g);
  if (st.ok())
    st = verify(*g);
  if (!st.ok()) {
    std::fprintf(stderr, "randomRewriteGraph(%llu): %s\n", (unsigned long long)seed,
                 st.error().message().c_str());
    std::abort();
  }
  return g;
}

} // namespace fb::test
