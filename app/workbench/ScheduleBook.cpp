// Per-snapshot schedule overrides.
#include "app/workbench/ScheduleBook.h"

#include <set>

namespace fb::workbench {

const std::vector<cg::ScheduleOverride>&
ScheduleBook::overrides(const std::shared_ptr<const Graph>& graph) const {
  static const std::vector<cg::ScheduleOverride> kNone;
  auto it = m_entries.find(graph.get());
  return it == m_entries.end() ? kNone : it->second.overrides;
}

void ScheduleBook::setOverrides(const std::shared_ptr<const Graph>& graph,
                                std::vector<cg::ScheduleOverride> overrides) {
  if (!graph)
    return;
  if (overrides.empty())
    m_entries.erase(graph.get());
  else
    m_entries[graph.get()] = Entry{graph, std::move(overrides)};
}

const cg::ScheduleOverride* ScheduleBook::find(const std::shared_ptr<const Graph>& graph,
                                               const std::string& kernel) const {
  for (const cg::ScheduleOverride& o : overrides(graph))
    if (o.kernel == kernel)
      return &o;
  return nullptr;
}

std::string ScheduleBook::text(const std::shared_ptr<const Graph>& graph) const {
  return cg::printScheduleOverrides(overrides(graph));
}

void ScheduleBook::prune(const std::vector<std::shared_ptr<const Graph>>& alive) {
  std::set<const Graph*> keep;
  for (const auto& g : alive)
    keep.insert(g.get());
  for (auto it = m_entries.begin(); it != m_entries.end();)
    it = keep.count(it->first) ? std::next(it) : m_entries.erase(it);
}

} // namespace fb::workbench
