// Structured (channel) pruning for the prune pass: which Conv output channels go, and the
// rewrite that shrinks every consumer of those channels.
#pragma once

#include "core/Graph.h"

#include <functional>
#include <string>

namespace fb {

/// How a channel's importance is scored: the L1 or L2 norm of its filter.
enum class ChannelScore { L1, L2 };

/// What a structured pruning run did, for the pass's statistics and summary.
struct ChannelPruneResult {
  int64_t channelsConsidered = 0; ///< output channels of every candidate Conv
  int64_t channelsRemoved = 0;
  int64_t convsPruned = 0;
  int64_t convsTied = 0;          ///< candidates left alone: an output channel is tied elsewhere
};

/// Removes, in every dense Conv (group 1, constant f32 weight) whose output channels can be
/// shrunk along every consumer path, the floor(ratio·C) channels of lowest score (at least one
/// channel stays), and shrinks the consumers to match. Does not re-infer shapes. Each Conv is
/// one rewrite: `mayRewrite` (when given) is asked before it and may refuse it.
ChannelPruneResult pruneConvChannels(Graph& graph, double ratio, ChannelScore score,
                                     const std::function<bool()>& mayRewrite = {});

} // namespace fb
