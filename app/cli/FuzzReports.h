// fusebox-opt's --fuzz report, as text and JSON.
#pragma once

#include "app/workbench/DifferentialFuzz.h"
#include "core/Json.h"

#include <string>

namespace fb::cli {

/// --fuzz as text (after the one line per finding printed as they happen): graphs, seeds and
/// time, discards (with reasons), every op covered with its count, runs/refusals/findings per
/// level and backend, the most frequent refusals, and the findings by kind.
std::string fuzzSummaryText(const workbench::FuzzReport& report, uint64_t firstSeed);
/// --fuzz as JSON fields: the contract's graphs, mismatches, crashes (errors that are not
/// Unsupported refusals), reproducers[] (files); and seed, seconds, graphs_per_minute, discards,
/// discard_reasons[], ops{op:count}, configs{"O2/cpu":{runs, refused, findings}}, refusals{},
/// findings[{seed, level, backend, kind, message, files[]}].
void writeFuzzJson(JsonWriter& w, const workbench::FuzzReport& report, uint64_t firstSeed);

} // namespace fb::cli
