// --memory-plan reports of fusebox-opt: the static memory plan as a table or JSON.
#pragma once

#include "core/Json.h"
#include "passes/MemoryPlan.h"

#include <string>

namespace fb::cli {

/// --memory-plan as text: one row per buffer (value, offset, size, first, last), then the
/// naive total, the arena, the lower bound, the efficiency and the winning ordering.
std::string memoryPlanText(const MemoryPlan& plan);
/// --memory-plan as JSON fields of the open object: naive_bytes, arena_bytes,
/// lower_bound_bytes, efficiency, strategy and buffers[{value, offset, size, first, last}].
void writeMemoryPlanJson(JsonWriter& w, const MemoryPlan& plan);

} // namespace fb::cli
