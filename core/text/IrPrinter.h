// The text IR (.fbir) printer.
#pragma once

#include "core/Graph.h"

#include <string>

namespace fb {

/// Options for printing.
struct PrintOptions {
  /// Constants with at most this many elements print inline as dense<...>; larger ones print as
  /// a reference, resource<name>.
  size_t inlineElementLimit = 16;
  /// Append the data of referenced constants in a trailing resources section, so the file is
  /// self-contained (used when saving; the display form leaves it out).
  bool withResourceData = false;
};

/// Prints the graph as text IR. `parseGraph(printGraph(g))` reproduces g exactly (ids,
/// provenance, names, types, attributes, constant data when withResourceData is set).
std::string printGraph(const Graph& graph, const PrintOptions& options = {});

} // namespace fb
