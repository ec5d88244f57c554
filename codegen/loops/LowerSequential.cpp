// Lowering of ops whose nests walk elements in an order that matters: CumSum (a running sum
// along an axis), ScatterElements and ScatterND (updates applied in order, later ones winning),
// TopK (each element's rank among its line), Hardmax (the first maximum of a line) and MaxUnpool
// (each element stored at the position its index gives).
//
// Where a store's position comes from data (a scatter target, a TopK rank), the position is
// kept in a local declared outside the loop, so the scheduler sees iterations that share state
// and neither vectorizes nor parallelizes that loop; the loops over independent lines still are.
#include "codegen/loops/LowerContext.h"
#include "core/ops/KernelUtil.h"

#include <cmath>

namespace fb::cg::lower {

namespace {

/// Loop names and index expressions for every dim of `sizes` except `axis`, whose index is
/// `axisIndex`: the lines along one axis.
struct LineNest {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  Indices at; ///< the full index, with `axisIndex` at the axis
};
LineNest linesAlong(const std::vector<int64_t>& sizes, size_t axis, const ExprPtr& axisIndex) {
  LineNest l;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (d == axis) {
      l.at.push_back(axisIndex);
      continue;
    }
    l.names.push_back("i" + std::to_string(l.names.size()));
    l.sizes.push_back(sizes[d]);
    l.at.push_back(var(l.names.back()));
  }
  return l;
}

/// `i` made non-negative and clamped into [0, size) (the executor has range-checked it).
ExprPtr resolved(ExprPtr i, int64_t size) {
  i = cast(Type::i64(), std::move(i));
  i = select(binary(BinaryOp::Lt, i, intImm(0)), add(i, intImm(size)), i);
  return min(max(i, intImm(0)), intImm(std::max<int64_t>(size - 1, 0)));
}

/// Applies the epilogue to every element of `out` after the nest (null when there is none).
StmtPtr epilogueNest(const BufferPtr& out, const Epilogue& epi) {
  if (!epi)
    return nullptr;
  return elementwiseNest(
      out, [&](const Indices& idx) { return epi(idx, load(out, idx)); }, "epilogue");
}

// ---- CumSum ----

Expected<StmtPtr> lowerCumSum(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epi) {
  const Value* X = n.input(0);
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  const Tensor* axisT = b.constantOf(n.input(1));
  if (!axisT || axisT->numElements() != 1)
    return makeUnsupported(n.describe(), ": the CPU backend needs a constant CumSum axis");
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(axisT->getAsInt64(0), int64_t(xs.size())));
  FB_ASSIGN_OR_RETURN(int64_t exclusive, n.attrs().getInt("exclusive", 0));
  FB_ASSIGN_OR_RETURN(int64_t reverse, n.attrs().getInt("reverse", 0));
  const int64_t len = xs[size_t(axis)];
  ExprPtr j = reverse ? sub(intImm(len - 1), var("s")) : var("s");
  LineNest l = linesAlong(xs, size_t(axis), j);
  const DType dt = out->dtype;
  BufferPtr acc = makeLocalBuffer("acc", dt, {1});
  Indices z{intImm(0)};
  ExprPtr x = b.read(X, l.at);
  StmtPtr step = exclusive ? block({store(out, l.at, applyEpi(epi, l.at, load(acc, z))),
                                    store(acc, z, add(load(acc, z), x))})
                           : block({store(acc, z, add(load(acc, z), x)),
                                    store(out, l.at, applyEpi(epi, l.at, load(acc, z)))});
  StmtPtr body = alloc(acc, block({store(acc, z, fimm(dt, 0), tag(n)), forRange("s", len, step)}));
  return wrapLoops(l.names, l.sizes, body);
}

// ---- ScatterElements / ScatterND ----

/// Combines an update u into the current element a, per the `reduction` attribute.
Expected<ExprPtr> combine(const Node& n, ExprPtr a, ExprPtr u) {
  FB_ASSIGN_OR_RETURN(std::string r, n.attrs().getString("reduction", "none"));
  if (r == "none")
    return u;
  if (r == "add")
    return add(a, u);
  if (r == "mul")
    return mul(a, u);
  if (r == "max")
    return max(a, u);
  if (r == "min")
    return min(a, u);
  return makeError(n.describe(), ": reduction '", r, "' is not one of none, add, mul, max, min");
}

