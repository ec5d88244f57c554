// Static memory planning: liveness, in-place reuse and best-fit offsets in one arena.
#include "passes/MemoryPlan.h"

#include "core/Cost.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <unordered_map>

namespace fb {

namespace {

/// A run of values that occupy one buffer one after another (a value and the in-place results
/// that overwrite it), placed in the arena as one interval of steps.
struct BufferGroup {
  int64_t size = 0;
  int first = 0, last = 0;
  int64_t offset = 0;
};

/// No plan may hold more than this many bytes in all (far beyond any machine, and far from
/// int64's limit, so sums of sizes and offsets cannot overflow).
constexpr int64_t kMaxPlanBytes = int64_t(1) << 60;

int64_t alignUp(int64_t bytes, int64_t alignment) {
  if (alignment <= 1)
    return bytes;
  return (bytes + alignment - 1) / alignment * alignment;
}

bool overlapInTime(const BufferGroup& a, const BufferGroup& b) {
  return a.first <= b.last && b.first <= a.last;
}

/// Places groups in `order` by best fit: each group goes into the smallest gap between the
/// groups already placed that are live at the same time, or above them all when no gap fits.
/// Returns the arena size; writes the offsets into `groups`.
int64_t placeBestFit(std::vector<BufferGroup>& groups, const std::vector<size_t>& order) {
  std::vector<size_t> placed;
  int64_t arena = 0;
  for (size_t g : order) {
    BufferGroup& cur = groups[g];
    std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) of overlapping groups
    for (size_t p : placed)
      if (overlapInTime(groups[p], cur) && groups[p].size > 0)
        busy.emplace_back(groups[p].offset, groups[p].offset + groups[p].size);
    std::sort(busy.begin(), busy.end());
    int64_t prevEnd = 0;
    int64_t bestOffset = -1, bestGap = 0;
    for (const auto& [begin, end] : busy) {
      int64_t gap = begin - prevEnd;
      if (gap >= cur.size && (bestOffset < 0 || gap < bestGap)) {
        bestOffset = prevEnd;
        bestGap = gap;
      }
      prevEnd = std::max(prevEnd, end);
    }
    cur.offset = bestOffset >= 0 ? bestOffset : prevEnd;
    arena = std::max(arena, cur.offset + cur.size);
    placed.push_back(g);
  }
  return arena;
}

} // namespace

bool buffersConflict(const BufferAssignment& a, const BufferAssignment& b) {
  if (a.first > b.last || b.first > a.last)
    return false;
  if (a.offset >= b.offset + b.size || b.offset >= a.offset + a.size)
    return false;
  if (b.reuses == a.value && a.last == b.first)
    return false;
  if (a.reuses == b.value && b.last == a.first)
    return false;
  if (a.sliceOf == b.value || b.sliceOf == a.value)
    return false;
  return true;
}

namespace {

/// Where a Concat's inputs may lie in its result: per input (in the plan's value order
/// `index`), the byte offset within the result; empty when the Concat must copy.
std::vector<std::pair<size_t, int64_t>>
concatSlices(const Node& n, const std::unordered_map<const Value*, size_t>& index,
             const std::vector<int>& sliceTarget, const std::vector<bool>& isTarget,
             int64_t alignment) {
  const Value* out = n.output(0);
  auto outIt = index.find(out);
  if (outIt == index.end() || sliceTarget[outIt->second] >= 0 || isTarget[outIt->second])
    return {};
  auto axisAttr = n.attrs().getInt("axis", 1);
  const std::vector<int64_t> sizes = out->type().staticSizes();
  if (!axisAttr.ok())
    return {};
  const int64_t rank = int64_t(sizes.size());
  const int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  if (axis < 0 || axis >= rank)
    return {};
  for (int64_t d = 0; d < axis; ++d)
    if (sizes[size_t(d)] != 1)
      return {};
  int64_t inner = int64_t(dtypeSize(out->type().dtype));
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= sizes[size_t(d)];
  std::vector<std::pair<size_t, int64_t>> slices;
  int64_t at = 0;
  for (const Value* in : n.inputs()) {
    auto it = in ? index.find(in) : index.end();
    if (it == index.end() || sliceTarget[it->second] >= 0 || isTarget[it->second] ||
        at % std::max<int64_t>(alignment, 1) != 0 || in->type().dtype != out->type().dtype)
      return {};
    for (const auto& [v, off] : slices)
      if (v == it->second)
        return {}; // the same value twice
    slices.emplace_back(it->second, at);
    const std::vector<int64_t> inSizes = in->type().staticSizes();
    if (inSizes.size() != sizes.size())
      return {};
    at += inSizes[size_t(axis)] * inner;
  }
  return slices;
}

} // namespace

