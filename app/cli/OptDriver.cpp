// The fusebox-opt driver.
#include "app/cli/OptDriver.h"
#include "app/cli/Reports.h"
#include "core/Cost.h"
#include "core/Interpreter.h"
#include "core/ModelIO.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"
#include "core/onnx/OnnxImport.h"
#include "core/text/IrPrinter.h"

#include <chrono>
#include <filesystem>

namespace fb::cli {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Options of later issues that this build does not carry out yet.
std::vector<std::string> unavailableOptions(const CliOptions& o) {
  std::vector<std::string> names;
  if (!o.passes.empty())
    names.push_back("--passes");
  if (!o.optLevel.empty() && o.optLevel != "O0")
    names.push_back("-" + o.optLevel);
  if (o.listPasses)
    names.push_back("--list-passes");
  if (o.passLimit)
    names.push_back("--pass-limit");
  if (o.printAfterAll)
    names.push_back("--print-after-all");
  if (o.printAfterChange)
    names.push_back("--print-after-change");
  if (o.timing)
    names.push_back("--timing");
  if (!o.diff.empty())
    names.push_back("--diff");
  if (o.memoryPlan)
    names.push_back("--memory-plan");
  if (o.compare)
    names.push_back("--compare");
  if (o.bench)
    names.push_back("--bench");
  if (!o.profile.empty())
    names.push_back("--profile");
  if (!o.emit.empty())
    names.push_back("--emit");
  if (o.bisect)
    names.push_back("--bisect");
  if (!o.reduce.empty())
    names.push_back("--reduce");
  if (!o.replay.empty())
    names.push_back("--replay");
  if (!o.injectFault.empty())
    names.push_back("--inject-fault");
  if (o.listFaults)
    names.push_back("--list-faults");
  if (o.fuzz)
    names.push_back("--fuzz");
  return names;
}

Expected<Tensor> readInputFile(const std::string& path) {
  if (endsWith(path, ".npy"))
    return readNpy(path);
  if (endsWith(path, ".pb"))
    return readOnnxTensorFile(path);
  return makeError(path, ": unknown input format (expected .npy or .pb)");
}

Expected<std::vector<Tensor>> gatherInputs(const Graph& g, const CliOptions& o) {
  if (!o.inputs.empty()) {
    if (o.inputs.size() != g.inputs().size())
      return makeError("--inputs gives ", o.inputs.size(), " files but the model takes ",
                       g.inputs().size(), " inputs");
    std::vector<Tensor> ins;
    for (const std::string& path : o.inputs) {
      FB_ASSIGN_OR_RETURN(Tensor t, readInputFile(path));
      ins.push_back(std::move(t));
    }
    return ins;
  }
  return makeRandomInputs(g, o.seed.value_or(0), o.dims);
}

std::string sanitizeFileName(const std::string& name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return s.empty() ? "output" : s;
}

int fail(std::ostream& err, const Error& e) {
  err << "error: " << e.message() << "\n";
  return 1;
}

} // namespace

int runOptDriver(const CliOptions& o, std::ostream& out, std::ostream& err) {
  std::vector<std::string> unavailable = unavailableOptions(o);
  if (!unavailable.empty()) {
    std::string list;
    for (const auto& n : unavailable)
      list += (list.empty() ? "" : ", ") + n;
    err << "error: not available in this build yet: " << list << "\n";
    return 2;
  }
  if (o.model.empty()) {
    err << "error: no model given (usage: fusebox-opt MODEL [options]; see --help)\n";
    return 2;
  }
  if (o.backend != "interp") {
    err << "error: backend '" << o.backend << "' is not available in this build (use interp)\n";
    return 2;
  }

  auto loaded = loadModel(o.model);
  if (!loaded.ok())
    return fail(err, loaded.error());
  std::unique_ptr<Graph> graph = std::move(loaded).value();

  bool reported = false;
  if (o.stats) {
    ModelStats s = computeModelStats(*graph);
    out << (o.json ? statsJson(s) : statsText(o.model, s));
    reported = true;
  }

  if (o.run) {
    auto inputs = gatherInputs(*graph, o);
    if (!inputs.ok())
      return fail(err, inputs.error());
    auto start = std::chrono::steady_clock::now();
    auto result = interpret(*graph, *inputs);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok())
      return fail(err, result.error());
    std::vector<RunOutput> outputs;
    if (!o.outputDir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o.outputDir, ec);
      if (ec)
        return fail(err, makeError(o.outputDir, ": cannot create directory: ", ec.message()));
    }
    for (size_t i = 0; i < graph->outputs().size(); ++i) {
      RunOutput ro{graph->outputs()[i]->name(), result->outputs[i], ""};
      if (!o.outputDir.empty()) {
        ro.file = (std::filesystem::path(o.outputDir) / (sanitizeFileName(ro.name) + ".npy")).string();
        Status st = writeNpy(ro.file, ro.tensor);
        if (!st.ok())
          return fail(err, st.error());
      }
      outputs.push_back(std::move(ro));
    }
    out << (o.json ? runJson("interp", outputs, ms) : runText("interp", outputs, ms));
    reported = true;
  }

  if (!o.outputFile.empty()) {
    Status st = saveModel(*graph, o.outputFile);
    if (!st.ok())
      return fail(err, st.error());
  }

  if (o.printIr || (!reported && o.outputFile.empty()))
    out << printGraph(*graph);
  return 0;
}

} // namespace fb::cli
