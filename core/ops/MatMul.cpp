// MatMul (NumPy semantics) and Gemm: shape inference, blocked-GEMM reference kernels and FLOPs.
#include "core/ops/DenseKernels.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

namespace fb {

namespace {

double staticOrOne(const Dim& d) { return d.isStatic() ? double(d.size()) : 1.0; }

Status inferMatMul(InferContext& ctx) {
  const TensorType& a = ctx.inputType(0);
  const TensorType& b = ctx.inputType(1);
  bool ok = isComputeFloat(a.dtype) || a.dtype == DType::I32 || a.dtype == DType::I64;
  if (!ok)
    return ctx.error("A is ", a.str(), "; only f32, f16, bf16, i32 and i64 are supported");
  if (b.dtype != a.dtype)
    return ctx.error("A is ", a.str(), " but B is ", b.str(), "; dtypes must match");
  auto dims = matmulOutputDims(a, b);
  if (!dims.ok())
    return dims.error().withContext(ctx.node().describe());
  ctx.setOutputType(0, TensorType(a.dtype, *dims));
  return Status::success();
}

template <typename T> Tensor matmulTyped(const Tensor& a, const Tensor& b,
                                         const std::vector<int64_t>& ySizes) {
  Tensor y(DTypeOf<T>::value, ySizes);
  batchedMatMul<T>(a.sizes(), a.data<T>().data(), b.sizes(), b.data<T>().data(),
                   y.mutableData<T>().data());
  return y;
}

Status evalMatMul(EvalContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  auto ySizes = matmulOutputSizes(a.sizes(), b.sizes());
  if (!ySizes.ok())
    return ySizes.error().withContext(ctx.node().describe());
  switch (a.dtype()) {
  case DType::I32: ctx.setOutput(0, matmulTyped<int32_t>(a, b, *ySizes)); break;
  case DType::I64: ctx.setOutput(0, matmulTyped<int64_t>(a, b, *ySizes)); break;
  case DType::F32:
  case DType::F16:
  case DType::BF16: {
    std::vector<float> af = toFloatVector(a), bf = toFloatVector(b);
    int64_t n = 1;
    for (int64_t s : *ySizes)
      n *= s;
    std::vector<float> y(static_cast<size_t>(n));
    batchedMatMul<float>(a.sizes(), af.data(), b.sizes(), bf.data(), y.data());
    ctx.setOutput(0, fromFloatVector(a.dtype(), *ySizes, y));
    break;
  }
  default: return ctx.error("A is ", a.type().str(), "; unsupported dtype");
  }
  return Status::success();
}

OpCost costMatMul(const CostContext& ctx) {
  // Every output element is a dot product of length K (A's last dim).
  const TensorType& a = ctx.inputType(0);
  double k = a.rank() ? staticOrOne(a.dims.back()) : 1.0;
  return {2 * ctx.outputElements(0) * k, 0};
}

/// Gemm's M, K and N as dims, from A and B and the transpose flags.
struct GemmDims {
  Dim m, k, kb, n;
};

GemmDims gemmDims(const TensorType& a, const TensorType& b, bool transA, bool transB) {
  return {transA ? a.dims[1] : a.dims[0], transA ? a.dims[0] : a.dims[1],
          transB ? b.dims[1] : b.dims[0], transB ? b.dims[0] : b.dims[1]};
}

Status inferGemm(InferContext& ctx) {
  const TensorType& a = ctx.inputType(0);
  const TensorType& b = ctx.inputType(1);
  if (!isComputeFloat(a.dtype))
    return ctx.error("A is ", a.str(), "; only f32, f16 and bf16 are supported");
  if (b.dtype != a.dtype)
    return ctx.error("A is ", a.str(), " but B is ", b.str(), "; dtypes must match");
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.error("A ", a.str(), " and B ", b.str(), " must both be 2-D");
  FB_ASSIGN_OR_RETURN(int64_t transA, ctx.attrs().getInt("transA", 0));
  FB_ASSIGN_OR_RETURN(int64_t transB, ctx.attrs().getInt("transB", 0));
  GemmDims d = gemmDims(a, b, transA != 0, transB != 0);
  if (dimsConflict(d.k, d.kb))
    return ctx.error("K mismatch: A ", a.str(), " (transA=", transA, ") has K = ", d.k.str(),
                     " but B ", b.str(), " (transB=", transB, ") has K = ", d.kb.str());
  if (ctx.hasInput(2)) {
    const TensorType& c = ctx.inputType(2);
    if (c.dtype != a.dtype)
      return ctx.error("C is ", c.str(), " but A is ", a.str(), "; dtypes must match");
    // C broadcasts one way only: to (M, N).
    const Dim target[2] = {d.m, d.n};
    bool fits = c.rank() <= 2;
    for (size_t i = 0; fits && i < c.rank(); ++i) {
      const Dim& cd = c.dims[i];
      const Dim& td = target[2 - c.rank() + i];
      fits = !(cd.isStatic() && cd.size() != 1 && dimsConflict(cd, td));
    }
    if (!fits)
      return ctx.error("C ", c.str(), " does not broadcast to (M, N) = (", d.m.str(), ", ",
                       d.n.str(), ")");
  }
  ctx.setOutputType(0, TensorType(a.dtype, {d.m, d.n}));
  return Status::success();
}

/// A row-major copy of a 2-D matrix, transposed when asked.
std::vector<float> matrixOf(const Tensor& t, bool transpose) {
  std::vector<float> v = toFloatVector(t);
  if (!transpose)
    return v;
  const int64_t rows = t.sizes()[0], cols = t.sizes()[1];
  std::vector<float> out(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[size_t(c * rows + r)] = v[size_t(r * cols + c)];
  return out;
}

Status evalGemm(EvalContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  FB_ASSIGN_OR_RETURN(int64_t transA, ctx.attrs().getInt("transA", 0));
  FB_ASSIGN_OR_RETURN(int64_t transB, ctx.attrs().getInt("transB", 0));
  FB_ASSIGN_OR_RETURN(float alpha, ctx.attrs().getFloat("alpha", 1.f));
  FB_ASSIGN_OR_RETURN(float beta, ctx.attrs().getFloat("beta", 1.f));
  if (a.rank() != 2 || b.rank() != 2)
    return ctx.error("A ", a.type().str(), " and B ", b.type().str(), " must both be 2-D");
  const int64_t m = transA ? a.sizes()[1] : a.sizes()[0];
  const int64_t k = transA ? a.sizes()[0] : a.sizes()[1];
  const int64_t kb = transB ? b.sizes()[1] : b.sizes()[0];
  const int64_t n = transB ? b.sizes()[0] : b.sizes()[1];
  if (k != kb)
    return ctx.error("K mismatch: A ", a.type().str(), " (transA=", transA, ") and B ",
                     b.type().str(), " (transB=", transB, ")");
  std::vector<float> am = matrixOf(a, transA != 0), bm = matrixOf(b, transB != 0);
  std::vector<float> y(size_t(m * n), 0.f);
  gemmAccumulate<float>(m, n, k, am.data(), k, bm.data(), n, y.data(), n);
  for (float& v : y)
    v *= alpha;
  if (ctx.hasInput(2) && beta != 0.f) {
    const Tensor& c = ctx.input(2);
    auto outSizes = broadcastSizes(c.sizes(), {m, n});
    if (!outSizes.ok() || c.rank() > 2 || *outSizes != std::vector<int64_t>{m, n})
      return ctx.error("C ", c.type().str(), " does not broadcast to (M, N) = (", m, ", ", n,
                       ")");
    std::vector<float> cv = toFloatVector(c);
    forEachBroadcast({m, n}, {broadcastStrides(c.sizes(), {m, n})},
                     [&](int64_t i, const int64_t* off) { y[size_t(i)] += beta * cv[size_t(off[0])]; });
  }
  ctx.setOutput(0, fromFloatVector(a.dtype(), {m, n}, y));
  return Status::success();
}

OpCost costGemm(const CostContext& ctx) {
  const TensorType& a = ctx.inputType(0);
  auto transA = ctx.attrs().getInt("transA", 0);
  double k = a.rank() == 2 ? staticOrOne(a.dims[transA.ok() && *transA ? 0 : 1]) : 1.0;
  double out = ctx.outputElements(0);
  return {2 * out * k + (ctx.hasInput(2) ? out : 0), 0};
}

} // namespace

void registerMatMulOps(OpRegistry& r) {
  r.set(OpKind::MatMul, inferMatMul, evalMatMul, costMatMul);
  r.set(OpKind::Gemm, inferGemm, evalGemm, costGemm);
}

} // namespace fb