Expected<MemoryPlan> planMemory(const Graph& graph, const MemoryPlanOptions& options) {
  MemoryPlan plan;
  int64_t totalBytes = 0; // the sum of every buffer's size so far, at most kMaxPlanBytes
  const auto& nodes = graph.nodes();

  // 1. Liveness: every intermediate's producing step and last reading step.
  std::unordered_map<const Value*, size_t> index; // value → position in plan.buffers
  std::vector<const Value*> values;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value* out : nodes[i]->outputs()) {
      if (out->isGraphOutput())
        continue;
      if (!out->type().isStatic() && options.skipDynamic)
        continue;
      if (!out->type().isStatic())
        return Error("plan-memory needs static shapes: value %" + out->name() + " has type " +
                         out->type().str(),
                     ErrorKind::SymbolicShape);
      // Every size, offset and total below is at most the sum of all buffer sizes; bounding
      // that sum keeps the planner's arithmetic exact (a hostile shape does not wrap around).
      const std::optional<int64_t> count = out->type().numElements();
      const int64_t elemBytes = int64_t(dtypeSize(out->type().dtype));
      if (!count || *count > kMaxPlanBytes / std::max<int64_t>(elemBytes, 1))
        return makeError(nodes[i]->describe(), ": value %", out->name(), " of type ",
                         out->type().str(), " is larger than the planner's limit of 2^60 bytes");
      BufferAssignment b;
      b.value = out->name();
      b.size = alignUp(*count * elemBytes, options.alignment);
      if (b.size > kMaxPlanBytes - totalBytes)
        return makeError("plan-memory: the activations add up to more than 2^60 bytes (at value %",
                         out->name(), " of ", nodes[i]->describe(), ")");
      totalBytes += b.size;
      b.first = b.last = int(i);
      index[out] = plan.buffers.size();
      plan.buffers.push_back(b);
      values.push_back(out);
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* in : nodes[i]->inputs())
      if (auto it = index.find(in); in && it != index.end())
        plan.buffers[it->second].last = std::max(plan.buffers[it->second].last, int(i));

  // 2. Concats in place (options.concatInPlace): their inputs become slices of the result.
  std::vector<int> sliceTarget(plan.buffers.size(), -1); // the Concat result a value lies in
  std::vector<int64_t> sliceOffset(plan.buffers.size(), 0);
  std::vector<bool> isTarget(plan.buffers.size(), false);
  if (options.concatInPlace)
    for (const auto& n : nodes) {
      if (n->op() != OpKind::Concat || n->numOutputs() != 1)
        continue;
      auto slices = concatSlices(*n, index, sliceTarget, isTarget, options.alignment);
      if (slices.empty())
        continue;
      const size_t target = index.at(n->output(0));
      isTarget[target] = true;
      for (const auto& [v, off] : slices) {
        sliceTarget[v] = int(target);
        sliceOffset[v] = off;
        plan.buffers[v].sliceOf = plan.buffers[target].value;
        // A slice holds exactly its bytes: rounded up it would reach into the next one.
        const Value* val = values[v];
        plan.buffers[v].size = *val->type().numElements() * int64_t(dtypeSize(val->type().dtype));
      }
      plan.concatsInPlace.push_back(plan.buffers[target].value);
    }

  // 3. In-place reuse: an elementwise result of the same type as an input that dies at this
  //    node takes over that input's buffer. Groups chain such values into one buffer. A
  //    Concat's slices are in its result's group, which lives from the first slice's producer
  //    to the last read of the result or of any slice; they neither reuse nor are reused.
  std::vector<size_t> groupOf(plan.buffers.size());
  std::vector<BufferGroup> groups;
  for (size_t v = 0; v < plan.buffers.size(); ++v) {
    if (sliceTarget[v] >= 0)
      continue; // placed with its Concat's result below
    const BufferAssignment& b = plan.buffers[v];
    const Node* producer = values[v]->producer();
    bool placedInPlace = false;
    OpCategory cat = producer->info().category;
    const bool elementwise = cat == OpCategory::Elementwise || cat == OpCategory::Broadcast;
    if (options.inPlace && !isTarget[v] && (elementwise || options.overwritesInput)) {
      for (const Value* in : producer->inputs()) {
        auto it = in ? index.find(in) : index.end();
        if (it == index.end() || in->type() != values[v]->type() || sliceTarget[it->second] >= 0)
          continue;
        BufferGroup& g = groups[groupOf[it->second]];
        // The input must die here and its buffer must not already hold another result.
        if (plan.buffers[it->second].last != b.first || g.last != b.first)
          continue;
        if (!elementwise && !options.overwritesInput(b.first, *in))
          continue;
        g.last = b.last;
        groupOf[v] = groupOf[it->second];
        plan.buffers[v].reuses = in->name();
        ++plan.inPlaceReuses;
        placedInPlace = true;
        break;
      }
    }
    if (!placedInPlace) {
      groupOf[v] = groups.size();
      groups.push_back({b.size, b.first, b.last, 0});
    }
    if (isTarget[v]) {
      BufferGroup& g = groups[groupOf[v]];
      for (size_t u = 0; u < plan.buffers.size(); ++u)
        if (sliceTarget[u] == int(v)) {
          groupOf[u] = groupOf[v];
          g.first = std::min(g.first, plan.buffers[u].first);
          g.last = std::max(g.last, plan.buffers[u].last);
        }
    }
  }

  // 4. Totals: naive = no reuse at all; lower bound = the most bytes live at one step.
  for (const BufferAssignment& b : plan.buffers)
    plan.naiveBytes += b.size;
  std::vector<int64_t> liveAt(nodes.size() + 1, 0);
  for (const BufferGroup& g : groups)
    for (int s = g.first; s <= g.last; ++s)
      liveAt[size_t(s)] += g.size;
  for (int64_t live : liveAt)
    plan.lowerBoundBytes = std::max(plan.lowerBoundBytes, live);

  // 5. Offsets: best fit under several orderings, keeping the smallest arena.
  using Less = std::function<bool(const BufferGroup&, const BufferGroup&)>;
  const std::vector<std::pair<std::string, Less>> orderings = {
      {"largest-first",
       [](const BufferGroup& a, const BufferGroup& b) {
         return a.size != b.size ? a.size > b.size : a.first < b.first;
       }},
      {"longest-lifetime-first",
       [](const BufferGroup& a, const BufferGroup& b) {
         int la = a.last - a.first, lb = b.last - b.first;
         if (la != lb)
           return la > lb;
         return a.size != b.size ? a.size > b.size : a.first < b.first;
       }},
      {"first-use-first",
       [](const BufferGroup& a, const BufferGroup& b) {
         return a.first != b.first ? a.first < b.first : a.size > b.size;
       }},
  };
  std::vector<BufferGroup> best;
  plan.arenaBytes = -1;
  for (const auto& [name, less] : orderings) {
    std::vector<BufferGroup> trial = groups;
    std::vector<size_t> order(trial.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return less(trial[a], trial[b]); });
    int64_t arena = placeBestFit(trial, order);
    if (plan.arenaBytes < 0 || arena < plan.arenaBytes) {
      plan.arenaBytes = arena;
      plan.strategy = name;
      best = std::move(trial);
    }
  }
  for (size_t v = 0; v < plan.buffers.size(); ++v)
    plan.buffers[v].offset = best[groupOf[v]].offset + sliceOffset[v];
  assert(plan.arenaBytes >= plan.lowerBoundBytes && "an arena cannot beat the live peak");
  return plan;
}

} // namespace fb
