// Parsing of fusebox-opt's command line.
#include "app/cli/CliOptions.h"

#include <charconv>
#include <cstdlib>
#include <functional>
#include <sstream>

namespace fb::cli {

namespace {

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0; // commas inside {...} belong to pass options
  for (char c : s) {
    if (c == '{')
      ++depth;
    if (c == '}')
      --depth;
    if (c == ',' && depth == 0) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

Expected<int64_t> parseInt(const std::string& opt, const std::string& v) {
  int64_t x = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size())
    return makeError("option ", opt, " expects an integer, got '", v, "'");
  return x;
}

} // namespace

Expected<CliOptions> parseCliOptions(int argc, char** argv) {
  CliOptions o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string inlineValue;
    bool hasInline = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        inlineValue = a.substr(eq + 1);
        a = a.substr(0, eq);
        hasInline = true;
      }
    }
    auto value = [&]() -> Expected<std::string> {
      if (hasInline)
        return inlineValue;
      if (i + 1 >= args.size())
        return makeError("option ", a, " needs a value");
      return args[++i];
    };
    auto str = [&](std::string& dst) -> Status {
      FB_ASSIGN_OR_RETURN(dst, value());
      return Status::success();
    };
    auto integer = [&](std::optional<int64_t>& dst) -> Status {
      FB_ASSIGN_OR_RETURN(std::string v, value());
      FB_ASSIGN_OR_RETURN(int64_t x, parseInt(a, v));
      dst = x;
      return Status::success();
    };

    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "-p" || a == "--passes") {
      FB_ASSIGN_OR_RETURN(std::string v, value());
      for (auto& p : splitList(v))
        o.passes.push_back(p);
    } else if (a == "-O0" || a == "-O1" || a == "-O2" || a == "-O3") {
      o.optLevel = a.substr(1);
    } else if (a.size() > 3 && a[0] == '-' && a[1] == 'O' && a[3] == ',') {
      o.passes.push_back(a); // "-O2,plan-memory": a level followed by more passes
    } else if (a == "--list-passes") {
      o.listPasses = true;
    } else if (a == "--pass-limit") {
      FB_TRY(integer(o.passLimit));
      if (*o.passLimit < 0)
        return makeError("option --pass-limit expects a number of pass applications >= 0, got ",
                         *o.passLimit);
    } else if (a == "--print-ir") {
      o.printIr = true;
    } else if (a == "--print-after-all") {
      o.printAfterAll = true;
    } else if (a == "--print-after-change") {
      o.printAfterChange = true;
    } else if (a == "--timing") {
      o.timing = true;
    } else if (a == "--disable-pass") {
      FB_ASSIGN_OR_RETURN(std::string v, value());
      o.disabledPasses.push_back(v);
    } else if (a == "--numeric-check") {
      o.numericCheck = true;
    } else if (a == "--reproducer-dir") {
      FB_TRY(str(o.reproducerDir));
    } else if (a == "-o") {
      FB_TRY(str(o.outputFile));
    } else if (a == "--stats") {
      o.stats = true;
    } else if (a == "--diff") {
      FB_TRY(str(o.diff));
    } else if (a == "--numeric-diff") {
      FB_TRY(str(o.numericDiff));
    } else if (a == "--memory-plan") {
      o.memoryPlan = true;
    } else if (a == "--run") {
      o.run = true;
    } else if (a == "--backend") {
      FB_TRY(str(o.backend));
      o.backendGiven = true;
    } else if (a == "--inputs") {
      FB_ASSIGN_OR_RETURN(std::string v, value());
      o.inputs = splitList(v);
      if (o.inputs.empty())
        return makeError("option --inputs names no files (give one .npy or .pb per model input, "
                         "separated by commas)");
    } else if (a == "--seed") {
      std::optional<int64_t> s;
      FB_TRY(integer(s));
      o.seed = uint64_t(*s);
    } else if (a == "--output-dir") {
      FB_TRY(str(o.outputDir));
    } else if (a == "--compare") {
      o.compare = true;
    } else if (a == "--tolerance") {
      FB_TRY(str(o.tolerance));
    } else if (a == "--bench") {
      FB_TRY(integer(o.bench));
      if (*o.bench < 1 || *o.bench > 100000)
        return makeError("option --bench expects 1..100000 timed runs, got ", *o.bench);
    } else if (a == "--threads") {
      FB_TRY(integer(o.threads));
    } else if (a == "--profile") {
      FB_TRY(str(o.profile));
    } else if (a == "--schedule") {
      FB_TRY(str(o.schedule));
    } else if (a == "--tune") {
      o.tune = true;
    } else if (a == "--tune-budget") {
      FB_ASSIGN_OR_RETURN(std::string v, value());
      char* end = nullptr;
      double seconds = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(seconds > 0) || seconds > 1e6)
        return makeError("option --tune-budget expects a positive number of seconds, got '", v,
                         "'");
      o.tuneBudget = seconds;
    } else if (a == "--tuning-log") {
      FB_TRY(str(o.tuningLog));
      if (o.tuningLog.empty())
        return makeError("option --tuning-log expects a file name (or 'off')");
    } else if (a == "--llvm-opt") {
      std::optional<int64_t> level;
      FB_TRY(integer(level));
      if (*level < 0 || *level > 3)
        return makeError("option --llvm-opt expects 0..3, got ", *level);
      o.llvmOpt = *level;
    } else if (a == "--no-gemm") {
      o.noGemm = true;
    } else if (a == "--dim") {
      FB_ASSIGN_OR_RETURN(std::string v, value());
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        return makeError("option --dim expects NAME=SIZE, got '", v, "'");
      FB_ASSIGN_OR_RETURN(int64_t size, parseInt("--dim", v.substr(eq + 1)));
      if (size < 0)
        return makeError("option --dim: size of ", v.substr(0, eq), " must not be negative");
      o.dims[v.substr(0, eq)] = size;
    } else if (a == "--emit") {
      FB_TRY(str(o.emit));
    } else if (a == "--target") {
      FB_TRY(str(o.target));
    } else if (a == "--cpu") {
      FB_TRY(str(o.cpu));
    } else if (a == "--bisect") {
      o.bisect = true;
    } else if (a == "--reduce") {
      FB_TRY(str(o.reduce));
    } else if (a == "--replay") {
      FB_TRY(str(o.replay));
    } else if (a == "--without-faults") {
      o.withoutFaults = true;
    } else if (a == "--inject-fault") {
      std::string list;
      FB_TRY(str(list));
      o.injectFaults.push_back(list);
    } else if (a == "--rewrite-limit") {
      FB_TRY(integer(o.rewriteLimit));
      if (*o.rewriteLimit < 0)
        return makeError("option --rewrite-limit expects a number of rewrites >= 0, got ",
                         *o.rewriteLimit);
    } else if (a == "--list-faults") {
      o.listFaults = true;
    } else if (a == "--fuzz") {
      FB_TRY(integer(o.fuzz));
      if (*o.fuzz < 1 || *o.fuzz > 100000000)
        return makeError("option --fuzz expects a number of graphs >= 1, got ", *o.fuzz);
    } else if (a == "--fuzz-out") {
      FB_TRY(str(o.fuzzOut));
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return makeError("unknown option '", a, "' (see --help)");
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      return makeError("more than one model given: '", o.model, "' and '", a, "'");
    }
  }
  return o;
}

