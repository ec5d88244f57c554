// Lowering of elementwise, broadcast, injective and shape ops to expressions that inline into
// their consumers' loops (no loops of their own).
#include "codegen/loops/LowerContext.h"
#include "core/ops/KernelUtil.h"
#include "core/ops/OpContext.h"
#include "core/Faults.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fb::cg::lower {

namespace {

/// A constant of type t.
ExprPtr imm(Type t, double v) {
  if (t.isFloat()) {
    auto e = std::make_shared<Expr>(*floatImm(v));
    e->type = t;
    return e;
  }
  return intImm(int64_t(v), t);
}

ExprPtr clampIndex(ExprPtr i, int64_t lo, int64_t hi) {
  return min(max(std::move(i), intImm(lo)), intImm(hi));
}

/// Element offsets → indices of a row-major shape: the inverse of linearization.
Indices delinearize(const ExprPtr& lin, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides = rowMajorStrides(sizes);
  Indices idx;
  for (size_t d = 0; d < sizes.size(); ++d) {
    ExprPtr q = strides[d] == 1 ? lin : div(lin, intImm(strides[d]));
    idx.push_back(d == 0 ? q : binary(BinaryOp::Mod, q, intImm(sizes[d])));
  }
  return idx;
}

ExprPtr linearize(const Indices& idx, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides = rowMajorStrides(sizes);
  ExprPtr lin = intImm(0);
  for (size_t d = 0; d < idx.size(); ++d)
    lin = add(lin, mul(idx[d], intImm(strides[d])));
  return lin;
}

/// Maps an output index of a reshape to its input index. Shapes that differ only by size-1 dims
/// map dimension by dimension; others go through the linear offset.
Indices reshapeIndex(const Indices& out, const std::vector<int64_t>& outSizes,
                     const std::vector<int64_t>& inSizes) {
  std::vector<size_t> outKept, inKept;
  for (size_t d = 0; d < outSizes.size(); ++d)
    if (outSizes[d] != 1)
      outKept.push_back(d);
  for (size_t d = 0; d < inSizes.size(); ++d)
    if (inSizes[d] != 1)
      inKept.push_back(d);
  // Dimensions (other than 1s) that match at the front and at the back map one to one; only
  // the middle goes through a linear offset ([16, 4, 16] -> [16, 64]: k -> (k / 16, k % 16)).
  Indices in(inSizes.size(), intImm(0));
  size_t pre = 0;
  while (pre < outKept.size() && pre < inKept.size() &&
         outSizes[outKept[pre]] == inSizes[inKept[pre]]) {
    in[inKept[pre]] = out[outKept[pre]];
    ++pre;
  }
  size_t post = 0;
  while (post + pre < outKept.size() && post + pre < inKept.size() &&
         outSizes[outKept[outKept.size() - 1 - post]] == inSizes[inKept[inKept.size() - 1 - post]]) {
    in[inKept[inKept.size() - 1 - post]] = out[outKept[outKept.size() - 1 - post]];
    ++post;
  }
  Indices midOut;
  std::vector<int64_t> midOutSizes, midInSizes;
  for (size_t i = pre; i + post < outKept.size(); ++i) {
    midOut.push_back(out[outKept[i]]);
    midOutSizes.push_back(outSizes[outKept[i]]);
  }
  for (size_t i = pre; i + post < inKept.size(); ++i)
    midInSizes.push_back(inSizes[inKept[i]]);
  if (!midInSizes.empty()) {
    Indices midIn = delinearize(linearize(midOut, midOutSizes), midInSizes);
    for (size_t i = 0; i < midIn.size(); ++i)
      in[inKept[pre + i]] = midIn[i];
  }
  return in;
}

Expected<std::vector<int64_t>> constInts(KernelBuilder& b, const Node& n, size_t i,
                                         const char* what) {
  const Value* v = n.input(i);
  if (!v)
    return std::vector<int64_t>{};
  const Tensor* t = b.constantOf(v);
  if (!t)
    return makeUnsupported(n.describe(), ": input ", i, " (", what,
                           ") must be a compile-time constant for the CPU backend");
  return t->toInt64Vector();
}

/// Folds a node whose inputs are all known at compile time (or that only looks at shapes) by
/// running its interpreter kernel, and defines its outputs as constants.
Status foldAtCompileTime(KernelBuilder& b, const Node& n) {
  std::vector<Tensor> ins;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    const Value* v = n.input(i);
    if (!v) {
      ins.emplace_back();
      continue;
    }
    if (const Tensor* t = b.constantOf(v))
      ins.push_back(*t);
    else {
      // Shape and Size only look at the sizes.
      FB_ASSIGN_OR_RETURN(Tensor z, Tensor::create(v->type().dtype, KernelBuilder::sizesOf(v)));
      ins.push_back(std::move(z));
    }
  }
  EvalContext ctx(n, std::move(ins));
  if (!n.info().eval)
    return makeUnsupported(n.describe(), ": no interpreter kernel to fold it");
  FB_TRY(n.info().eval(ctx));
  for (size_t i = 0; i < n.numOutputs(); ++i)
    b.defineConstant(n.output(i), ctx.outputs()[i]);
  return Status::success();
}

