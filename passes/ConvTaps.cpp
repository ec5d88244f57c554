// Dropping convolution taps that read only padding (see ConvTaps.h). Along one spatial axis,
// tap k reads input rows k·d − pad_begin + o·s for outputs o in [0, out); it reads data when
// that range meets [0, in). Both bounds grow with k, so the live taps are one range [lo, hi]:
// the new kernel is taps lo..hi, pad_begin shrinks by lo·d and pad_end by (K − 1 − hi)·d, which
// keeps the output size.
#include "passes/ConvTaps.h"

#include "passes/RewriteUtil.h"

#include <cmath>

namespace fb {

namespace {

struct AxisTaps {
  int64_t lo = 0, hi = 0;
};

/// The live taps along one axis, or nullopt when none reads data.
std::optional<AxisTaps> liveTaps(int64_t in, int64_t out, int64_t k, int64_t stride,
                                 int64_t dilation, int64_t padBegin) {
  AxisTaps t{k, -1};
  for (int64_t tap = 0; tap < k; ++tap) {
    int64_t first = tap * dilation - padBegin, last = first + (out - 1) * stride;
    if (last >= 0 && first <= in - 1) {
      t.lo = std::min(t.lo, tap);
      t.hi = std::max(t.hi, tap);
    }
  }
  if (t.hi < t.lo)
    return std::nullopt;
  return t;
}

} // namespace

bool dropPaddingOnlyConvTaps(Graph& g, Node* n, PassContext& ctx) {
  if (n->op() != OpKind::Conv || n->numInputs() < 2)
    return false;
  const Value* X = n->input(0);
  const Value* W = n->input(1);
  const Value* Y = n->output(0);
  const Tensor* w = constantOf(W);
  if (!w || w->dtype() != DType::F32 || w->rank() != 4 || !X->type().isStatic() ||
      !Y->type().isStatic() || X->type().rank() != 4 || Y->type().rank() != 4)
    return false;
  auto autoPad = n->attrs().getString("auto_pad", "NOTSET");
  auto pads = n->attrs().getInts("pads", {0, 0, 0, 0});
  auto strides = n->attrs().getInts("strides", {1, 1});
  auto dilations = n->attrs().getInts("dilations", {1, 1});
  if (!autoPad.ok() || *autoPad != "NOTSET" || !pads.ok() || pads->size() != 4 || !strides.ok() ||
      strides->size() != 2 || !dilations.ok() || dilations->size() != 2)
    return false;
  std::vector<int64_t> xs = X->type().staticSizes(), ys = Y->type().staticSizes();
  std::vector<int64_t> ws = w->sizes();
  AxisTaps taps[2];
  bool shrinks = false;
  std::vector<int64_t> newPads = *pads, newDil = *dilations;
  for (size_t a = 0; a < 2; ++a) {
    auto t = liveTaps(xs[2 + a], ys[2 + a], ws[2 + a], (*strides)[a], (*dilations)[a], (*pads)[a]);
    if (!t)
      return false; // no tap reads data: the output is the bias alone; left as it is
    taps[a] = *t;
    shrinks |= t->lo > 0 || t->hi < ws[2 + a] - 1;
    newPads[a] = (*pads)[a] - t->lo * (*dilations)[a];
    newPads[a + 2] = (*pads)[a + 2] - (ws[2 + a] - 1 - t->hi) * (*dilations)[a];
    if (newPads[a] < 0 || newPads[a + 2] < 0)
      return false;
    if (t->hi == t->lo)
      newDil[a] = 1;
  }
  if (!shrinks)
    return false;
  // The dropped weights must be finite (inf or NaN times the padding's 0 is NaN).
  const int64_t kh = ws[2], kw = ws[3];
  const int64_t nh = taps[0].hi - taps[0].lo + 1, nw = taps[1].hi - taps[1].lo + 1;
  std::vector<float> kept;
  kept.reserve(size_t(ws[0] * ws[1] * nh * nw));
  for (int64_t oc = 0; oc < ws[0] * ws[1]; ++oc)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        double v = w->getAsDouble((oc * kh + i) * kw + j);
        bool live = i >= taps[0].lo && i <= taps[0].hi && j >= taps[1].lo && j <= taps[1].hi;
        if (live)
          kept.push_back(float(v));
        else if (!std::isfinite(v))
          return false;
      }
  if (!ctx.mayRewrite())
    return false;
  Value* newW = g.addConstant(g.uniqueValueName(W->name() + ".taps"),
                              Tensor::fromVector<float>({ws[0], ws[1], nh, nw}, kept));
  n->setInput(1, newW);
  n->attrs().set("pads", newPads);
  n->attrs().set("dilations", newDil);
  auto kernelShape = n->attrs().getInts("kernel_shape", {});
  if (kernelShape.ok() && !kernelShape->empty())
    n->attrs().set("kernel_shape", std::vector<int64_t>{nh, nw});
  ctx.addStatistic("convolution taps that read only padding dropped");
  return true;
}

} // namespace fb
