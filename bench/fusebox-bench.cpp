// fusebox-bench: Fusebox CPU latency next to ONNX Runtime's for GEMM 256/512/1024 and ONNX
// models, with the machine's measured peak FP32 FLOP/s and GEMM efficiency (bench/run.sh).
#include "codegen/exec/CompiledModel.h"
#include "codegen/gemm/GemmEmitter.h"
#include "tests/support/GemmHarness.h"
#include "codegen/runtime/RuntimeAbi.h"
#include "core/ModelIO.h"
#include "core/RandomInputs.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace fb;
using namespace fb::cg;

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Options {
  int threads = 2;
  int runs = 20;
  int warmup = 15; ///< runs 3..14 also measure each kernel on the pool and alone
  /// With --ort-cmd: each model is timed this many times, ONNX Runtime right before Fusebox
  /// each time; a column is the median of its rounds' medians (best: the minimum of all).
  int rounds = 1;
  std::vector<int64_t> sizes = {256, 512, 1024};
  std::string ortFile;      ///< lines "<model path>\t<median ms>\t<min ms>"
  /// A command that times ONNX Runtime on the models appended to it and prints such lines
  /// (run.sh: node scripts/bench_ort.js ...): run for each model right before Fusebox times it,
  /// so that both columns of a row come from the same minute of a shared, drifting machine.
  std::string ortCommand;
  std::string gemmModelDir; ///< where run.sh wrote gemm_<n>.onnx (ORT rows are matched by name)
  std::vector<std::string> models; ///< ONNX models for per-model rows
  std::string dumpIr;              ///< write the last GEMM kernel's LLVM IR here
  /// Also compile each model for this CPU (an LLVM name: "znver2", "haswell"): its code path
  /// (AVX2 only, say) timed on this host in a second column.
  std::string cpu;
  /// Also time each model's quantized pipeline (kInt8Pipeline, the int8 kernels) in a row
  /// named `<model>.int8.onnx`, the name run.sh gives ONNX Runtime's copy of that export.
  bool int8 = false;
};

/// The pipeline of the int8 rows: the same as `fusebox-opt M -p ... -o M.int8.onnx` in run.sh.
constexpr const char* kInt8Pipeline =
    "canonicalize,fold-batchnorm,quantize{samples=4,eval=0},lower-quantized";

/// Twelve independent FMA chains (more than latency × ports) on `Lanes`-float vectors: the FP32
/// peak of one core. Compiled for AVX2+FMA (8 lanes) or AVX-512F (16) whatever the build's
/// baseline; the caller picks the widest the host runs.
#define FB_FMA_LOOP(NAME, TARGET, VEC, SET1, FMADD, ADD, STORE, LANES)                             \
  __attribute__((target(TARGET))) double NAME(int64_t iterations) {                                \
    /* Twelve named accumulators: an array would be kept in memory at -O2. */                      \
    VEC a0 = SET1(0.0f), a1 = SET1(0.1f), a2 = SET1(0.2f), a3 = SET1(0.3f), a4 = SET1(0.4f);       \
    VEC a5 = SET1(0.5f), a6 = SET1(0.6f), a7 = SET1(0.7f), a8 = SET1(0.8f), a9 = SET1(0.9f);       \
    VEC a10 = SET1(1.0f), a11 = SET1(1.1f);                                                        \
    const VEC m = SET1(0.999999f), c = SET1(1e-7f);                                                \
    for (int64_t it = 0; it < iterations; ++it) {                                                  \
      a0 = FMADD(a0, m, c);                                                                        \
      a1 = FMADD(a1, m, c);                                                                        \
      a2 = FMADD(a2, m, c);                                                                        \
      a3 = FMADD(a3, m, c);                                                                        \
      a4 = FMADD(a4, m, c);                                                                        \
      a5 = FMADD(a5, m, c);                                                                        \
      a6 = FMADD(a6, m, c);                                                                        \
      a7 = FMADD(a7, m, c);                                                                        \
      a8 = FMADD(a8, m, c);                                                                        \
      a9 = FMADD(a9, m, c);                                                                        \
      a10 = FMADD(a10, m, c);                                                                      \
      a11 = FMADD(a11, m, c);                                                                      \
    }                                                                                              \
    VEC sum = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                   \
    sum = ADD(sum, ADD(ADD(a8, a9), ADD(a10, a11)));                                               \
    alignas(64) float lanes[LANES];                                                                \
    STORE(lanes, sum);                                                                             \
    return double(lanes[0]);                                                                       \
  }
