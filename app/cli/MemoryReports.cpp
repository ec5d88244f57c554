// --memory-plan reports of fusebox-opt.
#include "app/cli/MemoryReports.h"

#include "app/cli/Reports.h"

#include <algorithm>
#include <cstdio>

namespace fb::cli {

std::string memoryPlanText(const MemoryPlan& plan) {
  size_t width = 5;
  for (const BufferAssignment& b : plan.buffers)
    width = std::max(width, b.value.size() + 1);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %12s %12s %6s %6s\n", int(width), "value", "offset",
                "size", "first", "last");
  out += line;
  for (const BufferAssignment& b : plan.buffers) {
    std::snprintf(line, sizeof line, "%-*s %12lld %12lld %6d %6d%s\n", int(width),
                  ("%" + b.value).c_str(), static_cast<long long>(b.offset),
                  static_cast<long long>(b.size), b.first, b.last,
                  b.reuses.empty() ? "" : ("  (in place of %" + b.reuses + ")").c_str());
    out += line;
  }
  std::snprintf(line, sizeof line,
                "buffers: %zu; naive %lld B (%s); arena %lld B (%s); lower bound %lld B (%s); "
                "efficiency %.3f; %s\n",
                plan.buffers.size(), static_cast<long long>(plan.naiveBytes),
                humanBytes(double(plan.naiveBytes)).c_str(),
                static_cast<long long>(plan.arenaBytes),
                humanBytes(double(plan.arenaBytes)).c_str(),
                static_cast<long long>(plan.lowerBoundBytes),
                humanBytes(double(plan.lowerBoundBytes)).c_str(), plan.efficiency(),
                plan.strategy.c_str());
  out += line;
  return out;
}

void writeMemoryPlanJson(JsonWriter& w, const MemoryPlan& plan) {
  w.field("naive_bytes", plan.naiveBytes);
  w.field("arena_bytes", plan.arenaBytes);
  w.field("lower_bound_bytes", plan.lowerBoundBytes);
  w.field("efficiency", plan.efficiency());
  w.field("strategy", plan.strategy);
  w.key("buffers");
  w.beginArray();
  for (const BufferAssignment& b : plan.buffers) {
    w.beginObject();
    w.field("value", b.value);
    w.field("offset", b.offset);
    w.field("size", b.size);
    w.field("first", int64_t(b.first));
    w.field("last", int64_t(b.last));
    if (!b.reuses.empty())
      w.field("reuses", b.reuses);
    w.endObject();
  }
  w.endArray();
}

} // namespace fb::cli
