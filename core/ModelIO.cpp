// Loading and saving models by file extension.
#include "core/ModelIO.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "core/onnx/OnnxExport.h"
#include "core/onnx/OnnxImport.h"
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"

#include <fstream>

namespace fb {

static bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Expected<std::unique_ptr<Graph>> loadModel(const std::string& path) {
  std::unique_ptr<Graph> g;
  if (endsWith(path, ".fbir")) {
    FB_ASSIGN_OR_RETURN(g, parseGraphFile(path));
  } else if (endsWith(path, ".onnx")) {
    FB_ASSIGN_OR_RETURN(g, importOnnxFile(path));
  } else {
    return makeError(path, ": unknown model format (expected .onnx or .fbir)");
  }
  Status st = verify(*g);
  if (!st.ok())
    return st.error().withContext(path);
  return g;
}

Status saveModel(const Graph& graph, const std::string& path) {
  if (endsWith(path, ".onnx"))
    return exportOnnxFile(graph, path);
  if (endsWith(path, ".fbir")) {
    PrintOptions opts;
    opts.withResourceData = true;
    std::string text = printGraph(graph, opts);
    std::ofstream out(path, std::ios::binary);
    if (!out)
      return makeError(path, ": cannot open for writing");
    out << text;
    if (!out)
      return makeError(path, ": write failed");
    return Status::success();
  }
  return makeError(path, ": unknown model format (expected .onnx or .fbir)");
}

} // namespace fb
