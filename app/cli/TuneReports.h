// The --tune report: per kernel default vs tuned time and the kept directives, and totals.
#pragma once

#include "app/workbench/Tuning.h"
#include "core/Json.h"

#include <string>

namespace fb::cli {

/// --tune as text: a table of kernels (default and tuned median, speedup, directives, note),
/// the totals and where the log was written.
std::string tuneText(const workbench::TuneReport& report);
/// --tune as JSON fields of the open object: tuning_log, cpu, isa, budget_s, seconds,
/// candidates, default_us, tuned_us, speedup, kernels[{kernel, op, signature, default_us,
/// tuned_us, speedup, directives, candidates, rejected, tuned, note}].
void writeTuneJson(JsonWriter& w, const workbench::TuneReport& report);

} // namespace fb::cli
