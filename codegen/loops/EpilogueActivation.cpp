// Activation recognition by evaluation: collect the elementwise subgraph hanging off a value,
// run it on probe values with the reference interpreter's kernels, and compare with the
// activations a GEMM epilogue implements.
#include "codegen/loops/EpilogueActivation.h"

#include "core/Interpreter.h"
#include "core/ShapeInference.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace fb::cg::lower {

namespace {

/// The ops an exporter builds activations from; each is elementwise with broadcasting.
bool isActivationPiece(OpKind op) {
  switch (op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Erf:
  case OpKind::Tanh:
  case OpKind::Sqrt:
    return true;
  default:
    return false;
  }
}

/// A scalar f32 constant operand (any rank, one element).
bool isScalarConstant(const Value* v,
                      const std::function<const Tensor*(const Value*)>& constantOf) {
  const Tensor* t = constantOf(v);
  return t && t->numElements() == 1 && t->dtype() == DType::F32;
}

double geluErf(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double geluTanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

constexpr size_t kMaxNodes = 10;

} // namespace

std::optional<MatchedActivation>
matchActivation(const Value* x, const std::function<const Tensor*(const Value*)>& constantOf) {
  if (x->type().dtype != DType::F32 || x->uses().size() < 2 || x->isGraphOutput())
    return std::nullopt;
  // Grow the region from x: a user joins when it is an activation piece whose operands are x,
  // region values or scalar constants.
  std::vector<const Node*> region;
  std::unordered_set<const Value*> inside = {x};
  std::unordered_set<const Node*> seen;
  for (bool grew = true; grew && region.size() <= kMaxNodes;) {
    grew = false;
    std::vector<const Value*> frontier(inside.begin(), inside.end());
    for (const Value* v : frontier)
      for (const Use& u : v->uses()) {
        const Node* n = u.user;
        if (seen.count(n) || !isActivationPiece(n->op()) || n->numOutputs() != 1)
          continue;
        bool ready = true;
        for (const Value* in : n->inputs())
          ready &= in && (inside.count(in) || isScalarConstant(in, constantOf));
        if (!ready)
          continue;
        seen.insert(n);
        region.push_back(n);
        inside.insert(n->output(0));
        grew = true;
      }
  }
  if (region.size() < 2 || region.size() > kMaxNodes)
    return std::nullopt;
  // One exit: every value but the last node's output is used only inside the region.
  const Node* last = nullptr;
  for (const Node* n : region) {
    const Value* out = n->output(0);
    bool escapes = out->isGraphOutput() || out->uses().empty();
    for (const Use& u : out->uses())
      escapes |= !seen.count(u.user);
    if (escapes) {
      if (last)
        return std::nullopt;
      last = n;
    }
  }
  for (const Use& u : x->uses())
    if (!seen.count(u.user))
      return std::nullopt;
  if (!last || last->output(0)->type() != x->type())
    return std::nullopt;
  // Copy the region into a graph of its own over a 1-D input of probe values, in an order in
  // which every operand is ready, and run it on the reference interpreter.
  std::vector<float> probes;
  for (int i = -40; i <= 40; ++i)
    probes.push_back(float(i) * 0.15f);
  for (float p : {-9.0f, -7.5f, 7.5f, 9.0f, 0.01f, -0.01f})
    probes.push_back(p);
  Graph probe("activation");
  std::unordered_map<const Value*, Value*> copy;
  copy[x] = probe.addInput("x", TensorType::of(DType::F32, {int64_t(probes.size())}));
  for (size_t placed = 0; placed < region.size();) {
    size_t before = placed;
    for (const Node* n : region) {
      if (copy.count(n->output(0)))
        continue;
      std::vector<Value*> ins;
      for (const Value* in : n->inputs()) {
        auto it = copy.find(in);
        if (it != copy.end())
          ins.push_back(it->second);
        else if (isScalarConstant(in, constantOf))
          ins.push_back(probe.addConstant(probe.uniqueValueName("c"), *constantOf(in)));
        else
          break;
      }
      if (ins.size() != n->numInputs())
        continue;
      Node* m = probe.addNode(n->op(), ins, 1);
      m->attrs() = n->attrs();
      copy[n->output(0)] = m->output(0);
      ++placed;
    }
    if (placed == before)
      return std::nullopt;
  }
  probe.addOutput(copy.at(last->output(0)));
  if (!inferShapes(probe).ok())
    return std::nullopt;
  auto run = interpret(probe, {Tensor::fromVector<float>({int64_t(probes.size())}, probes)});
  if (!run.ok() || run->outputs.size() != 1 ||
      run->outputs[0].numElements() != int64_t(probes.size()))
    return std::nullopt;
  const Tensor& result = run->outputs[0];
  auto matches = [&](double (*f)(double)) {
    for (size_t i = 0; i < probes.size(); ++i) {
      double want = f(double(probes[i]));
      if (!(std::fabs(result.getAsDouble(int64_t(i)) - want) <= 2e-6 * (1.0 + std::fabs(want))))
        return false;
    }
    return true;
  };
  if (matches(geluErf))
    return MatchedActivation{EpilogueOp::Kind::Gelu, last, region.size()};
  if (matches(geluTanh))
    return MatchedActivation{EpilogueOp::Kind::GeluTanh, last, region.size()};
  return std::nullopt;
}

} // namespace fb::cg::lower
