// Tests of the loop-IR → LLVM IR emitter on hand-built kernels: widening, masks, privatized
// locals, closures for parallel loops, reductions, vector math, strided loads, errors.
#include "CpuTestUtil.h"

#include "codegen/llvm/Optimizer.h"
#include "codegen/llvm/Target.h"
#include "codegen/loops/LoopEvaluator.h"
#include "codegen/loops/Lower.h"
#include "core/Graph.h"
#include "core/OpTable.h"
#include "core/ShapeInference.h"

#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <QtTest/QtTest>

#include <cmath>
#include <limits>
#include <regex>

#include <sys/mman.h>
#include <unistd.h>

using namespace fb;
using namespace fb::cg;
using namespace fb::cg::test;

namespace {

/// `n` floats that end exactly where an unreadable page begins, so that a kernel reading even
/// one element past the end crashes the test instead of passing by luck.
class GuardedFloats {
public:
  explicit GuardedFloats(size_t n) : m_n(n) {
    size_t page = size_t(sysconf(_SC_PAGESIZE));
    m_bytes = (n * sizeof(float) + page - 1) / page * page + page;
    void* p = mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      qFatal("mmap failed");
    m_base = static_cast<char*>(p);
    if (mprotect(m_base + m_bytes - page, page, PROT_NONE) != 0)
      qFatal("mprotect failed");
    m_data = reinterpret_cast<float*>(m_base + m_bytes - page) - n;
  }
  ~GuardedFloats() { munmap(m_base, m_bytes); }
  GuardedFloats(const GuardedFloats&) = delete;
  GuardedFloats& operator=(const GuardedFloats&) = delete;
  float* data() { return m_data; }
  size_t size() const { return m_n; }
  std::vector<float> vector() const { return std::vector<float>(m_data, m_data + m_n); }

private:
  size_t m_n, m_bytes = 0;
  char* m_base = nullptr;
  float* m_data = nullptr;
};

/// Runs `k` on the loop-IR evaluator with float arguments `values` (sizes from k.args) and
/// returns argument `out` afterwards.
std::vector<float> evaluateFloats(const Kernel& k, const std::vector<std::vector<float>>& values,
                                  size_t out) {
  std::vector<Tensor> args;
  for (size_t a = 0; a < k.args.size(); ++a)
    args.push_back(Tensor::fromVector<float>(k.args[a].sizes, values[a]));
  Status st = evaluateKernel(k, args);
  if (!st.ok())
    qFatal("evaluator: %s", st.error().message().c_str());
  auto d = args[out].data<float>();
  return std::vector<float>(d.begin(), d.end());
}

/// A one-node pooling graph on a [1, c, h, w] input.
std::unique_ptr<Graph> poolGraph(OpKind op, std::vector<int64_t> shape, int64_t kernel,
                                 int64_t stride, int64_t pad, bool ceilMode) {
  auto g = std::make_unique<Graph>("pool");
  Value* x = g->addInput("x", TensorType::of(DType::F32, shape));
  Node* n = g->addNode(op, {x}, 1);
  n->attrs().set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  n->attrs().set("strides", std::vector<int64_t>{stride, stride});
  n->attrs().set("pads", std::vector<int64_t>(4, pad));
  n->attrs().set("ceil_mode", int64_t(ceilMode));
  Status st = inferShapes(*g);
  if (!st.ok())
    qFatal("pool graph: %s", st.error().message().c_str());
  g->addOutput(n->output(0));
  return g;
}

/// The widest `fadd reassoc nsz <N x float>` in `ir` (the reduction updates the emitter lets
/// LLVM reassociate, once vectorized), or 0.
int widestReassocFadd(const std::string& ir) {
  static const std::regex re("fadd reassoc nsz <([0-9]+) x float>");
  int widest = 0;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), re); it != std::sregex_iterator(); ++it)
    widest = std::max(widest, std::stoi((*it)[1].str()));
  return widest;
}

/// Emits `k` and prints its module after the O3 pipeline.
std::string optimizedIr(const Kernel& k) {
  JitModule m = newJitModule(k.name);
  auto fn = emitLoopKernel(*m.module, k);
  if (!fn.ok())
    qFatal("emit: %s", fn.error().message().c_str());
  auto tm = createTargetMachine(TargetInfo::host(), 3);
  if (!tm.ok() || !optimizeModule(*m.module, **tm, 3).ok())
    qFatal("optimize failed");
  std::string ir;
  llvm::raw_string_ostream os(ir);
  m.module->print(os, nullptr);
  os.flush();
  return ir;
}

} // namespace

