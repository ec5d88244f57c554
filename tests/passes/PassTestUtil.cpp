// Pass test helpers.
#include "PassTestUtil.h"

#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
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

size_t countOps(const Graph& graph, OpKind op) {
  size_t n = 0;
  for (const auto& node : graph.nodes())
    n += node->op() == op;
  return n;
}

} // namespace fb::test
