// The memory limit: the largest single allocation Fusebox attempts for a tensor or a file.
// An allocation that cannot succeed becomes an error naming what and how much before it is
// tried, instead of std::bad_alloc (an abort in a tool) or the kernel's OOM killer.
#pragma once

#include "core/DType.h"
#include "core/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fb {

/// The limit in bytes: $FUSEBOX_MEMORY_LIMIT when set (bytes, or with a K, M, G or T suffix),
/// else half of the machine's physical memory. Read once.
uint64_t memoryLimitBytes();

/// Success when `bytes` fits under the limit; otherwise an error "WHAT needs N, more than the
/// memory limit of M (set FUSEBOX_MEMORY_LIMIT to change it)".
Status checkAllocation(uint64_t bytes, const std::string& what);

/// The byte size of a tensor of `dtype` and `sizes`, or an error when it overflows or exceeds
/// the limit: the check Tensor::create makes, for kernels that must refuse an output before
/// building anything as large as its dims (defined in Tensor.cpp).
Expected<size_t> checkedTensorBytes(DType dtype, const std::vector<int64_t>& sizes);

/// Thrown by Tensor's constructor for sizes that overflow or exceed the limit, so a kernel that
/// sizes its output at run time fails cleanly; the interpreter and the executor catch it per node
/// and return its message as an error. Never escapes a library.
struct AllocationRefused : std::bad_alloc {
  explicit AllocationRefused(std::string why) : message(std::move(why)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

} // namespace fb
