// Parallelize only when it pays: the per-kernel choice between the thread pool and the calling
// thread (KernelThreading) from synthetic timings, and a compiled model whose kernels run either
// way computing bit-identical results on every run.
#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/KernelThreading.h"
#include "codegen/runtime/RuntimeAbi.h"
#include "codegen/runtime/ThreadPool.h"
#include "core/RandomInputs.h"
#include "core/text/IrParser.h"

#include <QtTest/QtTest>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace fb;
using namespace fb::cg;

namespace {

/// Plans `runs` runs of `t`, giving kernel k the time times(k, serial, run, previousSerial)
/// whenever it is timed (previousSerial: kernel k-1 ran alone in this run).
/// Returns, per run, each kernel's mode ("P" pool, "S" alone, lowercase when untimed).
using Times = std::function<double(size_t, bool, int64_t, bool)>;
std::vector<std::string> drive(KernelThreading& t, size_t kernels, int runs, const Times& times) {
  std::vector<std::string> plan;
  for (int r = 0; r < runs; ++r) {
    t.beginRun();
    std::string modes;
    bool previousSerial = false;
    for (size_t k = 0; k < kernels; ++k) {
      const bool serial = t.serial(k), timed = t.timed(k);
      modes += timed ? (serial ? 'S' : 'P') : (serial ? 's' : 'p');
      if (timed)
        t.record(k, times(k, serial, t.runs(), previousSerial));
      previousSerial = serial;
    }
    plan.push_back(modes);
  }
  return plan;
}

} // namespace

