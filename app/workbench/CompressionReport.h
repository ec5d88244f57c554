// What a lossy pass (quantize, prune) did to a model, layer by layer: the report the GUI's
// quantization and pruning dialogs show after the pass, and the per-layer colouring of the graph.
#pragma once

#include "core/Error.h"
#include "core/Graph.h"
#include "passes/PassManager.h"

#include <map>
#include <string>
#include <vector>

namespace fb::workbench {

/// One weighted layer (Conv, ConvTranspose, Gemm, MatMul) of the model after the pass.
struct LayerCompression {
  NodeId node = 0;
  std::string name; ///< the node's name
  std::string op;   ///< "Conv", ...
  /// The layer's figure of merit, the one the graph is coloured by: for quantize the output
  /// error 1 - cosine against the float model (accumulated from the inputs to this layer); for
  /// prune the fraction of the layer's original weights that are gone (zeroed or removed).
  double value = 0;
  // quantize
  bool quantized = false; ///< the weight is an int8 constant behind a DequantizeLinear
  double cosine = 1;      ///< of this layer's output against the float model's
  double maxAbs = 0;      ///< largest |quantized - float| of this layer's output
  // prune
  int64_t weightsBefore = 0; ///< elements of the weight before the pass
  int64_t weightsAfter = 0;  ///< nonzero elements of the weight after it
};

/// The report of one lossy pass application.
struct CompressionReport {
  std::string pass;    ///< "quantize" or "prune"
  std::string step;    ///< the pipeline step as written ("quantize{calibration=entropy}")
  std::string summary; ///< the pass's one-line summary
  /// What changed in size and accuracy, as label and text rows ("weights", "44.6 MiB -> 11.2
  /// MiB (3.98x)"), from the pass's statistics.
  std::vector<std::pair<std::string, std::string>> facts;
  /// What LayerCompression::value means, for a column header and the graph legend.
  std::string metric;
  std::vector<LayerCompression> layers; ///< in the order of the graph after the pass
  /// Heat in [0, 1] for every node of the graph after the pass that has a figure (quantize:
  /// every value matched with the float model, on a log scale over four decades below the
  /// largest error; prune: the fraction removed), and the legend that says so.
  std::map<NodeId, double> heat;
  std::string heatLegend;
};

/// True for the passes compressionReport describes.
bool isCompressionPass(const std::string& pass);

/// The report of `record` (a quantize or prune application) that turned `before` into `after`.
/// For quantize, both graphs run on the interpreter on the same seeded inputs (`seed`) and every
/// value is compared by meaning (the numeric diff); prune compares the weights only. Fails for
/// another pass, or when a graph fails to run.
Expected<CompressionReport> compressionReport(const Graph& before, const Graph& after,
                                              const PassRecord& record, uint64_t seed = 1);

} // namespace fb::workbench