bool allInputsConstant(KernelBuilder& b, const Node& n) {
  for (const Value* v : n.inputs())
    if (v && !b.constantOf(v))
      return false;
  return true;
}

} // namespace

bool isInlineOp(OpKind op) {
  switch (op) {
  case OpKind::MatMul:
  case OpKind::Gemm:
  case OpKind::Conv:
  case OpKind::ConvTranspose:
  case OpKind::MaxPool:
  case OpKind::AveragePool:
  case OpKind::GlobalAveragePool:
  case OpKind::GlobalMaxPool:
  case OpKind::LayerNormalization:
  case OpKind::InstanceNormalization:
  case OpKind::GroupNormalization:
  case OpKind::ReduceMean:
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::ReduceL1:
  case OpKind::ReduceL2:
  case OpKind::ReduceLogSumExp:
  case OpKind::ReduceSumSquare:
  case OpKind::ReduceLogSum:
  case OpKind::ArgMax:
  case OpKind::ArgMin:
  case OpKind::Hardmax:
  case OpKind::CumSum:
  case OpKind::ScatterElements:
  case OpKind::ScatterND:
  case OpKind::TopK:
  case OpKind::NonZero:
  case OpKind::NegativeLogLikelihoodLoss:
  case OpKind::SoftmaxCrossEntropyLoss:
  case OpKind::LRN:
  case OpKind::MeanVarianceNormalization:
  case OpKind::DynamicQuantizeLinear:
  case OpKind::Det:
  case OpKind::Einsum:
  case OpKind::NonMaxSuppression:
  case OpKind::Unique:
  case OpKind::MaxUnpool:
  case OpKind::RoiAlign:
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::Concat:
  case OpKind::QLinearConv:
  case OpKind::QLinearMatMul:
  case OpKind::MatMulInteger:
  case OpKind::ConvInteger:
  case OpKind::RNN:
  case OpKind::GRU:
  case OpKind::LSTM:
  case OpKind::Fused: return false;
  default: return true;
  }
}

