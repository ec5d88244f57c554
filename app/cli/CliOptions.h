// Command-line options of fusebox-opt (the contract in shared/CLI.md) and their parser.
#pragma once

#include "core/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fb::cli {

/// Everything fusebox-opt was asked to do.
struct CliOptions {
  std::string model;
  bool help = false;
  bool json = false;

  // Pipeline.
  std::vector<std::string> passes;
  std::string optLevel; // "O0".."O3" or empty
  bool listPasses = false;
  std::optional<int64_t> passLimit;
  /// The last pass application stops after this many rewrites (--rewrite-limit).
  std::optional<int64_t> rewriteLimit;
  bool printIr = false;
  bool printAfterAll = false;
  bool printAfterChange = false;
  bool timing = false;
  std::string outputFile;
  /// Pass names to skip (--disable-pass NAME, repeatable).
  std::vector<std::string> disabledPasses;
  /// Interpreter before vs after every pass (--numeric-check).
  bool numericCheck = false;
  /// Where a failing pass's reproducer goes (--reproducer-dir).
  std::string reproducerDir;

  // Inspection.
  bool stats = false;
  std::string diff;
  /// Numeric diff of two snapshots (--numeric-diff I,J).
  std::string numericDiff;
  bool memoryPlan = false;

  // Running.
  bool run = false;
  std::string backend = "interp";
  /// True when --backend was given (--fuzz then checks that backend, else every available one).
  bool backendGiven = false;
  std::vector<std::string> inputs;
  std::optional<uint64_t> seed;
  std::string outputDir;
  bool compare = false;
  std::string tolerance;
  std::optional<int64_t> bench;
  std::optional<int64_t> threads;
  std::string profile;
  /// Schedule overrides of the cpu backend (--schedule 'k3:tile=32x64;k5:parallel=0').
  std::string schedule;
  /// LLVM optimization level of the cpu backend (--llvm-opt N, 0..3).
  int64_t llvmOpt = 3;
  /// Compile GEMM-class kernels from their loop nests, not the GEMM generator (--no-gemm).
  bool noGemm = false;
  /// Sizes for symbolic dims of inputs: --dim N=4.
  std::map<std::string, int64_t> dims;
  /// Measure schedule candidates per kernel and write the best to the tuning log (--tune).
  bool tune = false;
  /// Seconds the tuning search may take (--tune-budget; default 60).
  std::optional<double> tuneBudget;
  /// The tuning log that --tune writes and compilations read (--tuning-log FILE; "off": none;
  /// empty: the default next to the kernel cache).
  std::string tuningLog;

  // Code and debugging (later issues).
  std::string emit;
  std::string target = "host";
  /// --cpu NAME: compile for another x86-64 CPU (znver2, haswell, ...).
  std::string cpu;
  bool bisect = false;
  std::string reduce;
  std::string replay;
  /// --replay without the reproducer's recorded faults (--without-faults): does the fault
  /// make it fail?
  bool withoutFaults = false;
  /// --inject-fault, once per occurrence (each a name or a comma list).
  std::vector<std::string> injectFaults;
  bool listFaults = false;
  std::optional<int64_t> fuzz;
  /// Where --fuzz writes the reproducers of its findings (--fuzz-out DIR).
  std::string fuzzOut;

  /// Options given that this build does not implement yet, for a clear error.
  std::vector<std::string> notImplemented;
};

/// Parses argv. Errors name the option.
Expected<CliOptions> parseCliOptions(int argc, char** argv);

/// The --help text.
std::string cliUsage();

} // namespace fb::cli
