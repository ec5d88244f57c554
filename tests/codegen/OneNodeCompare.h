// The one-node harness of the CPU backend's op tests: builds a graph of one op (optionally
// followed by a Relu to fuse with), compiles it alone or after a pipeline, and compares every
// output with the reference interpreter, including the interpreter's errors.
#pragma once

#include "codegen/exec/CompiledModel.h"
#include "core/Interpreter.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <QtTest/QtTest>

namespace fb::test {

using namespace fb::cg;

inline Tensor f32(std::vector<int64_t> sizes, std::vector<float> v) {
  return Tensor::fromVector<float>(std::move(sizes), v);
}
inline Tensor i64(std::vector<int64_t> sizes, std::vector<int64_t> v) {
  return Tensor::fromVector<int64_t>(std::move(sizes), v);
}
/// A deterministic f32 tensor with repeated values (so that ties occur) in [-2, 2].
inline Tensor ramp(std::vector<int64_t> sizes, int mod = 7) {
  Tensor t(DType::F32, std::move(sizes));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.setFromDouble(i, double((i * 5) % mod) * 0.5 - 1.5);
  return t;
}

/// One operand of the one-node graph: fed as a graph input, or a constant.
struct Operand {
  Tensor data;
  bool constant = false;
};
inline Operand in(Tensor t) {
  return {std::move(t), false};
}
inline Operand cst(Tensor t) {
  return {std::move(t), true};
}

/// A graph of one `op` node; `feeds` receives the graph inputs' values.
inline std::unique_ptr<Graph> oneNode(OpKind op, const std::vector<Operand>& operands,
                                      const std::vector<std::pair<std::string, AttrValue>>& attrs,
                                      size_t numOutputs, std::vector<Tensor>& feeds,
                                      bool reluAfter = false) {
  auto g = std::make_unique<Graph>("one");
  std::vector<Value*> ins;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string name = "x" + std::to_string(i);
    if (!operands[i].data.valid())
      ins.push_back(nullptr);
    else if (operands[i].constant)
      ins.push_back(g->addConstant(name, operands[i].data));
    else {
      ins.push_back(g->addInput(name, operands[i].data.type()));
      feeds.push_back(operands[i].data);
    }
  }
  Node* n = g->addNode(op, ins, numOutputs, {}, "n");
  for (const auto& [k, v] : attrs)
    n->attrs().set(k, v);
  (void)inferShapes(*g); // to see output 0's dtype: a Relu follows only a float output
  reluAfter &= isFloat(n->output(0)->type().dtype);
  for (size_t i = 0; i < numOutputs; ++i) {
    Value* o = n->output(i);
    if (reluAfter && i == 0)
      o = g->addNode(OpKind::Relu, {o}, 1, {}, "relu")->output(0);
    g->addOutput(o);
  }
  return g;
}

/// Compiles g (after `pipeline` unless empty) and compares every output with the interpreter;
/// returns "" or what differs. An interpreter error must come back from the CPU run too, with
/// the same message: then the message is returned prefixed by "error: ".
inline std::string compare(Graph& g, const std::vector<Tensor>& feeds,
                           const std::string& pipeline = "") {
  Status st = inferShapes(g);
  if (!st.ok())
    return "infer: " + st.error().message();
  auto ref = interpret(g, feeds);
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
  if (!ref.ok()) {
    if (got.ok())
      return "the interpreter fails (" + ref.error().message() + ") but the CPU run does not";
    if (got.error().message() != ref.error().message())
      return "errors differ: interpreter '" + ref.error().message() + "', CPU '" +
             got.error().message() + "'";
    return "error: " + got.error().message();
  }
  if (!got.ok())
    return "run: " + got.error().message();
  for (size_t o = 0; o < got->size(); ++o) {
    const Tensor& r = ref->outputs[o];
    if (r.sizes() != (*got)[o].sizes())
      return "output " + std::to_string(o) + " has another shape";
    TensorComparison c = compareTensors(r, (*got)[o], defaultTolerance(r.dtype()));
    if (!c.ok)
      return "output " + std::to_string(o) + ": " + c.reason;
  }
  return "";
}

/// Runs `compare` on the op alone and under O3 (with a Relu after output 0 to fuse with).
#define CHECK_OP(op, operands, attrs, outs)                                                        \
  do {                                                                                             \
    for (int fused = 0; fused < 2; ++fused) {                                                      \
      std::vector<Tensor> feeds_;                                                                  \
      auto g_ = oneNode(op, operands, attrs, outs, feeds_, fused == 1);                            \
      std::string r_ = compare(*g_, feeds_, fused ? "O3" : "");                                    \
      QVERIFY2(r_.empty(),                                                                         \
               (std::string(opName(op)) + (fused ? " (O3)" : "") + ": " + r_).c_str());            \
    }                                                                                              \
  } while (0)

using Attrs = std::vector<std::pair<std::string, AttrValue>>;
using Ops = std::vector<Operand>;

} // namespace fb::test