FB_FMA_LOOP(fmaLoop8, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps,
            _mm256_store_ps, 8)
FB_FMA_LOOP(fmaLoop16, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps,
            _mm512_store_ps, 16)
#undef FB_FMA_LOOP

/// Floats per FMA of the widest vectors the host runs: 16 with AVX-512F, else 8.
int peakLanes() {
  static const int lanes = __builtin_cpu_supports("avx512f") ? 16 : 8;
  return lanes;
}

/// The measured peak FP32 GFLOP/s of `threads` cores running the FMA loop at once: the best of
/// many short (~5 ms) windows, so that on a shared machine it is measured like the best GEMM
/// runs.
double measurePeakGflops(int threads) {
  const int64_t iterations = 1'000'000;
  const int lanes = peakLanes();
  double best = 0;
  std::atomic<double> sink{0};
  for (int rep = 0; rep < 60; ++rep) {
    std::vector<std::thread> pool;
    auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        sink.store(sink.load() + (lanes == 16 ? fmaLoop16(iterations) : fmaLoop8(iterations)));
      });
    for (auto& th : pool)
      th.join();
    double seconds = msSince(t0) / 1e3;
    best = std::max(best, double(threads) * double(iterations) * 12 * lanes * 2 / seconds / 1e9);
  }
  if (sink.load() == 12345.0)
    std::printf(" ");
  return best;
}

/// Median and minimum of `runs` timed calls after `warmup` untimed ones, in ms.
std::pair<double, double> timeIt(const std::function<void()>& fn, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i)
    fn();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    fn();
    times.push_back(msSince(t0));
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], times.front()};
}

/// The median of `v` (the lower middle one of an even count); NaN when empty.
double medianOf(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

std::vector<float> randomVector(int64_t n, uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v)
    x = float(rng.uniform() * 2 - 1);
  return v;
}

struct Row {
  std::string name;
  double fuseboxMs = NAN, bestMs = NAN, ortMs = NAN, flops = 0, compileMs = NAN;
  double cpuMs = NAN; ///< the median compiled for Options::cpu
  std::string note;
};

/// C = A·W for n×n operands with W constant (packed at compile time), like a MatMul whose
/// weights are an initializer, which is what ORT is given too.
Row benchGemm(GemmHarness& harness, int64_t n, const Options& o) {
  Row row;
  row.name = "gemm " + std::to_string(n);
  row.flops = 2.0 * double(n) * double(n) * double(n);
  std::vector<float> a = randomVector(n * n, 1), w = randomVector(n * n, 2), c(size_t(n * n));
  Kernel k;
  k.name = "bench_gemm" + std::to_string(n);
  k.opSummary = "MatMul";
  for (const char* name : {"a", "w", "c"}) {
    KernelArg arg;
    arg.role = std::strcmp(name, "c") == 0 ? KernelArg::Role::Output : KernelArg::Role::Input;
    arg.name = name;
    arg.sizes = {n, n};
    arg.bytes = n * n * 4;
    k.args.push_back(arg);
  }
  k.args[1].role = KernelArg::Role::Weight;
  GemmSpec s;
  s.M = s.N = s.K = n;
  s.aArg = 0;
  s.bArg = 1;
  s.cArg = 2;
  s.aRowStride = s.bRowStride = s.cRowStride = n;
  s.constantB = Tensor::fromVector<float>({n, n}, w);
  k.gemm = s;
  auto t0 = Clock::now();
  auto fn = harness.compile(k);
  row.compileMs = msSince(t0);
  if (!fn) {
    row.note = fn.error().message();
    return row;
  }
  std::vector<void*> args = {
      a.data(), w.data(), c.data(),
      const_cast<std::byte*>(k.args[size_t(k.gemm->packedBArg)].data->rawData())};
  FbKernelFn kernel = *fn;
  auto [median, best] = timeIt([&] { kernel(args.data()); }, o.warmup, o.runs);
  row.fuseboxMs = median;
  row.bestMs = best;
  // A benchmark of wrong code is worthless: check a sample of entries against a double dot.
  SeededRandom rng(3);
  for (int probe = 0; probe < 64; ++probe) {
    int64_t i = int64_t(rng.next() % uint64_t(n)), j = int64_t(rng.next() % uint64_t(n));
    double ref = 0, mag = 0;
    for (int64_t kk = 0; kk < n; ++kk) {
      ref += double(a[size_t(i * n + kk)]) * w[size_t(kk * n + j)];
      mag += std::abs(double(a[size_t(i * n + kk)]) * w[size_t(kk * n + j)]);
    }
    if (std::abs(ref - c[size_t(i * n + j)]) > 1e-6 * double(n) * mag + 1e-5) {
      row.note = "WRONG RESULT at (" + std::to_string(i) + ", " + std::to_string(j) + ")";
      row.fuseboxMs = NAN;
      break;
    }
  }
  return row;
}

