// The graph fuzzer's op generators: one small function per op family, each producing legal
// attributes and operand shapes from the values available.
#include "core/GraphFuzzerBuilder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fb::fuzz {

namespace {

using Sizes = std::vector<int64_t>;

AttrMap attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  AttrMap m;
  for (const auto& [k, v] : list)
    m.set(k, v);
  return m;
}

bool offerAll(GraphBuilder& b, Node* n) {
  if (!n)
    return false;
  for (Value* v : n->outputs())
    b.offer(v);
  return true;
}

bool offered(GraphBuilder& b, Value* v) {
  b.offer(v);
  return v != nullptr;
}

/// |x| + 1: a value at least 1, for Log, Sqrt, Reciprocal, Pow and divisors.
Value* atLeastOne(GraphBuilder& b, Value* x) {
  Value* a = b.op(OpKind::Abs, {x});
  return a ? b.op(OpKind::Add, {a, b.constScalar(1.f)}) : nullptr;
}

/// A second operand for a broadcasting op on `a`: another pool value whose shape broadcasts
/// with a's (both ways), a fresh value of a shape that broadcasts into a's, or a scalar.
Value* broadcastPartner(GraphBuilder& b, Value* a) {
  Sizes sa = GraphBuilder::sizesOf(a);
  if (b.coin(0.4)) {
    Value* other = b.pickWhere([&](Value* v) {
      Sizes sv = GraphBuilder::sizesOf(v);
      size_t r = std::max(sa.size(), sv.size());
      Sizes out(r);
      for (size_t i = 0; i < r; ++i) {
        int64_t x = i < r - sa.size() ? 1 : sa[i - (r - sa.size())];
        int64_t y = i < r - sv.size() ? 1 : sv[i - (r - sv.size())];
        if (x != y && x != 1 && y != 1)
          return false;
        out[i] = std::max(x, y);
      }
      return GraphBuilder::elements(out) <= b.maxElements();
    });
    if (other)
      return other;
  }
  if (b.coin(0.15))
    return b.constScalar(float(b.uniform(-1, 1)));
  return b.freshFloat(b.broadcastableShape(sa));
}

bool genUnary(GraphBuilder& b) {
  static const std::vector<OpKind> ops = {
      OpKind::Relu,    OpKind::LeakyRelu, OpKind::Sigmoid, OpKind::HardSigmoid, OpKind::HardSwish,
      OpKind::Tanh,    OpKind::Erf,       OpKind::Neg,     OpKind::Abs,         OpKind::Sin,
      OpKind::Cos,     OpKind::Atan,      OpKind::Elu,     OpKind::Selu,        OpKind::Softsign,
      OpKind::Mish,    OpKind::Identity,  OpKind::Celu,    OpKind::Asinh,       OpKind::Softplus};
  Value* x = b.pick();
  OpKind k = b.choose(ops);
  AttrMap a;
  if (k == OpKind::LeakyRelu)
    a.set("alpha", float(b.choose(std::vector<double>{0.01, 0.1, 0.2})));
  if (k == OpKind::Elu || k == OpKind::Celu)
    a.set("alpha", float(b.choose(std::vector<double>{1.0, 0.5})));
  return offered(b, b.op(k, {x}, std::move(a)));
}

bool genClip(GraphBuilder& b) {
  Value* x = b.pick();
  float lo = float(b.uniform(-1, 0)), hi = float(b.uniform(0, 1));
  std::vector<Value*> in = {x, b.coin(0.8) ? b.constScalar(lo) : nullptr};
  if (b.coin(0.8))
    in.push_back(b.constScalar(hi));
  return offered(b, b.op(OpKind::Clip, in));
}

