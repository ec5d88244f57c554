// The calibration driver: loads or generates calibration inputs and observes activations while
// the reference interpreter runs the fp32 model.
#include "passes/Calibration.h"

#include "core/Interpreter.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace fb {

Expected<std::vector<std::string>> npyFilesIn(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return makeError("calibration directory '", dir, "': ", ec.message());
  std::vector<std::string> files;
  for (const fs::directory_entry& e : it)
    if (e.is_regular_file(ec) && e.path().extension() == ".npy")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty())
    return makeError("calibration directory '", dir, "' holds no .npy files");
  return files;
}

Expected<std::vector<std::vector<Tensor>>> loadCalibrationSamples(const Graph& graph,
                                                                  const CalibrationInputs& in) {
  std::vector<std::vector<Tensor>> samples;
  const size_t perSample = graph.inputs().size();
  if (in.files.empty()) {
    for (int64_t i = 0; i < in.samples; ++i) {
      FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                          makeRandomInputs(graph, in.seed + uint64_t(i)));
      samples.push_back(std::move(inputs));
    }
    return samples;
  }
  if (perSample == 0 || in.files.size() % perSample != 0)
    return makeError("calibration inputs: ", in.files.size(), " files do not make whole samples of ",
                     perSample, " input", perSample == 1 ? "" : "s", " each");
  for (size_t f = 0; f < in.files.size(); f += perSample) {
    std::vector<Tensor> inputs;
    for (size_t k = 0; k < perSample; ++k) {
      FB_ASSIGN_OR_RETURN(Tensor t, readNpy(in.files[f + k]));
      inputs.push_back(std::move(t));
    }
    samples.push_back(std::move(inputs));
  }
  return samples;
}

Expected<std::map<std::string, ActivationObserver>>
calibrate(const Graph& graph, const std::vector<std::vector<Tensor>>& samples,
          const std::vector<const Value*>& values) {
  std::map<std::string, ActivationObserver> observers;
  for (const Value* v : values)
    observers[v->name()];
  InterpretOptions opts;
  opts.keepIntermediates = true;
  for (size_t s = 0; s < samples.size(); ++s) {
    auto run = interpret(graph, samples[s], opts);
    if (!run.ok())
      return run.error().withContext("calibration sample " + std::to_string(s));
    for (auto& [name, observer] : observers) {
      auto it = run->values.find(name);
      if (it == run->values.end())
        return makeError("calibration: value '", name, "' was not computed");
      observer.observe(it->second);
    }
  }
  return observers;
}

} // namespace fb
