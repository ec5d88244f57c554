// Linear algebra beyond MatMul/Gemm: Det (determinants of a batch of square matrices) and
// Einsum (Einstein summation over labelled dims: products, traces, transposes, sums).
#include "core/ops/EinsumEquation.h"
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cmath>
#include <numeric>

namespace fb {

using namespace math;

namespace {

// ---------------------------------------------------------------------------------------------
// Det

/// (..., M, M) → (...).
Status inferDet(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kFloatTypes));
  const TensorType& x = ctx.inputType(0);
  if (x.rank() < 2 || dimsConflict(x.dims[x.rank() - 1], x.dims[x.rank() - 2]))
    return ctx.error("input 0 must be a batch of square matrices (..., M, M), got ", x.str());
  ctx.setOutputType(0, TensorType(x.dtype, std::vector<Dim>(x.dims.begin(), x.dims.end() - 2)));
  return Status::success();
}

/// LU decomposition with partial pivoting in double: the product of the pivots, negated once
/// per row swap.
Status evalDet(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> s = x.sizes();
  const int64_t M = s.back();
  if (s[s.size() - 2] != M)
    return ctx.error("input 0 ", x.type().str(), " is not a batch of square matrices");
  Tensor out(x.dtype(), std::vector<int64_t>(s.begin(), s.end() - 2));
  std::vector<double> a(size_t(M * M));
  for (int64_t b = 0, nb = out.numElements(); b < nb; ++b) {
    for (int64_t i = 0; i < M * M; ++i)
      a[size_t(i)] = x.getAsDouble(b * M * M + i);
    double det = 1;
    for (int64_t c = 0; c < M && det != 0; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < M; ++r)
        if (std::abs(a[size_t(r * M + c)]) > std::abs(a[size_t(p * M + c)]))
          p = r;
      if (a[size_t(p * M + c)] == 0) {
        det = 0;
        break;
      }
      if (p != c) {
        for (int64_t k = 0; k < M; ++k)
          std::swap(a[size_t(p * M + k)], a[size_t(c * M + k)]);
        det = -det;
      }
      const double pivot = a[size_t(c * M + c)];
      det *= pivot;
      for (int64_t r = c + 1; r < M; ++r) {
        const double f = a[size_t(r * M + c)] / pivot;
        for (int64_t k = c; k < M; ++k)
          a[size_t(r * M + k)] -= f * a[size_t(c * M + k)];
      }
    }
    out.setFromDouble(b, det);
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// About M³/3 multiply-adds per matrix.
OpCost detCost(const CostContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  const double m = x.dims.back().isStatic() ? double(x.dims.back().size()) : 1;
  return OpCost{ctx.outputElements(0) * 2 * m * m * m / 3, 0};
}

// ---------------------------------------------------------------------------------------------
// Einsum

template <typename Ctx> Expected<std::string> einsumEquationAttr(const Ctx& ctx) {
  if (!ctx.attrs().has("equation"))
    return ctx.error("required attribute 'equation' is missing");
  Expected<std::string> e = ctx.attrs().getString("equation", "");
  if (!e)
    return ctx.error(e.error().message());
  return *e;
}

/// The output dims are the output labels' dims; every operand must share one numeric dtype.
Status inferEinsum(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kNumericTypes));
  std::vector<size_t> ranks;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i))
      return ctx.error("input ", i, " is missing");
    FB_TRY(checkSameDType(ctx, 0, i));
    ranks.push_back(ctx.inputType(i).rank());
  }
  FB_ASSIGN_OR_RETURN(std::string equation, einsumEquationAttr(ctx));
  auto eq = parseEinsumEquation(equation, ranks);
  if (!eq)
    return ctx.error(eq.error().message());
  std::vector<Dim> label(size_t(eq->numLabels), Dim(1));
  std::vector<bool> seen(size_t(eq->numLabels), false);
  for (size_t k = 0; k < ranks.size(); ++k)
    for (size_t d = 0; d < ranks[k]; ++d) {
      const size_t l = size_t(eq->inputs[k][d]);
      const Dim& dim = ctx.inputType(k).dims[d];
      if (!seen[l] || (eq->isEllipsis[l] && label[l].isStatic() && label[l].size() == 1)) {
        label[l] = dim;
        seen[l] = true;
      } else if (dimsConflict(label[l], dim) &&
                 !(eq->isEllipsis[l] && dim.isStatic() && dim.size() == 1)) {
        return ctx.error("einsum equation '", equation, "': input ", k, " dim ", d, " is ",
                         dim.str(), " but the same label is ", label[l].str(), " elsewhere");
      }
    }
  std::vector<Dim> dims;
  for (int l : eq->output)
    dims.push_back(label[size_t(l)]);
  ctx.setOutputType(0, TensorType(ctx.inputType(0).dtype, dims));
  return Status::success();
}

