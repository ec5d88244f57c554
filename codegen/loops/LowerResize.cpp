// Lowering of Resize: nearest, n-linear and cubic interpolation as gathers through per-axis
// index and weight tables that the interpreter computes on probe inputs at compile time, so the
// CPU backend follows every coordinate transformation mode exactly as the interpreter does.
#include "codegen/loops/LowerContext.h"
#include "core/ops/OpContext.h"

#include <algorithm>
#include <cmath>

namespace fb::cg::lower {

namespace {

/// Runs node n's interpreter kernel with input 0 replaced by `probe` (the other inputs must be
/// compile-time constants).
Expected<Tensor> evalWithProbe(KernelBuilder& b, const Node& n, const Tensor& probe) {
  std::vector<Tensor> ins{probe};
  for (size_t i = 1; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (!v) {
      ins.emplace_back();
      continue;
    }
    const Tensor* t = b.constantOf(v);
    if (!t)
      return makeUnsupported(n.describe(), ": input ", i, " must be a compile-time constant");
    ins.push_back(*t);
  }
  EvalContext ctx(n, std::move(ins));
  FB_TRY(n.info().eval(ctx));
  return ctx.outputs()[0];
}

/// Resize mode 'cubic' as a separable weighted sum through per-axis tap tables found by running
/// the interpreter on unit probes: along axis d, a probe that is 1 where the index along d is i
/// (and 0 elsewhere) comes out, at output position o of that axis, as the weight of input i in
/// output o (the weights of the other axes sum to 1). Each output then reads its at most four
/// taps per resized axis. The probes cost one interpreter run per input index of each resized
/// axis, so very large inputs are refused rather than compiled for minutes.
Status defineCubicResize(KernelBuilder& b, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  std::vector<int64_t> inS = KernelBuilder::sizesOf(x), outS = KernelBuilder::sizesOf(out);
  const size_t rank = inS.size();
  std::vector<int64_t> inStr = rowMajorStrides(inS), outStr = rowMajorStrides(outS);
  Tensor probe(DType::F32, inS);
  struct Axis {
    int64_t taps = 0; // 0: identity
    BufferPtr index, weight;
  };
  std::vector<Axis> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (inS[d] * probe.numElements() > (int64_t(1) << 24))
      return makeUnsupported(n.describe(), ": cubic Resize of ", x->type().str(),
                             " is too large for the CPU backend's probe-built tap tables");
    std::vector<std::vector<std::pair<int64_t, float>>> taps(size_t(outS[d]));
    for (int64_t i = 0; i < inS[d]; ++i) {
      auto pv = probe.mutableData<float>();
      for (int64_t e = 0; e < probe.numElements(); ++e)
        pv[size_t(e)] = (e / inStr[d]) % inS[d] == i ? 1.0f : 0.0f;
      FB_ASSIGN_OR_RETURN(Tensor r, evalWithProbe(b, n, probe));
      for (int64_t o = 0; o < outS[d]; ++o)
        if (float w = float(r.getAsDouble(o * outStr[d])); w != 0)
          taps[size_t(o)].emplace_back(i, w);
    }
    bool identity = outS[d] == inS[d];
    size_t width = 1;
    for (int64_t o = 0; o < outS[d]; ++o) {
      const auto& t = taps[size_t(o)];
      identity &= t.size() == 1 && t[0].first == o && t[0].second == 1.0f;
      width = std::max(width, t.size());
    }
    if (identity)
      continue;
    std::vector<int64_t> index(size_t(outS[d]) * width, 0);
    std::vector<float> weight(size_t(outS[d]) * width, 0.0f);
    for (int64_t o = 0; o < outS[d]; ++o)
      for (size_t t = 0; t < taps[size_t(o)].size(); ++t) {
        index[size_t(o) * width + t] = taps[size_t(o)][t].first;
        weight[size_t(o) * width + t] = taps[size_t(o)][t].second;
      }
    const std::string ax = std::to_string(d);
    const std::vector<int64_t> shape{outS[d], int64_t(width)};
    axes[d].taps = int64_t(width);
    axes[d].index = b.constantBuffer("resize_tap_" + ax, Tensor::fromVector<int64_t>(shape, index));
    axes[d].weight = b.constantBuffer("resize_w_" + ax, Tensor::fromVector<float>(shape, weight));
  }
  b.define(out, [&b, x, axes](const Indices& idx) {
    // Sum over every combination of one tap per resized axis.
    size_t combos = 1;
    for (const Axis& a : axes)
      combos *= size_t(std::max<int64_t>(a.taps, 1));
    ExprPtr sum;
    for (size_t combo = 0; combo < combos; ++combo) {
      Indices src;
      ExprPtr weight;
      size_t rest = combo;
      for (size_t d = 0; d < axes.size(); ++d) {
        if (!axes[d].taps) {
          src.push_back(idx[d]);
          continue;
        }
        ExprPtr t = intImm(int64_t(rest % size_t(axes[d].taps)));
        rest /= size_t(axes[d].taps);
        src.push_back(load(axes[d].index, {idx[d], t}));
        ExprPtr w = load(axes[d].weight, {idx[d], t});
        weight = weight ? mul(weight, w) : w;
      }
      ExprPtr term = b.read(x, src);
      if (weight)
        term = mul(weight, term);
      sum = sum ? add(sum, term) : term;
    }
    return sum;
  });
  return Status::success();
}

/// A Resize with an empty result: nothing to compute, and no output position for the probes
/// to read. The interpreter still refuses to grow an empty input dim, even into an empty result.
Status defineEmptyResize(KernelBuilder& b, const Node& n) {
  const Value* x = n.input(0);
  const std::vector<int64_t> inS = KernelBuilder::sizesOf(x);
  const std::vector<int64_t> outS = KernelBuilder::sizesOf(n.output(0));
  for (size_t d = 0; d < inS.size(); ++d)
    if (inS[d] == 0 && outS[d] > 0)
      return makeError(n.describe(), ": cannot resize the empty dim ", d, " of ", x->type().str());
  b.define(n.output(0), [](const Indices&) { return floatImm(0); });
  return Status::success();
}

} // namespace

