// Reading a whole file that a user named (a model, an input, a tensor): only regular files, and
// only when the size fits under the memory limit, checked before reading. `/dev/zero`, a FIFO or
// a folder gets an error in words instead of a read that never ends.
#pragma once

#include "core/Error.h"

#include <string>

namespace fb {

/// The bytes of the regular file `path`. `what` names it in errors ("model", "input").
Expected<std::string> readRegularFile(const std::string& path, const char* what);

} // namespace fb