class TestLoopToLlvm : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Y[i] = max(X[i] * 2 + B[0], 0) with a parallel outer loop and a widened vectorized inner
  /// loop, at O0 and O3; the IR names values after the graph and carries noalias scopes.
  void emitsElementwiseKernel() {
    const int64_t n = 64;
    Kernel k;
    k.name = "t_relu";
    k.args = {arg(KernelArg::Role::Input, "x", {n}), arg(KernelArg::Role::Input, "bias", {1}),
              arg(KernelArg::Role::Output, "/fc/y", {n})};
    BufferPtr x = makeArgBuffer("X", 0, DType::F32, {n});
    BufferPtr b = makeArgBuffer("B", 1, DType::F32, {1});
    BufferPtr y = makeArgBuffer("Y", 2, DType::F32, {n});
    ExprPtr idx = add(mul(v("i_o"), i(8)), v("i_i"));
    StmtPtr body = store(y, {idx}, max(add(mul(load(x, {idx}), f(2)), load(b, {i(0)})), f(0)),
                         "n3 Relu");
    k.body = forLoop("i_o", i(0), i(n / 8), ForKind::Parallel,
                     forLoop("i_i", i(0), i(8), ForKind::Vectorized, body), "n3.i");
    std::vector<float> xs = randomFloats(size_t(n), 1), ys(size_t(n), -7.f);
    float bias = 0.25f;
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      std::string ir;
      FbKernelFn fn = compileKernel(k, level, jit, &ir);
      QVERIFY(fn);
      QVERIFY2(ir.find("<8 x float>") != std::string::npos, "the vectorized loop is widened");
      QVERIFY(ir.find("fb_parallel_for") != std::string::npos);
      QVERIFY(ir.find("%fc_y = load ptr") != std::string::npos);
      QVERIFY(ir.find("n3.i.header") != std::string::npos);
      QVERIFY(ir.find("!alias.scope") != std::string::npos);
      void* args[] = {xs.data(), &bias, ys.data()};
      fn(args);
      for (int64_t e = 0; e < n; ++e)
        QCOMPARE(ys[size_t(e)], std::max(xs[size_t(e)] * 2 + bias, 0.f));
    }
  }

  /// Y[i, j] = b[j] + sum_k A[i, k] W[k, j]: bias-initialised accumulation with vectorized j
  /// loops inside a serial k loop, under a parallel i loop.
  void emitsMatMulNest() {
    const int64_t M = 5, K = 7, N = 16;
    Kernel k;
    k.name = "t_matmul";
    k.args = {arg(KernelArg::Role::Input, "a", {M, K}), arg(KernelArg::Role::Weight, "w", {K, N}),
              arg(KernelArg::Role::Weight, "b", {N}), arg(KernelArg::Role::Output, "y", {M, N})};
    BufferPtr A = makeArgBuffer("A", 0, DType::F32, {M, K});
    BufferPtr W = makeArgBuffer("W", 1, DType::F32, {K, N});
    BufferPtr B = makeArgBuffer("Bias", 2, DType::F32, {N});
    BufferPtr Y = makeArgBuffer("Y", 3, DType::F32, {M, N});
    ExprPtr j1 = add(mul(v("jo1"), i(8)), v("ji1"));
    ExprPtr j2 = add(mul(v("jo2"), i(8)), v("ji2"));
    StmtPtr init = forRange("jo1", N / 8,
                            forRange("ji1", 8, store(Y, {v("i"), j1}, load(B, {j1})),
                                     ForKind::Vectorized));
    StmtPtr acc = forRange(
        "kk", K,
        forRange("jo2", N / 8,
                 forRange("ji2", 8,
                          store(Y, {v("i"), j2},
                                add(load(Y, {v("i"), j2}),
                                    mul(load(A, {v("i"), v("kk")}), load(W, {v("kk"), j2})))),
                          ForKind::Vectorized)));
    k.body = forRange("i", M, block({init, acc}), ForKind::Parallel);
    std::vector<float> a = randomFloats(size_t(M * K), 2), w = randomFloats(size_t(K * N), 3),
                       bias = randomFloats(size_t(N), 4), y(size_t(M * N));
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      FbKernelFn fn = compileKernel(k, level, jit);
      QVERIFY(fn);
      void* args[] = {a.data(), w.data(), bias.data(), y.data()};
      fn(args);
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
          float ref = bias[size_t(c)];
          for (int64_t q = 0; q < K; ++q)
            ref += a[size_t(r * K + q)] * w[size_t(q * N + c)];
          QVERIFY(std::abs(y[size_t(r * N + c)] - ref) <= 1e-5f * (1 + std::abs(ref)));
        }
    }
  }

  /// Local accumulators (Alloc), Let, If, unrolled loops, a strided (gathering) vectorized
  /// loop, a reduction inside a vectorized loop (not widened), and i64/bool expressions.
  void emitsControlFlowAndLocals() {
    const int64_t M = 6, K = 8;
    Kernel k;
    k.name = "t_misc";
    k.args = {arg(KernelArg::Role::Input, "x", {M, K}), arg(KernelArg::Role::Output, "rowsum", {M}),
              arg(KernelArg::Role::Output, "xt", {K, M}),
              arg(KernelArg::Role::Output, "pos", {M, K}, DType::I64),
              arg(KernelArg::Role::Output, "colmax", {K})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {M, K});
    BufferPtr S = makeArgBuffer("S", 1, DType::F32, {M});
    BufferPtr T = makeArgBuffer("T", 2, DType::F32, {K, M});
    BufferPtr P = makeArgBuffer("P", 3, DType::I64, {M, K});
    BufferPtr C = makeArgBuffer("C", 4, DType::F32, {K});
    BufferPtr acc = makeLocalBuffer("acc", DType::F32, {1});
    // rowsum[i] = sum_k x[i, k]; negated for rows i < 2.
    StmtPtr rowsum = forRange(
        "i", M,
        alloc(acc, block({store(acc, {i(0)}, f(0)),
                          forRange("k", K,
                                   store(acc, {i(0)}, add(load(acc, {i(0)}), load(X, {v("i"), v("k")}))),
                                   ForKind::Unrolled),
                          let("twice", mul(v("i"), i(2)),
                              ifThen(binary(BinaryOp::Lt, v("twice"), i(4)),
                                     store(S, {v("i")}, unary(UnaryOp::Neg, load(acc, {i(0)}))),
                                     store(S, {v("i")}, load(acc, {i(0)}))))})));
    // xt[c, r] = x[r, c]: widened over r with stride K (a gather).
    StmtPtr transpose = forRange(
        "c", K, forRange("r", M, store(T, {v("c"), v("r")}, load(X, {v("r"), v("c")})),
                         ForKind::Vectorized));
    // pos[r, c] = i64(x[r, c] > 0) * (r + c): bool → i64 casts and a select.
    StmtPtr pos = forRange(
        "r2", M,
        forRange("c2", K,
                 store(P, {v("r2"), v("c2")},
                       select(binary(BinaryOp::Gt, load(X, {v("r2"), v("c2")}), f(0)),
                              add(v("r2"), v("c2")), i(-1))),
                 ForKind::Vectorized));
    // colmax[c] = max over r: the vectorized loop stores to a lane-invariant address, so it
    // must not be widened.
    StmtPtr colmax = forRange(
        "c3", K,
        block({store(C, {v("c3")}, f(-1e30)),
               forRange("r3", M,
                        store(C, {v("c3")}, max(load(C, {v("c3")}), load(X, {v("r3"), v("c3")}))),
                        ForKind::Vectorized)}));
    k.body = block({rowsum, transpose, pos, colmax});
    std::vector<float> x = randomFloats(size_t(M * K), 5), s(static_cast<size_t>(M)), t(size_t(K * M)),
                       cm(static_cast<size_t>(K));
    std::vector<int64_t> p(size_t(M * K));
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      FbKernelFn fn = compileKernel(k, level, jit);
      QVERIFY(fn);
      void* args[] = {x.data(), s.data(), t.data(), p.data(), cm.data()};
      fn(args);
      for (int64_t r = 0; r < M; ++r) {
        float sum = 0;
        for (int64_t c = 0; c < K; ++c) {
          sum += x[size_t(r * K + c)];
          QCOMPARE(t[size_t(c * M + r)], x[size_t(r * K + c)]);
          QCOMPARE(p[size_t(r * K + c)], x[size_t(r * K + c)] > 0 ? r + c : int64_t(-1));
        }
        QVERIFY(std::abs(s[size_t(r)] - (r < 2 ? -sum : sum)) < 1e-5f);
      }
      for (int64_t c = 0; c < K; ++c) {
        float m = -1e30f;
        for (int64_t r = 0; r < M; ++r)
          m = std::max(m, x[size_t(r * K + c)]);
        QCOMPARE(cm[size_t(c)], m);
      }
    }
  }

  /// A vectorized loop with a lane-dependent guard (a tile tail, padding) is widened with
  /// masked loads and stores: inactive lanes leave memory alone; the else branch gets the
  /// complementary lanes.
  void widensGuardedLoops() {
    const int64_t n = 13;
    Kernel k;
    k.name = "t_guard";
    k.args = {arg(KernelArg::Role::Input, "x", {n}), arg(KernelArg::Role::Output, "y", {16}),
              arg(KernelArg::Role::Output, "z", {16})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {n});
    BufferPtr Y = makeArgBuffer("Y", 1, DType::F32, {16});
    BufferPtr Z = makeArgBuffer("Z", 2, DType::F32, {16});
    ExprPtr idx = add(mul(v("o"), i(8)), v("l"));
    StmtPtr guarded = ifThen(binary(BinaryOp::Lt, idx, i(n)),
                             store(Y, {idx}, mul(load(X, {idx}), f(2))));
    StmtPtr both = ifThen(binary(BinaryOp::Lt, idx, i(5)), store(Z, {idx}, f(1)),
                          store(Z, {idx}, f(-1)));
    k.body = forRange("o", 2, forRange("l", 8, block({guarded, both}), ForKind::Vectorized));
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      std::string ir;
      FbKernelFn fn = compileKernel(k, level, jit, &ir);
      QVERIFY(fn);
      QVERIFY(ir.find("llvm.masked.load") != std::string::npos);
      QVERIFY(ir.find("llvm.masked.store") != std::string::npos);
      std::vector<float> x = randomFloats(size_t(n), 9), y(16, 42.f), z(16, 0.f);
      void* args[] = {x.data(), y.data(), z.data()};
      fn(args);
      for (int64_t e = 0; e < 16; ++e) {
        QCOMPARE(y[size_t(e)], e < n ? 2 * x[size_t(e)] : 42.f);
        QCOMPARE(z[size_t(e)], e < 5 ? 1.f : -1.f);
      }
    }
  }

  /// A local allocated inside a vectorized loop (a register accumulator) is privatized per
  /// lane, so the loop is still widened: Y[i, j] = relu(sum_k A[i, k] W[k, j]) with the sum in
  /// `acc`, and a lane-indexed local `tmp[j_i]` (scatter/gather into private copies).
  void widensLoopsWithLocals() {
    const int64_t M = 3, K = 5, N = 16;
    Kernel k;
    k.name = "t_private";
    k.args = {arg(KernelArg::Role::Input, "a", {M, K}), arg(KernelArg::Role::Input, "w", {K, N}),
              arg(KernelArg::Role::Output, "y", {M, N})};
    BufferPtr A = makeArgBuffer("A", 0, DType::F32, {M, K});
    BufferPtr W = makeArgBuffer("W", 1, DType::F32, {K, N});
    BufferPtr Y = makeArgBuffer("Y", 2, DType::F32, {M, N});
    BufferPtr acc = makeLocalBuffer("acc", DType::F32, {1});
    BufferPtr tmp = makeLocalBuffer("tmp", DType::F32, {8});
    ExprPtr j = add(mul(v("jo"), i(8)), v("ji"));
    StmtPtr body = alloc(
        acc, alloc(tmp, block({store(acc, {i(0)}, f(0)),
                               forRange("kk", K,
                                        store(acc, {i(0)},
                                              add(load(acc, {i(0)}),
                                                  mul(load(A, {v("i"), v("kk")}),
                                                      load(W, {v("kk"), j}))))),
                               store(tmp, {v("ji")}, max(load(acc, {i(0)}), f(0))),
                               store(Y, {v("i"), j}, load(tmp, {v("ji")}))})));
    k.body = forRange("i", M, forRange("jo", N / 8, forRange("ji", 8, body, ForKind::Vectorized)),
                      ForKind::Parallel);
    std::vector<float> a = randomFloats(size_t(M * K), 11), w = randomFloats(size_t(K * N), 12),
                       y(size_t(M * N));
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      std::string ir;
      FbKernelFn fn = compileKernel(k, level, jit, &ir);
      QVERIFY(fn);
      QVERIFY2(ir.find("fmul <8 x float>") != std::string::npos, "the loop with locals is widened");
      void* args[] = {a.data(), w.data(), y.data()};
      fn(args);
      for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
          float ref = 0;
          for (int64_t q = 0; q < K; ++q)
            ref += a[size_t(r * K + q)] * w[size_t(q * N + c)];
          ref = std::max(ref, 0.f);
          QVERIFY(std::abs(y[size_t(r * N + c)] - ref) <= 1e-5f * (1 + std::abs(ref)));
        }
    }
  }

  /// A privatized local written under a lane mask keeps the old value in masked-off lanes (it
  /// is blended, not stored with a mask, so that it can live in a register), and the masked
  /// load feeding it never touches X past its end (X ends at an unreadable page).
  void maskedStoresToPrivateLocalsBlend() {
    const int64_t n = 16, m = 11;
    Kernel k;
    k.name = "t_private_mask";
    k.args = {arg(KernelArg::Role::Input, "x", {m}), arg(KernelArg::Role::Output, "y", {n})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {m});
    BufferPtr Y = makeArgBuffer("Y", 1, DType::F32, {n});
    BufferPtr acc = makeLocalBuffer("acc", DType::F32, {1});
    ExprPtr j = add(mul(v("jo"), i(8)), v("ji"));
    StmtPtr body = alloc(acc, block({store(acc, {i(0)}, f(10)),
                                     ifThen(binary(BinaryOp::Lt, j, i(m)),
                                            store(acc, {i(0)}, mul(load(X, {j}), f(2))),
                                            store(acc, {i(0)}, add(load(acc, {i(0)}), f(1)))),
                                     store(Y, {j}, load(acc, {i(0)}))}));
    k.body = forRange("jo", n / 8, forRange("ji", 8, body, ForKind::Vectorized));
    GuardedFloats x{size_t(m)};
    std::vector<float> xs = randomFloats(size_t(m), 21);
    std::copy(xs.begin(), xs.end(), x.data());
    std::vector<float> want = evaluateFloats(k, {xs, std::vector<float>(size_t(n), 0.f)}, 1);
    for (int64_t e = 0; e < n; ++e)
      QCOMPARE(want[size_t(e)], e < m ? 2 * xs[size_t(e)] : 11.f);
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      std::string ir;
      FbKernelFn fn = compileKernel(k, level, jit, &ir);
      QVERIFY(fn);
      QVERIFY(ir.find("masked.load") != std::string::npos);
      QVERIFY2(ir.find("masked.store") == std::string::npos, "private lanes are blended");
      std::vector<float> y(size_t(n), 42.f);
      void* args[] = {x.data(), y.data()};
      fn(args);
      for (int64_t e = 0; e < n; ++e)
        QCOMPARE(y[size_t(e)], want[size_t(e)]);
    }
  }

  /// A vectorized reduction loop (a store to a lane-invariant address, not widenable) still
  /// vectorizes at O3: its float adds may be reassociated.
  void vectorizesReductionLoops() {
    const int64_t n = 256;
    Kernel k;
    k.name = "t_sum";
    k.args = {arg(KernelArg::Role::Input, "x", {n}), arg(KernelArg::Role::Output, "s", {1})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {n});
    BufferPtr S = makeArgBuffer("S", 1, DType::F32, {1});
    k.body = block({store(S, {i(0)}, f(0)),
                    forRange("r", n, store(S, {i(0)}, add(load(S, {i(0)}), load(X, {v("r")}))),
                             ForKind::Vectorized)});
    std::vector<float> x = randomFloats(size_t(n), 13);
    double ref = 0;
    for (float e : x)
      ref += e;
    for (int level : {0, 3}) {
      JitOptions o;
      o.optLevel = level;
      o.useCache = false;
      auto j = Jit::create(o);
      QVERIFY(j.ok());
      JitModule m = newJitModule(k.name);
      QVERIFY(emitLoopKernel(*m.module, k).ok());
      auto tm = createTargetMachine(TargetInfo::host(), level);
      QVERIFY(tm.ok());
      if (level == 3) {
        std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*m.module);
        QVERIFY(optimizeModule(*copy, **tm, 3).ok());
        std::string ir;
        llvm::raw_string_ostream os(ir);
        copy->print(os, nullptr);
        os.flush();
        QVERIFY2(std::regex_search(ir, std::regex("fadd reassoc( nsz)? <")),
                 "the reduction is vectorized");
      }
      QVERIFY((*j)->addModule(std::move(m)).ok());
      auto fn = (*j)->lookupKernel(k.name);
      QVERIFY(fn.ok());
      float s = 0;
      void* args[] = {x.data(), &s};
      (*fn)(args);
      QVERIFY(std::abs(s - ref) < 1e-4);
    }
  }

  /// Lowered float reductions vectorize at O3 — GlobalAveragePool over 7x7, 13x17 and 56x56
  /// (the two axes walked as one loop), ReduceMean over a 61-wide last axis, Softmax's sum —
  /// into reassociated <8 x float> (or wider) partial sums of contiguous loads, and match the
  /// loop-IR evaluator; a 1x1 pool has nothing to vectorize.
  void vectorizesLoweredReductions() {
    struct Case {
      OpKind op;
      std::vector<int64_t> shape;
      bool vectorSum;
    };
    const Case cases[] = {
        {OpKind::GlobalAveragePool, {1, 5, 7, 7}, true},
        {OpKind::GlobalAveragePool, {2, 3, 13, 17}, true},
        {OpKind::GlobalAveragePool, {1, 4, 56, 56}, true},
        {OpKind::GlobalAveragePool, {2, 6, 1, 1}, false},
        {OpKind::ReduceMean, {3, 5, 61}, true},
        {OpKind::Softmax, {3, 7, 61}, true},
    };
    for (const Case& c : cases) {
      Graph g("reduce");
      Value* x = g.addInput("x", TensorType::of(DType::F32, c.shape));
      Node* n = g.addNode(c.op, {x}, 1);
      if (c.op == OpKind::ReduceMean)
        n->attrs().set("axes", std::vector<int64_t>{-1});
      if (c.op == OpKind::Softmax)
        n->attrs().set("axis", int64_t(-1));
      QVERIFY(inferShapes(g).ok());
      g.addOutput(n->output(0));
      auto kernels = lowerGraph(g, LowerOptions());
      QVERIFY2(kernels.ok(), kernels.ok() ? "" : kernels.error().message().c_str());
      QCOMPARE(kernels->size(), size_t(1));
      Kernel& k = kernels->front();
      QString what = QString("%1 on %2").arg(opName(c.op)).arg(c.shape[c.shape.size() - 1]);
      std::string ir = optimizedIr(k);
      int lanes = widestReassocFadd(ir);
      QVERIFY2(c.vectorSum ? lanes >= 8 : lanes == 0,
               qPrintable(what + QString(": widest reassociated fadd %1 lanes").arg(lanes)));
      // Summed along rows of X, not across channels with gathers (what LLVM does with a
      // short reduction loop it has fully unrolled).
      QVERIFY2(ir.find("masked.gather") == std::string::npos, qPrintable(what + ": gathers"));
      QCOMPARE(k.args.size(), size_t(2));
      QVERIFY(k.args[0].role == KernelArg::Role::Input &&
              k.args[1].role == KernelArg::Role::Output);
      std::vector<std::vector<float>> values;
      for (size_t a = 0; a < k.args.size(); ++a) {
        int64_t count = 1;
        for (int64_t d : k.args[a].sizes)
          count *= d;
        values.push_back(randomFloats(size_t(count), 5 + a));
      }
      std::vector<float> want = evaluateFloats(k, values, 1);
      for (int level : {0, 3}) {
        std::unique_ptr<Jit> jit;
        FbKernelFn fn = compileKernel(k, level, jit);
        QVERIFY(fn);
        std::vector<float> y(want.size(), 42.f);
        void* args[] = {values[0].data(), y.data()};
        fn(args);
        for (size_t e = 0; e < y.size(); ++e)
          QVERIFY2(std::abs(y[e] - want[e]) <= 1e-5f * (1 + std::abs(want[e])),
                   qPrintable(what + QString(" at %1: %2 vs %3").arg(e).arg(y[e]).arg(want[e])));
      }
    }
  }

  /// A sum over two axes of a view is walked as one loop only where the rows are contiguous:
  /// a 13x17 window of a 16x20 array (row stride 20) and a dense 13x17 array, each also with
  /// the axes' order in the index reversed, match the loop-IR evaluator.
  void sumsOverWindowsAndDenseArrays() {
    for (int64_t rowStride : {20, 17}) {
      for (bool transposed : {false, true}) {
        Kernel k;
        k.name = "t_window" + std::to_string(rowStride) + (transposed ? "t" : "");
        k.args = {arg(KernelArg::Role::Input, "x", {16, 20}),
                  arg(KernelArg::Role::Output, "s", {1})};
        Buffer view = *makeArgBuffer("Xw", 0, DType::F32, {13, 17});
        view.strides = {rowStride, 1};
        view.offset = 22;
        if (transposed) { // Xw[c, r]: the inner loop walks rows
          view.sizes = {17, 13};
          view.strides = {1, rowStride};
        }
        BufferPtr X = std::make_shared<const Buffer>(view);
        BufferPtr S = makeArgBuffer("S", 1, DType::F32, {1});
        ExprPtr x = transposed ? load(X, {v("c"), v("r")}) : load(X, {v("r"), v("c")});
        StmtPtr update = store(S, {i(0)}, add(load(S, {i(0)}), x));
        k.body = block({store(S, {i(0)}, f(0)), forRange("r", 13, forRange("c", 17, update))});
        std::vector<float> xs = randomFloats(16 * 20, 21);
        float want = evaluateFloats(k, {xs, {0.f}}, 1)[0];
        double ref = 0;
        for (int64_t r = 0; r < 13; ++r)
          for (int64_t c = 0; c < 17; ++c)
            ref += xs[size_t(22 + r * rowStride + c)];
        QVERIFY(std::abs(want - ref) < 1e-4);
        for (int level : {0, 3}) {
          std::unique_ptr<Jit> jit;
          FbKernelFn fn = compileKernel(k, level, jit);
          QVERIFY(fn);
          float got = 42.f;
          void* args[] = {xs.data(), &got};
          fn(args);
          QVERIFY2(std::abs(got - want) < 1e-4,
                   qPrintable(QString("%1: %2 vs %3").arg(k.name.c_str()).arg(got).arg(want)));
        }
      }
    }
  }

  /// exp, tanh, erf and sigmoid in vector form stay within 2e-6 of libm over a wide range.
  void fastMathIsAccurate() {
    const int64_t n = 4096;
    Kernel k;
    k.name = "t_math";
    k.args = {arg(KernelArg::Role::Input, "x", {n}), arg(KernelArg::Role::Output, "y", {4, n})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {n});
    BufferPtr Y = makeArgBuffer("Y", 1, DType::F32, {4, n});
    ExprPtr idx = add(mul(v("o"), i(8)), v("l"));
    ExprPtr xv = load(X, {idx});
    StmtPtr body = block({store(Y, {i(0), idx}, unary(UnaryOp::Exp, xv)),
                          store(Y, {i(1), idx}, unary(UnaryOp::Tanh, xv)),
                          store(Y, {i(2), idx}, unary(UnaryOp::Erf, xv)),
                          store(Y, {i(3), idx}, unary(UnaryOp::Sigmoid, xv))});
    k.body = forRange("o", n / 8, forRange("l", 8, body, ForKind::Vectorized));
    std::vector<float> x(static_cast<size_t>(n)), y(size_t(4 * n));
    for (int64_t e = 0; e < n; ++e)
      x[size_t(e)] = float(-100.0 + 200.0 * double(e) / double(n - 1));
    x[0] = 0.f;
    x[1] = 1e-3f;
    std::unique_ptr<Jit> jit;
    FbKernelFn fn = compileKernel(k, 3, jit);
    QVERIFY(fn);
    void* args[] = {x.data(), y.data()};
    fn(args);
    for (int64_t e = 0; e < n; ++e) {
      double xe = x[size_t(e)];
      double ex = std::exp(xe);
      if (xe < 88)
        QVERIFY2(std::abs(y[size_t(e)] - ex) <= 2e-6 * ex + 1e-37, qPrintable(QString::number(xe)));
      QVERIFY(std::abs(y[size_t(n + e)] - std::tanh(xe)) <= 2e-6);
      QVERIFY(std::abs(y[size_t(2 * n + e)] - std::erf(xe)) <= 2e-6);
      QVERIFY(std::abs(y[size_t(3 * n + e)] - 1 / (1 + std::exp(-xe))) <= 2e-6);
    }
  }

  /// The libm-backed functions (sin ... atanh, log1p) in vector form give exactly the float libm
  /// results, and the loop evaluator gives the same: the interpreter's values, bit for bit.
  void libmFunctionsAreExact() {
    const UnaryOp ops[] = {UnaryOp::Sin,  UnaryOp::Cos,   UnaryOp::Tan,   UnaryOp::Asin,
                           UnaryOp::Acos, UnaryOp::Atan,  UnaryOp::Sinh,  UnaryOp::Cosh,
                           UnaryOp::Asinh, UnaryOp::Acosh, UnaryOp::Atanh, UnaryOp::Log1p};
    using Fn = float (*)(float);
    const Fn libm[] = {[](float x) { return std::sin(x); },   [](float x) { return std::cos(x); },
                       [](float x) { return std::tan(x); },   [](float x) { return std::asin(x); },
                       [](float x) { return std::acos(x); },  [](float x) { return std::atan(x); },
                       [](float x) { return std::sinh(x); },  [](float x) { return std::cosh(x); },
                       [](float x) { return std::asinh(x); }, [](float x) { return std::acosh(x); },
                       [](float x) { return std::atanh(x); }, [](float x) { return std::log1p(x); }};
    const int64_t n = 64, m = int64_t(std::size(ops));
    Kernel k;
    k.name = "t_libm";
    k.args = {arg(KernelArg::Role::Input, "x", {n}), arg(KernelArg::Role::Output, "y", {m, n})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {n});
    BufferPtr Y = makeArgBuffer("Y", 1, DType::F32, {m, n});
    ExprPtr idx = add(mul(v("o"), i(8)), v("l"));
    std::vector<StmtPtr> stores;
    for (int64_t j = 0; j < m; ++j)
      stores.push_back(store(Y, {i(j), idx}, unary(ops[j], load(X, {idx}))));
    k.body = forRange("o", n / 8, forRange("l", 8, block(stores), ForKind::Vectorized));
    std::vector<float> x(size_t(n), 0.f), y(size_t(m * n));
    for (int64_t e = 0; e < n; ++e) // [-3, 3]: both inside and outside asin's and acosh's domain
      x[size_t(e)] = float(-3.0 + 6.0 * double(e) / double(n - 1));
    std::unique_ptr<Jit> jit;
    FbKernelFn fn = compileKernel(k, 3, jit);
    QVERIFY(fn);
    void* args[] = {x.data(), y.data()};
    fn(args);
    std::vector<float> ev = evaluateFloats(k, {x, std::vector<float>(size_t(m * n), 0.f)}, 1);
    QCOMPARE(ev.size(), y.size());
    for (int64_t j = 0; j < m; ++j)
      for (int64_t e = 0; e < n; ++e) {
        const float want = libm[j](x[size_t(e)]), got = y[size_t(j * n + e)];
        const float evGot = ev[size_t(j * n + e)];
        const bool same = (std::isnan(want) && std::isnan(got)) || want == got;
        const bool evSame = (std::isnan(want) && std::isnan(evGot)) || want == evGot;
        QVERIFY2(same && evSame, qPrintable(QString("%1(%2): jit %3, evaluator %4, libm %5")
                                                .arg(unaryOpName(ops[j]))
                                                .arg(x[size_t(e)])
                                                .arg(got)
                                                .arg(evGot)
                                                .arg(want)));
      }
  }

  /// Integer division and remainder by a run-time 0 or -1 do not trap: x / 0 and x % 0 are 0,
  /// INT_MIN / -1 wraps and INT_MIN % -1 is 0, as in the interpreter and the loop evaluator.
  void integerDivisionNeverTraps() {
    const int64_t n = 8;
    Kernel k;
    k.name = "t_divmod";
    k.args = {arg(KernelArg::Role::Input, "a", {n}, DType::I32),
              arg(KernelArg::Role::Input, "b", {n}, DType::I32),
              arg(KernelArg::Role::Output, "q", {2, n}, DType::I32)};
    BufferPtr A = makeArgBuffer("A", 0, DType::I32, {n});
    BufferPtr B = makeArgBuffer("B", 1, DType::I32, {n});
    BufferPtr Q = makeArgBuffer("Q", 2, DType::I32, {2, n});
    ExprPtr a = load(A, {v("l")}), b = load(B, {v("l")});
    k.body = forRange("l", n,
                      block({store(Q, {i(0), v("l")}, div(a, b)),
                             store(Q, {i(1), v("l")}, binary(BinaryOp::Mod, a, b))}),
                      ForKind::Vectorized);
    const int32_t kMin = std::numeric_limits<int32_t>::min();
    std::vector<int32_t> av = {7, -7, 7, kMin, kMin, 5, 0, -9};
    std::vector<int32_t> bv = {0, 0, -1, -1, 0, 2, 0, 4};
    const std::vector<int32_t> want = {0, 0, -7, kMin, 0, 2, 0, -2, // a / b
                                       0, 0, 0, 0, 0, 1, 0, -1};   // a % b
    for (int level : {0, 3}) {
      std::unique_ptr<Jit> jit;
      FbKernelFn fn = compileKernel(k, level, jit);
      QVERIFY(fn);
      std::vector<int32_t> q(size_t(2 * n), 99);
      void* args[] = {av.data(), bv.data(), q.data()};
      fn(args);
      QCOMPARE(q, want);
    }
    std::vector<Tensor> targs = {Tensor::fromVector<int32_t>({n}, av),
                                 Tensor::fromVector<int32_t>({n}, bv),
                                 Tensor(DType::I32, {2, n})};
    QVERIFY(evaluateKernel(k, targs).ok());
    for (int64_t e = 0; e < 2 * n; ++e)
      QCOMPARE(int32_t(targs[2].getAsInt64(e)), want[size_t(e)]);
  }

  /// A vectorized load with lane stride 2, 3 or 4 becomes contiguous loads and a shuffle, never
  /// a gather, and never reads past its buffer: X ends exactly at an unreadable page, so the
  /// elements after the last lane's must not be loaded (the last load is masked) unless the
  /// index range proves them inside X (then every load is plain). Under a lane mask (a guard
  /// `o*8 + l < m`), masked-off lanes, whose elements lie past X's end, touch no memory.
  void stridedLoadsStayInsideBuffers() {
    const int64_t n = 16; // two vectors of 8 lanes
    for (int64_t s : {2, 3, 4}) {
      for (int variant = 0; variant < 3; ++variant) {
        bool roomy = variant == 1, guarded = variant == 2;
        const int64_t m = guarded ? 13 : n; // lanes that load
        // X holds exactly the elements read, up to the last one; `roomy` adds the s - 1 after it.
        const int64_t xn = (m - 1) * s + 1 + (roomy ? s - 1 : 0);
        Kernel k;
        k.name = "t_stride" + std::to_string(s) + "_" + std::to_string(variant);
        k.args = {arg(KernelArg::Role::Input, "x", {xn}), arg(KernelArg::Role::Output, "y", {n})};
        BufferPtr X = makeArgBuffer("X", 0, DType::F32, {xn});
        BufferPtr Y = makeArgBuffer("Y", 1, DType::F32, {n});
        ExprPtr idx = add(mul(v("o"), i(8)), v("l"));
        // Through a Let and a parallel loop, so that index ranges cross both.
        StmtPtr st = let("xi", mul(idx, i(s)), store(Y, {idx}, mul(load(X, {v("xi")}), f(2))));
        if (guarded)
          st = ifThen(binary(BinaryOp::Lt, idx, i(m)), st, store(Y, {idx}, f(-1)));
        k.body = forLoop("o", i(0), i(n / 8), ForKind::Parallel,
                         forLoop("l", i(0), i(8), ForKind::Vectorized, st));
        GuardedFloats x{size_t(xn)};
        std::vector<float> xs = randomFloats(size_t(xn), uint64_t(100 + s));
        std::copy(xs.begin(), xs.end(), x.data());
        std::vector<float> want = evaluateFloats(k, {xs, std::vector<float>(size_t(n), 0.f)}, 1);
        for (int64_t e = 0; e < n; ++e) // the evaluator is the oracle; check it too
          QCOMPARE(want[size_t(e)], e < m ? 2 * xs[size_t(e * s)] : -1.f);
        for (int level : {0, 3}) {
          std::unique_ptr<Jit> jit;
          std::string ir;
          FbKernelFn fn = compileKernel(k, level, jit, &ir);
          QVERIFY(fn);
          QVERIFY2(ir.find("masked.gather") == std::string::npos,
                   qPrintable(QString::fromStdString(ir)));
          QVERIFY(ir.find("shufflevector") != std::string::npos);
          // Only a proof of room lets every load go unmasked.
          QCOMPARE(ir.find("masked.load") == std::string::npos, roomy);
          std::vector<float> y(size_t(n), 42.f);
          void* args[] = {x.data(), y.data()};
          fn(args);
          for (int64_t e = 0; e < n; ++e)
            QCOMPARE(y[size_t(e)], want[size_t(e)]);
        }
      }
    }
  }

  /// The loop nests of MaxPool and AveragePool of ResNet's stem shape (3x3, stride 2, pad 1,
  /// 112 wide; the nest is what --no-gemm compiles and what pools the direct generator declines
  /// run) read X with stride-2 vector loads, not gathers, and match the loop-IR evaluator with
  /// X ending at an unreadable page.
  void poolingLoadsAreNotGathers() {
    for (OpKind op : {OpKind::MaxPool, OpKind::AveragePool}) {
      auto g = poolGraph(op, {1, 3, 10, 112}, 3, 2, 1, false);
      LowerOptions lo;
      lo.gemmSpecs = false;
      lo.parallelThreshold = 64; // a parallel closure, as in the full-size model
      auto kernels = lowerGraph(*g, lo);
      QVERIFY2(kernels.ok(), kernels.ok() ? "" : kernels.error().message().c_str());
      QCOMPARE(kernels->size(), size_t(1));
      Kernel& k = kernels->front();
      QVERIFY(!k.gemm);
      std::vector<std::vector<float>> values;
      size_t xArg = 0, yArg = 0;
      for (size_t a = 0; a < k.args.size(); ++a) {
        int64_t count = 1;
        for (int64_t d : k.args[a].sizes)
          count *= d;
        if (k.args[a].data) {
          auto d = k.args[a].data->data<float>();
          values.emplace_back(d.begin(), d.end());
        } else {
          values.push_back(randomFloats(size_t(count), 77 + a));
        }
        if (k.args[a].role == KernelArg::Role::Input)
          xArg = a;
        if (k.args[a].role == KernelArg::Role::Output)
          yArg = a;
      }
      std::vector<float> want = evaluateFloats(k, values, yArg);
      GuardedFloats x(values[xArg].size());
      std::copy(values[xArg].begin(), values[xArg].end(), x.data());
      std::unique_ptr<Jit> jit;
      std::string ir;
      FbKernelFn fn = compileKernel(k, 3, jit, &ir);
      QVERIFY(fn);
      QVERIFY2(ir.find("masked.gather") == std::string::npos, "stride-2 loads are shuffles");
      QVERIFY(ir.find("shufflevector") != std::string::npos);
      std::vector<float> y(want.size(), 42.f);
      std::vector<void*> args;
      for (size_t a = 0; a < k.args.size(); ++a)
        args.push_back(a == xArg   ? static_cast<void*>(x.data())
                       : a == yArg ? static_cast<void*>(y.data())
                                   : static_cast<void*>(values[a].data()));
      fn(args.data());
      for (size_t e = 0; e < y.size(); ++e)
        QVERIFY2(
            std::abs(y[e] - want[e]) <= 1e-6f * (1 + std::abs(want[e])),
            qPrintable(
                QString("%1 at %2: %3 vs %4").arg(k.name.c_str()).arg(e).arg(y[e]).arg(want[e])));
    }
  }

  /// Bad IR is an error naming the kernel, not a crash.
  void rejectsBadIr() {
    Kernel k;
    k.name = "t_bad";
    k.args = {arg(KernelArg::Role::Output, "y", {8})};
    BufferPtr Y = makeArgBuffer("Y", 0, DType::F32, {8});
    k.body = store(Y, {v("nowhere")}, f(1));
    JitModule m = newJitModule(k.name);
    auto fn = emitLoopKernel(*m.module, k);
    QVERIFY(!fn.ok());
    QVERIFY(fn.error().message().find("t_bad") != std::string::npos);
    QVERIFY(fn.error().message().find("nowhere") != std::string::npos);
    QVERIFY(!m.module->getFunction("t_bad"));
  }

};

QTEST_GUILESS_MAIN(TestLoopToLlvm)
#include "TestLoopToLlvm.moc"
