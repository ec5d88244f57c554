// Stub: ops of this group are not registered yet.
#include "core/ops/OpContext.h"
#include "core/ops/OpRegistration.h"

namespace fb {
void registerPoolingOps(OpRegistry&) {}
} // namespace fb