/// Ops that overflow or lose meaning outside a range, fed a value kept inside it.
bool genGuardedUnary(GraphBuilder& b) {
  Value* x = b.pick();
  switch (b.randInt(0, 5)) {
  case 0: {
    Value* t = b.op(OpKind::Tanh, {x});
    return offered(b, t ? b.op(OpKind::Exp, {t}) : nullptr);
  }
  case 1: {
    Value* p = atLeastOne(b, x);
    return offered(b, p ? b.op(OpKind::Log, {p}) : nullptr);
  }
  case 2: {
    Value* p = atLeastOne(b, x);
    return offered(b, p ? b.op(OpKind::Sqrt, {p}) : nullptr);
  }
  case 3: {
    Value* p = atLeastOne(b, x);
    return offered(b, p ? b.op(OpKind::Reciprocal, {p}) : nullptr);
  }
  case 4: {
    Value* p = atLeastOne(b, x);
    float e = float(b.choose(std::vector<double>{2.0, 0.5, 3.0, -1.0}));
    return offered(b, p ? b.op(OpKind::Pow, {p, b.constScalar(e)}) : nullptr);
  }
  default: {
    Value* t = b.op(OpKind::Tanh, {x});
    return offered(b, t ? b.op(b.coin() ? OpKind::Sinh : OpKind::Cosh, {t}) : nullptr);
  }
  }
}

bool genBinary(GraphBuilder& b) {
  static const std::vector<OpKind> ops = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                                          OpKind::Max, OpKind::Min, OpKind::Sum, OpKind::Mean};
  Value* x = b.pick();
  Value* y = broadcastPartner(b, x);
  OpKind k = b.choose(ops);
  if (k == OpKind::Div)
    y = atLeastOne(b, y);
  if (!y)
    return false;
  std::vector<Value*> in = {x, y};
  if (k != OpKind::Div && b.coin(0.5)) // the divisor stays the guarded operand
    std::swap(in[0], in[1]);
  if ((k == OpKind::Sum || k == OpKind::Mean || k == OpKind::Max) && b.coin(0.3))
    in.push_back(b.constScalar(float(b.uniform(-1, 1))));
  return offered(b, b.op(k, in));
}

bool genPRelu(GraphBuilder& b) {
  Value* x = b.pick();
  Value* slope = b.constFloat(b.broadcastableShape(GraphBuilder::sizesOf(x)), 0, 0.5);
  return offered(b, b.op(OpKind::PRelu, {x, slope}));
}

bool genWhere(GraphBuilder& b) {
  Value* x = b.pick();
  Value* y = broadcastPartner(b, x);
  Sizes cs = b.broadcastableShape(GraphBuilder::sizesOf(x));
  Tensor c(DType::Bool, cs);
  for (int64_t i = 0; i < c.numElements(); ++i)
    c.setFromDouble(i, b.coin() ? 1 : 0);
  return offered(b, b.op(OpKind::Where, {b.constTensor(std::move(c)), x, y}));
}

bool genReshape(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes in = GraphBuilder::sizesOf(x);
  int64_t n = GraphBuilder::elements(in);
  size_t rank = size_t(b.randInt(1, 4));
  Sizes out(rank, 1);
  for (int64_t f = 2, m = n; m > 1;) { // spread the prime factors over the dims
    if (m % f == 0) {
      out[size_t(b.randInt(0, int64_t(rank) - 1))] *= f;
      m /= f;
    } else {
      ++f;
    }
  }
  Sizes shape = out;
  if (b.coin(0.3))
    shape[size_t(b.randInt(0, int64_t(rank) - 1))] = -1;
  for (size_t i = 0; i < rank && i < in.size(); ++i)
    if (shape[i] == in[i] && b.coin(0.2))
      shape[i] = 0; // "copy this dim from the input"
  return offered(b, b.op(OpKind::Reshape, {x, b.constInts(shape)}));
}

bool genTranspose(GraphBuilder& b) {
  Value* x = b.pickWhere([](Value* v) { return v->type().rank() >= 2; });
  if (!x)
    return false;
  Sizes perm(x->type().rank());
  std::iota(perm.begin(), perm.end(), 0);
  for (size_t i = perm.size(); i > 1; --i)
    std::swap(perm[i - 1], perm[size_t(b.randInt(0, int64_t(i) - 1))]);
  AttrMap a;
  if (b.coin(0.9))
    a.set("perm", perm);
  return offered(b, b.op(OpKind::Transpose, {x}, std::move(a)));
}

