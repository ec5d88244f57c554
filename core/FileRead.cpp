#include "core/FileRead.h"
#include "core/MemoryLimit.h"

#include <filesystem>
#include <fstream>

namespace fb {

Expected<std::string> readRegularFile(const std::string& path, const char* what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec); // follows symlinks: a link to /dev/zero is refused
  if (ec || !fs::exists(st))
    return makeError(path, ": no such file");
  if (fs::is_directory(st))
    return makeError(path, ": is a folder, not a ", what, " file");
  if (!fs::is_regular_file(st))
    return makeError(path, ": is not a regular file (a device, FIFO or socket); ", what,
                     " files are read from regular files only");
  uintmax_t size = fs::file_size(path, ec);
  if (ec)
    return makeError(path, ": cannot read its size: ", ec.message());
  FB_TRY(checkAllocation(size, path + " (" + what + " file)"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(path, ": cannot open");
  std::string bytes(size_t(size), '\0');
  in.read(bytes.data(), std::streamsize(size));
  if (in.gcount() != std::streamsize(size))
    return makeError(path, ": read ", in.gcount(), " of ", size, " bytes (the file changed?)");
  return bytes;
}

} // namespace fb
