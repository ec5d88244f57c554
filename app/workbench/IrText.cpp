// Printing a snapshot's IR and mapping node ids to the lines that define them.
#include "app/workbench/IrText.h"

#include "core/text/IrPrinter.h"

#include <cctype>
#include <set>

namespace fb::workbench {

namespace {

void collectIds(const Graph& g, std::set<NodeId>& ids) {
  for (const auto& n : g.nodes()) {
    ids.insert(n->id());
    for (const NodeBody& b : n->bodies())
      collectIds(*b.graph, ids);
  }
}

/// The id in the first "  #123" of a node line (the printer puts it after the attributes), or 0.
NodeId idInLine(const std::string& line, const std::set<NodeId>& ids) {
  size_t eq = line.find(" = ");
  if (eq == std::string::npos)
    return 0;
  for (size_t pos = line.find("  #", eq); pos != std::string::npos; pos = line.find("  #", pos + 1)) {
    size_t i = pos + 3;
    NodeId id = 0;
    size_t digits = 0;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
      id = id * 10 + NodeId(line[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0 && (i == line.size() || line[i] == ' ') && ids.count(id))
      return id;
  }
  return 0;
}

} // namespace

NodeId IrText::nodeAtLine(size_t line) const {
  return line < nodeOfLine.size() ? nodeOfLine[line] : 0;
}

IrText irTextOf(const Graph& graph) {
  IrText r;
  r.text = printGraph(graph);
  std::set<NodeId> ids;
  collectIds(graph, ids);
  size_t start = 0;
  while (start < r.text.size()) {
    size_t end = r.text.find('\n', start);
    if (end == std::string::npos)
      end = r.text.size();
    std::string line = r.text.substr(start, end - start);
    NodeId id = idInLine(line, ids);
    if (id != 0 && !r.lineOfNode.count(id))
      r.lineOfNode[id] = r.nodeOfLine.size();
    else
      id = 0;
    r.nodeOfLine.push_back(id);
    start = end + 1;
  }
  return r;
}

} // namespace fb::workbench