bool genFlatten(GraphBuilder& b) {
  Value* x = b.pick();
  int64_t r = int64_t(x->type().rank());
  int64_t axis = b.randInt(0, r);
  if (axis > 0 && b.coin(0.2))
    axis -= r;
  return offered(b, b.op(OpKind::Flatten, {x}, attrs({{"axis", axis}})));
}

bool genSqueezeUnsqueeze(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  Sizes ones;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == 1)
      ones.push_back(int64_t(i));
  if (!ones.empty() && s.size() > 1 && b.coin(0.6)) {
    if (ones.size() == s.size())
      ones.pop_back();
    if (b.coin(0.7)) {
      Sizes axes = {b.choose(ones)};
      if (b.coin(0.3))
        axes[0] -= int64_t(s.size());
      return offered(b, b.op(OpKind::Squeeze, {x, b.constInts(axes)}));
    }
    if (ones.size() < s.size() && ones.size() == size_t(std::count(s.begin(), s.end(), 1)))
      return offered(b, b.op(OpKind::Squeeze, {x}));
  }
  if (s.size() >= 5)
    return false;
  int64_t axis = b.randInt(0, int64_t(s.size()));
  return offered(b, b.op(OpKind::Unsqueeze, {x, b.constInts({axis})}));
}

bool genConv(GraphBuilder& b, bool transposed) {
  Value* x = b.pickImage(3);
  Sizes s = GraphBuilder::sizesOf(x);
  int64_t c = s[1];
  int64_t group = 1;
  int64_t kind = b.randInt(0, 2);
  if (kind == 1)
    group = c; // depthwise
  else if (kind == 2)
    for (int64_t g = c; g >= 1; --g)
      if (c % g == 0 && b.coin(0.5)) {
        group = g;
        break;
      }
  int64_t m = group * (kind == 1 ? b.randInt(1, 2) : b.randInt(1, std::max<int64_t>(1, 8 / group)));
  Sizes k = {b.randInt(1, 3), b.randInt(1, 3)}, st = {b.randInt(1, 2), b.randInt(1, 2)};
  Sizes d = {1, 1};
  if (b.coin(0.2))
    d = {b.randInt(1, 2), b.randInt(1, 2)};
  Sizes pads = {b.randInt(0, k[0] - 1), b.randInt(0, k[1] - 1), b.randInt(0, k[0] - 1),
                b.randInt(0, k[1] - 1)};
  Sizes outPad = {0, 0};
  int64_t outElems = s[0] * m;
  for (int i = 0; i < 2; ++i) {
    int64_t in = s[size_t(2 + i)], span = d[size_t(i)] * (k[size_t(i)] - 1) + 1;
    int64_t out;
    if (transposed) {
      if (st[size_t(i)] > 1 && b.coin(0.3))
        outPad[size_t(i)] = 1;
      out = st[size_t(i)] * (in - 1) + outPad[size_t(i)] + span - pads[size_t(i)] - pads[size_t(i + 2)];
    } else {
      out = (in + pads[size_t(i)] + pads[size_t(i + 2)] - span) / st[size_t(i)] + 1;
    }
    if (out < 1 || (!transposed && in + pads[size_t(i)] + pads[size_t(i + 2)] < span))
      return false;
    outElems *= out;
  }
  if (outElems > b.maxElements())
    return false;
  int64_t fanIn = (transposed ? c : c / group) * k[0] * k[1];
  double scale = 1.0 / std::sqrt(double(fanIn));
  Sizes w = transposed ? Sizes{c, m / group, k[0], k[1]} : Sizes{m, c / group, k[0], k[1]};
  std::vector<Value*> in = {x, b.constFloat(w, -scale, scale)};
  if (b.coin(0.6))
    in.push_back(b.constFloat({m}, -0.5, 0.5));
  AttrMap a = attrs({{"kernel_shape", k}, {"strides", st}, {"pads", pads}, {"group", group}});
  if (d != Sizes{1, 1})
    a.set("dilations", d);
  if (outPad != Sizes{0, 0})
    a.set("output_padding", outPad);
  return offered(b, b.op(transposed ? OpKind::ConvTranspose : OpKind::Conv, in, std::move(a)));
}

