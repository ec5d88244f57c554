// Ops that read data at positions given by a tensor of indices: GatherElements, GatherND and
// OneHot, and NonZero, which produces such indices (its output shape depends on the data).
#include "core/ops/DataCopy.h"
#include "core/ops/MathUtil.h"
#include "core/ops/OpRegistration.h"

#include <cstring>

namespace fb {

using namespace math;

namespace {

/// Checks that input i holds i32 or i64 indices, as the indexing ops require.
Status checkIndexDType(const InferContext& ctx, size_t i) {
  DType d = ctx.inputType(i).dtype;
  if (d != DType::I32 && d != DType::I64)
    return ctx.error("input ", i, " (indices) must be i32 or i64, got ", ctx.inputType(i).str());
  return Status::success();
}

/// An index along an axis of `size` elements, negative values counting from the end; the error
/// is the one every indexing op (and the CPU backend's index check) reports.
template <typename Ctx>
Expected<int64_t> resolveIndex(const Ctx& ctx, int64_t i, int64_t axis, int64_t size) {
  if (i < -size || i >= size)
    return ctx.error("index ", i, " is out of range for axis ", axis, " of size ", size);
  return i < 0 ? i + size : i;
}

// ---------------------------------------------------------------------------------------------
// GatherElements

/// The output has the indices' shape and the data's dtype.
Status inferGatherElements(InferContext& ctx) {
  FB_TRY(checkIndexDType(ctx, 1));
  const TensorType& data = ctx.inputType(0);
  const TensorType& indices = ctx.inputType(1);
  if (data.rank() == 0 || indices.rank() != data.rank())
    return ctx.error("data ", data.str(), " and indices ", indices.str(),
                     " must have the same rank >= 1");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, intAttr(ctx, "axis", 0));
  auto axis = normalizeAxis(rawAxis, int64_t(data.rank()));
  if (!axis)
    return ctx.error(axis.error().message());
  ctx.setOutputType(0, TensorType(data.dtype, indices.dims));
  return Status::success();
}

/// out[i0, .., ia, .., in] = data[i0, .., indices[i0, .., in], .., in] along the axis a.
Status evalGatherElements(EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (data.rank() == 0 || indices.rank() != data.rank())
    return ctx.error("data ", data.type().str(), " and indices ", indices.type().str(),
                     " must have the same rank >= 1");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, intAttr(ctx, "axis", 0));
  auto axisOr = normalizeAxis(rawAxis, int64_t(data.rank()));
  if (!axisOr)
    return ctx.error(axisOr.error().message());
  const size_t axis = size_t(*axisOr), rank = data.rank();
  for (size_t d = 0; d < rank; ++d)
    if (d != axis && indices.sizes()[d] > data.sizes()[d])
      return ctx.error("indices ", indices.type().str(), " exceed data ", data.type().str(),
                       " in dim ", d);
  Tensor out(data.dtype(), indices.sizes());
  const std::vector<int64_t> idx = indices.toInt64Vector();
  const std::vector<int64_t> dataStrides = data.strides();
  const std::vector<int64_t>& is = indices.sizes();
  const int64_t es = int64_t(dtypeSize(data.dtype()));
  std::vector<int64_t> pos(rank, 0);
  for (size_t e = 0; e < idx.size(); ++e) {
    FB_ASSIGN_OR_RETURN(int64_t i, resolveIndex(ctx, idx[e], int64_t(axis), data.sizes()[axis]));
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d)
      src += (d == axis ? i : pos[d]) * dataStrides[d];
    std::memcpy(out.mutableRawData() + int64_t(e) * es, data.rawData() + src * es, size_t(es));
    for (size_t d = rank; d-- > 0;) {
      if (++pos[d] < is[d])
        break;
      pos[d] = 0;
    }
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// GatherND

/// The checked geometry of a GatherND: batch dims, tuple length and the output's dims.
struct GatherNDShape {
  int64_t batch = 0, tuple = 0;
  std::vector<Dim> out;
};

/// out = indices.shape[:-1] + data.shape[batch_dims + tuple:], where tuple = indices.shape[-1].
Expected<GatherNDShape> gatherNDShape(const InferContext& ctx, const TensorType& data,
                                      const TensorType& indices) {
  GatherNDShape g;
  FB_ASSIGN_OR_RETURN(g.batch, intAttr(ctx, "batch_dims", 0));
  if (data.rank() == 0 || indices.rank() == 0)
    return ctx.error("data ", data.str(), " and indices ", indices.str(), " must have rank >= 1");
  if (g.batch < 0 || g.batch >= int64_t(std::min(data.rank(), indices.rank())))
    return ctx.error("batch_dims ", g.batch, " must be in [0, ",
                     std::min(data.rank(), indices.rank()), ")");
  const Dim& last = indices.dims.back();
  if (!last.isStatic())
    return ctx.unsupported("the last dim of indices ", indices.str(), " must be static");
  g.tuple = last.size();
  if (g.tuple < 1 || g.tuple > int64_t(data.rank()) - g.batch)
    return ctx.error("indices ", indices.str(), " index tuples of length ", g.tuple, " but data ",
                     data.str(), " has ", int64_t(data.rank()) - g.batch,
                     " dims after the batch dims");
  for (int64_t d = 0; d < g.batch; ++d)
    if (dimsConflict(data.dims[size_t(d)], indices.dims[size_t(d)]))
      return ctx.error("batch dim ", d, " differs between data ", data.str(), " and indices ",
                       indices.str());
  g.out.assign(indices.dims.begin(), indices.dims.end() - 1);
  g.out.insert(g.out.end(), data.dims.begin() + g.batch + g.tuple, data.dims.end());
  return g;
}

Status inferGatherND(InferContext& ctx) {
  FB_TRY(checkIndexDType(ctx, 1));
  const TensorType& data = ctx.inputType(0);
  FB_ASSIGN_OR_RETURN(GatherNDShape g, gatherNDShape(ctx, data, ctx.inputType(1)));
  ctx.setOutputType(0, TensorType(data.dtype, std::move(g.out)));
  return Status::success();
}

/// Copies, for each index tuple, the slice of data it names (within its batch).
Status evalGatherND(EvalContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  FB_ASSIGN_OR_RETURN(int64_t batchDims, intAttr(ctx, "batch_dims", 0));
  const std::vector<int64_t>& ds = data.sizes();
  const std::vector<int64_t>& is = indices.sizes();
  const int64_t rank = int64_t(ds.size());
  if (rank == 0 || is.empty() || batchDims < 0 || batchDims >= std::min(rank, int64_t(is.size())))
    return ctx.error("data ", data.type().str(), " and indices ", indices.type().str(),
                     " do not fit batch_dims ", batchDims);
  const int64_t tuple = is.back();
  if (tuple < 1 || tuple > rank - batchDims)
    return ctx.error("index tuples of length ", tuple, " do not fit data ", data.type().str());
  int64_t batch = 1, perBatch = 1, slice = 1;
  for (int64_t d = 0; d < batchDims; ++d) {
    if (ds[size_t(d)] != is[size_t(d)])
      return ctx.error("batch dim ", d, " differs between data ", data.type().str(),
                       " and indices ", indices.type().str());
    batch *= ds[size_t(d)];
  }
  for (size_t d = size_t(batchDims); d + 1 < is.size(); ++d)
    perBatch *= is[d];
  for (int64_t d = batchDims + tuple; d < rank; ++d)
    slice *= ds[size_t(d)];
  std::vector<int64_t> outSizes(is.begin(), is.end() - 1);
  outSizes.insert(outSizes.end(), ds.begin() + batchDims + tuple, ds.end());
  Tensor out(data.dtype(), outSizes);
  const std::vector<int64_t> idx = indices.toInt64Vector();
  const std::vector<int64_t> strides = data.strides();
  const int64_t batchStride = batchDims ? strides[size_t(batchDims - 1)] : 0;
  const int64_t es = int64_t(dtypeSize(data.dtype()));
  int64_t at = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < perBatch; ++t) {
      int64_t src = b * batchStride;
      for (int64_t c = 0; c < tuple; ++c) {
        const int64_t axis = batchDims + c;
        FB_ASSIGN_OR_RETURN(
            int64_t i,
            resolveIndex(ctx, idx[size_t((b * perBatch + t) * tuple + c)], axis, ds[size_t(axis)]));
        src += i * strides[size_t(axis)];
      }
      if (slice)
        std::memcpy(out.mutableRawData() + at * es, data.rawData() + src * es, size_t(slice * es));
      at += slice;
    }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// OneHot

/// OneHot's `axis` (default -1), normalized against the output rank.
template <typename Ctx> Expected<int64_t> oneHotAxis(const Ctx& ctx, size_t indicesRank) {
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, intAttr(ctx, "axis", -1));
  auto a = normalizeAxis(rawAxis, int64_t(indicesRank) + 1);
  if (!a)
    return ctx.error(a.error().message());
  return *a;
}

