// The text IR of a snapshot with a map between node ids and the lines that define them.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace fb::workbench {

/// The printed IR and where each node is defined.
struct IrText {
  std::string text;
  std::map<NodeId, size_t> lineOfNode;  ///< 0-based line that defines the node (nested too)
  std::vector<NodeId> nodeOfLine;       ///< per line: the node it defines, or 0
  /// The node defined at `line`; 0 when the line defines none (inputs, constants, braces).
  NodeId nodeAtLine(size_t line) const;
};

/// Prints `graph` in its display form (large constants as references) and maps its lines.
IrText irTextOf(const Graph& graph);

} // namespace fb::workbench