bool genConv2d(GraphBuilder& b) { return genConv(b, /*transposed=*/false); }
bool genConvTranspose(GraphBuilder& b) { return genConv(b, /*transposed=*/true); }

bool genMatMul(GraphBuilder& b) {
  Value* x = b.pickWhere([](Value* v) { return v->type().rank() >= 2 && v->type().rank() <= 4; });
  if (!x)
    x = b.freshFloat(b.randomShape(size_t(b.randInt(2, 3))));
  Sizes s = GraphBuilder::sizesOf(x);
  int64_t kdim = s.back();
  Value* y = b.pickWhere([&](Value* v) {
    Sizes t = GraphBuilder::sizesOf(v);
    return t.size() == 2 && t[0] == kdim && v != x;
  });
  if (!y || b.coin(0.5)) {
    Sizes ys = {kdim, b.randInt(1, 16)};
    if (s.size() >= 3 && b.coin(0.3))
      ys.insert(ys.begin(), s.end() - 3, s.end() - 2); // batched: [batch, K, N]
    y = b.freshFloat(ys, 1.0 / std::sqrt(double(kdim)));
  }
  std::vector<Value*> in = {x, y};
  return offered(b, b.op(OpKind::MatMul, in));
}

bool genGemm(GraphBuilder& b) {
  Value* a = b.pickWhere([](Value* v) { return v->type().rank() == 2; });
  if (!a)
    a = b.freshFloat(b.randomShape(2));
  Sizes s = GraphBuilder::sizesOf(a);
  int64_t transA = b.coin(0.3), transB = b.coin(0.5);
  int64_t m = transA ? s[1] : s[0], k = transA ? s[0] : s[1], n = b.randInt(1, 16);
  Value* bm = b.freshFloat(transB ? Sizes{n, k} : Sizes{k, n}, 1.0 / std::sqrt(double(k)));
  std::vector<Value*> in = {a, bm};
  int64_t cKind = b.randInt(0, 3);
  if (cKind == 1)
    in.push_back(b.constFloat({n}, -0.5, 0.5));
  else if (cKind == 2)
    in.push_back(b.freshFloat({m, n}));
  else if (cKind == 3)
    in.push_back(b.constFloat({1, n}, -0.5, 0.5));
  AttrMap at = attrs({{"transA", transA}, {"transB", transB}});
  if (b.coin(0.3))
    at.set("alpha", float(b.choose(std::vector<double>{0.5, 2.0})));
  if (in.size() == 3 && b.coin(0.3))
    at.set("beta", float(b.choose(std::vector<double>{0.5, 2.0})));
  return offered(b, b.op(OpKind::Gemm, in, std::move(at)));
}

bool genReduce(GraphBuilder& b) {
  static const std::vector<OpKind> ops = {
      OpKind::ReduceMean, OpKind::ReduceSum,       OpKind::ReduceMax,       OpKind::ReduceMin,
      OpKind::ReduceProd, OpKind::ReduceL1,        OpKind::ReduceL2,        OpKind::ReduceSumSquare,
      OpKind::ReduceLogSumExp};
  Value* x = b.pick();
  OpKind k = b.choose(ops);
  int64_t r = int64_t(x->type().rank());
  Sizes axes;
  for (int64_t i = 0; i < r; ++i)
    if (b.coin(0.4))
      axes.push_back(b.coin(0.2) ? i - r : i);
  if (axes.empty() && b.coin(0.5))
    axes.push_back(b.randInt(0, r - 1));
  int64_t keep = b.coin(0.5);
  if (k == OpKind::ReduceProd)
    x = b.op(OpKind::Tanh, {x}); // keeps the product from overflowing or vanishing in fp32
  if (!x)
    return false;
  std::vector<Value*> in = {x};
  AttrMap a = attrs({{"keepdims", keep}});
  if (!axes.empty()) {
    if (k == OpKind::ReduceSum)
      in.push_back(b.constInts(axes));
    else
      a.set("axes", axes);
  }
  return offered(b, b.op(k, in, std::move(a)));
}

