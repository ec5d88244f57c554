// The workbench session: one model, a pipeline of passes and the snapshot history stepped through.
#pragma once

#include "app/workbench/ScheduleBook.h"
#include "core/Cost.h"
#include "core/GraphDiff.h"
#include "core/NumericDiff.h"
#include "passes/PassManager.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb::workbench {

/// A registered pass as the pipeline panel lists it.
struct PassDescription {
  std::string name;        ///< kebab-case pipeline name
  std::string summary;     ///< one line
  std::string description; ///< the paragraph written for a student
  bool analysis = false;   ///< annotates only; never changes the structure
  std::vector<PassOptionSpec> options; ///< declared options (the GUI's completion and help)
};

/// The values a pass option's field may offer: "name=default" and, for an enum or a bool,
/// "name=choice" for every choice; empty for a pass without options.
std::vector<std::string> optionCompletions(const PassDescription& pass);

/// Every registered pass with its description, in registry order.
std::vector<PassDescription> passDescriptions();

/// One row of the snapshot timeline: the pass that made the snapshot and the snapshot's
/// statistics (core's ModelStats, the one statistics type --stats prints too).
struct SnapshotSummary {
  size_t index = 0;
  std::string label;          ///< "imported" or the pipeline step ("fold-batchnorm")
  std::string summary;        ///< the pass's one-line summary (empty for snapshot 0)
  double passMilliseconds = 0;
  bool changed = false;       ///< the pass changed the graph
  ModelStats stats;           ///< nodes, ops, params, FLOPs, bytes moved, weights, peak memory
};

/// One pass application to be run off the GUI thread: everything it needs is a value, so the
/// session may change meanwhile; the result is committed only when the generation still matches.
struct StepJob {
  uint64_t generation = 0;
  size_t from = 0; ///< the snapshot index the step applies to
  std::shared_ptr<const Graph> graph;
  PipelineStep step;
  PassManagerOptions options;
};

/// Runs a step job (thread-safe: touches only the job's values).
Expected<Snapshot> runStepJob(const StepJob& job);

/// The model, the pipeline and the snapshot history. Snapshot 0 is the imported model and
/// snapshot k the graph after pipeline step k. Qt-free so the CLI and tests use it as the GUI does.
///
/// Editing the pipeline at position p drops the snapshots computed from steps at or after p (the
/// earlier ones stay valid). Every change that invalidates running work bumps generation(), so a
/// result computed for an older generation is dropped by commitStep.
class Session {
public:
  Session();

  // -- model --
  /// Loads a .onnx or .fbir model. On success the history restarts at the new model and the
  /// pipeline is kept (to run the same passes on another model); on failure the previous model,
  /// pipeline and history stay as they were and the error names the file.
  Status load(const std::string& path);
  /// Uses an in-memory graph as the model (tests, generated graphs).
  void loadGraph(std::unique_ptr<Graph> graph, const std::string& displayName);
  /// Uses a graph that loadModel(path) returned (loaded off the GUI thread) as the model.
  void adoptLoadedModel(std::shared_ptr<const Graph> graph, const std::string& path);
  bool hasModel() const { return !m_snapshots.empty(); }
  /// Binds symbolic input dims of the imported model to sizes (N=4) and re-infers its types,
  /// so passes and backends that need static shapes run on a dynamic-batch model. The
  /// imported snapshot is replaced and the computed ones dropped. On a model with symbolic
  /// dims, a name that is none of them is an error listing them (a fully static model ignores
  /// sizes); on error nothing changes.
  Status bindDims(const std::map<std::string, int64_t>& sizes);
  const std::string& modelPath() const { return m_path; }
  /// A short name for the window title: the file name.
  const std::string& displayName() const { return m_displayName; }

  // -- pipeline --
  const std::vector<PipelineStep>& pipeline() const { return m_pipeline; }
  std::string pipelineString() const;
  /// Replaces the pipeline by a parsed pipeline string (empty clears it).
  Status setPipeline(const std::string& text);
  void setPipelineSteps(std::vector<PipelineStep> steps);
  /// Inserts a step at `index` (clamped to the end).
  void insertStep(size_t index, PipelineStep step);
  void removeStep(size_t index);
  /// Moves the step at `from` to position `to`.
  void moveStep(size_t from, size_t to);
  /// Replaces the options of the step at `index` ("k=v,k2=v2"; empty clears them).
  Status setStepOptions(size_t index, const std::string& options);

