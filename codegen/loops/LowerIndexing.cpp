// Lowering of the inline indexing and rearranging ops: GatherElements, GatherND, OneHot, Trilu,
// EyeLike, DepthToSpace, SpaceToDepth, ReverseSequence and Compress (with a compile-time
// condition) become expressions of their output index that inline into the consumer's loop,
// like the other injective ops in LowerInline.cpp.
//
// Indices read from data are clamped into range, so a kernel never reads outside a buffer; the
// executor range-checks them first (KernelBuilder::addIndexCheck) and reports the interpreter's
// error for an index out of range.
#include "codegen/loops/LowerContext.h"
#include "core/ops/KernelUtil.h"

namespace fb::cg::lower {

namespace {

/// An index read from data, made non-negative (counting from the end) and clamped to [0, size).
ExprPtr resolvedIndex(ExprPtr i, int64_t size) {
  i = cast(Type::i64(), std::move(i));
  i = select(binary(BinaryOp::Lt, i, intImm(0)), add(i, intImm(size)), i);
  return min(max(i, intImm(0)), intImm(std::max<int64_t>(size - 1, 0)));
}

Status defineGatherElements(KernelBuilder& b, const Node& n) {
  const Value *data = n.input(0), *indices = n.input(1);
  std::vector<int64_t> ds = KernelBuilder::sizesOf(data);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(ds.size())));
  const int64_t dim = ds[size_t(axis)];
  FB_TRY(b.addIndexCheck(n, indices, {dim}, {axis}));
  b.define(n.output(0), [&b, data, indices, axis, dim](const Indices& idx) {
    Indices src = idx;
    src[size_t(axis)] = resolvedIndex(b.read(indices, idx), dim);
    return b.read(data, src);
  });
  return Status::success();
}

Status defineGatherND(KernelBuilder& b, const Node& n) {
  const Value *data = n.input(0), *indices = n.input(1);
  std::vector<int64_t> ds = KernelBuilder::sizesOf(data), is = KernelBuilder::sizesOf(indices);
  FB_ASSIGN_OR_RETURN(int64_t batch, n.attrs().getInt("batch_dims", 0));
  const int64_t tuple = is.back();
  if (batch < 0 || tuple < 1 || batch + tuple > int64_t(ds.size()))
    return makeError(n.describe(), ": index tuples of length ", tuple, " with batch_dims ", batch,
                     " do not fit data of rank ", ds.size());
  std::vector<int64_t> sizes, axes;
  for (int64_t c = 0; c < tuple; ++c) {
    sizes.push_back(ds[size_t(batch + c)]);
    axes.push_back(batch + c);
  }
  FB_TRY(b.addIndexCheck(n, indices, sizes, axes));
  const size_t lead = is.size() - 1; // output dims taken from indices.shape[:-1]
  b.define(n.output(0), [&b, data, indices, batch, tuple, sizes, lead](const Indices& idx) {
    Indices src(idx.begin(), idx.begin() + batch);
    Indices at(idx.begin(), idx.begin() + int64_t(lead));
    at.push_back(nullptr);
    for (int64_t c = 0; c < tuple; ++c) {
      at.back() = intImm(c);
      src.push_back(resolvedIndex(b.read(indices, at), sizes[size_t(c)]));
    }
    src.insert(src.end(), idx.begin() + int64_t(lead), idx.end());
    return b.read(data, src);
  });
  return Status::success();
}

Status defineOneHot(KernelBuilder& b, const Node& n) {
  const Value *indices = n.input(0), *values = n.input(2);
  const Value* out = n.output(0);
  std::vector<int64_t> os = KernelBuilder::sizesOf(out);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", -1));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(os.size())));
  const int64_t depth = os[size_t(axis)];
  b.define(out, [&b, indices, values, axis, depth](const Indices& idx) {
    Indices at = idx;
    at.erase(at.begin() + axis);
    // Truncate like the interpreter (float indices), then count negatives from depth; an index
    // outside [-depth, depth) matches no position and gives a row of `off`.
    ExprPtr k = cast(Type::i64(), b.read(indices, at));
    k = select(binary(BinaryOp::Lt, k, intImm(0)), add(k, intImm(depth)), k);
    return select(binary(BinaryOp::Eq, k, idx[size_t(axis)]), b.read(values, {intImm(1)}),
                  b.read(values, {intImm(0)}));
  });
  return Status::success();
}

