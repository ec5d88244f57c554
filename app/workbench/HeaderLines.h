// The settings header of Fusebox's text files that carry a graph (reproducers, session files):
// leading `// key: value` comment lines before the text IR, which the IR parser skips.
#pragma once

#include "core/Error.h"
#include "core/Graph.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// One `// key: value` line of a header.
struct HeaderLine {
  int line = 0; ///< 1-based line number in the file
  std::string key, value;
};

/// The leading comment block of `text`: its first line as written (the file's signature) and
/// every later `// key: value` line, keys and values trimmed. Comment lines without a colon are
/// skipped; the block ends at the first line that is not a comment.
struct Header {
  std::string firstLine;
  std::vector<HeaderLine> lines;
};
Header readHeader(const std::string& text);

/// Writes `header` (its `// ...` lines, ending in a blank line) and then `graph` as
/// self-contained text IR (constants included) to `path`. Errors name the file.
Status writeHeaderAndGraph(const std::string& path, const std::string& header,
                           const Graph& graph);

} // namespace fb::workbench
