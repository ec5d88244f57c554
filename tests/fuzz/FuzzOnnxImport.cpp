// libFuzzer target: arbitrary bytes through the ONNX importer (and, when they import, the exporter)
// must yield a graph or an error, never a crash, hang or sanitizer report.
#include "core/onnx/OnnxExport.h"
#include "core/onnx/OnnxImport.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto graph = fb::importOnnxBytes(bytes, /*baseDir=*/"", "fuzz.onnx");
  if (graph.ok()) {
    // Whatever imports must also export (or fail with an error): the round trip is part of the
    // importer's contract.
    auto exported = fb::exportOnnxBytes(**graph);
    (void)exported;
  }
  return 0;
}
