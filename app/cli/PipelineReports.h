// Reports about pipelines for fusebox-opt: the pass list, per-pass timing, snapshot diffs and
// output comparisons.
#pragma once

#include "core/GraphDiff.h"
#include "core/NumericDiff.h"
#include "core/Json.h"
#include "app/workbench/Compare.h"
#include "core/TensorCompare.h"
#include "passes/PassManager.h"

#include <string>
#include <vector>

namespace fb::cli {

/// --list-passes as text: every pass with its summary, then the named pipelines.
std::string passListText();
/// --list-passes as JSON fields: passes[{name, summary, description}], pipelines{O0..O3}.
void writePassListJson(JsonWriter& w);

/// --timing as text: one line per pass application with time and what it did.
std::string timingText(const std::vector<Snapshot>& snapshots);
/// --timing as JSON fields: passes[{pass, step, ms, changed, nodes_before, nodes_after,
/// summary, statistics{}, provenance[{kind, node, with[], note}]}], total_ms.
void writeTimingJson(JsonWriter& w, const std::vector<Snapshot>& snapshots);

/// --diff as text.
std::string diffText(const Graph& a, const Graph& b, const GraphDiff& diff, size_t i, size_t j);
/// --diff as JSON fields: added, removed, changed, unchanged (node ids), details[{id, name, op,
/// changes[]}], added_from{id:[ids]}, ir_diff (unified diff of the printed IR).
void writeDiffJson(JsonWriter& w, const Graph& a, const Graph& b, const GraphDiff& diff);

/// --numeric-diff as text: every compared value, then the first divergent node.
std::string numericDiffText(const Graph& b, const NumericDiff& diff, size_t i, size_t j);
/// --numeric-diff as JSON fields: values[{value, reference, producer, match, max_abs, max_rel,
/// cosine, ok}], first_divergent_node (id or null), ok.
void writeNumericDiffJson(JsonWriter& w, const Graph& b, const NumericDiff& diff);

/// --compare as text.
std::string compareText(const std::string& backend, const std::vector<workbench::OutputComparison>& outputs,
                        bool ok);
/// --compare as JSON fields: backend, outputs[{name, max_abs, max_rel, cosine, ok}], ok.
void writeCompareJson(JsonWriter& w, const std::string& backend,
                      const std::vector<workbench::OutputComparison>& outputs, bool ok);

} // namespace fb::cli
