// Tests of the CPU backend on hostile shapes and values (issue 19): empty tensors where a kernel
// has nothing to compute or no answer to give, shapes whose byte size does not fit, and integer
// division by 0 and INT_MIN / -1 in vectorized code. Each ends as the interpreter does: the same
// result, or the same error naming the node; never a crash or a silent answer.
#include "OneNodeCompare.h"

#include <cmath>
#include <limits>

using namespace fb;
using namespace fb::cg;
using namespace fb::test;

namespace {

/// The CPU backend's error for g (at compile time or at run time), or "" when it runs.
std::string cpuError(Graph& g, const std::vector<Tensor>& feeds) {
  if (Status st = inferShapes(g); !st.ok())
    return "infer: " + st.error().message();
  CompileOptions co;
  co.useCache = false;
  auto model = CompiledModel::compile(g, co);
  if (!model.ok())
    return model.error().message();
  auto got = (*model)->run(feeds);
  return got.ok() ? "" : got.error().message();
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Tensor i32(std::vector<int64_t> sizes, std::vector<int32_t> v) {
  return Tensor::fromVector<int32_t>(std::move(sizes), v);
}

} // namespace

class TestHostileKernels : public QObject {
  Q_OBJECT

private Q_SLOTS:
  /// ArgMax over an axis of size 0 has no index to give: the interpreter's error, where the
  /// nest used to return its untouched zeros.
  void argMaxOverAnEmptyAxis() {
    for (OpKind op : {OpKind::ArgMax, OpKind::ArgMin}) {
      std::vector<Tensor> feeds;
      auto g = oneNode(op, {in(ramp({3, 0}))}, {{"axis", int64_t(1)}}, 1, feeds);
      QVERIFY(inferShapes(*g).ok());
      auto ref = interpret(*g, feeds);
      QVERIFY(!ref.ok());
      std::string cpu = cpuError(*g, feeds);
      QCOMPARE(cpu, ref.error().message());
      QVERIFY2(contains(cpu, "over an empty axis 1"), cpu.c_str());
    }
    // Over another axis, an empty input gives an empty result on both.
    CHECK_OP(OpKind::ArgMax, (Ops{in(ramp({0, 4}))}), (Attrs{{"axis", int64_t(1)}}), 1);
  }

  /// A Resize to zero rows or columns computes nothing (its probe tables used to read output
  /// positions that do not exist); growing an empty dim is the interpreter's error even when
  /// another dim makes the result empty.
  void resizeToNothing() {
    for (const char* mode : {"nearest", "linear", "cubic"}) {
      const Attrs attrs{{"mode", std::string(mode)}};
      for (std::vector<int64_t> sizes :
           {std::vector<int64_t>{1, 1, 0, 0}, {1, 1, 0, 3}, {0, 1, 4, 4}})
        CHECK_OP(OpKind::Resize,
                 (Ops{in(ramp({1, 1, 4, 4})), Operand{}, Operand{}, cst(i64({4}, sizes))}), attrs,
                 1);
      std::vector<Tensor> feeds;
      auto g = oneNode(OpKind::Resize,
                       {in(ramp({1, 1, 0, 4})), Operand{}, Operand{}, cst(i64({4}, {1, 0, 2, 4}))},
                       attrs, 1, feeds);
      std::string cpu = cpuError(*g, feeds);
      QVERIFY2(contains(cpu, "\"n\" (Resize): cannot resize the empty dim 2"), cpu.c_str());
    }
  }

  /// Shapes whose byte size overflows 64 bits or passes the memory limit are errors that name
  /// the node, before lowering loops over them or the executor sizes a buffer from a wrapped
  /// product (a write past a 0-byte buffer, or a std::bad_alloc abort at run time).
  void sizesThatDoNotFitNameTheNode() {
    const int64_t huge = int64_t(1) << 40;
    struct Case {
      OpKind op;
      Ops operands;
      const char* message;
    };
    std::vector<Case> cases = {
        {OpKind::Pad,
         {in(ramp({2, 2})), cst(i64({4}, {huge, huge, huge, huge}))},
         "overflows 64 bits"},
        {OpKind::Pad,
         {in(ramp({2, 2})), cst(i64({4}, {huge, 0, 0, 0}))},
         "more than the memory limit"},
        {OpKind::Tile,
         {in(ramp({1, 1})), cst(i64({2}, {int64_t(1) << 31, int64_t(1) << 31}))},
         "overflows 64 bits"},
        {OpKind::Expand,
         {in(ramp({1, 1})), cst(i64({2}, {int64_t(1) << 31, int64_t(1) << 31}))},
         "overflows 64 bits"},
    };
    for (const Case& c : cases) {
      std::vector<Tensor> feeds;
      auto g = oneNode(c.op, c.operands, {}, 1, feeds);
      std::string cpu = cpuError(*g, feeds);
      // Shape inference or the CPU backend's own check: either names the node.
      QVERIFY2(contains(cpu, "#1 \"n\" (" + std::string(opName(c.op)) + "): ") &&
                   contains(cpu, c.message),
               cpu.c_str());
    }
  }