Status defineTrilu(KernelBuilder& b, const Node& n) {
  const Value* x = n.input(0);
  const Value* kv = n.numInputs() > 1 ? n.input(1) : nullptr;
  const Value* out = n.output(0);
  FB_ASSIGN_OR_RETURN(int64_t upper, n.attrs().getInt("upper", 1));
  const DType dt = out->type().dtype;
  b.define(out, [&b, x, kv, upper, dt](const Indices& idx) {
    const size_t r = idx.size();
    ExprPtr diag = sub(idx[r - 1], idx[r - 2]); // j - i
    ExprPtr k = kv ? cast(Type::i64(), readScalar(b, kv)) : intImm(0);
    ExprPtr keep = binary(upper ? BinaryOp::Ge : BinaryOp::Le, diag, k);
    return select(keep, b.read(x, idx), fimm(dt, 0));
  });
  return Status::success();
}

/// DepthToSpace (toSpace) or SpaceToDepth, NCHW, as the interpreter maps indices
/// (core/ops/DataMovement.cpp).
Status defineDepthSpace(KernelBuilder& b, const Node& n, bool toSpace) {
  const Value* x = n.input(0);
  const Value* out = n.output(0);
  FB_ASSIGN_OR_RETURN(int64_t bs, n.attrs().getInt("blocksize", 0));
  FB_ASSIGN_OR_RETURN(std::string mode, n.attrs().getString("mode", "DCR"));
  if (bs < 1)
    return makeError(n.describe(), ": blocksize must be positive, got ", bs);
  const bool crd = mode == "CRD";
  const int64_t inC = KernelBuilder::sizesOf(x)[1], outC = KernelBuilder::sizesOf(out)[1];
  b.define(out, [&b, x, bs, crd, toSpace, inC, outC](const Indices& idx) {
    ExprPtr c = idx[1], h = idx[2], w = idx[3];
    ExprPtr B = intImm(bs);
    auto mod = [](ExprPtr a, ExprPtr m) {
      return binary(BinaryOp::Mod, std::move(a), std::move(m));
    };
    if (toSpace) {
      ExprPtr i = mod(h, B), j = mod(w, B);
      ExprPtr blk = add(mul(i, B), j);
      ExprPtr ic = crd ? add(mul(c, intImm(bs * bs)), blk) : add(mul(blk, intImm(outC)), c);
      return b.read(x, {idx[0], ic, div(h, B), div(w, B)});
    }
    ExprPtr blk = div(c, intImm(inC));
    ExprPtr ih = add(mul(h, B), div(blk, B)), iw = add(mul(w, B), mod(blk, B));
    return b.read(x, {idx[0], mod(c, intImm(inC)), ih, iw});
  });
  return Status::success();
}

/// out[i, j] = (j - i == k) ? 1 : 0.
Status defineEyeLike(KernelBuilder& b, const Node& n) {
  FB_ASSIGN_OR_RETURN(int64_t k, n.attrs().getInt("k", 0));
  const DType dt = n.output(0)->type().dtype;
  b.define(n.output(0), [k, dt](const Indices& idx) {
    return select(binary(BinaryOp::Eq, sub(idx[1], idx[0]), intImm(k)), fimm(dt, 1), fimm(dt, 0));
  });
  return Status::success();
}

