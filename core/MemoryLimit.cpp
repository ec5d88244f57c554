#include "core/MemoryLimit.h"
#include "core/Format.h"

#include <cctype>
#include <cstdlib>
#include <unistd.h>

namespace fb {

namespace {

uint64_t parseLimit(const char* text) {
  if (!text || !*text)
    return 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text)
    return 0;
  uint64_t scale = 1;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
  case 'K': scale = uint64_t(1) << 10; break;
  case 'M': scale = uint64_t(1) << 20; break;
  case 'G': scale = uint64_t(1) << 30; break;
  case 'T': scale = uint64_t(1) << 40; break;
  default: break;
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(uint64_t(v), scale, &bytes))
    return UINT64_MAX;
  return bytes;
}

uint64_t computeLimit() {
  if (uint64_t fromEnv = parseLimit(std::getenv("FUSEBOX_MEMORY_LIMIT")))
    return fromEnv;
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0)
    return uint64_t(8) << 30;
  return uint64_t(pages) * uint64_t(pageSize) / 2;
}

} // namespace

uint64_t memoryLimitBytes() {
  static const uint64_t limit = computeLimit();
  return limit;
}

Status checkAllocation(uint64_t bytes, const std::string& what) {
  if (bytes <= memoryLimitBytes())
    return Status::success();
  return makeError(what, " needs ", formatBytes(double(bytes)), ", more than the memory limit of ",
                   formatBytes(double(memoryLimitBytes())),
                   " (set FUSEBOX_MEMORY_LIMIT to change it)");
}

} // namespace fb