  // -- stepping --
  size_t snapshotCount() const { return m_snapshots.size(); }
  size_t currentIndex() const { return m_current; }
  const Snapshot& snapshot(size_t index) const { return m_snapshots.at(index); }
  const std::vector<Snapshot>& snapshots() const { return m_snapshots; }
  const Snapshot& current() const { return m_snapshots.at(m_current); }
  std::shared_ptr<const Graph> graph(size_t index) const { return m_snapshots.at(index).graph; }
  /// How many pipeline steps have a snapshot (snapshotCount() - 1).
  size_t appliedSteps() const { return m_snapshots.empty() ? 0 : m_snapshots.size() - 1; }
  /// True when Step would do something (a computed snapshot ahead, or a pipeline step to apply).
  bool canStep() const;
  bool canBack() const { return m_current > 0; }
  bool canForward() const { return m_current + 1 < m_snapshots.size(); }

  /// Applies the next step synchronously: moves forward when that snapshot is computed, else
  /// runs the pipeline step after the current snapshot. Returns the new current index.
  Expected<size_t> step();
  /// Steps until the pipeline ends or a pass fails.
  Status runToEnd();
  /// Runs the whole pipeline from the imported model in one go under passManagerOptions()
  /// (pass limit, disabled passes, numeric check, afterPass, reproducers), as fusebox-opt
  /// does, and makes the last snapshot current. On a failing pass the snapshots before it
  /// stay, and reproducerPath() says where the failing pass's input was written, when it was.
  Status runPipeline();
  /// The reproducer the last failing runPipeline() wrote, or empty.
  const std::string& reproducerPath() const { return m_reproducerPath; }
  bool back();
  bool forward();
  /// Goes back to the imported model and drops the computed snapshots.
  void reset();
  /// Keeps only the current snapshot, which becomes snapshot 0, and forgets the pipeline: for a
  /// one-shot command that needs nothing but the pipeline's result (fusebox-opt -O3 --bench), so
  /// that tensors only earlier snapshots hold — the imported weights a pass replaced, as
  /// fold-constants replaces every transposed weight of a ViT export — are freed before the
  /// result is compiled.
  void dropHistory();
  /// Makes snapshot `index` current (undo/redo is selecting snapshots).
  void select(size_t index);

  /// Asynchronous stepping: the job for the next step, or nullopt when the next snapshot is
  /// already computed or the pipeline is exhausted (then call step()).
  std::optional<StepJob> prepareStep() const;
  /// Stores a finished job's snapshot and makes it current. Returns false (and drops it) when the
  /// session changed since the job was prepared.
  bool commitStep(const StepJob& job, Snapshot snapshot);
  /// Bumped by every change that makes running jobs stale.
  uint64_t generation() const { return m_generation; }
  PassManagerOptions& passManagerOptions() { return m_pmOptions; }

  // -- what the views show --
  SnapshotSummary summary(size_t index) const;
  /// The structural diff from snapshot a to snapshot b.
  GraphDiff structuralDiff(size_t a, size_t b) const;
  /// What snapshot `index`'s pass changed: added + changed node ids versus the previous snapshot.
  std::vector<NodeId> changedByStep(size_t index) const;
  /// Unified diff of the two snapshots' text IR.
  std::string textDiff(size_t a, size_t b) const;
  /// Runs both snapshots on the same seeded random inputs and compares every matched value.
  Expected<NumericDiff> numericDiff(size_t a, size_t b, uint64_t seed = 1) const;
  /// The latest snapshot at or before `before` whose graph has a node `id` (provenance links).
  std::optional<size_t> snapshotWithNode(NodeId id, size_t before) const;

  // -- schedules --
  /// The schedule overrides snapshot `index` compiles with (the GUI's schedule editor).
  const std::vector<cg::ScheduleOverride>& scheduleOverrides(size_t index) const;
  /// Replaces them; an empty list puts every kernel back on its default schedule.
  void setScheduleOverrides(size_t index, std::vector<cg::ScheduleOverride> overrides);
  /// What fusebox-opt's --schedule would say for snapshot `index`.
  std::string scheduleText(size_t index) const;

private:
  void truncateFrom(size_t stepIndex);

  std::string m_path;
  std::string m_displayName;
  std::vector<PipelineStep> m_pipeline;
  std::vector<Snapshot> m_snapshots;
  size_t m_current = 0;
  uint64_t m_generation = 1;
  PassManagerOptions m_pmOptions;
  std::string m_reproducerPath;
  ScheduleBook m_schedules; ///< per snapshot graph; entries of dropped snapshots are pruned
};

/// A numeric diff run as a value job (off the GUI thread).
struct NumericDiffJob {
  uint64_t generation = 0;
  size_t a = 0, b = 0;
  std::shared_ptr<const Graph> graphA, graphB;
  uint64_t seed = 1;
};
Expected<NumericDiff> runNumericDiffJob(const NumericDiffJob& job);

} // namespace fb::workbench