/// out[t, b] = x[len_b - 1 - t, b] for t < len_b, else x[t, b] (time and batch axes 0 and 1 in
/// either order). A length outside [0, T] is the interpreter's error: lengths read from an
/// argument are checked by the executor before the kernel; all are clamped here, so a length
/// computed inside a hand-built group (clamped only, as Gather's indices) never reads outside x.
Status defineReverseSequence(KernelBuilder& b, const Node& n) {
  const Value *x = n.input(0), *lens = n.input(1);
  FB_ASSIGN_OR_RETURN(int64_t timeAxis, n.attrs().getInt("time_axis", 0));
  const size_t ta = timeAxis == 0 ? 0 : 1, ba = 1 - ta;
  const int64_t T = KernelBuilder::sizesOf(x)[ta];
  if (b.directBuffer(lens)) {
    IndexCheck check;
    check.sizes = {T};
    check.axes = {int64_t(ta)};
    check.inclusive = true;
    check.message = [](int64_t e, int64_t v, int64_t size) {
      return "sequence_lens[" + std::to_string(e) + "] = " + std::to_string(v) +
             " is outside [0, " + std::to_string(size) + "]";
    };
    FB_TRY(b.addRangeCheck(n, lens, std::move(check)));
  }
  b.define(n.output(0), [&b, x, lens, ta, ba, T](const Indices& idx) {
    ExprPtr len = min(max(cast(Type::i64(), b.read(lens, {idx[ba]})), intImm(0)), intImm(T));
    ExprPtr t = idx[ta];
    Indices src = idx;
    src[ta] = select(binary(BinaryOp::Lt, t, len), sub(sub(len, intImm(1)), t), t);
    return b.read(x, src);
  });
  return Status::success();
}

/// A gather through a compile-time table of the selected positions along the axis (or of the
/// flattened input). A condition known only at run time decides the output's shape, which the
/// CPU backend needs at compile time: that is refused by name.
Status defineCompress(KernelBuilder& b, const Node& n) {
  const Value *x = n.input(0), *condition = n.input(1);
  const Tensor* cond = b.constantOf(condition);
  if (!cond)
    return makeUnsupported(n.describe(), ": Compress's output shape depends on its condition; "
                                         "the CPU backend needs a compile-time condition");
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(x);
  const bool hasAxis = n.attrs().has("axis");
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
  int64_t axis = 0;
  if (hasAxis) {
    FB_ASSIGN_OR_RETURN(axis, normalizeAxis(rawAxis, int64_t(xs.size())));
  }
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond->numElements(); ++i)
    if (cond->getAsDouble(i) != 0)
      picked.push_back(i);
  if (picked.empty())
    picked.push_back(0); // an empty output reads nothing; keep the table non-empty
  BufferPtr table = b.constantBuffer("compress_pos",
                                     Tensor::fromVector<int64_t>({int64_t(picked.size())}, picked));
  if (hasAxis) {
    b.define(n.output(0), [&b, x, table, axis](const Indices& idx) {
      Indices src = idx;
      src[size_t(axis)] = load(table, {idx[size_t(axis)]});
      return b.read(x, src);
    });
    return Status::success();
  }
  // Without an axis: unravel the flat position into the input's index.
  b.define(n.output(0), [&b, x, table, xs](const Indices& idx) {
    ExprPtr flat = load(table, {idx[0]});
    Indices src(xs.size());
    int64_t stride = 1;
    for (size_t d = xs.size(); d-- > 0;) {
      src[d] = binary(BinaryOp::Mod, binary(BinaryOp::Div, flat, intImm(stride)), intImm(xs[d]));
      stride *= xs[d];
    }
    return b.read(x, src);
  });
  return Status::success();
}

} // namespace

std::optional<Status> defineIndexingInline(KernelBuilder& b, const Node& n) {
  switch (n.op()) {
  case OpKind::GatherElements:
    return defineGatherElements(b, n);
  case OpKind::GatherND:
    return defineGatherND(b, n);
  case OpKind::OneHot:
    return defineOneHot(b, n);
  case OpKind::Trilu:
    return defineTrilu(b, n);
  case OpKind::DepthToSpace:
    return defineDepthSpace(b, n, /*toSpace=*/true);
  case OpKind::SpaceToDepth:
    return defineDepthSpace(b, n, /*toSpace=*/false);
  case OpKind::EyeLike:
    return defineEyeLike(b, n);
  case OpKind::ReverseSequence:
    return defineReverseSequence(b, n);
  case OpKind::Compress:
    return defineCompress(b, n);
  case OpKind::GridSample:
    return defineGridSample(b, n);
  default:
    return std::nullopt;
  }
}

} // namespace fb::cg::lower
