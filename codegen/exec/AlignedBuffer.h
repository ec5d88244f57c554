// A zero-filled, 64-byte-aligned block of memory for the executor's arena, separate activations
// and kernel workspace, allocated only after the memory limit allows it.
#pragma once

#include "core/Error.h"
#include "core/MemoryLimit.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace fb::cg {

class AlignedBuffer {
public:
  AlignedBuffer() = default;

  /// `bytes` (at least 1, rounded up to 64) of zeros, or an error naming `what` when the size
  /// is negative, exceeds the memory limit, or the allocator refuses it: a kernel must never
  /// be handed a null or short buffer.
  static Expected<AlignedBuffer> allocate(int64_t bytes, const std::string& what) {
    if (bytes < 0)
      return makeError(what, " has a negative size (", bytes, " bytes)");
    FB_TRY(checkAllocation(uint64_t(bytes), what));
    size_t n = (size_t(std::max<int64_t>(bytes, 1)) + 63) / 64 * 64;
    AlignedBuffer b;
    b.m_data.reset(static_cast<std::byte*>(std::aligned_alloc(64, n)));
    if (!b.m_data)
      return makeError(what, ": cannot allocate ", bytes, " bytes");
    std::memset(b.m_data.get(), 0, n);
    return b;
  }

  std::byte* data() const { return m_data.get(); }

private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> m_data; ///< owned; freed with std::free (aligned_alloc)
};

} // namespace fb::cg