/// A model through the -O3 graph pipeline (or, with `int8`, kInt8Pipeline) and the CPU
/// executor.
Row benchModel(const std::string& path, const Options& o, bool int8 = false,
               const std::function<double()>& ortRound = {}) {
  Row row;
  row.name = path.substr(path.find_last_of('/') + 1);
  if (int8)
    row.name = row.name.substr(0, row.name.rfind(".onnx")) + ".int8.onnx";
  auto graph = loadModel(path);
  if (!graph) {
    row.note = graph.error().message();
    return row;
  }
  auto steps = int8 ? parsePipeline(kInt8Pipeline) : namedPipeline("O3");
  if (!steps) {
    row.note = steps.error().message();
    return row;
  }
  PipelineResult pipeline = PassManager().run(std::move(graph).value(), *steps);
  if (pipeline.error) {
    row.note = pipeline.error->message();
    return row;
  }
  CompileOptions options;
  options.threads = o.threads;
  auto t0 = Clock::now();
  auto model = CompiledModel::compile(pipeline.finalGraph(), options);
  row.compileMs = msSince(t0);
  if (!model) {
    row.note = model.error().message();
    return row;
  }
  for (const Kernel& k : (*model)->kernels())
    row.flops += k.flops;
  auto inputs = makeRandomInputs((*model)->graph(), 7);
  if (!inputs) {
    row.note = inputs.error().message();
    return row;
  }
  std::string failure;
  auto timeModel = [&](CompiledModel& m) {
    return timeIt(
        [&] {
          auto out = m.run(*inputs);
          if (!out && failure.empty())
            failure = out.error().message();
        },
        o.warmup, o.runs);
  };
  // The same graph for another CPU's code path, timed on this host. When that code cannot be
  // compiled or run here (znver2's AMD-only instructions on an Intel host), the row keeps
  // this host's columns and says why the other is empty.
  std::unique_ptr<CompiledModel> other;
  if (!o.cpu.empty()) {
    auto target = TargetInfo::forCpu(o.cpu);
    if (!target) {
      row.note = target.error().message();
      return row;
    }
    options.target = *target;
    auto compiled = CompiledModel::compile(pipeline.finalGraph(), options);
    if (compiled)
      other = std::move(compiled).value();
    else
      row.note = o.cpu + ": " + compiled.error().message();
  }
  // Rounds alternate ONNX Runtime and Fusebox, so that a load that comes and goes on a shared
  // machine meets both columns alike.
  std::vector<double> ortMedians, medians, cpuMedians;
  for (int round = 0; round < std::max(1, o.rounds); ++round) {
    if (ortRound)
      if (double ms = ortRound(); !std::isnan(ms))
        ortMedians.push_back(ms);
    auto [median, best] = timeModel(**model);
    if (!failure.empty()) {
      row.note = failure;
      return row;
    }
    medians.push_back(median);
    row.bestMs = std::isnan(row.bestMs) ? best : std::min(row.bestMs, best);
    if (other) {
      cpuMedians.push_back(timeModel(*other).first);
      if (!failure.empty()) {
        row.note = o.cpu + ": " + failure;
        failure.clear();
        cpuMedians.clear();
        other.reset();
      }
    }
  }
  row.fuseboxMs = medianOf(medians);
  row.ortMs = medianOf(ortMedians);
  row.cpuMs = medianOf(cpuMedians);
  return row;
}