bool genSoftmax(GraphBuilder& b) {
  Value* x = b.pick();
  int64_t r = int64_t(x->type().rank());
  int64_t axis = b.randInt(-r, r - 1);
  return offered(b, b.op(b.coin(0.7) ? OpKind::Softmax : OpKind::LogSoftmax, {x},
                         attrs({{"axis", axis}})));
}

bool genLayerNorm(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  int64_t r = int64_t(s.size());
  int64_t axis = b.randInt(0, r - 1);
  Sizes norm(s.begin() + axis, s.end());
  std::vector<Value*> in = {x, b.constFloat(norm, 0.5, 1.5)};
  if (b.coin(0.7))
    in.push_back(b.constFloat(norm, -0.5, 0.5));
  if (b.coin(0.3))
    axis -= r;
  return offered(b, b.op(OpKind::LayerNormalization, in,
                         attrs({{"axis", axis}, {"epsilon", float(b.coin() ? 1e-5 : 1e-3)}})));
}

bool genBatchNorm(GraphBuilder& b) {
  Value* x = b.pickWhere([](Value* v) { return v->type().rank() >= 2; });
  if (!x)
    x = b.pickImage(1);
  int64_t c = GraphBuilder::sizesOf(x)[1];
  std::vector<Value*> in = {x, b.constFloat({c}, 0.5, 1.5), b.constFloat({c}, -0.5, 0.5),
                            b.constFloat({c}, -0.5, 0.5), b.constFloat({c}, 0.5, 1.5)};
  return offered(b, b.op(OpKind::BatchNormalization, in,
                         attrs({{"epsilon", float(b.coin() ? 1e-5 : 1e-3)}})));
}

bool genInstanceNorm(GraphBuilder& b) {
  Value* x = b.pickImage(2);
  int64_t c = GraphBuilder::sizesOf(x)[1];
  return offered(b, b.op(OpKind::InstanceNormalization,
                         {x, b.constFloat({c}, 0.5, 1.5), b.constFloat({c}, -0.5, 0.5)}));
}

bool genPool(GraphBuilder& b) {
  Value* x = b.pickImage(3);
  Sizes s = GraphBuilder::sizesOf(x);
  bool isMax = b.coin();
  Sizes k = {b.randInt(1, 3), b.randInt(1, 3)}, st = {b.randInt(1, 2), b.randInt(1, 2)};
  Sizes pads = {b.randInt(0, k[0] - 1), b.randInt(0, k[1] - 1), b.randInt(0, k[0] - 1),
                b.randInt(0, k[1] - 1)};
  AttrMap a = attrs({{"kernel_shape", k}, {"strides", st}, {"pads", pads}});
  if (!isMax && b.coin(0.4))
    a.set("count_include_pad", int64_t(1));
  if (b.coin(0.2))
    a.set("ceil_mode", int64_t(1));
  return offered(b, b.op(isMax ? OpKind::MaxPool : OpKind::AveragePool, {x}, std::move(a)));
}

bool genGlobalPool(GraphBuilder& b) {
  Value* x = b.pickImage(1);
  return offered(b, b.op(b.coin() ? OpKind::GlobalAveragePool : OpKind::GlobalMaxPool, {x}));
}

bool genSlice(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  Sizes starts, ends, axes, steps;
  for (int64_t i = 0; i < int64_t(s.size()); ++i) {
    if (!b.coin(0.5) && !(i + 1 == int64_t(s.size()) && axes.empty()))
      continue;
    int64_t d = s[size_t(i)];
    int64_t step = b.coin(0.2) ? -1 : b.coin(0.2) ? 2 : 1;
    int64_t lo = b.randInt(0, d - 1), hi = b.randInt(lo + 1, d);
    if (step > 0) {
      starts.push_back(b.coin(0.2) ? lo - d : lo);
      ends.push_back(hi == d && b.coin(0.3) ? INT64_MAX : hi);
    } else {
      starts.push_back(hi - 1);
      ends.push_back(lo == 0 ? (b.coin(0.5) ? INT64_MIN : -d - 1) : lo - 1);
    }
    axes.push_back(b.coin(0.2) ? i - int64_t(s.size()) : i);
    steps.push_back(step);
  }
  std::vector<Value*> in = {x, b.constInts(starts), b.constInts(ends), b.constInts(axes)};
  if (b.coin(0.8))
    in.push_back(b.constInts(steps));
  else if (std::any_of(steps.begin(), steps.end(), [](int64_t t) { return t != 1; }))
    in.push_back(b.constInts(steps));
  return offered(b, b.op(OpKind::Slice, in));
}