/// Copies data into out, then for each update element u (in row-major order) stores
/// combine(out[target(u)], updates[u]). The target index goes through the local `pos`, declared
/// outside the update loops, so that none of them is vectorized or run in parallel: two updates
/// may land on one element, and the later one must win (or combine in order).
Expected<StmtPtr> scatterNest(KernelBuilder& b, const Node& n, const BufferPtr& out,
                              const Epilogue& epi,
                              const std::function<Indices(const Indices&)>& target) {
  const Value *data = n.input(0), *updates = n.input(2);
  std::vector<int64_t> us = KernelBuilder::sizesOf(updates);
  const size_t rank = out->rank();
  StmtPtr copy = elementwiseNest(
      out, [&](const Indices& idx) { return b.read(data, idx); }, tag(n));
  BufferPtr pos = makeLocalBuffer("pos", DType::I64, {int64_t(rank)});
  std::vector<std::string> names = indexNames(us.size(), "u");
  Indices u = varsOf(names);
  Indices to = target(u);
  std::vector<StmtPtr> steps;
  Indices at;
  for (size_t d = 0; d < rank; ++d) {
    steps.push_back(store(pos, {intImm(int64_t(d))}, to[d]));
    at.push_back(load(pos, {intImm(int64_t(d))}));
  }
  FB_ASSIGN_OR_RETURN(ExprPtr value, combine(n, load(out, at), b.read(updates, u)));
  steps.push_back(store(out, at, value, "scatter"));
  StmtPtr scatter = alloc(pos, wrapLoops(names, us, block(std::move(steps))));
  return block({copy, scatter, epilogueNest(out, epi)});
}

Expected<StmtPtr> lowerScatterElements(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                       const Epilogue& epi) {
  const Value* indices = n.input(1);
  const std::vector<int64_t> ds = out->sizes;
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(ds.size())));
  const int64_t dim = ds[size_t(axis)];
  FB_TRY(b.addIndexCheck(n, indices, {dim}, {axis}));
  return scatterNest(b, n, out, epi, [&b, indices, axis, dim](const Indices& u) {
    Indices to = u;
    to[size_t(axis)] = resolved(b.read(indices, u), dim);
    return to;
  });
}

Expected<StmtPtr> lowerScatterND(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                 const Epilogue& epi) {
  const Value* indices = n.input(1);
  const std::vector<int64_t> ds = out->sizes;
  const std::vector<int64_t> is = KernelBuilder::sizesOf(indices);
  const int64_t k = is.back();
  if (k < 1 || k > int64_t(ds.size()))
    return makeError(n.describe(), ": index tuples of length ", k, " do not fit data of rank ",
                     ds.size());
  std::vector<int64_t> sizes(ds.begin(), ds.begin() + k), axes;
  for (int64_t c = 0; c < k; ++c)
    axes.push_back(c);
  FB_TRY(b.addIndexCheck(n, indices, sizes, axes));
  const size_t lead = is.size() - 1; // update dims that pick the tuple
  return scatterNest(b, n, out, epi, [&b, indices, k, sizes, lead](const Indices& u) {
    Indices at(u.begin(), u.begin() + int64_t(lead));
    at.push_back(nullptr);
    Indices to;
    for (int64_t c = 0; c < k; ++c) {
      at.back() = intImm(c);
      to.push_back(resolved(b.read(indices, at), sizes[size_t(c)]));
    }
    to.insert(to.end(), u.begin() + int64_t(lead), u.end());
    return to;
  });
}

// ---- TopK ----

