// fusebox-conformance: runs the ONNX backend node tests through the importer and the interpreter
// or the CPU backend.
//
// Usage: fusebox-conformance DIR [--backend interp|cpu] [--pipeline P] [--skip-list FILE]
//                                [--filter REGEX] [--verbose] [--list-failures]
//                                [--timeout SECONDS] [--no-fork]
//
// DIR holds one folder per case (model.onnx, test_data_set_*/input_N.pb, output_N.pb), as written
// by `onnx.backend.test.cmd_tools generate-data` under its node/ folder. A case passes when every
// output of every data set matches (dtype and shape exactly; values like
// numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7)); it is skipped when Fusebox reports the
// model or its data as Unsupported; anything else fails it. The last line printed is
// "N passed, N failed, N skipped (unsupported)"; the exit status is 1 when a case failed.
// With --skip-list, a skipped case must be listed there (an unlisted skip fails), and a listed
// case that passes fails too, so that the list in the repo stays exactly true.
#include "tests/conformance/NodeTestCase.h"
#include "tests/conformance/SkipList.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

using namespace fb::conformance;

namespace {

struct Options {
  std::string dir;
  std::string filter;
  std::string skipList;
  CaseBackend backend;
  bool verbose = false;
  bool listFailures = false;
  bool fork = true;
  int timeoutSeconds = 60;
};

void printUsage(std::ostream& os) {
  os << "usage: fusebox-conformance DIR [--backend interp|cpu] [--pipeline P] [--skip-list FILE]\n"
        "                           [--filter REGEX] [--verbose] [--list-failures]\n"
        "                           [--timeout SECONDS] [--no-fork]\n"
        "  DIR              folder of ONNX backend node test cases (…/node)\n"
        "  --backend B      interp (the reference interpreter, default) or cpu (compiled)\n"
        "  --pipeline P     run passes first: a pipeline ('canonicalize,fuse') or O0..O3\n"
        "  --skip-list F    the cases that may be skipped, with reasons; an unlisted skip fails,\n"
        "                   and so does a listed case that passes\n"
        "  --filter REGEX   run only cases whose name contains a match (a plain substring works)\n"
        "  --verbose        print every case with its result and reason, and a per-op summary\n"
        "  --list-failures  print the failing cases, grouped by op, before the totals\n"
        "  --timeout S      fail a case that runs longer than S seconds (default 60)\n"
        "  --no-fork        run cases in this process (for a debugger; a crash ends the run)\n";
}

/// Parses argv; returns false (after printing why) on a usage error.
bool parseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto needValue = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "error: " << arg << " needs " << what << "\n";
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "--backend") {
      const char* v = needValue("interp or cpu");
      if (!v)
        return false;
      if (std::string(v) != "interp" && std::string(v) != "cpu") {
        std::cerr << "error: --backend wants interp or cpu, got '" << v << "'\n";
        return false;
      }
      options.backend.cpu = std::string(v) == "cpu";
    } else if (arg == "--pipeline") {
      const char* v = needValue("a pipeline");
      if (!v)
        return false;
      options.backend.pipeline = v;
    } else if (arg == "--skip-list") {
      const char* v = needValue("a file");
      if (!v)
        return false;
      options.skipList = v;
    } else if (arg == "--filter") {
      const char* v = needValue("a pattern");
      if (!v)
        return false;
      options.filter = v;
    } else if (arg == "--timeout") {
      const char* v = needValue("a number of seconds");
      if (!v)
        return false;
      char* end = nullptr;
      long s = std::strtol(v, &end, 10);
      if (*end != '\0' || s <= 0 || s > 86400) {
        std::cerr << "error: --timeout wants a positive number of seconds, got '" << v << "'\n";
        return false;
      }
      options.timeoutSeconds = int(s);
    } else if (arg == "--verbose" || arg == "-v") {
      options.verbose = true;
    } else if (arg == "--list-failures") {
      options.listFailures = true;
    } else if (arg == "--no-fork") {
      options.fork = false;
    } else if (arg == "--help" || arg == "-h") {
      printUsage(std::cout);
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      std::cerr << "error: unknown option " << arg << "\n";
      return false;
    } else if (options.dir.empty()) {
      options.dir = arg;
    } else {
      std::cerr << "error: more than one test folder given\n";
      return false;
    }
  }
  if (options.dir.empty()) {
    std::cerr << "error: no test folder given\n";
    return false;
  }
  return true;
}

