// Tests of the CPU backend: thread pool, JIT and kernel cache, and the executor on the samples
// and random graphs against the reference interpreter (the emitter itself: TestLoopToLlvm).
#include "CpuTestUtil.h"
#include "PipelineCompare.h"

#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/KernelCache.h"
#include "codegen/llvm/LoopToLlvm.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "codegen/llvm/PerfMap.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/loops/Lower.h"
#include "codegen/runtime/ThreadPool.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/TensorCompare.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <QtTest/QtTest>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>
#include <utility>

using namespace fb;
using namespace fb::cg;
using namespace fb::cg::test;

namespace {

/// A sample (samples/NAME.onnx) through the -O3 graph pipeline, compiled for the CPU; an error
/// names the step that failed.
Expected<std::unique_ptr<CompiledModel>> compileSampleO3(const std::string& name) {
  FB_ASSIGN_OR_RETURN(auto g, loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/" + name + ".onnx"));
  FB_ASSIGN_OR_RETURN(auto steps, namedPipeline("O3"));
  PipelineResult pr = PassManager().run(g->clone(), steps);
  if (pr.error)
    return *pr.error;
  return CompiledModel::compile(pr.finalGraph());
}

/// Whether [addr, addr + size) lies in one executable mapping of this process (/proc/self/maps).
bool executableRange(unsigned long long addr, unsigned long long size) {
  QFile maps("/proc/self/maps");
  if (!maps.open(QIODevice::ReadOnly))
    return false;
  for (const QString& line : QString::fromUtf8(maps.readAll()).split('\n', Qt::SkipEmptyParts)) {
    const QStringList f = line.split(' ', Qt::SkipEmptyParts);
    const QStringList range = f.value(0).split('-');
    if (range.size() != 2 || !f.value(1).contains('x'))
      continue;
    const qulonglong lo = range[0].toULongLong(nullptr, 16), hi = range[1].toULongLong(nullptr, 16);
    if (addr >= lo && addr + size <= hi)
      return true;
  }
  return false;
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

  /// With $FUSEBOX_PERF_MAP set, the JIT lists every linked function in /tmp/perf-PID.map
  /// ("ADDR SIZE NAME", hex): the kernels' entries and their helpers, named by the kernels a
  /// shared module serves, each range inside the process's executable JIT memory.
  void perfMapNamesKernelFunctions() {
    const std::string path = perfMapPath();
    std::filesystem::remove(path);
    qputenv("FUSEBOX_PERF_MAP", "1");
    auto compiled = compileSampleO3("resnet_block");
    qunsetenv("FUSEBOX_PERF_MAP");
    QVERIFY(compiled.ok());
    QFile map(QString::fromStdString(path));
    QVERIFY2(map.open(QIODevice::ReadOnly), path.c_str());
    const QStringList lines = QString::fromUtf8(map.readAll()).split('\n', Qt::SkipEmptyParts);
    std::filesystem::remove(path);
    QVERIFY(!lines.isEmpty());
    int helpers = 0;
    std::set<std::string> named;
    for (const QString& line : lines) {
      const QStringList f = line.split(' ');
      QVERIFY2(f.size() >= 3, qPrintable(line));
      bool okAddr = false, okSize = false;
      const qulonglong addr = f[0].toULongLong(&okAddr, 16), size = f[1].toULongLong(&okSize, 16);
      QVERIFY2(okAddr && okSize && addr > 0 && size > 0, qPrintable(line));
      // The range is mapped executable memory of this process.
      QVERIFY2(executableRange(addr, size), qPrintable(line));
      for (const Kernel& k : (*compiled)->kernels())
        if (f[2].startsWith(QString::fromStdString(k.name)) &&
            (f[2].contains(",") || f[2].contains(".f")))
          named.insert(k.name);
      helpers += f[2].contains(".f") ? 1 : 0;
    }
    QVERIFY2(helpers > 0, "no kernel helper function in the map");
    QVERIFY2(!named.empty(), "no map line names a kernel");
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
    // The transformer block's repeated projections are identical code: compiled once each.
    auto compiled = compileSampleO3("transformer_block");
    QVERIFY(compiled.ok());
    QVERIFY((*compiled)->stats().distinctKernels < (*compiled)->stats().kernels);

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

  /// MaxPool and AveragePool with strides 2 to 4 (the strided vector loads of the loop-nest
  /// emitter), odd widths that leave vector tails, pads, ceil_mode and count_include_pad match
  /// the interpreter.
  void stridedPoolsMatchInterpreter() {
    struct Case {
      OpKind op;
      int64_t h, w, kernel, stride, pad;
      bool ceilMode, includePad;
    };
    const Case cases[] = {
        {OpKind::MaxPool, 7, 7, 3, 2, 1, false, false},
        {OpKind::MaxPool, 13, 13, 3, 2, 0, true, false},
        {OpKind::MaxPool, 15, 15, 3, 2, 1, false, false},
        {OpKind::MaxPool, 9, 40, 3, 2, 1, false, false},
        {OpKind::MaxPool, 10, 112, 3, 2, 1, false, false},
        {OpKind::MaxPool, 14, 14, 2, 2, 0, true, false},
        {OpKind::MaxPool, 9, 100, 3, 3, 0, false, false},
        {OpKind::MaxPool, 9, 69, 4, 4, 1, true, false},
        {OpKind::AveragePool, 7, 7, 2, 2, 0, true, false},
        {OpKind::AveragePool, 13, 13, 3, 2, 1, false, true},
        {OpKind::AveragePool, 15, 15, 3, 2, 1, true, false},
        {OpKind::AveragePool, 10, 112, 3, 2, 1, false, true},
        {OpKind::AveragePool, 8, 99, 3, 3, 1, false, false},
        {OpKind::AveragePool, 8, 70, 4, 4, 0, true, false},
    };
    for (const Case& c : cases) {
      Graph g("pool");
      Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 3, c.h, c.w}));
      Node* n = g.addNode(c.op, {x}, 1);
      n->attrs().set("kernel_shape", std::vector<int64_t>{c.kernel, c.kernel});
      n->attrs().set("strides", std::vector<int64_t>{c.stride, c.stride});
      n->attrs().set("pads", std::vector<int64_t>(4, c.pad));
      n->attrs().set("ceil_mode", int64_t(c.ceilMode));
      if (c.op == OpKind::AveragePool)
        n->attrs().set("count_include_pad", int64_t(c.includePad));
      QVERIFY(inferShapes(g).ok());
      g.addOutput(n->output(0));
      for (int threads : {1, 2}) {
        std::string why = compareWithInterpreter(g, "O3", 3, threads);
        QVERIFY2(why.empty(),
                 qPrintable(QString("%1 %2x%3 k%4 s%5 p%6 ceil %7: %8")
                                .arg(c.op == OpKind::MaxPool ? "MaxPool" : "AveragePool")
                                .arg(c.h)
                                .arg(c.w)
                                .arg(c.kernel)
                                .arg(c.stride)
                                .arg(c.pad)
                                .arg(c.ceilMode)
                                .arg(QString::fromStdString(why))));
      }
    }
  }

