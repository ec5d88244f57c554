// libFuzzer target: arbitrary bytes through the text IR parser must yield a graph or an error, never
// a crash, hang or sanitizer report; whatever parses must print to text that round-trips exactly.
#include "core/text/IrParser.h"
#include "core/text/IrPrinter.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto graph = fb::parseGraph(text, "fuzz.fbir");
  if (!graph.ok())
    return 0;
  // The printer's output is canonical: it must parse, and print to the same text again.
  fb::PrintOptions options;
  options.withResourceData = true;
  std::string printed = fb::printGraph(**graph, options);
  auto again = fb::parseGraph(printed, "reprinted.fbir");
  if (!again.ok()) {
    std::fprintf(stderr, "printed IR does not parse: %s\n%s", again.error().message().c_str(),
                 printed.c_str());
    std::abort();
  }
  if (fb::printGraph(**again, options) != printed) {
    std::fprintf(stderr, "print(parse(print(g))) != print(g) for:\n%s", printed.c_str());
    std::abort();
  }
  return 0;
}