bool genConcat(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  int64_t axis = b.randInt(0, int64_t(s.size()) - 1);
  std::vector<Value*> in = {x};
  int64_t parts = b.randInt(1, 2);
  for (int64_t p = 0; p < parts; ++p) {
    Value* y = b.pickWhere([&](Value* v) {
      Sizes t = GraphBuilder::sizesOf(v);
      if (t.size() != s.size())
        return false;
      for (size_t i = 0; i < t.size(); ++i)
        if (int64_t(i) != axis && t[i] != s[i])
          return false;
      return true;
    });
    if (!y || b.coin(0.5)) {
      Sizes t = s;
      t[size_t(axis)] = b.randInt(1, 4);
      y = b.freshFloat(t);
    }
    in.push_back(y);
  }
  if (b.coin(0.2))
    axis -= int64_t(s.size());
  return offered(b, b.op(OpKind::Concat, in, attrs({{"axis", axis}})));
}

bool genSplit(GraphBuilder& b) {
  Value* x = b.pickWhere([](Value* v) {
    for (const Dim& d : v->type().dims)
      if (d.size() >= 2)
        return true;
    return false;
  });
  if (!x)
    return false;
  Sizes s = GraphBuilder::sizesOf(x);
  Sizes candidates;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] >= 2)
      candidates.push_back(int64_t(i));
  int64_t axis = b.choose(candidates), d = s[size_t(axis)];
  int64_t parts = b.randInt(2, std::min<int64_t>(3, d));
  std::vector<Value*> in = {x};
  if (d % parts != 0 || b.coin(0.5)) {
    Sizes sizes(size_t(parts), 1);
    for (int64_t left = d - parts; left > 0; --left)
      ++sizes[size_t(b.randInt(0, parts - 1))];
    in.push_back(b.constInts(sizes));
  }
  return offerAll(b, b.addNode(OpKind::Split, in, attrs({{"axis", axis}}), size_t(parts)));
}

bool genGather(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  int64_t axis = b.randInt(0, int64_t(s.size()) - 1), d = s[size_t(axis)];
  Sizes isz;
  for (int64_t r = b.randInt(0, 2); r > 0; --r)
    isz.push_back(b.randInt(1, 4));
  Sizes idx(size_t(GraphBuilder::elements(isz)));
  for (auto& i : idx)
    i = b.randInt(-d, d - 1);
  Value* indices = b.constTensor(Tensor::fromVector<int64_t>(isz, idx));
  return offered(b, b.op(OpKind::Gather, {x, indices}, attrs({{"axis", axis}})));
}

bool genPad(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  std::string mode = b.choose(std::vector<std::string>{"constant", "constant", "reflect", "edge"});
  Sizes pads(s.size() * 2);
  for (size_t i = 0; i < pads.size(); ++i) {
    int64_t d = s[i % s.size()];
    pads[i] = b.randInt(0, mode == "reflect" ? std::min<int64_t>(2, d - 1) : 2);
  }
  std::vector<Value*> in = {x, b.constInts(pads)};
  if (mode == "constant" && b.coin(0.5))
    in.push_back(b.constScalar(float(b.uniform(-1, 1))));
  return offered(b, b.op(OpKind::Pad, in, attrs({{"mode", mode}})));
}