/// For each element of a line, its rank is the number of elements that come before it in the
/// result order (larger, or equal at a lower index, with `largest`); ranks below K are stored at
/// their rank. O(n²) per line: simple and exact in ONNX's tie order, meant for the short lines
/// of masks and detections rather than for large vocabularies.
Expected<StmtPtr> lowerTopK(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi, const BufferPtr& indicesOut) {
  const Value* X = n.input(0);
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", -1));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(xs.size())));
  FB_ASSIGN_OR_RETURN(int64_t largest, n.attrs().getInt("largest", 1));
  const int64_t len = xs[size_t(axis)], k = out->sizes[size_t(axis)];
  BufferPtr rank = makeLocalBuffer("rank", DType::I64, {1});
  Indices z{intImm(0)};
  LineNest li = linesAlong(xs, size_t(axis), var("e"));
  LineNest lj = linesAlong(xs, size_t(axis), var("f"));
  ExprPtr xe = b.read(X, li.at), xf = b.read(X, lj.at);
  ExprPtr before = binary(BinaryOp::Or, binary(largest ? BinaryOp::Gt : BinaryOp::Lt, xf, xe),
                          binary(BinaryOp::And, binary(BinaryOp::Eq, xf, xe),
                                 binary(BinaryOp::Lt, var("f"), var("e"))));
  StmtPtr count =
      forRange("f", len, store(rank, z, add(load(rank, z), select(before, intImm(1), intImm(0)))));
  Indices oi = li.at;
  oi[size_t(axis)] = load(rank, z);
  std::vector<StmtPtr> stores{store(out, oi, applyEpi(epi, oi, xe), tag(n))};
  if (indicesOut)
    stores.push_back(store(indicesOut, oi, cast(Type{indicesOut->dtype, 1}, var("e"))));
  StmtPtr place = ifThen(binary(BinaryOp::Lt, load(rank, z), intImm(k)), block(stores));
  StmtPtr perElement = alloc(rank, block({store(rank, z, intImm(0)), count, place}));
  return wrapLoops(li.names, li.sizes, forRange("e", len, perElement));
}

// ---- Hardmax ----

/// One pass finds the first maximum of the line, a second writes 1 there and 0 elsewhere.
Expected<StmtPtr> lowerHardmax(KernelBuilder& b, const Node& n, const BufferPtr& out,
                               const Epilogue& epi) {
  const Value* X = n.input(0);
  std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", -1));
  FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(xs.size())));
  const int64_t len = xs[size_t(axis)];
  const DType dt = out->dtype;
  BufferPtr best = makeLocalBuffer("best", X->type().dtype, {1});
  BufferPtr at = makeLocalBuffer("at", DType::I64, {1});
  Indices z{intImm(0)};
  LineNest l = linesAlong(xs, size_t(axis), var("r"));
  ExprPtr x = b.read(X, l.at);
  StmtPtr find = forRange("r", len,
                          ifThen(binary(BinaryOp::Gt, x, load(best, z)),
                                 block({store(best, z, x), store(at, z, var("r"))})));
  ExprPtr hot = select(binary(BinaryOp::Eq, var("r"), load(at, z)), fimm(dt, 1), fimm(dt, 0));
  StmtPtr write = forRange("r", len, store(out, l.at, applyEpi(epi, l.at, hot)));
  StmtPtr body =
      alloc(best, alloc(at, block({store(best, z, fimm(X->type().dtype, -INFINITY), tag(n)),
                                   store(at, z, intImm(0)), find, write})));
  return wrapLoops(l.names, l.sizes, body);
}

// ---- MaxUnpool ----

