// Schedule candidates per kernel kind, from the kernel's default schedule.
#include "app/workbench/TuningCandidates.h"

#include "codegen/gemm/GemmPlan.h"

#include <algorithm>

namespace fb::workbench {

namespace {

TuningCandidate one(const std::string& name, int64_t value) {
  return {{name, std::to_string(value)}};
}

/// Register tiles that fill the accumulators (mr*nr/8 of them) at each panel width (and a
/// convolution's tile turned the other way), then the cache blocks halved and doubled, then the
/// parallel split switched.
std::vector<std::vector<TuningCandidate>> gemmCandidates(const KernelSchedule& k,
                                                         int vectorRegisters, int threads) {
  std::vector<std::vector<TuningCandidate>> groups;
  // A 3×3 convolution: the other algorithms first (the blocking that follows is the winner's).
  if (k.winogradApplies || k.directApplies) {
    std::vector<TuningCandidate> algorithms;
    if (k.convAlgorithm != "im2col")
      algorithms.push_back({{"conv", "im2col"}});
    if (k.winogradApplies && k.convAlgorithm != "winograd")
      algorithms.push_back({{"conv", "winograd"}});
    if (k.winogradApplies && k.convAlgorithm != "winograd4")
      algorithms.push_back({{"conv", "winograd4"}});
    if (k.directApplies && k.convAlgorithm != "direct")
      algorithms.push_back({{"conv", "direct"}});
    groups.push_back(std::move(algorithms));
  }
  // The direct convolution: the output channels of its register tile (1-4 zmm or ymm), then
  // its parallel split.
  if (k.convAlgorithm == "direct") {
    std::vector<TuningCandidate> tiles;
    const int64_t vectorLanes = cg::vectorLanes(vectorRegisters);
    for (int64_t vectors = 1; vectors <= 4; ++vectors)
      tiles.push_back({{"conv", "direct"}, {"mr", std::to_string(vectors * vectorLanes)}});
    groups.push_back(std::move(tiles));
    groups.push_back({{{"parallel", k.gemmParallel ? "0" : "1"}}});
    return groups;
  }
  const int64_t maxAccumulators = vectorRegisters >= 32 ? 28 : 14;
  const int lanes = cg::vectorLanes(vectorRegisters);
  std::vector<TuningCandidate> tiles;
  // An im2col convolution: the register tile turned the other way (vectors along output
  // channels for few pixels, or back along pixels).
  if (k.convAlgorithm == "im2col")
    tiles.push_back({{"vectors", k.columnTile ? "n" : "m"}});
  for (int64_t nr : {8, 16, 24, 32, 48, 64}) {
    int64_t mr = std::min<int64_t>(12, maxAccumulators / cg::tileAccumulators(1, nr, lanes));
    for (int64_t m : {mr, mr / 2}) {
      if (m < 1 || (m == k.mr && nr == k.nr))
        continue;
      TuningCandidate c = one("mr", m);
      c.push_back({"nr", std::to_string(nr)});
      if (std::find(tiles.begin(), tiles.end(), c) == tiles.end())
        tiles.push_back(std::move(c));
    }
  }
  groups.push_back(std::move(tiles));
  std::vector<TuningCandidate> blocks;
  if (k.kc > 16)
    blocks.push_back(one("kc", k.kc / 2));
  if (k.kc > 0)
    blocks.push_back(one("kc", k.kc * 2));
  groups.push_back(std::move(blocks));
  std::vector<TuningCandidate> panels;
  if (k.mc > 2 * k.mr)
    panels.push_back(one("mc", k.mc / 2));
  if (k.mc > 0)
    panels.push_back(one("mc", k.mc * 2));
  if (k.nc > 2 * k.nr)
    panels.push_back(one("nc", k.nc / 2));
  if (k.nc > 0)
    panels.push_back(one("nc", k.nc * 2));
  groups.push_back(std::move(panels));
  if (k.gemmParallel)
    groups.push_back({{{"parallel", "0"}}});
  else if (threads > 1)
    groups.push_back({{{"parallel", "1"}}});
  return groups;
}

/// Parallel on or off, the vector width, unrolling, a 2-D tile and the two outermost loops
/// swapped: each on top of the default schedule.
std::vector<std::vector<TuningCandidate>> loopCandidates(const KernelSchedule& k, int threads) {
  std::vector<std::vector<TuningCandidate>> groups;
  bool parallel = std::any_of(k.loops.begin(), k.loops.end(),
                              [](const LoopDescription& l) { return l.kind == "parallel"; });
  if (parallel)
    groups.push_back({{{"parallel", "0"}}});
  else if (threads > 1)
    groups.push_back({{{"parallel", "1"}}});
  groups.push_back({one("vectorize", 16), one("vectorize", 8), one("vectorize", 4)});
  groups.push_back({one("unroll", 4), one("unroll", 2)});
  // A perfect nest of two or more loops at the top: tile it or swap its two outer loops.
  if (k.loops.size() >= 2 && k.loops[0].depth == 0 && k.loops[1].depth == 1) {
    groups.push_back({{{"tile", "8x64"}}, {{"tile", "32x32"}}});
    groups.push_back({{{"reorder", k.loops[1].var + "/" + k.loops[0].var}}});
  }
  return groups;
}

} // namespace

std::vector<std::vector<TuningCandidate>> tuningCandidates(const KernelSchedule& kernel,
                                                           int vectorRegisters, int threads) {
  if (kernel.interpreted || kernel.depthwise || kernel.int8)
    return {};
  if (kernel.gemm)
    return gemmCandidates(kernel, vectorRegisters, threads);
  return loopCandidates(kernel, threads);
}

TuningCandidate withDirectives(TuningCandidate base, const TuningCandidate& change) {
  for (const cg::ScheduleDirective& d : change) {
    auto it = std::find_if(base.begin(), base.end(),
                           [&](const cg::ScheduleDirective& b) { return b.name == d.name; });
    if (it != base.end())
      *it = d;
    else
      base.push_back(d);
  }
  return base;
}

} // namespace fb::workbench