void readOrtResults(std::istream& in, std::map<std::string, double>& out) {
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string path;
    double median = NAN;
    if (std::getline(ls, path, '\t') && ls >> median) {
      // By path (two models may share a file name: the zoo's squeezenet1_0.onnx and
      // torchvision's), and by file name for copies written elsewhere (the int8 exports).
      out[path] = median;
      out[path.substr(path.find_last_of('/') + 1)] = median;
    }
  }
}

std::map<std::string, double> readOrtResults(const std::string& file) {
  std::map<std::string, double> out;
  std::ifstream in(file);
  readOrtResults(in, out);
  return out;
}

/// Runs `command 'model'` and adds the ORT results it prints to `out`; a failure leaves the
/// row's ORT column empty ("-") and says so on stderr.
void runOrt(const std::string& command, const std::string& model,
            std::map<std::string, double>& out) {
  std::string quoted = "'";
  for (char c : model)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* pipe = popen((command + " " + quoted).c_str(), "r");
  if (!pipe) {
    std::fprintf(stderr, "fusebox-bench: cannot run %s\n", command.c_str());
    return;
  }
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe))
    text.append(buf, n);
  if (int rc = pclose(pipe); rc != 0)
    std::fprintf(stderr, "fusebox-bench: ONNX Runtime on %s: exit status %d\n", model.c_str(), rc);
  std::istringstream in(text);
  readOrtResults(in, out);
}

bool parseOptions(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--threads")
      o.threads = std::max(1, std::atoi(next().c_str()));
    else if (a == "--runs")
      o.runs = std::max(1, std::atoi(next().c_str()));
    else if (a == "--warmup")
      o.warmup = std::max(0, std::atoi(next().c_str()));
    else if (a == "--rounds")
      o.rounds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--ort")
      o.ortFile = next();
    else if (a == "--ort-cmd")
      o.ortCommand = next();
    else if (a == "--dump-ir")
      o.dumpIr = next();
    else if (a == "--cpu")
      o.cpu = next();
    else if (a == "--int8")
      o.int8 = true;
    else if (a == "--sizes") {
      o.sizes.clear();
      std::istringstream ss(next());
      std::string part;
      while (std::getline(ss, part, ','))
        o.sizes.push_back(std::atoll(part.c_str()));
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "usage: fusebox-bench [--threads N] [--runs N] [--warmup N] [--rounds N]\n"
          "                     [--sizes 256,512,1024]\n"
          "                     [--ort ORT_RESULTS.tsv] [--ort-cmd COMMAND] [--dump-ir FILE]\n"
          "                     [--cpu NAME] [--int8]\n"
          "                     [MODEL.onnx...]\n"
          "Prints Fusebox CPU latency (median of --runs after --warmup) beside ONNX Runtime's\n"
          "(from scripts/bench_ort.js output: a file, or --ort-cmd run on each model right\n"
          "before Fusebox times it; with --rounds N, N times in turn, and each column is the\n"
          "median of its rounds' medians), the measured peak FP32 FLOP/s and GEMM\n"
          "efficiency. --cpu NAME adds a column for each model compiled for that CPU's code\n"
          "path (znver2, haswell: AVX2 without AVX-512), timed on this host. --int8 adds a\n"
          "row per model for its quantized pipeline (quantize, lower-quantized: int8 kernels),\n"
          "named <model>.int8.onnx like the export ONNX Runtime is given.\n"
          "bench/run.sh runs everything in one command.\n");
      return false;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "fusebox-bench: unknown option %s (see --help)\n", a.c_str());
      std::exit(2);
    } else
      o.models.push_back(a);
  }
  return true;
}