/// Resize (nearest and n-linear) as a gather through per-axis tables found by running the
/// interpreter on probe inputs: along axis d, a probe holding each element's index along d
/// comes out as the (interpolated) source coordinate of every output position. Linear
/// interpolation between neighbours i0 and i0 + 1 gives i0 + w1; a second probe of squared
/// indices checks that reading.
Status defineResize(KernelBuilder& b, const Node& n) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  if (x->type().dtype != DType::F32)
    return makeUnsupported(n.describe(), ": Resize of ", dtypeName(x->type().dtype));
  FB_ASSIGN_OR_RETURN(std::string mode, n.attrs().getString("mode", "nearest"));
  if (const std::vector<int64_t> outS = KernelBuilder::sizesOf(out);
      std::find(outS.begin(), outS.end(), 0) != outS.end())
    return defineEmptyResize(b, n);
  if (mode == "cubic")
    return defineCubicResize(b, n);
  if (mode != "nearest" && mode != "linear")
    return makeUnsupported(n.describe(), ": Resize mode '", mode,
                           "' is not supported by the CPU backend");
  const bool linear = mode == "linear";
  std::vector<int64_t> inS = KernelBuilder::sizesOf(x), outS = KernelBuilder::sizesOf(out);
  const size_t rank = inS.size();
  std::vector<int64_t> inStr = rowMajorStrides(inS), outStr = rowMajorStrides(outS);
  struct Axis {
    bool identity = true;
    BufferPtr i0, i1, w1;
  };
  std::vector<Axis> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    Tensor probe(DType::F32, inS), probe2(DType::F32, inS);
    auto pv = probe.mutableData<float>(), pv2 = probe2.mutableData<float>();
    for (int64_t e = 0; e < probe.numElements(); ++e) {
      int64_t i = (e / inStr[d]) % inS[d];
      pv[size_t(e)] = float(i);
      pv2[size_t(e)] = float(i * i);
    }
    FB_ASSIGN_OR_RETURN(Tensor r, evalWithProbe(b, n, probe));
    FB_ASSIGN_OR_RETURN(Tensor r2, evalWithProbe(b, n, probe2));
    std::vector<int64_t> i0(size_t(outS[d])), i1(size_t(outS[d]));
    std::vector<float> w1(size_t(outS[d]));
    bool identity = outS[d] == inS[d];
    for (int64_t o = 0; o < outS[d]; ++o) {
      double c = r.getAsDouble(o * outStr[d]), c2 = r2.getAsDouble(o * outStr[d]);
      double f = std::floor(c + 1e-6);
      int64_t a = std::clamp<int64_t>(int64_t(f), 0, inS[d] - 1);
      int64_t a1 = std::min<int64_t>(a + 1, inS[d] - 1);
      double w = std::clamp(c - double(a), 0.0, 1.0);
      if (w < 1e-6)
        w = 0;
      double expect2 = (1 - w) * double(a * a) + w * double(a1 * a1);
      if (c < -1e-3 || c > double(inS[d] - 1) + 1e-3 ||
          std::fabs(expect2 - c2) > 1e-3 * std::max(1.0, std::fabs(c2)) || (!linear && w != 0))
        return makeUnsupported(n.describe(), ": this Resize (mode ", mode,
                               ") is not a per-axis gather the CPU backend can lower");
      i0[size_t(o)] = a;
      i1[size_t(o)] = a1;
      w1[size_t(o)] = float(w);
      identity &= a == o && w == 0;
    }
    axes[d].identity = identity;
    if (identity)
      continue;
    std::string ax = std::to_string(d);
    axes[d].i0 = b.constantBuffer("resize_i0_" + ax, Tensor::fromVector<int64_t>({outS[d]}, i0));
    if (linear) {
      axes[d].i1 = b.constantBuffer("resize_i1_" + ax, Tensor::fromVector<int64_t>({outS[d]}, i1));
      axes[d].w1 = b.constantBuffer("resize_w1_" + ax, Tensor::fromVector<float>({outS[d]}, w1));
    }
  }
  b.define(out, [&b, x, axes, linear](const Indices& idx) {
    // Sum over the 2^k corners of the resized axes (k = 0 for nearest).
    std::vector<size_t> interp;
    for (size_t d = 0; d < axes.size(); ++d)
      if (!axes[d].identity && linear)
        interp.push_back(d);
    ExprPtr sum;
    for (size_t corner = 0; corner < (size_t(1) << interp.size()); ++corner) {
      Indices src;
      ExprPtr weight;
      for (size_t d = 0; d < axes.size(); ++d) {
        if (axes[d].identity) {
          src.push_back(idx[d]);
          continue;
        }
        auto it = std::find(interp.begin(), interp.end(), d);
        bool high = it != interp.end() && (corner >> size_t(it - interp.begin())) & 1;
        src.push_back(load(high ? axes[d].i1 : axes[d].i0, {idx[d]}));
        if (it != interp.end()) {
          ExprPtr w1 = load(axes[d].w1, {idx[d]});
          ExprPtr w = high ? w1 : sub(floatImm(1), w1);
          weight = weight ? mul(weight, w) : w;
        }
      }
      ExprPtr term = b.read(x, src);
      if (weight)
        term = mul(weight, term);
      sum = sum ? add(sum, term) : term;
    }
    return sum;
  });
  return Status::success();
}

} // namespace fb::cg::lower
