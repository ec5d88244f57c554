// Reproducer files: a failing graph with everything its check needs (inputs, pipeline, backend,
// compile settings, tolerance, faults), written so `fusebox-opt --replay FILE` re-runs it
// anywhere. Format (docs/decisions.md, "Reduce and replay"): FILE.fbir is self-contained text IR
// whose leading comment block holds the settings as `// key: value` lines; the inputs are .npy
// files next to it, named in the `inputs` line relative to FILE's folder.
#pragma once

#include "app/workbench/Reduce.h"
#include "core/Faults.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// Everything a replay needs.
struct Reproducer {
  std::shared_ptr<const Graph> graph;
  std::vector<Tensor> inputs;      ///< one per graph input, in order
  FailureCheck check;              ///< pipeline, backend and compile settings, tolerance
  std::vector<Fault> faults;       ///< the faults that were on
  /// A free-text line on where it came from ("reduced from model.onnx: 23 -> 2 nodes").
  std::string origin;
  /// Read back: the input files as the `inputs` line names them.
  std::vector<std::string> inputFiles;
};

/// The pipeline as --passes text ("canonicalize,fuse{max=8}"), empty for none.
std::string pipelineText(const std::vector<PipelineStep>& steps);

/// Writes `repro` to `path` (.fbir) and its inputs next to it as STEM.inK.npy; the header
/// names them. Returns the input files' paths; errors name the file that could not be written.
Expected<std::vector<std::string>> writeReproducer(const std::string& path,
                                                   const Reproducer& repro);

/// Reads a reproducer written by writeReproducer: the header's settings (an unknown key is
/// ignored, a bad value is an error naming FILE:LINE and the key), the graph (verified), and
/// the inputs (each must fit its graph input; the error names the file).
Expected<Reproducer> readReproducer(const std::string& path);

/// What a replay found.
struct ReplayReport {
  CheckOutcome outcome;       ///< mismatch: it still fails
  std::vector<Fault> faults;  ///< the faults that were on during the replay
  double seconds = 0;
};

/// Runs the reproducer's check with exactly its faults on (`withFaults`; none otherwise, to see
/// whether the fault is what makes it fail), and restores the process's fault set after. A
/// check that cannot compare (the backend is missing, a pass fails) is an error saying why.
Expected<ReplayReport> replayReproducer(const Reproducer& repro, bool withFaults = true,
                                        const JobControl* job = nullptr);

} // namespace fb::workbench
