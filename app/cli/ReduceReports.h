// fusebox-opt's reduce and replay reports (--reduce, --replay), as text and JSON.
#pragma once

#include "app/workbench/Reproducer.h"
#include "core/Json.h"

#include <string>

namespace fb::cli {

/// --reduce as text: nodes before -> after, runs compared, the nodes kept, the reduced graph's
/// comparison, the files written and the command that replays them.
std::string reduceText(const workbench::ReduceReport& report, const std::string& backend,
                       const std::string& file, const std::vector<std::string>& inputFiles);
/// --reduce as JSON fields: nodes_before, nodes_after, cut_values, probes, skipped_candidates,
/// probe_limit_hit, seconds, kept[], file, inputs[], replay, backend, outputs[{name, max_abs,
/// max_rel, cosine, ok}], ok (false: the reproducer fails, as it should).
void writeReduceJson(JsonWriter& w, const workbench::ReduceReport& report,
                     const std::string& backend, const std::string& file,
                     const std::vector<std::string>& inputFiles);

/// --replay as text: what was replayed, each output's comparison, and "still fails" or
/// "passes".
std::string replayText(const std::string& file, const workbench::Reproducer& repro,
                       const workbench::ReplayReport& report);
/// --replay as JSON fields: file, nodes, pipeline, backend, faults[], mismatch, outputs[...],
/// ok.
void writeReplayJson(JsonWriter& w, const std::string& file, const workbench::Reproducer& repro,
                     const workbench::ReplayReport& report);

} // namespace fb::cli