std::string fmt(double v, const char* f) {
  if (std::isnan(v))
    return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parseOptions(argc, argv, o))
    return 0;
  std::map<std::string, double> ort =
      o.ortFile.empty() ? std::map<std::string, double>{} : readOrtResults(o.ortFile);

  double peak = measurePeakGflops(o.threads);
  double peak1 = measurePeakGflops(1);
  std::printf(
      "Machine: %u hardware threads; measured peak FP32 (%s FMA): %.1f GFLOP/s on %d threads "
      "(%.1f on 1)\n",
      std::thread::hardware_concurrency(), peakLanes() == 16 ? "AVX-512" : "AVX2", peak, o.threads,
      peak1);
  std::printf("Fusebox and ONNX Runtime: %d threads, median of %d runs after %d warm-up runs",
              o.threads, o.runs, o.warmup);
  if (o.rounds > 1 && !o.ortCommand.empty())
    std::printf("; median of %d alternating rounds", o.rounds);
  std::printf("\n\n");

  fb_set_num_threads(o.threads);
  auto harness = GemmHarness::create();
  if (!harness) {
    std::fprintf(stderr, "fusebox-bench: %s\n", harness.error().message().c_str());
    return 1;
  }
  std::vector<Row> rows;
  for (int64_t n : o.sizes) {
    Row r = benchGemm(**harness, n, o);
    auto it = ort.find("gemm_" + std::to_string(n) + ".onnx");
    if (it != ort.end())
      r.ortMs = it->second;
    rows.push_back(r);
  }
  if (!o.dumpIr.empty())
    std::ofstream(o.dumpIr) << (*harness)->lastIr();
  for (const std::string& m : o.models) {
    for (bool int8 : {false, true}) {
      if (int8 && !o.int8)
        continue;
      std::function<double()> ortRound;
      if (!int8 && !o.ortCommand.empty())
        ortRound = [&] {
          std::map<std::string, double> round;
          runOrt(o.ortCommand, m, round);
          auto it = round.find(m);
          return it == round.end() ? NAN : it->second;
        };
      Row r = benchModel(m, o, int8, ortRound);
      if (std::isnan(r.ortMs)) {
        auto it = int8 ? ort.end() : ort.find(m);
        if (it == ort.end())
          it = ort.find(r.name);
        if (it != ort.end())
          r.ortMs = it->second;
      }
      rows.push_back(r);
    }
  }

  // With --cpu: two more columns, that CPU's code path's median and its ratio to ORT.
  const bool other = !o.cpu.empty();
  const std::string otherMs = o.cpu + " ms", otherRatio = o.cpu + "/ORT";
  std::printf("| %-26s | %10s | %8s | %8s | %11s |", "workload", "Fusebox ms", "best ms", "ORT ms",
              "Fusebox/ORT");
  if (other)
    std::printf(" %12s | %12s |", otherMs.c_str(), otherRatio.c_str());
  std::printf(" %8s | %7s | %8s | %7s |\n", "GFLOP/s", "% peak", "best %", "compile");
  std::printf("|%s|%s|%s|%s|%s|", std::string(28, '-').c_str(), std::string(12, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str(),
              std::string(13, '-').c_str());
  if (other)
    std::printf("%s|%s|", std::string(14, '-').c_str(), std::string(14, '-').c_str());
  std::printf("%s|%s|%s|%s|\n", std::string(10, '-').c_str(), std::string(9, '-').c_str(),
              std::string(10, '-').c_str(), std::string(9, '-').c_str());
  for (const Row& r : rows) {
    double gflops = r.flops > 0 && !std::isnan(r.fuseboxMs) ? r.flops / (r.fuseboxMs * 1e6) : NAN;
    double bestGflops = r.flops > 0 && !std::isnan(r.bestMs) ? r.flops / (r.bestMs * 1e6) : NAN;
    std::printf("| %-26s | %10s | %8s | %8s | %11s |", r.name.c_str(),
                fmt(r.fuseboxMs, "%.3f").c_str(), fmt(r.bestMs, "%.3f").c_str(),
                fmt(r.ortMs, "%.3f").c_str(), fmt(r.fuseboxMs / r.ortMs, "%.2fx").c_str());
    if (other)
      std::printf(" %12s | %12s |", fmt(r.cpuMs, "%.3f").c_str(),
                  fmt(r.cpuMs / r.ortMs, "%.2fx").c_str());
    std::printf(" %8s | %7s | %8s | %7s |%s%s\n", fmt(gflops, "%.1f").c_str(),
                fmt(100.0 * gflops / peak, "%.1f%%").c_str(),
                fmt(100.0 * bestGflops / peak, "%.1f%%").c_str(),
                fmt(r.compileMs, "%.0f ms").c_str(), r.note.empty() ? "" : "  ", r.note.c_str());
  }
  return 0;
}