/// One line of at most `maxChars`, for listings where a reason may be long or multi-line.
std::string oneLine(std::string s, size_t maxChars = 500) {
  for (char& c : s)
    if (c == '\n' || c == '\r')
      c = ' ';
  if (s.size() > maxChars)
    s = s.substr(0, maxChars) + "...";
  return s;
}

const char* outcomeWord(Outcome o) {
  switch (o) {
  case Outcome::Passed: return "PASS";
  case Outcome::Failed: return "FAIL";
  case Outcome::Skipped: return "SKIP";
  default: assert(false && "unknown outcome"); return "????";
  }
}

struct OpCounts {
  int passed = 0, failed = 0, skipped = 0;
};

} // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    printUsage(std::cerr);
    return 2;
  }
  std::optional<std::regex> filter;
  if (!options.filter.empty()) {
    try {
      filter.emplace(options.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      std::cerr << "error: --filter '" << options.filter << "' is not a valid regex: " << e.what()
                << "\n";
      return 2;
    }
  }

  std::string error;
  std::optional<SkipList> skipList;
  if (!options.skipList.empty()) {
    skipList = SkipList::read(options.skipList, error);
    if (!skipList) {
      std::cerr << "error: " << error << "\n";
      return 2;
    }
  }
  const std::string backendName = options.backend.cpu ? "cpu" : "interp";
  std::vector<NodeTestCase> cases = discoverCases(options.dir, error);
  if (!error.empty()) {
    std::cerr << "error: " << error << "\n";
    return 2;
  }
  if (cases.empty()) {
    // An empty folder would otherwise "pass": treat it as a broken setup.
    std::cerr << "error: " << options.dir << ": no test cases (folders with model.onnx)\n";
    return 2;
  }

  int passed = 0, failed = 0, skipped = 0, selected = 0;
  std::map<std::string, OpCounts> perOp;
  std::vector<std::pair<const NodeTestCase*, std::string>> failures;
  for (const NodeTestCase& c : cases) {
    if (filter && !std::regex_search(c.name, *filter))
      continue;
    ++selected;
    CaseResult r = options.fork ? runCaseIsolated(c, options.backend, options.timeoutSeconds)
                                : runCase(c, options.backend);
    if (skipList) {
      const SkipList::Entry* listed = skipList->find(c.name, backendName);
      if (r.outcome == Outcome::Skipped && !listed)
        r = {Outcome::Failed, "skipped, but " + skipList->path() + " does not list it: " + r.reason};
      else if (r.outcome == Outcome::Passed && listed)
        r = {Outcome::Failed, "passes, but " + skipList->path() + ":" +
                                  std::to_string(listed->line) + " lists it as skipped ('" +
                                  listed->reason + "'): remove or narrow that entry"};
      else if (r.outcome == Outcome::Skipped)
        r.reason = listed->reason + " [" + r.reason + "]";
    }
    OpCounts& counts = perOp[c.opLabel];
    switch (r.outcome) {
    case Outcome::Passed: ++passed, ++counts.passed; break;
    case Outcome::Failed:
      ++failed, ++counts.failed;
      failures.emplace_back(&c, r.reason);
      break;
    case Outcome::Skipped: ++skipped, ++counts.skipped; break;
    default: assert(false && "unknown outcome");
    }
    if (options.verbose) {
      std::cout << outcomeWord(r.outcome) << " " << c.name << " [" << c.opLabel << "]";
      if (!r.reason.empty())
        std::cout << ": " << oneLine(r.reason);
      std::cout << "\n";
    }
  }
  if (selected == 0) {
    std::cerr << "error: --filter '" << options.filter << "' matches no case\n";
    return 2;
  }

  if (options.verbose) {
    std::cout << "\nBackend: " << describe(options.backend) << "\nPer op (passed / failed / skipped):\n";
    for (const auto& [op, n] : perOp) {
      std::cout << "  " << op << ": " << n.passed << " / " << n.failed << " / " << n.skipped
                << "\n";
    }
  }
  if (options.listFailures && !failures.empty()) {
    std::stable_sort(failures.begin(), failures.end(), [](const auto& a, const auto& b) {
      return a.first->opLabel < b.first->opLabel;
    });
    std::cout << "\nFailures by op:\n";
    std::string currentOp;
    for (const auto& [c, reason] : failures) {
      if (c->opLabel != currentOp) {
        currentOp = c->opLabel;
        std::cout << currentOp << ":\n";
      }
      std::cout << "  " << c->name << ": " << oneLine(reason) << "\n";
    }
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped
            << " skipped (unsupported)" << std::endl;
  return failed > 0 ? 1 : 0;
}