std::string cliUsage() {
  return R"(usage: fusebox-opt MODEL [options]        MODEL: .onnx or .fbir

Pipeline
  -p, --passes LIST        comma-separated pass names, applied in order
  -O0 | -O1 | -O2 | -O3    named pipelines (documented by --list-passes)
  --list-passes            every pass: name, one-line description and declared options
  --pass-limit N           stop after N pass applications
  --rewrite-limit N        the last pass application stops after its N-th rewrite
  --print-ir               print the resulting IR as text (the default output)
  --print-after-all        print the IR after every pass
  --print-after-change     print the IR after every pass that changed it
  --timing                 wall time per pass
  -o FILE                  write the resulting model (.onnx or .fbir, by extension)
  --disable-pass NAME      skip this pass wherever it appears (repeatable)
  --numeric-check          run the interpreter before and after every pass (max abs in --timing)
  --reproducer-dir DIR     where a failing pass writes its reproducer (default: temp dir)

Inspection
  --stats                  nodes, ops, parameters, FLOPs, bytes moved, peak activation memory
  --diff I,J               structural diff of snapshots I and J of this pipeline, then the
                           unified diff of their printed IR
  --numeric-diff I,J       run snapshots I and J on the same inputs, compare every matched
                           value and name the first divergent node
  --memory-plan            the plan after plan-memory

Running
  --run                    run the resulting model
  --backend B              interp (default) | cpu | gpu
  --inputs F1,F2,...       inputs as .npy or ONNX TensorProto .pb files, in graph order
  --seed N                 random inputs from seed N where no --inputs are given
  --dim NAME=SIZE          bind a symbolic input dim before the pipeline (random inputs
                           use 1 for unbound symbols)
  --output-dir DIR         write outputs as .npy
  --compare                compare the imported model (interpreter) with the result on --backend
  --tolerance A[,R]        absolute and relative tolerance for --compare
  --bench N                N timed runs after warm-up
  --threads N              worker threads for the cpu backend
  --profile FILE.json      per-kernel profile as Chrome trace JSON, and a per-kernel table
  --schedule SPEC          schedule overrides by kernel, 'k3:tile=32x64,vectorize=8;k5:none';
                           gpu: 'k3:block=128,regtile=2'
  --llvm-opt N             cpu: LLVM optimization level 0..3 (default 3)
  --no-gemm                cpu: compile MatMul/Gemm/Conv from loop nests, not the GEMM generator
  --tune                   cpu: measure schedule candidates per kernel (hottest first), keep
                           those >= 3% faster (median) with unchanged outputs, print default
                           vs tuned time per kernel and write them to the tuning log
  --tune-budget SECONDS    --tune: wall time of the search (default 60), split over kernels
                           by their share of the default time
  --tuning-log FILE        the tuning log --tune writes and every cpu compilation reads
                           (default: tuning-log.json next to the kernel cache,
                           $XDG_CACHE_HOME/fusebox or ~/.cache/fusebox; 'off': none)

Code
  --emit KIND              loops | llvm | llvm-raw | asm | ptx | obj ; print (or with -o
                           write) the generated code; obj writes -o FILE.o and FILE.h
  --target T               host (default) | sm_80 | sm_90 | ... ; an sm_NN target makes
                           --emit loops/llvm/llvm-raw the GPU schedule's code, --emit ptx
                           that GPU's PTX (default: this machine's GPU, else sm_80), and
                           --backend gpu compile for it
  --cpu NAME               cpu: compile for another x86-64 CPU (znver2, haswell, ...)

