// Factories of every pass (the factory-only header: each pass's class lives in its .cpp).
#pragma once

#include "passes/Pass.h"

#include <memory>

namespace fb {

#define PASS(Factory, Name) std::unique_ptr<Pass> Factory();
#include "passes/Passes.def"

} // namespace fb
