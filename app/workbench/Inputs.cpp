// Inputs from files or seeds.
#include "app/workbench/Inputs.h"
#include "core/Npy.h"
#include "core/RandomInputs.h"
#include "core/onnx/OnnxImport.h"

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

Expected<std::vector<Tensor>> gatherInputs(const Graph& graph,
                                           const std::vector<std::string>& files, uint64_t seed,
                                           const std::map<std::string, int64_t>& dims) {
  if (files.empty())
    return makeRandomInputs(graph, seed, dims);
  if (files.size() != graph.inputs().size())
    return makeError(files.size(), " input files were given but the model takes ",
                     graph.inputs().size(), " inputs");
  std::vector<Tensor> inputs;
  for (const std::string& path : files) {
    FB_ASSIGN_OR_RETURN(Tensor t, readInputFile(path));
    inputs.push_back(std::move(t));
  }
  return inputs;
}

} // namespace fb::workbench