Debugging
  --bisect                 find the first pass application, the first rewrite inside it, or
                           the first compiled kernel after which --compare fails (exit 1)
  --inject-fault NAME      turn on a built-in fault (repeatable, or a comma list)
  --list-faults            the built-in faults: name, where, what goes wrong
  --reduce FILE.fbir       shrink the model (delta debugging over its nodes) to a small
                           sub-graph that still fails --compare under the pipeline, --backend
                           and --tolerance; writes it with its inputs (FILE.inK.npy) and
                           settings as a reproducer (exit 1: the reproducer fails)
  --replay FILE.fbir       re-run a reproducer: its pipeline, backend, tolerance, faults and
                           inputs (no MODEL); exit 1 when it still fails, 0 when it passes
  --without-faults         --replay with the reproducer's recorded faults off
  --fuzz N                 N random valid graphs (no MODEL) through every -O level, each run
                           on --backend (default: interp, cpu, and gpu where available) and
                           compared with the interpreter; graph i from seed --seed + i; one
                           line per finding, then a summary; exit 1 on findings
  --fuzz-out DIR           --fuzz: write each finding's graph (.fbir) and inputs (.npy) here

Every report option also takes --json (one JSON object on stdout).
Errors go to stderr prefixed 'error:' and exit non-zero.
)";
}

} // namespace fb::cli
