// The schedule overrides a session holds per snapshot: what the GUI's schedule editor applied,
// what every compilation of that snapshot uses, and what fusebox-opt's --schedule would say.
#pragma once

#include "codegen/loops/ScheduleOverride.h"
#include "core/Graph.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fb::workbench {

/// Overrides keyed by snapshot graph: kernel names ("k3_conv_relu") are positions in one graph
/// and mean nothing in another, so each snapshot has its own list. An entry holds its graph, so
/// a key's address is never reused while it is a key; prune() drops the graphs the session no
/// longer has.
class ScheduleBook {
public:
  /// The overrides of `graph` (empty when none was applied).
  const std::vector<cg::ScheduleOverride>& overrides(const std::shared_ptr<const Graph>& graph) const;
  /// Replaces the whole list of `graph` (an empty list removes the entry).
  void setOverrides(const std::shared_ptr<const Graph>& graph,
                    std::vector<cg::ScheduleOverride> overrides);
  /// The override of kernel `kernel` in `graph`, or nullptr.
  const cg::ScheduleOverride* find(const std::shared_ptr<const Graph>& graph,
                                   const std::string& kernel) const;
  /// What --schedule would say for `graph`: "k3_conv_relu:mr=4,nr=16;k5_maxpool:none".
  std::string text(const std::shared_ptr<const Graph>& graph) const;
  /// Drops the entries of graphs not in `alive` (the session's snapshots).
  void prune(const std::vector<std::shared_ptr<const Graph>>& alive);
  void clear() { m_entries.clear(); }
  bool empty() const { return m_entries.empty(); }

private:
  struct Entry {
    std::shared_ptr<const Graph> graph;
    std::vector<cg::ScheduleOverride> overrides;
  };
  std::map<const Graph*, Entry> m_entries;
};

} // namespace fb::workbench
