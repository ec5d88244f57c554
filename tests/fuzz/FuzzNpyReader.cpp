// libFuzzer target: arbitrary bytes through the .npy reader must yield a tensor or an error, never
// a crash, hang or sanitizer report; a tensor it reads must write and read back identically.
#include "core/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensor = fb::parseNpy(bytes, "fuzz.npy");
  if (!tensor.ok())
    return 0;
  if (tensor->byteSize() > (size_t(1) << 24))
    return 0; // a legal header may promise more than is worth writing back
  static const std::string path =
      (std::filesystem::temp_directory_path() / "fusebox-fuzz-npy-roundtrip.npy").string();
  if (!fb::writeNpy(path, *tensor).ok())
    return 0;
  auto again = fb::readNpy(path);
  if (!again.ok() || !again->identical(*tensor)) {
    std::fprintf(stderr, "a .npy the reader accepted does not round-trip: %s\n",
                 again.ok() ? "contents differ" : again.error().message().c_str());
    std::abort();
  }
  return 0;
}