/// Inserts a dim of `depth` (known when input 1 is a constant) at the axis; the dtype is that of
/// the values input.
Status inferOneHot(InferContext& ctx) {
  FB_TRY(checkInputDType(ctx, 0, kNumericTypes));
  FB_TRY(checkInputDType(ctx, 1, kNumericTypes));
  const TensorType& indices = ctx.inputType(0);
  const TensorType& values = ctx.inputType(2);
  if (values.rank() != 1 || (values.dims[0].isStatic() && values.dims[0].size() != 2))
    return ctx.error("input 2 (values) must be [off, on], got ", values.str());
  FB_ASSIGN_OR_RETURN(int64_t axis, oneHotAxis(ctx, indices.rank()));
  Dim depth = Dim::unknown();
  if (const Tensor* t = ctx.inputConstant(1)) {
    if (t->numElements() != 1)
      return ctx.error("input 1 (depth) must hold one element, got ", t->type().str());
    int64_t d = int64_t(t->getAsDouble(0));
    if (d < 1)
      return ctx.error("depth ", d, " must be positive");
    depth = Dim(d);
  }
  std::vector<Dim> out = indices.dims;
  out.insert(out.begin() + axis, depth);
  ctx.setOutputType(0, TensorType(values.dtype, std::move(out)));
  return Status::success();
}