bool genResize(GraphBuilder& b) {
  Value* x = b.pickImage(2);
  Sizes s = GraphBuilder::sizesOf(x);
  bool down = s[2] % 2 == 0 && s[3] % 2 == 0 && b.coin(0.4);
  if (!down && GraphBuilder::elements(s) * 4 > b.maxElements())
    return false;
  float scale = down ? 0.5f : 2.f;
  std::string mode = b.coin() ? "nearest" : "linear";
  std::string ctm = b.choose(std::vector<std::string>{"half_pixel", "asymmetric",
                                                      "align_corners", "pytorch_half_pixel"});
  Value* scales = b.constTensor(Tensor::fromVector<float>({4}, {1.f, 1.f, scale, scale}));
  return offered(b, b.op(OpKind::Resize, {x, nullptr, scales},
                         attrs({{"mode", mode}, {"coordinate_transformation_mode", ctm}})));
}

bool genExpandTile(GraphBuilder& b) {
  Value* x = b.pick();
  Sizes s = GraphBuilder::sizesOf(x);
  if (b.coin()) {
    Sizes shape = s;
    for (auto& d : shape)
      if (d == 1 && b.coin(0.6))
        d = b.randInt(2, 3);
    if (shape.size() < 4 && b.coin(0.4))
      shape.insert(shape.begin(), b.randInt(1, 3));
    if (GraphBuilder::elements(shape) > b.maxElements())
      return false;
    return offered(b, b.op(OpKind::Expand, {x, b.constInts(shape)}));
  }
  Sizes reps(s.size(), 1);
  for (auto& r : reps)
    r = b.coin(0.4) ? 2 : 1;
  Sizes out = s;
  for (size_t i = 0; i < s.size(); ++i)
    out[i] *= reps[i];
  if (GraphBuilder::elements(out) > b.maxElements())
    return false;
  return offered(b, b.op(OpKind::Tile, {x, b.constInts(reps)}));
}

bool genDepthSpace(GraphBuilder& b) {
  Value* x = b.pickImage(2);
  Sizes s = GraphBuilder::sizesOf(x);
  if (s[1] % 4 == 0 && b.coin(0.5))
    return offered(b, b.op(OpKind::DepthToSpace, {x},
                           attrs({{"blocksize", int64_t(2)},
                                  {"mode", std::string(b.coin() ? "DCR" : "CRD")}})));
  if (s[2] % 2 != 0 || s[3] % 2 != 0)
    return false;
  return offered(b, b.op(OpKind::SpaceToDepth, {x}, attrs({{"blocksize", int64_t(2)}})));
}

bool genCumSum(GraphBuilder& b) {
  Value* x = b.pick();
  int64_t r = int64_t(x->type().rank());
  Value* axis = b.constTensor(Tensor::scalar<int64_t>(b.randInt(-r, r - 1)));
  return offered(b, b.op(OpKind::CumSum, {x, axis},
                         attrs({{"exclusive", int64_t(b.coin(0.3))},
                                {"reverse", int64_t(b.coin(0.3))}})));
}

/// QuantizeLinear then DequantizeLinear of a graph input (quantizing a computed value would make
/// the result depend on float rounding differences far below the tolerance).
bool genQdq(GraphBuilder& b) {
  Value* x = b.freshInput(b.randomShape(size_t(b.randInt(1, 4))));
  bool u8 = b.coin();
  Value* scale = b.constScalar(float(b.choose(std::vector<double>{1.0 / 64, 1.0 / 100, 0.02})));
  Value* zp = u8 ? b.constTensor(Tensor::scalar<uint8_t>(uint8_t(b.randInt(100, 156))))
                 : b.constTensor(Tensor::scalar<int8_t>(int8_t(b.randInt(-20, 20))));
  Value* q = b.op(OpKind::QuantizeLinear, {x, scale, zp});
  return offered(b, q ? b.op(OpKind::DequantizeLinear, {q, scale, zp}) : nullptr);
}

