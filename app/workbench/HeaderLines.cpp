// Reading `// key: value` headers.
#include "app/workbench/HeaderLines.h"

#include "core/text/IrPrinter.h"

#include <fstream>
#include <sstream>

namespace fb::workbench {

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

} // namespace

Header readHeader(const std::string& text) {
  Header h;
  std::istringstream lines(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(lines, line)) {
    ++lineNo;
    if (line.rfind("//", 0) != 0)
      break;
    if (lineNo == 1) {
      h.firstLine = trim(line);
      continue;
    }
    const std::string body = line.substr(2);
    const size_t colon = body.find(':');
    if (colon == std::string::npos)
      continue;
    h.lines.push_back({lineNo, trim(body.substr(0, colon)), trim(body.substr(colon + 1))});
  }
  return h;
}

Status writeHeaderAndGraph(const std::string& path, const std::string& header,
                           const Graph& graph) {
  PrintOptions opts;
  opts.withResourceData = true;
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return makeError(path, ": cannot open for writing");
  out << header << printGraph(graph, opts);
  if (!out)
    return makeError(path, ": write failed");
  return Status::success();
}

} // namespace fb::workbench
