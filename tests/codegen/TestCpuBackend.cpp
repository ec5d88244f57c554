// Tests of the CPU backend: thread pool, JIT and kernel cache, the loop-IR → LLVM emitter on
// hand-built kernels, and the executor on every sample against the reference interpreter.
#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/KernelCache.h"
#include "codegen/llvm/LoopToLlvm.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/runtime/ThreadPool.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/text/IrPrinter.h"
#include "core/TensorCompare.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <QtTest/QtTest>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

using namespace fb;
using namespace fb::cg;

namespace {

/// Compiles one loop-IR kernel at `level` and returns its entry point (kept alive by `jit`).
FbKernelFn compileKernel(const Kernel& k, int level, std::unique_ptr<Jit>& jit,
                         std::string* ir = nullptr) {
  JitOptions o;
  o.optLevel = level;
  o.useCache = false;
  auto j = Jit::create(o);
  if (!j.ok()) {
    qWarning("%s", j.error().message().c_str());
    return nullptr;
  }
  jit = std::move(*j);
  JitModule m = newJitModule(k.name);
  auto fn = emitLoopKernel(*m.module, k);
  if (!fn.ok()) {
    qWarning("%s", fn.error().message().c_str());
    return nullptr;
  }
  if (ir) {
    llvm::raw_string_ostream os(*ir);
    m.module->print(os, nullptr);
  }
  Status st = jit->addModule(std::move(m));
  if (!st.ok()) {
    qWarning("%s", st.error().message().c_str());
    return nullptr;
  }
  auto entry = jit->lookupKernel(k.name);
  return entry.ok() ? *entry : nullptr;
}

KernelArg arg(KernelArg::Role role, const std::string& name, std::vector<int64_t> sizes,
              DType dtype = DType::F32) {
  KernelArg a;
  a.role = role;
  a.name = name;
  a.dtype = dtype;
  a.sizes = std::move(sizes);
  return a;
}

std::vector<float> randomFloats(size_t n, uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<float> v(n);
  for (float& x : v)
    x = float(rng.uniform() * 2 - 1);
  return v;
}

ExprPtr f(double v) { return floatImm(v); }
ExprPtr i(int64_t v) { return intImm(v); }
ExprPtr v(const char* name) { return var(name); }

/// Runs a graph through a named pipeline, compiles it for the CPU and compares with the
/// interpreter on the imported graph; returns an empty string or what went wrong.
std::string compareWithInterpreter(const Graph& imported, const std::string& level, int llvmLevel,
                                   int threads) {
  auto steps = namedPipeline(level);
  if (!steps.ok())
    return steps.error().message();
  PipelineResult pr = PassManager().run(imported.clone(), *steps);
  if (pr.error)
    return "pipeline: " + pr.error->message();
  auto inputs = makeRandomInputs(imported, 7);
  if (!inputs.ok())
    return inputs.error().message();
  auto ref = interpret(imported, *inputs);
  if (!ref.ok())
    return "interpreter: " + ref.error().message();
  CompileOptions co;
  co.llvmOptLevel = llvmLevel;
  co.threads = threads;
  co.specializeInputs = *inputs;
  auto model = CompiledModel::compile(pr.finalGraph(), co);
  if (!model.ok())
    return "compile: " + model.error().message();
  auto got = (*model)->run(*inputs);
  if (!got.ok())
    return "run: " + got.error().message();
  if (got->size() != ref->outputs.size())
    return "output count differs";
  for (size_t o = 0; o < got->size(); ++o) {
    const Tensor& r = ref->outputs[o];
    TensorComparison c = compareTensors(r, (*got)[o], defaultTolerance(r.dtype()));
    if (!c.ok)
      return "output " + std::to_string(o) + ": " + c.reason + " (max abs " +
             std::to_string(c.maxAbs) + ")";
  }
  // A second run on the same bindings gives the same answer (no state leaks between runs).
  auto again = (*model)->run(*inputs);
  if (!again.ok() || !(*again)[0].identical((*got)[0]))
    return "second run differs";
  return "";
}

/// A random valid graph on a [1, c, h, w] input: chains and diamonds of Conv (1×1 and 3×3,
/// padded, strided), unary activations, broadcast Add/Mul, Transpose, Softmax, MatMul,
/// ReduceMean, MaxPool, Reshape, Concat and Exp(Neg(x)).
std::unique_ptr<Graph> randomGraph(uint64_t seed) {
  SeededRandom rng(seed);
  auto pick = [&](size_t n) { return size_t(rng.next() % n); };
  auto g = std::make_unique<Graph>("random");
  int64_t c = 1 + int64_t(pick(12)), h = 3 + int64_t(pick(9)), w = 3 + int64_t(pick(13));
  std::vector<Value*> pool = {g->addInput("x", TensorType::of(DType::F32, {1, c, h, w}))};
  auto constant = [&](std::vector<int64_t> sizes) {
    return g->addConstant(g->uniqueValueName("k"), randomTensor(DType::F32, sizes, rng));
  };
  size_t numOps = 2 + pick(10);
  for (size_t op = 0; op < numOps; ++op) {
    Value* a = rng.uniform() < 0.6 ? pool.back() : pool[pick(pool.size())];
    std::vector<int64_t> s = a->type().staticSizes();
    Node* n = nullptr;
    switch (pick(12)) {
    case 0: {
      int64_t k = pick(2) ? 3 : 1, stride = (k == 3 && s[2] > 4 && pick(3) == 0) ? 2 : 1;
      Value* wt = constant({1 + int64_t(pick(20)), s[1], k, k});
      std::vector<Value*> ins = {a, wt};
      if (pick(2))
        ins.push_back(constant({wt->type().dims[0].size()}));
      n = g->addNode(OpKind::Conv, ins, 1);
      n->attrs().set("pads", std::vector<int64_t>(4, k / 2));
      n->attrs().set("strides", std::vector<int64_t>{stride, stride});
      break;
    }
    case 1: {
      OpKind kinds[] = {OpKind::Relu, OpKind::Sigmoid, OpKind::Tanh, OpKind::Abs};
      n = g->addNode(kinds[pick(4)], {a}, 1);
      break;
    }
    case 2:
    case 3: {
      Value* b = nullptr;
      for (Value* v : pool)
        if (v != a && v->type().dims == a->type().dims && pick(2))
          b = v;
      if (!b)
        b = pick(2) ? constant({s[1], 1, 1}) : constant({s[3]});
      n = g->addNode(pick(2) ? OpKind::Add : OpKind::Mul, {a, b}, 1);
      break;
    }
    case 4:
      n = g->addNode(OpKind::Transpose, {a}, 1);
      n->attrs().set("perm", std::vector<int64_t>{0, 1, 3, 2});
      break;
    case 5: n = g->addNode(OpKind::Softmax, {a}, 1); break;
    case 6: n = g->addNode(OpKind::MatMul, {a, constant({s[3], 1 + int64_t(pick(24))})}, 1); break;
    case 7:
      n = g->addNode(OpKind::ReduceMean, {a}, 1);
      n->attrs().set("axes", std::vector<int64_t>{pick(2) ? 3 : 1});
      break;
    case 8: {
      Value* shape = g->addConstant(g->uniqueValueName("shape"),
                                    Tensor::fromVector<int64_t>({4}, {s[0], s[1], s[3], s[2]}));
      n = g->addNode(OpKind::Reshape, {a, shape}, 1);
      break;
    }
    case 9:
      if (s[2] >= 2 && s[3] >= 2) {
        n = g->addNode(OpKind::MaxPool, {a}, 1);
        n->attrs().set("kernel_shape", std::vector<int64_t>{2, 2});
        n->attrs().set("strides", std::vector<int64_t>{2, 2});
        break;
      }
      [[fallthrough]];
    case 10: {
      Value* b = nullptr;
      for (Value* v : pool)
        if (v != a && v->type().rank() == 4 && v->type().dims[2] == a->type().dims[2] &&
            v->type().dims[3] == a->type().dims[3])
          b = v;
      if (b) {
        n = g->addNode(OpKind::Concat, {a, b}, 1);
        n->attrs().set("axis", int64_t(1));
        break;
      }
      [[fallthrough]];
    }
    default: n = g->addNode(OpKind::Exp, {g->addNode(OpKind::Neg, {a}, 1)->output(0)}, 1);
    }
    Status st = inferShapes(*g);
    if (!st.ok())
      qFatal("random graph %llu: %s", (unsigned long long)seed, st.error().message().c_str());
    pool.push_back(n->output(0));
  }
  for (const auto& n : g->nodes())
    if (!n->output(0)->hasUses())
      g->addOutput(n->output(0));
  if (pool.size() > 2 && pick(2)) {
    Value* v = pool[1 + pick(pool.size() - 1)];
    if (!v->isGraphOutput())
      g->addOutput(v);
  }
  return g;
}

/// True when every output of the interpreter is finite (random chains can overflow).
bool finiteOutputs(const Graph& g) {
  auto inputs = makeRandomInputs(g, 7);
  if (!inputs.ok())
    return false;
  auto r = interpret(g, *inputs);
  if (!r.ok())
    return false;
  for (const Tensor& t : r->outputs)
    for (int64_t e = 0; e < t.numElements(); ++e)
      if (!std::isfinite(t.getAsDouble(e)))
        return false;
  return true;
}

} // namespace

