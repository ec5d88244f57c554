// The text IR (.fbir) parser.
#pragma once

#include "core/Graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace fb {

/// Parses text IR. Errors give file:line:column and what was expected. Types written in the
/// text are kept; shape inference is not re-run (the verifier checks them).
Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text,
                                            const std::string& fileName = "<input>");
/// Reads and parses a .fbir file.
Expected<std::unique_ptr<Graph>> parseGraphFile(const std::string& path);

} // namespace fb