/// out[.., j, ..] = on where j == index (negative indices count from depth), off elsewhere; an
/// index outside [-depth, depth) gives a row of off values, as ONNX specifies.
Status evalOneHot(EvalContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(2);
  if (ctx.input(1).numElements() != 1 || values.numElements() != 2)
    return ctx.error("depth must hold one element and values two");
  const int64_t depth = int64_t(ctx.input(1).getAsDouble(0));
  if (depth < 1)
    return ctx.error("depth ", depth, " must be positive");
  FB_ASSIGN_OR_RETURN(int64_t axis, oneHotAxis(ctx, indices.rank()));
  std::vector<int64_t> outSizes = indices.sizes();
  outSizes.insert(outSizes.begin() + axis, depth);
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(values.dtype(), outSizes));
  int64_t inner = 1;
  for (size_t d = size_t(axis); d < indices.rank(); ++d)
    inner *= indices.sizes()[d];
  const int64_t es = int64_t(dtypeSize(values.dtype()));
  const std::byte* off = values.rawData();
  const std::byte* on = values.rawData() + es;
  for (int64_t e = 0; e < out.numElements(); ++e) {
    // e = (o * depth + j) * inner + i reads indices[o * inner + i].
    const int64_t i = e % inner, j = (e / inner) % depth, o = e / inner / depth;
    int64_t k = int64_t(indices.getAsDouble(o * inner + i));
    if (k < 0)
      k += depth;
    std::memcpy(out.mutableRawData() + e * es, k == j ? on : off, size_t(es));
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

// ---------------------------------------------------------------------------------------------
// NonZero

/// [rank, count of non-zero elements]: the count is known only when the data is.
Status inferNonZero(InferContext& ctx) {
  const TensorType& x = ctx.inputType(0);
  ctx.setOutputType(
      0, TensorType(DType::I64, {Dim(int64_t(std::max<size_t>(x.rank(), 1))), Dim::unknown()}));
  return Status::success();
}

/// The coordinates of the non-zero elements in row-major order, one row per dim (a scalar counts
/// as one dim, as numpy.nonzero treats it).
Status evalNonZero(EvalContext& ctx) {
  const Tensor& x = ctx.input(0);
  const size_t rank = std::max<size_t>(x.rank(), 1);
  std::vector<int64_t> sizes = x.rank() ? x.sizes() : std::vector<int64_t>{1};
  std::vector<int64_t> hits;
  for (int64_t e = 0; e < x.numElements(); ++e)
    if (x.getAsDouble(e) != 0)
      hits.push_back(e);
  const int64_t n = int64_t(hits.size());
  Tensor out(DType::I64, {int64_t(rank), n});
  int64_t* po = out.mutableData<int64_t>().data();
  for (int64_t k = 0; k < n; ++k) {
    int64_t e = hits[size_t(k)];
    for (size_t d = rank; d-- > 0;) {
      po[int64_t(d) * n + k] = e % sizes[d];
      e /= sizes[d];
    }
  }
  ctx.setOutput(0, std::move(out));
  return Status::success();
}

} // namespace

void registerIndexingOps(OpRegistry& r) {
  r.set(OpKind::GatherElements, inferGatherElements, evalGatherElements, zeroFlopsCost);
  r.set(OpKind::GatherND, inferGatherND, evalGatherND, zeroFlopsCost);
  r.set(OpKind::OneHot, inferOneHot, evalOneHot, zeroFlopsCost);
  // One comparison per input element.
  r.set(OpKind::NonZero, inferNonZero, evalNonZero, costPerInputElement<1>);
}

} // namespace fb