class TestCpuBackend : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Every index of [0, n) is visited exactly once for any thread count, nested loops run
  /// serially, and the caller takes part.
  void threadPoolCoversRange() {
    for (int threads : {1, 2, 3, 5}) {
      ThreadPool pool(threads);
      QCOMPARE(pool.numThreads(), threads);
      for (int64_t n : {int64_t(1), int64_t(2), int64_t(7), int64_t(1000)}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        struct Ctx {
          std::vector<std::atomic<int>>* hits;
          ThreadPool* pool;
        } ctx{&hits, &pool};
        for (int rep = 0; rep < 50; ++rep)
          pool.parallelFor(
              [](void* c, int64_t b, int64_t e) {
                auto* x = static_cast<Ctx*>(c);
                for (int64_t k = b; k < e; ++k)
                  (*x->hits)[size_t(k)]++;
                // Nested: runs serially inside the chunk.
                x->pool->parallelFor([](void*, int64_t, int64_t) {}, nullptr, 4);
              },
              &ctx, n);
        for (auto& h : hits)
          QCOMPARE(h.load(), 50);
      }
    }
    ThreadPool pool(2);
    pool.setNumThreads(4);
    QCOMPARE(pool.numThreads(), 4);
    std::atomic<int64_t> sum{0};
    pool.parallelFor(
        [](void* c, int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k)
            static_cast<std::atomic<int64_t>*>(c)->fetch_add(k);
        },
        &sum, 10000);
    QCOMPARE(sum.load(), int64_t(10000 * 9999 / 2));
  }

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

  /// A second compilation of the same module comes from the kernel cache; a different target
  /// level does not.
  void kernelCacheHits() {
    Kernel k;
    k.name = "t_cached";
    k.args = {arg(KernelArg::Role::Input, "x", {8}), arg(KernelArg::Role::Output, "y", {8})};
    BufferPtr X = makeArgBuffer("X", 0, DType::F32, {8});
    BufferPtr Y = makeArgBuffer("Y", 1, DType::F32, {8});
    k.body = forRange("q", 8, store(Y, {v("q")}, add(load(X, {v("q")}), f(1))));
    KernelCache::global().clear();
    for (int round = 0; round < 3; ++round) {
      JitOptions o;
      o.optLevel = round == 2 ? 1 : 3;
      auto jit = Jit::create(o);
      QVERIFY(jit.ok());
      JitModule m = newJitModule(k.name);
      QVERIFY(emitLoopKernel(*m.module, k).ok());
      QVERIFY((*jit)->addModule(std::move(m)).ok());
      QCOMPARE((*jit)->stats().cacheHits, round == 1 ? 1 : 0);
      auto fn = (*jit)->lookupKernel(k.name);
      QVERIFY(fn.ok());
      float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {};
      void* args[] = {x, y};
      (*fn)(args);
      QCOMPARE(y[7], 9.f);
    }
    QCOMPARE(KernelCache::global().size(), size_t(2));

    // With a directory, another "process" (a cleared memory cache) finds the object on disk.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    KernelCache::global().setDirectory(dir.path().toStdString());
    for (int round = 0; round < 2; ++round) {
      KernelCache::global().clear();
      auto jit = Jit::create();
      QVERIFY(jit.ok());
      JitModule m = newJitModule(k.name);
      QVERIFY(emitLoopKernel(*m.module, k).ok());
      QVERIFY((*jit)->addModule(std::move(m)).ok());
      QCOMPARE(KernelCache::global().diskHits(), int64_t(round));
      auto fn = (*jit)->lookupKernel(k.name);
      QVERIFY(fn.ok());
      float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {};
      void* args[] = {x, y};
      (*fn)(args);
      QCOMPARE(y[0], 2.f);
    }
    QStringList files = QDir(dir.path()).entryList(QDir::Files);
    QCOMPARE(files.size(), 1);
    // A damaged file is read as a hit, fails to link, and is compiled afresh.
    {
      QFile damaged(dir.filePath(files[0]));
      QVERIFY(damaged.open(QIODevice::WriteOnly | QIODevice::Truncate));
      damaged.write("not an object file");
    }
    KernelCache::global().clear();
    auto jit = Jit::create();
    QVERIFY(jit.ok());
    JitModule m = newJitModule(k.name);
    QVERIFY(emitLoopKernel(*m.module, k).ok());
    Status st = (*jit)->addModule(std::move(m));
    QVERIFY2(st.ok(), st.ok() ? "" : st.error().message().c_str());
    QCOMPARE(KernelCache::global().diskHits(), int64_t(1));
    auto fn = (*jit)->lookupKernel(k.name);
    QVERIFY(fn.ok());
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {};
    void* args[] = {x, y};
    (*fn)(args);
    QCOMPARE(y[3], 5.f);
    KernelCache::global().setDirectory("");
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

  /// Random graphs through the -O0 and -O3 pipelines match the interpreter (fused groups,
  /// odd sizes that leave vector tails, diamonds, outputs also used inside).
  void randomGraphsMatchInterpreter() {
    int compared = 0;
    // FUSEBOX_RANDOM_GRAPHS=N tries more seeds by hand (the default keeps the test fast).
    uint64_t seeds = qEnvironmentVariableIsSet("FUSEBOX_RANDOM_GRAPHS")
                         ? uint64_t(qEnvironmentVariableIntValue("FUSEBOX_RANDOM_GRAPHS"))
                         : 24;
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      auto g = randomGraph(seed);
      if (!finiteOutputs(*g))
        continue;
      const char* level = seed % 3 == 0 ? "O0" : "O3";
      std::string why = compareWithInterpreter(*g, level, seed % 4 == 0 ? 0 : 3, 1 + int(seed % 2));
      if (!why.empty())
        qWarning("%s", printGraph(*g).c_str());
      QVERIFY2(why.empty(), qPrintable(QString("seed %1 -%2: %3").arg(seed).arg(level).arg(QString::fromStdString(why))));
      ++compared;
    }
    QVERIFY(compared >= 18);
  }

  /// Every sample compiles and matches the interpreter under the -O0 and -O3 graph pipelines
  /// (LLVM O3, 2 threads; and LLVM O0 once).
  void samplesMatchInterpreter() {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(FUSEBOX_SAMPLES_DIR))
      if (e.path().extension() == ".onnx")
        files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    QVERIFY(files.size() >= 5);
    for (const std::string& file : files) {
      auto g = loadModel(file);
      QVERIFY2(g.ok(), file.c_str());
      for (const char* level : {"O0", "O3"}) {
        std::string why = compareWithInterpreter(**g, level, 3, 2);
        QVERIFY2(why.empty(), qPrintable(QString::fromStdString(file + " -" + level + ": " + why)));
      }
    }
    auto mlp = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/mlp.onnx");
    QVERIFY(mlp.ok());
    std::string why = compareWithInterpreter(**mlp, "O3", 0, 1);
    QVERIFY2(why.empty(), why.c_str());
  }

  /// Compiling and running models on several threads at once (the JIT, the kernel cache and
  /// the thread pool are shared) gives the interpreter's results, and a recompilation of an
  /// unchanged model comes entirely from the kernel cache.
  void compilesAndRunsConcurrently() {
    KernelCache::global().clear();
    std::vector<std::string> names = {"mlp", "small_cnn", "resnet_block", "small_cnn"};
    std::vector<std::string> errors(names.size());
    std::vector<std::thread> threads;
    for (size_t t = 0; t < names.size(); ++t)
      threads.emplace_back([&, t] {
        auto g = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/" + names[t] + ".onnx");
        if (!g.ok()) {
          errors[t] = g.error().message();
          return;
        }
        for (int round = 0; round < 2 && errors[t].empty(); ++round)
          errors[t] = compareWithInterpreter(**g, "O3", 3, 2);
      });
    for (std::thread& t : threads)
      t.join();
    for (size_t t = 0; t < names.size(); ++t)
      QVERIFY2(errors[t].empty(), qPrintable(QString::fromStdString(names[t] + ": " + errors[t])));
    auto g = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/small_cnn.onnx");
    QVERIFY(g.ok());
    auto inputs = makeRandomInputs(**g, 1);
    QVERIFY(inputs.ok());
    CompileOptions co;
    co.specializeInputs = *inputs;
    auto first = CompiledModel::compile(**g, co);
    QVERIFY(first.ok());
    auto model = CompiledModel::compile(**g, co);
    QVERIFY(model.ok());
    QVERIFY((*model)->stats().distinctKernels > 0);
    QCOMPARE((*model)->stats().cacheHits, (*model)->stats().distinctKernels);
    auto a = (*first)->run(*inputs), b = (*model)->run(*inputs);
    QVERIFY(a.ok() && b.ok());
    QVERIFY((*a)[0].identical((*b)[0]));
  }

  /// --emit obj's path: all kernels in one module, an ELF object, and a header naming them.
  void emitsObjectAndHeader() {
    auto g = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/mlp.onnx");
    QVERIFY(g.ok());
    auto bound = bindStaticShapes(**g, {}, {});
    QVERIFY2(bound.ok(), bound.ok() ? "" : bound.error().message().c_str());
    auto kernels = lowerGraph(**bound);
    QVERIFY2(kernels.ok(), kernels.ok() ? "" : kernels.error().message().c_str());
    QVERIFY(prepareKernels(*kernels, true).ok());
    auto m = buildModelModule(*kernels, "mlp", TargetInfo::host(), {}, 3);
    QVERIFY2(m.ok(), m.ok() ? "" : m.error().message().c_str());
    for (const Kernel& k : *kernels)
      QVERIFY(m->module->getFunction(k.name));
    auto tm = createTargetMachine(TargetInfo::host(), 3);
    QVERIFY(tm.ok());
    auto obj = compileToObject(*m->module, **tm);
    QVERIFY(obj.ok());
    QVERIFY(obj->size() > 64 && obj->compare(0, 4, "\x7f" "ELF") == 0);
    std::string header = kernelHeaderText(*kernels, "MLP_H");
    QVERIFY(header.find("void " + kernels->front().name + "(void* const* args);") !=
            std::string::npos);
    QVERIFY(header.find("fb_parallel_for") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestCpuBackend)
#include "TestCpuBackend.moc"
