// Element copies through per-dimension offset maps, shared by the data-movement ops.
#include "core/ops/DataCopy.h"

#include "core/MemoryLimit.h"

#include <cstring>

namespace fb {

namespace {

// Copies with a fixed element width W so the inner loop moves whole words.
template <typename W>
void copyLoop(const std::byte* src, std::byte* dst, const std::vector<int64_t>& outSizes,
              const std::vector<std::vector<int64_t>>& offsets, const std::byte* fill) {
  W fillWord{};
  if (fill)
    std::memcpy(&fillWord, fill, sizeof(W));
  const W* in = reinterpret_cast<const W*>(src);
  W* out = reinterpret_cast<W*>(dst);
  size_t rank = outSizes.size();
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  // prefix[d] is the offset contributed by dims [0, d); prefixOutside[d] whether any of them is
  // outside the input.
  std::vector<int64_t> prefix(rank, 0);
  std::vector<char> prefixOutside(rank, 0);
  std::vector<int64_t> index(rank, 0);
  const std::vector<int64_t>& innerMap = offsets[rank - 1];
  int64_t inner = outSizes[rank - 1];
  int64_t pos = 0;
  auto recomputePrefixes = [&](size_t from) {
    for (size_t k = from; k + 1 < rank; ++k) {
      int64_t o = offsets[k][size_t(index[k])];
      prefixOutside[k + 1] = prefixOutside[k] || o == kOutsideInput;
      prefix[k + 1] = prefixOutside[k + 1] ? 0 : prefix[k] + o;
    }
  };
  recomputePrefixes(0);
  for (;;) {
    int64_t base = prefix[rank - 1];
    if (prefixOutside[rank - 1]) {
      for (int64_t j = 0; j < inner; ++j)
        out[pos++] = fillWord;
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t o = innerMap[size_t(j)];
        out[pos++] = o == kOutsideInput ? fillWord : in[base + o];
      }
    }
    // Advance the odometer over dims [0, rank-1) and recompute the prefixes below the carry.
    size_t d = rank - 1;
    for (;;) {
      if (d == 0)
        return;
      --d;
      if (++index[d] < outSizes[d])
        break;
      index[d] = 0;
    }
    recomputePrefixes(d);
  }
}

} // namespace

Expected<bool> checkCopyOutput(DType dtype, const std::vector<int64_t>& outSizes) {
  if (auto bytes = checkedTensorBytes(dtype, outSizes); !bytes.ok())
    return bytes.error();
  for (int64_t n : outSizes)
    if (n == 0)
      return false;
  return true;
}

Expected<Tensor> copyWithOffsets(const Tensor& in, const std::vector<int64_t>& outSizes,
                                 const std::vector<std::vector<int64_t>>& offsets,
                                 const std::byte* fill) {
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(in.dtype(), outSizes));
  if (out.numElements() == 0)
    return out;
  assert(offsets.size() == outSizes.size() && "one offset map per output dim");
  for (size_t d = 0; d < outSizes.size(); ++d)
    assert(int64_t(offsets[d].size()) == outSizes[d] && "offset map length must match the dim");
  std::byte* dst = out.mutableRawData();
  const std::byte* src = in.rawData();
  switch (dtypeSize(in.dtype())) {
  case 1: copyLoop<uint8_t>(src, dst, outSizes, offsets, fill); break;
  case 2: copyLoop<uint16_t>(src, dst, outSizes, offsets, fill); break;
  case 4: copyLoop<uint32_t>(src, dst, outSizes, offsets, fill); break;
  case 8: copyLoop<uint64_t>(src, dst, outSizes, offsets, fill); break;
  default: assert(false && "unexpected element size"); break;
  }
  return out;
}

std::optional<std::vector<int64_t>> knownInts(const InferContext& ctx, size_t i) {
  auto dims = ctx.inputShapeValue(i);
  if (!dims)
    return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(dims->size());
  for (const Dim& d : *dims) {
    if (!d.isStatic())
      return std::nullopt;
    out.push_back(d.size());
  }
  return out;
}

std::string dimsString(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i].str();
  return s + "]";
}

std::string sizesString(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

bool canHoldShapeValue(const TensorType& type) {
  return type.rank() <= 1 && isInteger(type.dtype);
}

void setSmallShapeValue(InferContext& ctx, size_t i, std::vector<Dim> dims) {
  if (dims.size() <= kMaxShapeValueLength)
    ctx.setOutputShapeValue(i, std::move(dims));
}

OpCost zeroFlopsCost(const CostContext&) { return OpCost{}; }

} // namespace fb