class TestKernelThreading : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// Warm-up runs untimed on the pool, a calibration that times every kernel on the pool, every
  /// kernel alone, then the even and then the odd kernels alone, then the faster mode per
  /// kernel: a large kernel (pool 2x faster) stays on the pool and is never probed again, a
  /// small one whose pool time is 3x its own goes alone, a tie stays on the pool (leaving it
  /// takes a 15% gain), and a 20% gain is enough.
  void choosesTheFasterModePerKernel() {
    KernelThreading t(4);
    const double pool[] = {100, 30, 10, 12}, alone[] = {200, 10, 9.5, 10};
    auto plan = drive(t, 4, 60, [&](size_t k, bool serial, int64_t, bool) {
      return serial ? alone[k] : pool[k];
    });
    for (int r = 0; r < KernelThreading::kWarmRuns; ++r)
      QCOMPARE(plan[size_t(r)], std::string("pppp"));
    const char* cycle[] = {"PPPP", "SSSS", "SpSp", "pSpS"};
    for (int r = KernelThreading::kWarmRuns; r < KernelThreading::kCalibrationEnd; ++r)
      QCOMPARE(plan[size_t(r)], std::string(cycle[(r - KernelThreading::kWarmRuns) % 4]));
    QVERIFY(!t.chosenSerial(0));
    QVERIFY(t.chosenSerial(1));
    QVERIFY(!t.chosenSerial(2));
    QVERIFY(t.chosenSerial(3));
    // After the calibration: the choice, untimed, except for the probe pair every 16 runs,
    // which times the even kernels in one pair and the odd ones in the next, the others in their
    // chosen modes; the settled kernel 0 keeps the pool and is never timed.
    const int probe = KernelThreading::kCalibrationEnd + KernelThreading::kProbeEvery - 2;
    QCOMPARE(plan[size_t(KernelThreading::kCalibrationEnd)], std::string("psps"));
    QCOMPARE(plan[size_t(probe)], std::string("psPs"));
    QCOMPARE(plan[size_t(probe + 1)], std::string("psSs"));
    QCOMPARE(plan[size_t(probe + 2)], std::string("psps"));
    QCOMPARE(plan[size_t(probe + KernelThreading::kProbeEvery)], std::string("pPpP"));
    QCOMPARE(plan[size_t(probe + KernelThreading::kProbeEvery + 1)], std::string("pSpS"));
  }

  /// A memory-bound kernel is fast alone only when the kernel before it ran alone too (its input
  /// then sits in the calling core's cache): timed that way it would leave the pool, and then
  /// run beside a producer on the pool at three times the time. The calibration times it alone
  /// beside neighbours on the pool, as it will run, and keeps it on the pool.
  void timesEachKernelAloneBesideNeighboursOnThePool() {
    KernelThreading t(3);
    auto times = [](size_t k, bool serial, int64_t, bool previousSerial) {
      if (k == 1)
        return serial ? (previousSerial ? 10.0 : 30.0) : 22.0;
      return serial ? 200.0 : 100.0; // kernels 0 and 2: large, the pool wins
    };
    auto plan = drive(t, 3, KernelThreading::kCalibrationEnd + 1, times);
    QVERIFY(!t.chosenSerial(0));
    QVERIFY(!t.chosenSerial(1));
    QVERIFY(!t.chosenSerial(2));
    QCOMPARE(plan.back(), std::string("ppp"));
    // The probes keep it so: kernel 1 is probed alone while kernel 0 keeps the pool.
    drive(t, 3, 4 * KernelThreading::kProbeEvery, times);
    QVERIFY(!t.chosenSerial(1));
  }

  /// Small kernels that gain alone only together (each finds its input in the calling core's
  /// cache when the one before ran alone): after the first of them, they run alone as a chain.
  void chainsOfSmallKernelsRunAlone() {
    KernelThreading t(4);
    auto times = [](size_t k, bool serial, int64_t, bool previousSerial) {
      if (k == 0)
        return serial ? 200.0 : 100.0;
      return serial ? (previousSerial ? 6.0 : 13.0) : 12.0;
    };
    auto plan = drive(t, 4, KernelThreading::kCalibrationEnd + 1, times);
    QVERIFY(!t.chosenSerial(0));
    QVERIFY(!t.chosenSerial(1)); // after a kernel on the pool it gains nothing alone
    QVERIFY(t.chosenSerial(2));
    QVERIFY(t.chosenSerial(3));
    QCOMPARE(plan.back(), std::string("ppss"));
  }

  /// The choice follows the load: a kernel that went alone comes back to the pool once the
  /// probes find the pool at least as fast (median of the last three samples), and goes alone
  /// again when the pool slows down.
  void followsTheLoad() {
    KernelThreading t(1);
    // Pool slow during the calibration (a busy host), fast from run 20 on, slow again from 80.
    auto times = [](size_t, bool serial, int64_t run, bool) {
      if (serial)
        return 20.0;
      return run >= 20 && run < 80 ? 11.0 : 40.0;
    };
    drive(t, 1, KernelThreading::kCalibrationEnd + 1, times);
    QVERIFY(t.chosenSerial(0));
    drive(t, 1, 80 - KernelThreading::kCalibrationEnd - 1, times);
    QVERIFY(!t.chosenSerial(0)); // probe pairs at runs 29/30 and 61/62 saw 11 µs
    drive(t, 1, 50, times);
    QVERIFY(t.chosenSerial(0)); // pool medians of 40 µs again, probes at 93/94 and 125/126
  }

  /// A SerialScope makes fb_parallel_for run its body once on the calling thread; outside it
  /// the pool splits the range among its threads.
  void serialScopeKeepsLoopsOnTheCaller() {
    fb_set_num_threads(2);
    struct Ctx {
      std::atomic<int> calls{0};
      std::atomic<bool> otherThread{false};
      std::thread::id caller;
    } ctx;
    ctx.caller = std::this_thread::get_id();
    auto body = [](void* p, int64_t, int64_t) {
      auto* c = static_cast<Ctx*>(p);
      c->calls.fetch_add(1);
      if (std::this_thread::get_id() != c->caller)
        c->otherThread.store(true);
    };
    {
      SerialScope serial(true);
      fb_parallel_for(body, &ctx, 1000);
    }
    QCOMPARE(ctx.calls.load(), 1);
    QVERIFY(!ctx.otherThread.load());
    ctx.calls = 0;
    {
      SerialScope notSerial(false);
      fb_parallel_for(body, &ctx, 1000);
    }
    QCOMPARE(ctx.calls.load(), 2); // one contiguous chunk per thread
  }

  /// A model whose kernels include tiny ones, GEMM/convolution kernels with parallel work
  /// items and a loop nest parallel over rows (the second Softmax): every run, through
  /// calibration and probes, gives the same bits as a compile that always uses the pool.
  void modesComputeIdenticalResults() {
    const std::string text = R"(graph @g opset 17 {
  input %x : f32[1, 16, 20, 20]
  input %w1 : f32[32, 16, 3, 3]
  input %w2 : f32[32, 1, 3, 3]
  input %m : f32[400, 48]
  input %z : f32[256, 512]
  const %shape : i64[2] = dense<[32, 400]>
  %c : f32[1, 32, 20, 20] = Conv(%x, %w1) {pads = [1, 1, 1, 1]}
  %r : f32[1, 32, 20, 20] = Relu(%c)
  %d : f32[1, 32, 20, 20] = Conv(%r, %w2) {group = 32, pads = [1, 1, 1, 1]}
  %e : f32[1, 32, 20, 20] = Exp(%d)
  %f : f32[32, 400] = Reshape(%e, %shape)
  %y : f32[32, 48] = MatMul(%f, %m)
  %s : f32[32, 48] = Softmax(%y) {axis = 1}
  %sz : f32[256, 512] = Softmax(%z) {axis = 1}
  output %s
  output %sz
})";
    auto graph = parseGraph(text);
    QVERIFY2(graph.ok(), graph.ok() ? "" : graph.error().message().c_str());
    // Two input sets in turn: a run that skipped work would leave the other set's results
    // in the arena and differ.
    std::vector<std::vector<Tensor>> inputSets;
    for (uint64_t seed : {5u, 6u}) {
      auto inputs = makeRandomInputs(**graph, seed);
      QVERIFY(inputs.ok());
      for (Tensor& t : *inputs) // small values: Exp stays finite
        for (float& v : t.mutableData<float>())
          v *= 0.1f;
      inputSets.push_back(std::move(*inputs));
    }
    CompileOptions options;
    options.threads = 2;
    options.adaptiveThreads = false;
    auto pooled = CompiledModel::compile(**graph, options);
    QVERIFY2(pooled.ok(), pooled.ok() ? "" : pooled.error().message().c_str());
    options.adaptiveThreads = true;
    auto adaptive = CompiledModel::compile(**graph, options);
    QVERIFY(adaptive.ok());
    std::vector<std::vector<Tensor>> want;
    for (const auto& inputs : inputSets) {
      auto reference = (*pooled)->run(inputs);
      QVERIFY(reference.ok());
      want.push_back(std::move(*reference));
    }
    auto same = [](const Tensor& a, const Tensor& b) {
      return a.byteSize() == b.byteSize() &&
             std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
    };
    QVERIFY(!same(want[0][0], want[1][0]) && !same(want[0][1], want[1][1]));
    for (int r = 0; r < 3 * KernelThreading::kProbeEvery; ++r) {
      auto got = (*adaptive)->run(inputSets[size_t(r % 2)]);
      QVERIFY(got.ok());
      for (size_t o = 0; o < 2; ++o)
        QVERIFY2(
            same((*got)[o], want[size_t(r % 2)][o]),
            qPrintable(
                QString("run %1, output %2 differs from the pooled model's result").arg(r).arg(o)));
    }
  }
};

QTEST_MAIN(TestKernelThreading)
#include "TestKernelThreading.moc"