/// Zeroes the output, then stores each input element at the flat position its index gives in
/// the default output shape (clamped; an index outside it is the interpreter's error, which the
/// executor's check before the kernel gives for indices read from an argument). The position
/// goes through the local `pos` declared outside the loops, which keeps them serial: two elements
/// may share a target, and the later one wins as in the interpreter.
Expected<StmtPtr> lowerMaxUnpool(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                 const Epilogue& epi) {
  const Value *X = n.input(0), *I = n.input(1);
  const std::vector<int64_t> xs = KernelBuilder::sizesOf(X);
  const std::vector<int64_t> os = out->sizes;
  // Indices are flat in the default output shape (kernel_shape, strides, pads); a larger
  // output_shape pads each dim at its end.
  const size_t sr = xs.size() - 2;
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, n.attrs().getInts("kernel_shape", {}));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      n.attrs().getInts("strides", std::vector<int64_t>(sr, 1)));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> pads,
                      n.attrs().getInts("pads", std::vector<int64_t>(2 * sr, 0)));
  if (kernel.size() != sr || strides.size() != sr || pads.size() != 2 * sr)
    return makeError(n.describe(), ": kernel_shape, strides and pads do not fit rank ", xs.size());
  std::vector<int64_t> ds(xs.begin(), xs.begin() + 2);
  for (size_t d = 0; d < sr; ++d)
    ds.push_back((xs[d + 2] - 1) * strides[d] - pads[d] - pads[d + sr] + kernel[d]);
  int64_t total = 1;
  for (int64_t s : ds)
    total *= s;
  if (b.directBuffer(I)) {
    IndexCheck check;
    check.sizes = {total};
    check.axes = {0};
    check.nonNegative = true;
    check.message = [](int64_t, int64_t v, int64_t size) {
      return "index " + std::to_string(v) + " is out of range for an output of " +
             std::to_string(size) + " elements";
    };
    FB_TRY(b.addRangeCheck(n, I, std::move(check)));
  }
  StmtPtr zero = elementwiseNest(
      out, [&](const Indices&) { return fimm(out->dtype, 0); }, tag(n));
  BufferPtr pos = makeLocalBuffer("pos", DType::I64, {1});
  Indices z{intImm(0)};
  std::vector<std::string> names = indexNames(xs.size(), "u");
  Indices u = varsOf(names);
  ExprPtr flat =
      min(max(cast(Type::i64(), b.read(I, u)), intImm(0)), intImm(std::max<int64_t>(total - 1, 0)));
  Indices at(os.size());
  int64_t stride = 1;
  for (size_t d = ds.size(); d-- > 0;) {
    at[d] = min(
        binary(BinaryOp::Mod, binary(BinaryOp::Div, load(pos, z), intImm(stride)), intImm(ds[d])),
        intImm(os[d] - 1));
    stride *= ds[d];
  }
  StmtPtr scatter =
      alloc(pos, wrapLoops(names, xs,
                           block({store(pos, z, flat), store(out, at, b.read(X, u), "unpool")})));
  return block({zero, scatter, epilogueNest(out, epi)});
}

} // namespace

std::optional<Expected<StmtPtr>> lowerSequentialOp(KernelBuilder& b, const Node& n,
                                                   const BufferPtr& out, const Epilogue& epilogue,
                                                   const std::vector<BufferPtr>& extras) {
  switch (n.op()) {
  case OpKind::CumSum:
    return lowerCumSum(b, n, out, epilogue);
  case OpKind::ScatterElements:
    return lowerScatterElements(b, n, out, epilogue);
  case OpKind::ScatterND:
    return lowerScatterND(b, n, out, epilogue);
  case OpKind::TopK:
    return lowerTopK(b, n, out, epilogue, extras.empty() ? nullptr : extras[0]);
  case OpKind::Hardmax:
    return lowerHardmax(b, n, out, epilogue);
  case OpKind::MaxUnpool:
    return lowerMaxUnpool(b, n, out, epilogue);
  case OpKind::RoiAlign:
    return lowerRoiAlign(b, n, out, epilogue);
  case OpKind::NonZero:
    return Expected<StmtPtr>(makeUnsupported(
        n.describe(), ": NonZero's output shape depends on its data; the CPU backend needs "
                      "static shapes (fold it to a constant first)"));
  case OpKind::NonMaxSuppression:
    return Expected<StmtPtr>(makeUnsupported(
        n.describe(), ": NonMaxSuppression's output shape depends on its data; the CPU backend "
                      "needs static shapes (fold it to a constant first)"));
  case OpKind::Unique:
    return Expected<StmtPtr>(makeUnsupported(
        n.describe(), ": Unique's output shape depends on its data; the CPU backend needs "
                      "static shapes (fold it to a constant first)"));
  default:
    return std::nullopt;
  }
}

} // namespace fb::cg::lower