  /// Values that pick positions without being Gather-style indices (sequence lengths, MaxUnpool's
  /// flat indices) are checked before the kernel with the interpreter's words; the kernels
  /// used to clamp them into a silently different answer.
  void lengthsAndFlatIndicesAreChecked() {
    struct Case {
      OpKind op;
      Ops operands;
      Attrs attrs;
      const char* message;
    };
    Tensor w = f32({1, 2, 2}, {0.1f, 0.2f, -0.1f, 0.3f});
    std::vector<Case> cases = {
        {OpKind::ReverseSequence,
         {in(ramp({3, 2})), in(i64({2}, {2, 4}))},
         {{"time_axis", int64_t(0)}, {"batch_axis", int64_t(1)}},
         "sequence_lens[1] = 4 is outside [0, 3]"},
        {OpKind::MaxUnpool,
         {in(ramp({1, 1, 2, 2})), in(i64({1, 1, 2, 2}, {0, 5, 10, 16}))},
         {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
         "index 16 is out of range for an output of 16 elements"},
        {OpKind::RNN,
         {in(ramp({2, 1, 2})), cst(w), cst(w), Operand{},
          in(Tensor::fromVector<int32_t>({1}, {5}))},
         {{"hidden_size", int64_t(2)}},
         "sequence_lens[0] is 5, outside [0, seq_length = 2]"},
    };
    for (const Case& c : cases) {
      std::vector<Tensor> feeds;
      auto g = oneNode(c.op, c.operands, c.attrs, 1, feeds);
      std::string r = compare(*g, feeds);
      QVERIFY2(r.rfind("error: ", 0) == 0 && contains(r, c.message),
               (std::string(opName(c.op)) + ": " + r).c_str());
    }
    // In range, the same answer as the interpreter.
    CHECK_OP(OpKind::ReverseSequence, (Ops{in(ramp({3, 4})), in(i64({4}, {0, 3, 2, 1}))}),
             (Attrs{{"time_axis", int64_t(0)}, {"batch_axis", int64_t(1)}}), 1);
  }

  /// Float → integer casts of NaN, infinities and values beyond the target follow the
  /// interpreter's rule (NaN is 0, truncate, clamp to int64, wrap to the width), in vectors and
  /// from f16 too; LLVM's plain fptosi made them poison (x86: INT_MIN).
  void floatToIntegerCastsOfAnyValue() {
    const std::vector<double> values = {NAN,           INFINITY,     -INFINITY, 1e10, -1e10, 3e9,
                                        2.5e19,        -2.5e19,      300.7,     -1.9, 255.5, -129.5,
                                        -2147483648.0, 2147483648.0, 65504,     -0.0};
    for (DType from : {DType::F32, DType::F16}) {
      Tensor x(from, {int64_t(values.size()) * 8});
      for (int64_t i = 0; i < x.numElements(); ++i)
        x.setFromDouble(i, values[size_t(i) % values.size()]);
      // ONNX element types: int32, int64, int8, uint8, bool.
      for (int64_t to : {6, 7, 3, 2, 9})
        CHECK_OP(OpKind::Cast, (Ops{in(x)}), (Attrs{{"to", to}}), 1);
    }
    // QuantizeLinear's clamped cast, NaN included.
    Tensor q =
        f32({16}, {NAN, 1e30f, -1e30f, 3.3f, -7.5f, 0, 12, 127, -128, 500, -500, 1, 2, 3, 4, 5});
    CHECK_OP(OpKind::QuantizeLinear,
             (Ops{in(q), cst(Tensor::scalar<float>(0.5f)), cst(Tensor::scalar<uint8_t>(128))}),
             Attrs{}, 1);
  }

  /// NaN and infinities through the polynomial exp and what is built on it, in vectors: NaN
  /// stays NaN (the clamps made it e^88), e^x overflows to inf and underflows to 0.
  void nonFiniteValuesThroughActivations() {
    const std::vector<float> values = {NAN, INFINITY, -INFINITY, 0.0f,   -0.0f, 88.5f,
                                       100, -100,     -88.5f,    1e-45f, 3,     -3,
                                       20,  -20,      0.5f,      -0.5f};
    std::vector<float> x;
    for (int r = 0; r < 4; ++r)
      x.insert(x.end(), values.begin(), values.end());
    for (OpKind op : {OpKind::Exp, OpKind::Sigmoid, OpKind::Tanh, OpKind::Erf, OpKind::Softmax})
      CHECK_OP(op, (Ops{in(f32({4, int64_t(values.size())}, x))}), Attrs{}, 1);
    std::vector<Tensor> feeds;
    auto g = oneNode(OpKind::Exp, {in(f32({16}, std::vector<float>(values)))}, {}, 1, feeds);
    QVERIFY(inferShapes(*g).ok());
    CompileOptions co;
    co.useCache = false;
    auto model = CompiledModel::compile(*g, co);
    QVERIFY(model.ok());
    auto got = (*model)->run(feeds);
    QVERIFY(got.ok());
    auto e = (*got)[0].data<float>();
    QVERIFY(std::isnan(e[0]));
    QCOMPARE(e[1], INFINITY);
    QCOMPARE(e[2], 0.0f);
    QCOMPARE(e[6], INFINITY); // e^100 overflows
    QCOMPARE(e[7], 0.0f);
  }

  /// Integer Pow is exact and wraps, as in the interpreter: through f64 the results past 2^53
  /// were inexact and those past the type poison; an i32 base with an i64 exponent went
  /// through f32.
  void integerPowerWraps() {
    std::vector<int64_t> base, exponent;
    for (int r = 0; r < 4; ++r)
      for (auto [b, e] : std::vector<std::pair<int64_t, int64_t>>{{3, 40},
                                                                  {-3, 39},
                                                                  {2, 63},
                                                                  {7, 100},
                                                                  {-1, -3},
                                                                  {-1, -4},
                                                                  {1, -7},
                                                                  {0, 0},
                                                                  {5, 27},
                                                                  {10, 19},
                                                                  {-2, 31},
                                                                  {13, 1000}}) {
        base.push_back(b * (r + 1));
        exponent.push_back(e);
      }
    const int64_t n = int64_t(base.size());
    std::vector<int32_t> b32(base.begin(), base.end()), e32(exponent.begin(), exponent.end());
    CHECK_OP(OpKind::Pow, (Ops{in(i32({n}, b32)), in(i32({n}, e32))}), Attrs{}, 1);
    CHECK_OP(OpKind::Pow, (Ops{in(i64({n}, base)), in(i64({n}, exponent))}), Attrs{}, 1);
    CHECK_OP(OpKind::Pow, (Ops{in(i32({n}, b32)), in(i64({n}, exponent))}), Attrs{}, 1);
  }

  /// Integer Div and Mod over vectors long enough to be vectorized, with 0 and -1 divisors and
  /// INT_MIN dividends in every vector: the interpreter's rule (x / 0 = 0, INT_MIN / -1 wraps,
  /// x % 0 = 0) instead of SIGFPE.
  void integerDivisionInVectors() {
    const int32_t lo = std::numeric_limits<int32_t>::min();
    std::vector<int32_t> x(256), y(256);
    std::vector<int64_t> x64(256), y64(256);
    for (int i = 0; i < 256; ++i) {
      x[size_t(i)] = i % 3 == 0 ? lo : i * 7919 - 1000000;
      y[size_t(i)] = i % 5 - 2; // -2, -1, 0, 1, 2
      x64[size_t(i)] =
          i % 3 == 0 ? std::numeric_limits<int64_t>::min() : int64_t(i) * 7919 - 1000000;
      y64[size_t(i)] = y[size_t(i)];
    }
    for (OpKind op : {OpKind::Div, OpKind::Mod}) {
      for (int64_t fmod : {0, 1}) {
        if (op == OpKind::Div && fmod)
          continue;
        const Attrs attrs = op == OpKind::Mod ? Attrs{{"fmod", fmod}} : Attrs{};
        CHECK_OP(op, (Ops{in(i32({256}, x)), in(i32({256}, y))}), attrs, 1);
        CHECK_OP(op, (Ops{in(i64({256}, x64)), in(i64({256}, y64))}), attrs, 1);
        CHECK_OP(op, (Ops{in(i64({256}, x64)), cst(Tensor::scalar<int64_t>(-1))}), attrs, 1);
        CHECK_OP(op, (Ops{in(i64({256}, x64)), cst(Tensor::scalar<int64_t>(0))}), attrs, 1);
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestHostileKernels)
#include "TestHostileKernels.moc"
