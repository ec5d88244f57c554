// Inputs from files or seeds.
#include "app/workbench/Inputs.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"
#include "core/onnx/OnnxImport.h"

#include <algorithm>

namespace fb::workbench {

namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

Expected<Tensor> readInputFile(const std::string& path) {
  if (endsWith(path, ".npy"))
    return readNpy(path);
  if (endsWith(path, ".pb"))
    return readOnnxTensorFile(path);
  return makeError(path, ": unknown input format (expected .npy or .pb)");
}

Status checkInputFits(const Value& input, const Tensor& t, const std::string& path) {
  const TensorType& want = input.type();
  bool fits = t.dtype() == want.dtype && t.rank() == want.rank();
  for (size_t d = 0; fits && d < want.rank(); ++d)
    fits = !want.dims[d].isStatic() || want.dims[d].size() == t.sizes()[d];
  if (!fits)
    return makeError(path, ": holds ", t.type().str(), " but input %", input.name(),
                     " of the model is ", want.str());
  return Status::success();
}

Expected<std::vector<Tensor>> gatherInputs(const Graph& graph,
                                           const std::vector<std::string>& files, uint64_t seed,
                                           const std::map<std::string, int64_t>& dims) {
  if (files.empty())
    return makeRandomInputs(graph, seed, dims);
  if (files.size() != graph.inputs().size())
    return makeError(files.size(), " input files were given but the model takes ",
                     graph.inputs().size(), " inputs");
  // Random tensors first (the same ones a run without files gets), then the files over them.
  const bool anyRandom = std::find(files.begin(), files.end(), std::string()) != files.end();
  std::vector<Tensor> inputs(files.size());
  if (anyRandom) {
    FB_ASSIGN_OR_RETURN(inputs, makeRandomInputs(graph, seed, dims));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].empty())
      continue;
    FB_ASSIGN_OR_RETURN(Tensor t, readInputFile(files[i]));
    FB_TRY(checkInputFits(*graph.inputs()[i], t, files[i]));
    inputs[i] = std::move(t);
  }
  return inputs;
}

} // namespace fb::workbench
