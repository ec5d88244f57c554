// The cache folder under the XDG base directory rules.
#include "app/workbench/CachePaths.h"

#include <cstdlib>
#include <filesystem>

namespace fb::workbench {

std::string fuseboxCacheFile(const std::string& name) {
  std::filesystem::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = std::filesystem::path(home) / ".cache";
  else
    return "";
  return (base / "fusebox" / name).string();
}

} // namespace fb::workbench