  /// Float sums over one or more axes (the loop-nest reductions the emitter lets LLVM
  /// reassociate into vector partial sums, over contiguous axes as one loop) match the
  /// interpreter: GlobalAveragePool on odd, long and 1x1 spatial sizes, ReduceSum / ReduceMean
  /// over trailing, leading, middle and all-but-batch axes, Softmax, LayerNormalization, and
  /// max reductions (kept in order) alongside.
  void reductionsMatchInterpreter() {
    const std::string graphs[] = {
        R"(graph @g opset 17 {
  input %x : f32[1, 5, 7, 7]
  input %y : f32[2, 3, 13, 17]
  input %z : f32[1, 4, 56, 56]
  input %w : f32[2, 6, 1, 1]
  %gx : f32[1, 5, 1, 1] = GlobalAveragePool(%x)
  %gy : f32[2, 3, 1, 1] = GlobalAveragePool(%y)
  %gz : f32[1, 4, 1, 1] = GlobalAveragePool(%z)
  %gw : f32[2, 6, 1, 1] = GlobalAveragePool(%w)
  %mz : f32[1, 4, 1, 1] = GlobalMaxPool(%z)
  output %gx
  output %gy
  output %gz
  output %gw
  output %mz
})",
        R"(graph @g opset 17 {
  input %x : f32[2, 3, 13, 17]
  const %hw : i64[2] = dense<[2, 3]>
  const %c : i64[1] = dense<[1]>
  %s : f32[2, 3, 1, 1] = ReduceSum(%x, %hw) {keepdims = 1}
  %sc : f32[2, 13, 17] = ReduceSum(%x, %c) {keepdims = 0}
  %m : f32[2, 3, 13] = ReduceMean(%x) {axes = [-1], keepdims = 0}
  %m0 : f32[3, 13, 17] = ReduceMean(%x) {axes = [0], keepdims = 0}
  const %all : i64[3] = dense<[1, 2, 3]>
  %sa : f32[2, 1, 1, 1] = ReduceSum(%x, %all) {keepdims = 1}
  %mx : f32[2, 3, 1, 1] = ReduceMax(%x) {axes = [2, 3], keepdims = 1}
  output %s
  output %sc
  output %m
  output %m0
  output %sa
  output %mx
})",
        R"(graph @g opset 17 {
  input %x : f32[3, 7, 61]
  input %g : f32[61]
  input %b : f32[61]
  %sm : f32[3, 7, 61] = Softmax(%x) {axis = -1}
  %s1 : f32[3, 7, 61] = Softmax(%x) {axis = 1}
  %ln : f32[3, 7, 61] = LayerNormalization(%x, %g, %b) {axis = -1, epsilon = 1e-05}
  output %sm
  output %s1
  output %ln
})"};
    for (const std::string& text : graphs) {
      auto g = parseGraph(text, "<reductions>");
      QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
      QVERIFY(inferShapes(**g).ok());
      for (auto [level, llvmLevel] : {std::pair<const char*, int>{"O0", 0}, {"O3", 3}})
        for (int threads : {1, 2}) {
          std::string r = compareWithInterpreter(**g, level, llvmLevel, threads);
          QVERIFY2(r.empty(), qPrintable(QString("%1 threads %2: %3")
                                             .arg(level)
                                             .arg(threads)
                                             .arg(QString::fromStdString(r))));
        }
    }
  }

  /// The elementwise math ops (codegen/loops/LowerElementwiseMath.cpp) against the
  /// interpreter: libm functions, activations built from exp/log1p/tanh, Sign and Round, float
  /// classification, and integer Mod with negative, -1 and zero divisors (which must not trap).
  void elementwiseMathMatchesInterpreter() {
    const std::string graphs[] = {
        R"(graph @g opset 18 {
  input %x : f32[3, 37]
  const %two : f32[] = dense<[2.0]>
  const %four : f32[] = dense<[4.0]>
  %x4 : f32[3, 37] = Mul(%x, %four)
  %x2 : f32[3, 37] = Add(%x, %two)
  %sin : f32[3, 37] = Sin(%x4)
  %cos : f32[3, 37] = Cos(%x4)
  %tan : f32[3, 37] = Tan(%x)
  %asin : f32[3, 37] = Asin(%x)
  %acos : f32[3, 37] = Acos(%x)
  %atan : f32[3, 37] = Atan(%x4)
  %sinh : f32[3, 37] = Sinh(%x4)
  %cosh : f32[3, 37] = Cosh(%x4)
  %asinh : f32[3, 37] = Asinh(%x4)
  %acosh : f32[3, 37] = Acosh(%x2)
  %atanh : f32[3, 37] = Atanh(%x)
  %sign : f32[3, 37] = Sign(%x)
  %round : f32[3, 37] = Round(%x4)
  output %sin
  output %cos
  output %tan
  output %asin
  output %acos
  output %atan
  output %sinh
  output %cosh
  output %asinh
  output %acosh
  output %atanh
  output %sign
  output %round
})",
        R"(graph @g opset 18 {
  input %x : f32[2, 3, 9, 9]
  const %k : f32[] = dense<[30.0]>
  %big : f32[2, 3, 9, 9] = Mul(%x, %k)
  %elu : f32[2, 3, 9, 9] = Elu(%big) {alpha = 0.7}
  %selu : f32[2, 3, 9, 9] = Selu(%big)
  %celu : f32[2, 3, 9, 9] = Celu(%big) {alpha = 2.0}
  %sp : f32[2, 3, 9, 9] = Softplus(%big)
  %ss : f32[2, 3, 9, 9] = Softsign(%big)
  %mish : f32[2, 3, 9, 9] = Mish(%big)
  %tr : f32[2, 3, 9, 9] = ThresholdedRelu(%big) {alpha = 0.25}
  %inv : f32[2, 3, 9, 9] = Reciprocal(%x)
  %inf : bool[2, 3, 9, 9] = IsInf(%inv) {detect_negative = 0}
  %lg : f32[2, 3, 9, 9] = Log(%x)
  %nan : bool[2, 3, 9, 9] = IsNaN(%lg)
  output %elu
  output %selu
  output %celu
  output %sp
  output %ss
  output %mish
  output %tr
  output %inf
  output %nan
})",
        R"(graph @g opset 17 {
  input %x : i32[4, 8]
  input %b : i8[2, 8]
  input %p : bool[4, 8]
  input %q : bool[8]
  const %off : i32[] = dense<[4]>
  const %d : i32[8] = dense<[3, -3, 0, -1, 5, -5, 1, 2]>
  const %d8 : i8[8] = dense<[-1, 0, 3, -3, 7, -128, 1, -2]>
  %xs : i32[4, 8] = Sub(%x, %off)
  %m : i32[4, 8] = Mod(%xs, %d)
  %f : i32[4, 8] = Mod(%xs, %d) {fmod = 1}
  %m8 : i8[2, 8] = Mod(%b, %d8)
  %r : i32[4, 8] = Mod(%d, %xs)
  %le : bool[4, 8] = LessOrEqual(%xs, %d)
  %ge : bool[4, 8] = GreaterOrEqual(%xs, %d)
  %xo : bool[4, 8] = Xor(%p, %q)
  %sg : i32[4, 8] = Sign(%xs)
  output %m
  output %f
  output %m8
  output %r
  output %le
  output %ge
  output %xo
  output %sg
})",
        R"(graph @g opset 17 {
  input %x : f32[5, 8]
  input %u : u8[5, 8]
  input %s : u8[8]
  const %y : f32[8] = dense<[0.5, -0.5, 0.75, -2.0, 0.3, 1.0, -0.1, 0.0]>
  %fm : f32[5, 8] = Mod(%x, %y) {fmod = 1}
  %um : u8[5, 8] = Mod(%u, %s)
  const %sh : u8[8] = dense<[0, 1, 3, 7, 8, 9, 200, 2]>
  %l : u8[5, 8] = BitShift(%u, %sh) {direction = "LEFT"}
  %rr : u8[5, 8] = BitShift(%u, %sh) {direction = "RIGHT"}
  output %fm
  output %um
  output %l
  output %rr
})"};
    // A chain of the activations after a Conv: fused into the Conv's kernel as an epilogue.
    {
      Graph g("conv-activations");
      SeededRandom rng(3);
      Value* x = g.addInput("x", TensorType::of(DType::F32, {1, 4, 9, 9}));
      Value* w = g.addConstant("w", randomTensor(DType::F32, {6, 4, 3, 3}, rng));
      Node* conv = g.addNode(OpKind::Conv, {x, w}, 1);
      conv->attrs().set("pads", std::vector<int64_t>(4, 1));
      Value* v = conv->output(0);
      for (OpKind k : {OpKind::Elu, OpKind::Mish, OpKind::Selu, OpKind::Softsign, OpKind::Sin})
        v = g.addNode(k, {v}, 1)->output(0);
      g.addOutput(v);
      QVERIFY(inferShapes(g).ok());
      for (const char* level : {"O0", "O3"}) {
        std::string r = compareWithInterpreter(g, level, 3, 2);
        QVERIFY2(r.empty(), qPrintable(QString("%1: %2").arg(level, QString::fromStdString(r))));
      }
    }
    for (const std::string& text : graphs) {
      auto g = parseGraph(text, "<elementwise-math>");
      QVERIFY2(g.ok(), g.ok() ? "" : g.error().message().c_str());
      QVERIFY(inferShapes(**g).ok());
      for (auto [level, llvmLevel] : {std::pair<const char*, int>{"O0", 0}, {"O3", 3}}) {
        std::string r = compareWithInterpreter(**g, level, llvmLevel, 1);
        QVERIFY2(r.empty(), qPrintable(QString("%1: %2").arg(level, QString::fromStdString(r))));
      }
    }
  }

  /// --emit obj's path: all kernels in one module, an ELF object, and a header naming them.
  void emitsObjectAndHeader() {
    auto g = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/mlp.onnx");
    QVERIFY(g.ok());
    auto bound = bindStaticShapes(**g, {}, {});
    QVERIFY2(bound.ok(), bound.ok() ? "" : bound.error().message().c_str());
    auto kernels = lowerGraph(**bound);
    QVERIFY2(kernels.ok(), kernels.ok() ? "" : kernels.error().message().c_str());
    QVERIFY(prepareKernels(*kernels, true, TargetInfo::host()).ok());
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