/// Visits every combination of label values (an odometer over all labels) and adds the product
/// of the operands' elements to the output element its output labels pick, in double.
Status evalEinsum(EvalContext& ctx) {
  std::vector<size_t> ranks;
  std::vector<std::vector<int64_t>> sizes;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    ranks.push_back(ctx.input(i).rank());
    sizes.push_back(ctx.input(i).sizes());
  }
  FB_ASSIGN_OR_RETURN(std::string equation, einsumEquationAttr(ctx));
  auto eq = parseEinsumEquation(equation, ranks);
  if (!eq)
    return ctx.error(eq.error().message());
  auto labelSizes = einsumLabelSizes(*eq, sizes);
  if (!labelSizes)
    return ctx.error(labelSizes.error().message());
  const size_t L = size_t(eq->numLabels);
  // Per operand (and the output), the element stride of each label: a label on several dims
  // (a diagonal) sums their strides; a broadcast dim of size 1 has stride 0.
  auto stridesOf = [&](const std::vector<int>& labels, const std::vector<int64_t>& dimSizes) {
    std::vector<int64_t> byLabel(L, 0);
    int64_t stride = 1;
    for (size_t d = labels.size(); d-- > 0;) {
      if (dimSizes[d] != 1 || (*labelSizes)[size_t(labels[d])] == 1)
        byLabel[size_t(labels[d])] += stride;
      stride *= dimSizes[d];
    }
    return byLabel;
  };
  std::vector<std::vector<int64_t>> strides;
  for (size_t k = 0; k < ranks.size(); ++k)
    strides.push_back(stridesOf(eq->inputs[k], sizes[k]));
  std::vector<int64_t> outSizes;
  for (int l : eq->output)
    outSizes.push_back((*labelSizes)[size_t(l)]);
  const std::vector<int64_t> outStrides = stridesOf(eq->output, outSizes);
  const int64_t outCount =
      std::accumulate(outSizes.begin(), outSizes.end(), int64_t(1), std::multiplies<int64_t>());
  std::vector<double> acc(size_t(outCount), 0.0);
  int64_t total = 1;
  for (int64_t s : *labelSizes)
    total *= s;
  std::vector<int64_t> value(L, 0), off(ranks.size(), 0);
  int64_t outOff = 0;
  for (int64_t step = 0; step < total; ++step) {
    double p = 1;
    for (size_t k = 0; k < ranks.size(); ++k)
      p *= ctx.input(k).getAsDouble(off[k]);
    acc[size_t(outOff)] += p;
    for (size_t l = L; l-- > 0;) {
      ++value[l];
      for (size_t k = 0; k < ranks.size(); ++k)
        off[k] += strides[k][l];
      outOff += outStrides[l];
      if (value[l] < (*labelSizes)[l])
        break;
      for (size_t k = 0; k < ranks.size(); ++k)
        off[k] -= strides[k][l] * value[l];
      outOff -= outStrides[l] * value[l];
      value[l] = 0;
    }
  }
  Tensor out(ctx.input(0).dtype(), outSizes);
  for (int64_t i = 0; i < outCount; ++i)
    out.setFromDouble(i, acc[size_t(i)]);
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

/// One multiply-add per operand for every combination of label values.
OpCost einsumCost(const CostContext& ctx) {
  std::vector<size_t> ranks;
  for (size_t i = 0; i < ctx.node().numInputs(); ++i)
    ranks.push_back(ctx.inputType(i).rank());
  auto equation = ctx.attrs().getString("equation", "");
  if (!equation)
    return {};
  auto eq = parseEinsumEquation(*equation, ranks);
  if (!eq)
    return {};
  std::vector<double> label(size_t(eq->numLabels), 1);
  for (size_t k = 0; k < ranks.size(); ++k)
    for (size_t d = 0; d < ranks[k]; ++d) {
      const Dim& dim = ctx.inputType(k).dims[d];
      if (dim.isStatic())
        label[size_t(eq->inputs[k][d])] =
            std::max(label[size_t(eq->inputs[k][d])], double(dim.size()));
    }
  double total = 1;
  for (double s : label)
    total *= s;
  return OpCost{total * double(ranks.size()), 0};
}

} // namespace

void registerLinearAlgebraOps(OpRegistry& r) {
  r.set(OpKind::Det, inferDet, evalDet, detCost);
  r.set(OpKind::Einsum, inferEinsum, evalEinsum, einsumCost);
}

} // namespace fb