/// QLinearMatMul or QLinearConv on a quantized graph input and int8 weights, dequantized.
bool genQLinear(GraphBuilder& b) {
  bool conv = b.coin();
  Sizes xs = conv ? Sizes{1, b.randInt(1, 6), b.randInt(3, 8), b.randInt(3, 8)}
                  : Sizes{b.randInt(1, 8), b.randInt(1, 16)};
  int64_t k = conv ? b.randInt(1, 3) : 0, m = b.randInt(1, 8);
  int64_t fanIn = conv ? xs[1] * k * k : xs[1];
  Sizes ws = conv ? Sizes{m, xs[1], k, k} : Sizes{xs[1], m};
  Tensor w(DType::I8, ws);
  for (int64_t i = 0; i < w.numElements(); ++i)
    w.setFromDouble(i, double(b.randInt(-127, 127)));
  Value* x = b.freshInput(xs);
  Value* xScale = b.constScalar(1.f / 128);
  Value* xZp = b.constTensor(Tensor::scalar<uint8_t>(128));
  Value* wScale = b.constScalar(float(1.0 / (127 * std::sqrt(double(fanIn)))));
  Value* wZp = b.constTensor(Tensor::scalar<int8_t>(0));
  Value* yScale = b.constScalar(4.f / 255);
  Value* yZp = b.constTensor(Tensor::scalar<uint8_t>(128));
  Value* xq = b.op(OpKind::QuantizeLinear, {x, xScale, xZp});
  if (!xq)
    return false;
  Value* y;
  if (conv) {
    Sizes pads = {b.randInt(0, k - 1), b.randInt(0, k - 1), b.randInt(0, k - 1),
                  b.randInt(0, k - 1)};
    y = b.op(OpKind::QLinearConv,
             {xq, xScale, xZp, b.constTensor(std::move(w)), wScale, wZp, yScale, yZp},
             attrs({{"kernel_shape", Sizes{k, k}}, {"pads", pads}}));
  } else {
    y = b.op(OpKind::QLinearMatMul,
             {xq, xScale, xZp, b.constTensor(std::move(w)), wScale, wZp, yScale, yZp});
  }
  return offered(b, y ? b.op(OpKind::DequantizeLinear, {y, yScale, yZp}) : nullptr);
}

/// Two ops of one kind on one operand, with attributes drawn independently: the pattern CSE must
/// merge only when the attributes agree, and fusion must handle as a multi-consumer value.
bool genSiblings(GraphBuilder& b) {
  static const std::vector<bool (*)(GraphBuilder&)> gens = {
      genSoftmax, genReduce, genSlice, genGather, genFlatten, genPad, genCumSum, genUnary};
  Value* x = b.pick();
  auto gen = b.choose(gens);
  b.pin(x, 1);
  bool first = gen(b);
  b.pin(x, 1);
  bool second = gen(b);
  b.pin(nullptr, 0);
  return first || second;
}

} // namespace

const std::vector<OpGenerator>& opGenerators() {
  static const std::vector<OpGenerator> generators = {
      {"unary", 8, genUnary},
      {"clip", 2, genClip},
      {"guarded-unary", 4, genGuardedUnary},
      {"binary", 10, genBinary},
      {"prelu", 1, genPRelu},
      {"where", 1, genWhere},
      {"reshape", 4, genReshape},
      {"transpose", 4, genTranspose},
      {"flatten", 2, genFlatten},
      {"squeeze-unsqueeze", 3, genSqueezeUnsqueeze},
      {"conv", 8, genConv2d},
      {"conv-transpose", 2, genConvTranspose},
      {"matmul", 5, genMatMul},
      {"gemm", 3, genGemm},
      {"reduce", 5, genReduce},
      {"softmax", 3, genSoftmax},
      {"layer-norm", 2, genLayerNorm},
      {"batch-norm", 3, genBatchNorm},
      {"instance-norm", 1, genInstanceNorm},
      {"pool", 4, genPool},
      {"global-pool", 2, genGlobalPool},
      {"slice", 3, genSlice},
      {"concat", 3, genConcat},
      {"split", 2, genSplit},
      {"gather", 2, genGather},
      {"pad", 2, genPad},
      {"resize", 2, genResize},
      {"expand-tile", 2, genExpandTile},
      {"depth-space", 1, genDepthSpace},
      {"cumsum", 1, genCumSum},
      {"qdq", 2, genQdq},
      {"qlinear", 1, genQLinear},
      {"siblings", 3, genSiblings},
  };
  return generators;
}

} // namespace fb::fuzz