Status defineInline(KernelBuilder& b, const Node& n) {
  const Value* out = n.output(0);
  const std::vector<int64_t> outSizes = KernelBuilder::sizesOf(out);
  const Type outType{out->type().dtype, 1};
  const Value* x = n.input(0);
  auto in = [&b, x](const Indices& idx) { return b.read(x, idx); };
  auto unaryFn = [&](std::function<ExprPtr(ExprPtr)> f) {
    b.define(out, [in, f](const Indices& idx) { return f(in(idx)); });
  };
  const bool isFloatOut = fb::isFloat(out->type().dtype);

  // Shape computations and anything whose inputs are all constants: fold now.
  if (n.op() == OpKind::Shape || n.op() == OpKind::Size || n.op() == OpKind::Constant ||
      ((allInputsConstant(b, n) && n.numInputs() > 0) &&
       (n.op() == OpKind::ConstantOfShape || n.op() == OpKind::Range ||
        n.op() == OpKind::HannWindow || n.op() == OpKind::HammingWindow ||
        n.op() == OpKind::BlackmanWindow)))
    return foldAtCompileTime(b, n);
  if (isElementwiseMathOp(n.op()))
    return defineElementwiseMath(b, n);

  switch (n.op()) {
  case OpKind::Relu: {
    Type t = x->type().dtype == DType::F32 ? Type::f32() : Type{x->type().dtype, 1};
    unaryFn([t](ExprPtr v) { return max(v, imm(t, 0)); });
    return Status::success();
  }
  case OpKind::LeakyRelu: {
    FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 0.01f));
    unaryFn([alpha, outType](ExprPtr v) {
      return select(binary(BinaryOp::Lt, v, imm(outType, 0)), mul(imm(outType, alpha), v), v);
    });
    return Status::success();
  }
  case OpKind::Sigmoid: unaryFn([](ExprPtr v) { return unary(UnaryOp::Sigmoid, v); }); return Status::success();
  case OpKind::HardSigmoid: {
    FB_ASSIGN_OR_RETURN(float alpha, n.attrs().getFloat("alpha", 0.2f));
    FB_ASSIGN_OR_RETURN(float beta, n.attrs().getFloat("beta", 0.5f));
    unaryFn([=](ExprPtr v) {
      return max(imm(outType, 0), min(imm(outType, 1), add(mul(imm(outType, alpha), v), imm(outType, beta))));
    });
    return Status::success();
  }
  case OpKind::HardSwish:
    unaryFn([=](ExprPtr v) {
      ExprPtr g = max(imm(outType, 0),
                      min(imm(outType, 1), add(div(v, imm(outType, 6)), imm(outType, 0.5))));
      return mul(v, g);
    });
    return Status::success();
  case OpKind::Tanh: unaryFn([](ExprPtr v) { return unary(UnaryOp::Tanh, v); }); return Status::success();
  case OpKind::Erf: unaryFn([](ExprPtr v) { return unary(UnaryOp::Erf, v); }); return Status::success();
  case OpKind::Exp: unaryFn([](ExprPtr v) { return unary(UnaryOp::Exp, v); }); return Status::success();
  case OpKind::Log: unaryFn([](ExprPtr v) { return unary(UnaryOp::Log, v); }); return Status::success();
  case OpKind::Sqrt: unaryFn([](ExprPtr v) { return unary(UnaryOp::Sqrt, v); }); return Status::success();
  case OpKind::Neg: unaryFn([](ExprPtr v) { return unary(UnaryOp::Neg, v); }); return Status::success();
  case OpKind::Abs: unaryFn([](ExprPtr v) { return unary(UnaryOp::Abs, v); }); return Status::success();
  case OpKind::Floor: unaryFn([](ExprPtr v) { return unary(UnaryOp::Floor, v); }); return Status::success();
  case OpKind::Ceil: unaryFn([](ExprPtr v) { return unary(UnaryOp::Ceil, v); }); return Status::success();
  case OpKind::Not: unaryFn([](ExprPtr v) { return unary(UnaryOp::Not, v); }); return Status::success();
  case OpKind::Reciprocal:
    unaryFn([outType](ExprPtr v) { return div(imm(outType, 1), v); });
    return Status::success();
  case OpKind::Identity:
  case OpKind::Dropout:
    // Shape inference refuses a constant training_mode=true (with a nonzero ratio); one given at
    // run time could be true, and random dropping has no compiled form here.
    if (n.op() == OpKind::Dropout && n.numInputs() > 2 && n.input(2) && !n.input(2)->isConstant())
      return makeUnsupported(n.describe(), ": training_mode is a run-time input; the CPU backend "
                                           "compiles inference-mode Dropout only (make it a "
                                           "constant false)");
    b.define(out, in);
    // Nothing is dropped (inference, or training with ratio 0, as the interpreter requires):
    // the mask is all true.
    for (size_t i = 1; i < n.numOutputs(); ++i)
      b.define(n.output(i), [](const Indices&) { return boolImm(true); });
    return Status::success();
  case OpKind::Cast:
  case OpKind::CastLike:
    unaryFn([outType](ExprPtr v) { return cast(outType, v); });
    return Status::success();
  case OpKind::Clip: {
    // min and max are optional scalar inputs (opset 11+); an absent one is no bound.
    ExprPtr loE, hiE;
    if (n.numInputs() >= 2 && n.input(1))
      loE = readScalar(b, n.input(1));
    if (n.numInputs() >= 3 && n.input(2))
      hiE = readScalar(b, n.input(2));
    unaryFn([loE, hiE](ExprPtr v) {
      if (loE)
        v = max(v, loE);
      if (hiE)
        v = min(v, hiE);
      return v;
    });
    return Status::success();
  }
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Pow:
  case OpKind::Equal:
  case OpKind::Less:
  case OpKind::Greater:
  case OpKind::And:
  case OpKind::Or: {
    BinaryOp op = BinaryOp::Add;
    switch (n.op()) {
    case OpKind::Sub: op = BinaryOp::Sub; break;
    case OpKind::Mul: op = BinaryOp::Mul; break;
    case OpKind::Div: op = BinaryOp::Div; break;
    case OpKind::Pow: op = BinaryOp::Pow; break;
    case OpKind::Equal: op = BinaryOp::Eq; break;
    case OpKind::Less: op = BinaryOp::Lt; break;
    case OpKind::Greater: op = BinaryOp::Gt; break;
    case OpKind::And: op = BinaryOp::And; break;
    case OpKind::Or: op = BinaryOp::Or; break;
    default: break;
    }
    const Value* a = n.input(0);
    const Value* c = n.input(1);
    if (op == BinaryOp::Pow && a->type().dtype != c->type().dtype && !isFloat(a->type().dtype) &&
        !isFloat(c->type().dtype)) {
      // Integer base and exponent of different widths: the exact power in i64 (the exponent
      // sign-extended), wrapped to the base's type as the interpreter's is; through f32 it was
      // inexact from 2^24 on.
      b.define(out, [&b, a, c, outSizes, outType](const Indices& idx) {
        return cast(outType,
                    binary(BinaryOp::Pow, cast(Type::i64(), readBroadcast(b, a, idx, outSizes)),
                           cast(Type::i64(), readBroadcast(b, c, idx, outSizes))));
      });
      return Status::success();
    }
    if (op == BinaryOp::Pow && a->type().dtype == DType::F32 && c->type().dtype == DType::F32) {
      // x^2 with a constant exponent (LayerNorm's variance as exporters write it) is x*x: the
      // same correctly rounded square as powf, without a libm call per element.
      const Tensor* e = b.constantOf(c);
      if (e && e->numElements() == 1 && e->getAsDouble(0) == 2.0 &&
          KernelBuilder::sizesOf(a) == outSizes) {
        b.define(out, [&b, a](const Indices& idx) {
          ExprPtr x = b.read(a, idx);
          return mul(x, x);
        });
        return Status::success();
      }
    }
    if (op == BinaryOp::Pow && a->type().dtype != c->type().dtype) {
      // Mixed float and integer dtypes: compute in f32 and convert to the base's type.
      b.define(out, [&b, a, c, outSizes, outType](const Indices& idx) {
        return cast(outType, binary(BinaryOp::Pow, cast(Type::f32(), readBroadcast(b, a, idx, outSizes)),
                                    cast(Type::f32(), readBroadcast(b, c, idx, outSizes))));
      });
      return Status::success();
    }
    b.define(out, [&b, a, c, op, outSizes](const Indices& idx) {
      return binary(op, readBroadcast(b, a, idx, outSizes), readBroadcast(b, c, idx, outSizes));
    });
    return Status::success();
  }
  case OpKind::PRelu: {
    const Value* a = n.input(0);
    const Value* slope = n.input(1);
    b.define(out, [&b, a, slope, outSizes, outType](const Indices& idx) {
      ExprPtr v = readBroadcast(b, a, idx, outSizes);
      return select(binary(BinaryOp::Lt, v, imm(outType, 0)),
                    mul(readBroadcast(b, slope, idx, outSizes), v), v);
    });
    return Status::success();
  }
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Sum:
  case OpKind::Mean: {
    std::vector<const Value*> ins;
    for (const Value* v : n.inputs())
      if (v)
        ins.push_back(v);
    OpKind k = n.op();
    b.define(out, [&b, ins, k, outSizes, outType](const Indices& idx) {
      ExprPtr acc = readBroadcast(b, ins[0], idx, outSizes);
      for (size_t i = 1; i < ins.size(); ++i) {
        ExprPtr v = readBroadcast(b, ins[i], idx, outSizes);
        acc = k == OpKind::Max ? max(acc, v) : k == OpKind::Min ? min(acc, v) : add(acc, v);
      }
      if (k == OpKind::Mean)
        acc = div(acc, imm(outType, double(ins.size())));
      return acc;
    });
    return Status::success();
  }
  case OpKind::Where: {
    const Value* c = n.input(0);
    const Value* a = n.input(1);
    const Value* d = n.input(2);
    b.define(out, [&b, c, a, d, outSizes](const Indices& idx) {
      return select(readBroadcast(b, c, idx, outSizes), readBroadcast(b, a, idx, outSizes),
                    readBroadcast(b, d, idx, outSizes));
    });
    return Status::success();
  }
  case OpKind::BatchNormalization: {
    if (!isFloatOut)
      return makeUnsupported(n.describe(), ": BatchNormalization on ", dtypeName(out->type().dtype));
    FB_ASSIGN_OR_RETURN(float eps, n.attrs().getFloat("epsilon", 1e-5f));
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.output(i)->hasUses() || n.output(i)->isGraphOutput())
        return makeUnsupported(n.describe(), ": BatchNormalization training outputs");
    const Value *scale = n.input(1), *bias = n.input(2), *mean = n.input(3), *var = n.input(4);
    const Tensor *ts = b.constantOf(scale), *tb = b.constantOf(bias), *tm = b.constantOf(mean),
                 *tv = b.constantOf(var);
    if (ts && tb && tm && tv && ts->dtype() == DType::F32) {
      // Fold to y = x * a[c] + c0[c] at compile time, as the interpreter computes it.
      int64_t C = ts->numElements();
      std::vector<float> av(static_cast<size_t>(C)), cv(static_cast<size_t>(C));
      for (int64_t c = 0; c < C; ++c) {
        double a = ts->getAsDouble(c) / std::sqrt(tv->getAsDouble(c) + double(eps));
        av[size_t(c)] = float(a);
        cv[size_t(c)] = float(tb->getAsDouble(c) - tm->getAsDouble(c) * a);
      }
      BufferPtr ab = b.constantBuffer("bn_scale", Tensor::fromVector<float>({C}, av));
      BufferPtr cb = b.constantBuffer("bn_shift", Tensor::fromVector<float>({C}, cv));
      b.define(out, [in, ab, cb, outSizes](const Indices& idx) {
        ExprPtr c = outSizes.size() > 1 ? idx[1] : intImm(0);
        return add(mul(in(idx), load(ab, {c})), load(cb, {c}));
      });
      return Status::success();
    }
    b.define(out, [&b, in, scale, bias, mean, var, eps, outSizes](const Indices& idx) {
      Indices c{outSizes.size() > 1 ? idx[1] : intImm(0)};
      ExprPtr inv = div(b.read(scale, c), unary(UnaryOp::Sqrt, add(b.read(var, c), floatImm(eps))));
      return add(mul(sub(in(idx), b.read(mean, c)), inv), b.read(bias, c));
    });
    return Status::success();
  }
  case OpKind::Flatten:
  case OpKind::Reshape:
  case OpKind::Squeeze:
  case OpKind::Unsqueeze: {
    std::vector<int64_t> inSizes = KernelBuilder::sizesOf(x);
    b.define(out, [in, outSizes, inSizes](const Indices& idx) {
      return in(reshapeIndex(idx, outSizes, inSizes));
    });
    return Status::success();
  }
  case OpKind::Transpose: {
    size_t rank = outSizes.size();
    std::vector<int64_t> perm;
    for (size_t d = 0; d < rank; ++d)
      perm.push_back(int64_t(rank - 1 - d));
    FB_ASSIGN_OR_RETURN(perm, n.attrs().getInts("perm", perm));
    b.define(out, [in, perm](const Indices& idx) {
      Indices src(idx.size());
      for (size_t d = 0; d < idx.size(); ++d)
        src[size_t(perm[d])] = idx[d];
      return in(src);
    });
    return Status::success();
  }
  case OpKind::Expand: {
    b.define(out, [&b, x, outSizes](const Indices& idx) { return readBroadcast(b, x, idx, outSizes); });
    return Status::success();
  }
  case OpKind::Tile: {
    std::vector<int64_t> inSizes = KernelBuilder::sizesOf(x);
    b.define(out, [in, inSizes, outSizes](const Indices& idx) {
      Indices src;
      for (size_t d = 0; d < idx.size(); ++d)
        src.push_back(inSizes[d] == outSizes[d] ? idx[d]
                                                : binary(BinaryOp::Mod, idx[d], intImm(inSizes[d])));
      return in(src);
    });
    return Status::success();
  }
  case OpKind::Split: {
    FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
    FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(outSizes.size())));
    int64_t offset = 0;
    for (size_t i = 0; i < n.numOutputs(); ++i) {
      b.define(n.output(i), [in, axis, offset](const Indices& idx) {
        Indices src = idx;
        src[size_t(axis)] = add(idx[size_t(axis)], intImm(offset));
        return in(src);
      });
      offset += KernelBuilder::sizesOf(n.output(i))[size_t(axis)];
    }
    return Status::success();
  }
  case OpKind::Slice: {
    std::vector<int64_t> inSizes = KernelBuilder::sizesOf(x);
    size_t rank = inSizes.size();
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> starts, constInts(b, n, 1, "starts"));
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> ends, constInts(b, n, 2, "ends"));
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> axes, constInts(b, n, 3, "axes"));
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> steps, constInts(b, n, 4, "steps"));
    (void)ends;
    std::vector<int64_t> start(rank, 0), step(rank, 1);
    for (size_t i = 0; i < starts.size(); ++i) {
      int64_t a = axes.empty() ? int64_t(i) : axes[i];
      if (a < 0)
        a += int64_t(rank);
      int64_t dim = inSizes[size_t(a)];
      int64_t st = steps.empty() ? 1 : steps[i];
      int64_t s = starts[i];
      if (s < 0)
        s += dim;
      s = st > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      start[size_t(a)] = s;
      step[size_t(a)] = st;
    }
    b.define(out, [in, start, step](const Indices& idx) {
      Indices src;
      for (size_t d = 0; d < idx.size(); ++d)
        src.push_back(add(mul(idx[d], intImm(step[d])), intImm(start[d])));
      return in(src);
    });
    return Status::success();
  }
  case OpKind::Gather: {
    const Value* indices = n.input(1);
    std::vector<int64_t> inSizes = KernelBuilder::sizesOf(x);
    FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 0));
    FB_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(rawAxis, int64_t(inSizes.size())));
    size_t q = indices->type().rank();
    int64_t dim = inSizes[size_t(axis)];
    // Indices read from an argument are range-checked before the kernel, as for
    // GatherElements; indices computed inside the kernel (the partitioner keeps their producer
    // out of the gather's group, so only a hand-built group has them) are clamped only.
    if (b.directBuffer(indices))
      FB_TRY(b.addIndexCheck(n, indices, {dim}, {axis}));
    b.define(out, [&b, in, indices, axis, q, dim](const Indices& idx) {
      Indices iidx(idx.begin() + axis, idx.begin() + axis + int64_t(q));
      ExprPtr i = cast(Type::i64(), b.read(indices, iidx));
      i = select(binary(BinaryOp::Lt, i, intImm(0)), add(i, intImm(dim)), i);
      Indices src(idx.begin(), idx.begin() + axis);
      src.push_back(clampIndex(i, 0, dim - 1));
      src.insert(src.end(), idx.begin() + axis + int64_t(q), idx.end());
      return in(src);
    });
    return Status::success();
  }
  case OpKind::Pad: {
    std::vector<int64_t> inSizes = KernelBuilder::sizesOf(x);
    size_t rank = inSizes.size();
    FB_ASSIGN_OR_RETURN(std::vector<int64_t> pads, constInts(b, n, 1, "pads"));
    if (pads.size() != 2 * rank)
      return makeError(n.describe(), ": pads has ", pads.size(), " entries, expected ", 2 * rank);
    FB_ASSIGN_OR_RETURN(std::string mode, n.attrs().getString("mode", "constant"));
    ExprPtr fill = imm(outType, 0);
    if (n.numInputs() > 2 && n.input(2) && n.input(2)->type().numElements().value_or(0) > 0)
      fill = readScalar(b, n.input(2));
    if (mode == "constant") {
      b.define(out, [in, pads, inSizes, fill](const Indices& idx) {
        Indices src;
        ExprPtr inside;
        for (size_t d = 0; d < idx.size(); ++d) {
          ExprPtr i = sub(idx[d], intImm(pads[d]));
          if (pads[d] > 0 || pads[d + idx.size()] > 0) {
            ExprPtr ok = binary(BinaryOp::And, binary(BinaryOp::Ge, i, intImm(0)),
                                binary(BinaryOp::Lt, i, intImm(inSizes[d])));
            inside = inside ? binary(BinaryOp::And, inside, ok) : ok;
            i = clampIndex(i, 0, inSizes[d] - 1);
          }
          src.push_back(i);
        }
        ExprPtr v = in(src);
        return inside ? select(inside, v, fill) : v;
      });
      return Status::success();
    }
    if (mode != "edge" && mode != "reflect")
      return makeUnsupported(n.describe(), ": pad mode '", mode, "'");
    // Edge and reflect: per-dimension index tables computed now.
    std::vector<BufferPtr> tables(rank);
    for (size_t d = 0; d < rank; ++d) {
      int64_t nIn = inSizes[d];
      std::vector<int64_t> t(size_t(outSizes[d]));
      for (int64_t o = 0; o < outSizes[d]; ++o) {
        int64_t i = o - pads[d];
        if (mode == "edge")
          i = std::clamp<int64_t>(i, 0, nIn - 1);
        else if (nIn == 1)
          i = 0;
        else {
          int64_t period = 2 * (nIn - 1);
          i %= period;
          if (i < 0)
            i += period;
          i = i < nIn ? i : period - i;
        }
        t[size_t(o)] = i;
      }
      tables[d] = b.constantBuffer("pad_index" + std::to_string(d),
                                   Tensor::fromVector<int64_t>({outSizes[d]}, t));
    }
    b.define(out, [in, tables](const Indices& idx) {
      Indices src;
      for (size_t d = 0; d < idx.size(); ++d)
        src.push_back(load(tables[d], {idx[d]}));
      return in(src);
    });
    return Status::success();
  }
  case OpKind::Resize: return defineResize(b, n);
  case OpKind::ConstantOfShape: {
    auto t = n.attrs().getTensor("value");
    double v = t.ok() && t->numElements() > 0 ? t->getAsDouble(0) : 0.0;
    b.define(out, [outType, v](const Indices&) { return imm(outType, v); });
    return Status::success();
  }
  case OpKind::Range: {
    const Value *start = n.input(0), *delta = n.input(2);
    b.define(out, [&b, start, delta, outType](const Indices& idx) {
      return add(readScalar(b, start), mul(cast(outType, idx[0]), readScalar(b, delta)));
    });
    return Status::success();
  }
  case OpKind::DequantizeLinear: {
    const Value *scale = n.input(1), *zp = n.numInputs() > 2 ? n.input(2) : nullptr;
    FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 1));
    int64_t axis = rawAxis < 0 ? rawAxis + int64_t(outSizes.size()) : rawAxis;
    bool perAxis = scale->type().numElements().value_or(1) > 1;
    b.define(out, [&b, in, scale, zp, axis, perAxis](const Indices& idx) {
      Indices c = perAxis ? Indices{idx[size_t(axis)]} : Indices(scale->type().rank(), intImm(0));
      ExprPtr v = cast(Type::f32(), in(idx));
      if (zp)
        v = sub(v, cast(Type::f32(), b.read(zp, c)));
      return mul(v, b.read(scale, c));
    });
    return Status::success();
  }
  case OpKind::QuantizeLinear: {
    const Value *scale = n.input(1), *zp = n.numInputs() > 2 ? n.input(2) : nullptr;
    FB_ASSIGN_OR_RETURN(int64_t rawAxis, n.attrs().getInt("axis", 1));
    int64_t axis = rawAxis < 0 ? rawAxis + int64_t(outSizes.size()) : rawAxis;
    bool perAxis = scale->type().numElements().value_or(1) > 1;
    double lo = out->type().dtype == DType::U8 ? 0 : -128, hi = out->type().dtype == DType::U8 ? 255 : 127;
    // The faulty requantization leaves the quotient unrounded: the final cast truncates.
    const bool truncate = faultEnabled(Fault::RequantizeTruncates);
    b.define(out, [&b, in, scale, zp, axis, perAxis, lo, hi, outType,
                   truncate](const Indices& idx) {
      Indices c = perAxis ? Indices{idx[size_t(axis)]} : Indices(scale->type().rank(), intImm(0));
      ExprPtr v = div(cast(Type::f32(), in(idx)), b.read(scale, c));
      if (!truncate)
        v = unary(UnaryOp::Round, v);
      if (zp)
        v = add(v, cast(Type::f32(), b.read(zp, c)));
      v = min(max(v, floatImm(lo)), floatImm(hi));
      return cast(outType, v);
    });
    return Status::success();
  }
  default: break;
  }
  if (std::optional<Status> st = defineIndexingInline(b, n))
    return *st;
  return makeUnsupported(n.describe(), ": the CPU backend cannot lower ", opName(n.op()), " yet");
}

} // namespace fb::cg::lower
