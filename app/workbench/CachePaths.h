// Where the workbench keeps what it learns about this machine: files next to the kernel cache.
#pragma once

#include <string>

namespace fb::workbench {

/// $XDG_CACHE_HOME/fusebox/NAME, else $HOME/.cache/fusebox/NAME; "" without either variable.
std::string fuseboxCacheFile(const std::string& name);

} // namespace fb::workbench
