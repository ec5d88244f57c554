// fusebox-opt's cpu backend: compile options from flags, --emit views, --bench statistics.
#include "app/cli/CpuBackend.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/llvm/KernelCache.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "codegen/loops/LoopPrinter.h"

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fb::cli {

cg::CompileOptions cpuCompileOptions(const CliOptions& o, const std::vector<Tensor>& inputs) {
  cg::CompileOptions co;
  co.llvmOptLevel = int(o.llvmOpt);
  co.threads = o.threads ? int(*o.threads) : 0;
  co.lower.scheduleOverrides = o.schedule;
  co.emit.useGemm = !o.noGemm;
  co.lower.gemmSpecs = !o.noGemm;
  co.dims = o.dims;
  for (const Tensor& t : inputs)
    co.inputSizes.push_back(t.sizes());
  co.specializeInputs = inputs;
  return co;
}

Expected<std::unique_ptr<cg::CompiledModel>> compileForCpu(const Graph& g, const CliOptions& o,
                                                           const std::vector<Tensor>& inputs) {
  // Compiled kernels persist across runs of fusebox-opt (FUSEBOX_KERNEL_CACHE=off disables).
  cg::KernelCache::global().setDirectory(cg::KernelCache::defaultDirectory());
  return cg::CompiledModel::compile(g, cpuCompileOptions(o, inputs));
}

namespace {

Status writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    return makeError(path, ": cannot open for writing");
  f << text;
  if (!f)
    return makeError(path, ": write failed");
  return Status::success();
}

std::string guardName(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string(), g;
  for (char c : stem)
    g += std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(static_cast<unsigned char>(c))) : '_';
  return "FUSEBOX_" + g + "_H";
}

} // namespace

Status emitCode(const Graph& g, const CliOptions& o, std::ostream& out) {
  const std::string& kind = o.emit;
  if (kind == "ptx")
    return makeUnsupported("--emit ptx: the gpu backend is not available in this build");
  if (kind != "loops" && kind != "llvm" && kind != "llvm-raw" && kind != "obj")
    return makeError("--emit expects loops, llvm, llvm-raw, obj or ptx, got '", kind, "'");
  if (o.target.rfind("sm_", 0) == 0)
    return makeUnsupported("--target ", o.target, ": the gpu backend is not available in this build");
  cg::CompileOptions co = cpuCompileOptions(o, {});
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> bound, cg::bindStaticShapes(g, {}, co.dims));
  FB_ASSIGN_OR_RETURN(std::vector<cg::Kernel> kernels, cg::lowerGraph(*bound, co.lower));
  if (kind == "loops") {
    // Pack as the backend will, so GEMM kernels also show the blocking they compile with.
    FB_TRY(cg::prepareKernels(kernels, co.emit.useGemm));
    std::string text = cg::printKernels(kernels);
    if (!o.outputFile.empty())
      return writeText(o.outputFile, text);
    out << text;
    return Status::success();
  }
  FB_TRY(cg::prepareKernels(kernels, co.emit.useGemm));
  cg::TargetInfo target = cg::TargetInfo::host();
  if (o.target != "host") {
    FB_ASSIGN_OR_RETURN(target, cg::TargetInfo::forCpu(o.target));
  }
  int level = kind == "llvm-raw" ? -1 : int(o.llvmOpt);
  std::string name = std::filesystem::path(o.model).stem().string();
  if (kind == "obj") {
    FB_ASSIGN_OR_RETURN(cg::JitModule m, cg::buildModelModule(kernels, name, target, co.emit, level));
    if (o.outputFile.empty())
      return makeError("--emit obj needs -o FILE.o (the header goes next to it as FILE.h)");
    FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                        cg::createTargetMachine(target, std::max(level, 0)));
    FB_ASSIGN_OR_RETURN(std::string object, cg::compileToObject(*m.module, *tm));
    FB_TRY(cg::writeBinaryFile(o.outputFile, object));
    std::string header = std::filesystem::path(o.outputFile).replace_extension(".h").string();
    std::string weightsPath =
        std::filesystem::path(o.outputFile).replace_extension(".weights").string();
    cg::WeightBlob weights = cg::packWeights(kernels);
    FB_TRY(cg::writeBinaryFile(weightsPath, weights.bytes));
    FB_TRY(writeText(header, cg::kernelHeaderText(kernels, guardName(o.outputFile), weights,
                                                  std::filesystem::path(weightsPath).filename().string())));
    out << "wrote " << o.outputFile << " (" << object.size() << " bytes, " << kernels.size()
        << " kernels, " << target.cpu << "), " << header << " and " << weightsPath << " ("
        << weights.bytes.size() << " bytes)\n";
    return Status::success();
  }
  FB_ASSIGN_OR_RETURN(std::string ir, cg::modelLlvmText(kernels, name, target, co.emit, level));
  std::string text = "; fusebox-opt --emit " + kind + ":" + ir.substr(1);
  if (!o.outputFile.empty())
    return writeText(o.outputFile, text);
  out << text;
  return Status::success();
}

BenchStats benchStats(std::vector<double> timesMs, double compileMs, int threads) {
  BenchStats s;
  s.runs = int(timesMs.size());
  s.compileMs = compileMs;
  s.threads = threads;
  if (timesMs.empty())
    return s;
  std::sort(timesMs.begin(), timesMs.end());
  size_t n = timesMs.size();
  s.medianMs = n % 2 ? timesMs[n / 2] : 0.5 * (timesMs[n / 2 - 1] + timesMs[n / 2]);
  s.minMs = timesMs.front();
  s.maxMs = timesMs.back();
  double sum = 0;
  for (double t : timesMs)
    sum += t;
  s.meanMs = sum / double(n);
  return s;
}

std::string benchText(const std::string& backend, const BenchStats& s) {
  char line[256];
  std::snprintf(line, sizeof line,
                "bench (%s, %d runs, %d thread(s)): median %.4f ms, min %.4f ms, max %.4f ms, "
                "mean %.4f ms; compile %.1f ms\n",
                backend.c_str(), s.runs, s.threads, s.medianMs, s.minMs, s.maxMs, s.meanMs,
                s.compileMs);
  return line;
}

void writeBenchJson(JsonWriter& w, const std::string& backend, const BenchStats& s,
                    bool writeBackend) {
  if (writeBackend)
    w.field("backend", backend);
  w.field("runs", s.runs);
  w.field("median_ms", s.medianMs);
  w.field("min_ms", s.minMs);
  w.field("max_ms", s.maxMs);
  w.field("mean_ms", s.meanMs);
  w.field("compile_ms", s.compileMs);
  w.field("threads", s.threads);
}

std::string compileSummary(const cg::CompileStats& s) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line,
                "compiled %d kernels (%d gemm, %d distinct) in %.1f ms (lower %.1f, emit %.1f, "
                "jit %.1f [optimize %.1f + codegen %.1f cpu-ms]; %d from cache); arena %lld "
                "bytes%s\n",
                s.kernels, s.gemmKernels, s.distinctKernels, s.totalMs, s.lowerMs, s.emitMs, s.jitMs, s.optimizeMs,
                s.codegenMs, s.cacheHits,
                (long long)s.arenaBytes, s.memoryPlanUsed ? "" : " (no memory plan)");
  os << line;
  for (const std::string& n : s.notes)
    os << "note: " << n << "\n";
  return os.str();
}

} // namespace fb::cli
