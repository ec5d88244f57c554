// Exact conversions of activations, Conv weights and biases between NCHW, NHWC and NCHW8c.
#include "core/ops/LayoutTransform.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

namespace fb {

namespace {

/// Sizes of a logical NCHW activation: batch, channels, spatial positions.
struct ActivationShape {
  int64_t n = 1, c = 1, s = 1;
};

/// Where element (n, c, s) of a logical NCHW activation lives in `layout`.
int64_t activationOffset(DataLayout layout, const ActivationShape& a, int64_t n, int64_t c,
                         int64_t s) {
  switch (layout) {
  case DataLayout::NCHW: return (n * a.c + c) * a.s + s;
  case DataLayout::NHWC: return (n * a.s + s) * a.c + c;
  case DataLayout::NCHW8c:
    return ((n * channelBlocks(a.c) + c / kChannelBlock) * a.s + s) * kChannelBlock +
           c % kChannelBlock;
  }
  assert(false && "unknown layout");
  return 0;
}

/// Copies `count` elements of `elemSize` bytes from src[srcIndex(i)] to dst[dstIndex(i)]; the
/// index functions are called through one visitor so the copy stays a single loop.
template <typename Visit>
void moveElements(const Tensor& src, Tensor& dst, Visit visit) {
  const std::byte* in = src.rawData();
  std::byte* out = dst.mutableRawData();
  const size_t es = dtypeSize(src.dtype());
  visit([&](int64_t from, int64_t to) {
    std::memcpy(out + size_t(to) * es, in + size_t(from) * es, es);
  });
}

int64_t product(const std::vector<int64_t>& v, size_t first, size_t last) {
  int64_t p = 1;
  for (size_t i = first; i < last; ++i)
    p *= v[i];
  return p;
}

/// Sizes of the logical NCHW activation [N, C, spatial...] as stored in `layout`.
std::vector<int64_t> storedSizes(int64_t n, int64_t c, const std::vector<int64_t>& spatial,
                                 DataLayout layout) {
  std::vector<int64_t> s = {n};
  switch (layout) {
  case DataLayout::NCHW:
    s.push_back(c);
    s.insert(s.end(), spatial.begin(), spatial.end());
    break;
  case DataLayout::NHWC:
    s.insert(s.end(), spatial.begin(), spatial.end());
    s.push_back(c);
    break;
  case DataLayout::NCHW8c:
    s.push_back(channelBlocks(c));
    s.insert(s.end(), spatial.begin(), spatial.end());
    s.push_back(kChannelBlock);
    break;
  }
  return s;
}

/// Where W[m, c, k] (c within the group, k the flattened kernel position) lives in the packed
/// weight of `layout`. `kernelSize` is the product of the kernel dims. `outputLanesOnly`: the
/// NCHW8c OIHW8o packing (depthwise, or an NCHW input) instead of OIHW8i8o.
int64_t weightOffset(DataLayout layout, bool outputLanesOnly, int64_t m, int64_t c, int64_t k,
                     int64_t groupChannels, int64_t kernelSize) {
  switch (layout) {
  case DataLayout::NCHW: return (m * groupChannels + c) * kernelSize + k;
  case DataLayout::NHWC: return (m * kernelSize + k) * groupChannels + c;
  case DataLayout::NCHW8c: {
    const int64_t b = kChannelBlock;
    if (outputLanesOnly)
      return (((m / b) * groupChannels + c) * kernelSize + k) * b + m % b;
    const int64_t cb = channelBlocks(groupChannels);
    return ((((m / b) * cb + c / b) * kernelSize + k) * b + c % b) * b + m % b;
  }
  }
  assert(false && "unknown layout");
  return 0;
}

} // namespace

const char* layoutName(DataLayout layout) {
  switch (layout) {
  case DataLayout::NCHW: return "NCHW";
  case DataLayout::NHWC: return "NHWC";
  case DataLayout::NCHW8c: return "NCHW8c";
  }
  assert(false && "unknown layout");
  return "?";
}

Expected<DataLayout> parseLayout(std::string_view name) {
  std::string lower;
  for (char ch : name)
    lower += char(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "nchw")
    return DataLayout::NCHW;
  if (lower == "nhwc")
    return DataLayout::NHWC;
  if (lower == "nchw8c")
    return DataLayout::NCHW8c;
  return makeError("unknown layout '", std::string(name), "' (known: NCHW, NHWC, NCHW8c)");
}

Expected<std::vector<Dim>> dimsToLayout(const std::vector<Dim>& nchw, DataLayout to) {
  if (nchw.size() < 3)
    return makeError("a ", layoutName(to), " activation needs rank 3 or more (N, C, spatial...)");
  std::vector<Dim> out = {nchw[0]};
  switch (to) {
  case DataLayout::NCHW: return nchw;
  case DataLayout::NHWC:
    out.insert(out.end(), nchw.begin() + 2, nchw.end());
    out.push_back(nchw[1]);
    return out;
  case DataLayout::NCHW8c:
    if (!nchw[1].isStatic())
      return makeError("NCHW8c needs a static channel count, not ", nchw[1].str());
    out.emplace_back(channelBlocks(nchw[1].size()));
    out.insert(out.end(), nchw.begin() + 2, nchw.end());
    out.emplace_back(kChannelBlock);
    return out;
  }
  assert(false && "unknown layout");
  return out;
}

Expected<std::vector<Dim>> dimsFromLayout(const std::vector<Dim>& dims, DataLayout from,
                                          int64_t channels) {
  const size_t minRank = from == DataLayout::NCHW8c ? 4 : 3;
  if (dims.size() < minRank)
    return makeError("a ", layoutName(from), " activation needs rank ", minRank, " or more");
  if (channels < 1)
    return makeError("channel count ", channels, " must be positive");
  auto mismatch = [&](const Dim& d, int64_t want) { return d.isStatic() && d.size() != want; };
  std::vector<Dim> out = {dims[0], Dim(channels)};
  switch (from) {
  case DataLayout::NCHW:
    if (mismatch(dims[1], channels))
      break;
    out.insert(out.end(), dims.begin() + 2, dims.end());
    return out;
  case DataLayout::NHWC:
    if (mismatch(dims.back(), channels))
      break;
    out.insert(out.end(), dims.begin() + 1, dims.end() - 1);
    return out;
  case DataLayout::NCHW8c:
    if (mismatch(dims[1], channelBlocks(channels)) || mismatch(dims.back(), kChannelBlock))
      break;
    out.insert(out.end(), dims.begin() + 2, dims.end() - 1);
    return out;
  }
  std::string shown;
  for (const Dim& d : dims)
    shown += (shown.empty() ? "" : ", ") + d.str();
  return makeError("[", shown, "] is not a ", layoutName(from), " activation with ", channels,
                   " channels");
}

Dim visibleChannels(const std::vector<Dim>& dims, DataLayout layout) {
  if (dims.size() < 3)
    return Dim::unknown();
  switch (layout) {
  case DataLayout::NCHW: return dims[1];
  case DataLayout::NHWC: return dims.back();
  case DataLayout::NCHW8c: return Dim::unknown();
  }
  return Dim::unknown();
}

Expected<Tensor> tensorToLayout(const Tensor& nchw, DataLayout to) {
  if (nchw.rank() < 3)
    return makeError("a ", layoutName(to), " activation needs rank 3 or more, got ",
                     nchw.type().str());
  if (to == DataLayout::NCHW)
    return nchw;
  const auto& sizes = nchw.sizes();
  std::vector<int64_t> spatial(sizes.begin() + 2, sizes.end());
  ActivationShape a{sizes[0], sizes[1], product(sizes, 2, sizes.size())};
  FB_ASSIGN_OR_RETURN(Tensor out,
                      Tensor::create(nchw.dtype(), storedSizes(a.n, a.c, spatial, to)));
  moveElements(nchw, out, [&](auto copy) {
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t c = 0; c < a.c; ++c)
        for (int64_t s = 0; s < a.s; ++s)
          copy(activationOffset(DataLayout::NCHW, a, n, c, s), activationOffset(to, a, n, c, s));
  });
  return out;
}

Expected<Tensor> tensorFromLayout(const Tensor& t, DataLayout from, int64_t channels) {
  FB_ASSIGN_OR_RETURN(std::vector<Dim> nchwDims, dimsFromLayout(t.type().dims, from, channels));
  if (from == DataLayout::NCHW)
    return t;
  std::vector<int64_t> sizes;
  for (const Dim& d : nchwDims)
    sizes.push_back(d.size());
  ActivationShape a{sizes[0], sizes[1], product(sizes, 2, sizes.size())};
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(t.dtype(), sizes));
  moveElements(t, out, [&](auto copy) {
    for (int64_t n = 0; n < a.n; ++n)
      for (int64_t c = 0; c < a.c; ++c)
        for (int64_t s = 0; s < a.s; ++s)
          copy(activationOffset(from, a, n, c, s), activationOffset(DataLayout::NCHW, a, n, c, s));
  });
  return out;
}

Expected<std::vector<int64_t>> packedWeightSizes(int64_t outChannels, int64_t inChannels,
                                                 int64_t group,
                                                 const std::vector<int64_t>& kernel,
                                                 DataLayout to, bool inputBlocked) {
  if (group < 1 || inChannels % group != 0 || outChannels % group != 0)
    return makeError("channels ", inChannels, " -> ", outChannels, " do not split into ", group,
                     " groups");
  const int64_t groupChannels = inChannels / group;
  std::vector<int64_t> s;
  switch (to) {
  case DataLayout::NCHW:
    s = {outChannels, groupChannels};
    s.insert(s.end(), kernel.begin(), kernel.end());
    return s;
  case DataLayout::NHWC:
    s = {outChannels};
    s.insert(s.end(), kernel.begin(), kernel.end());
    s.push_back(groupChannels);
    return s;
  case DataLayout::NCHW8c:
    if (group == 1 && !inputBlocked) {
      s = {channelBlocks(outChannels), inChannels};
      s.insert(s.end(), kernel.begin(), kernel.end());
      s.push_back(kChannelBlock);
      return s;
    }
    if (group == 1) {
      s = {channelBlocks(outChannels), channelBlocks(inChannels)};
      s.insert(s.end(), kernel.begin(), kernel.end());
      s.push_back(kChannelBlock);
      s.push_back(kChannelBlock);
      return s;
    }
    if (group == inChannels && group == outChannels && inputBlocked) {
      s = {channelBlocks(outChannels), 1};
      s.insert(s.end(), kernel.begin(), kernel.end());
      s.push_back(kChannelBlock);
      return s;
    }
    return makeUnsupported("NCHW8c packs only plain (group 1) and depthwise (group = C = M) "
                           "convolutions, not group ",
                           group, " with ", inChannels, " -> ", outChannels, " channels");
  }
  assert(false && "unknown layout");
  return s;
}

Expected<Tensor> packConvWeight(const Tensor& w, int64_t group, DataLayout to,
                                bool inputBlocked) {
  if (w.rank() < 3)
    return makeError("Conv weight ", w.type().str(), " must have rank 3 or more");
  const auto& ws = w.sizes();
  const int64_t m = ws[0], groupChannels = ws[1];
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                      packedWeightSizes(m, groupChannels * group, group, kernel, to,
                                        inputBlocked));
  if (to == DataLayout::NCHW)
    return w;
  const int64_t kernelSize = product(ws, 2, ws.size());
  const bool outputLanesOnly = group > 1 || !inputBlocked;
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(w.dtype(), sizes));
  moveElements(w, out, [&](auto copy) {
    for (int64_t o = 0; o < m; ++o)
      for (int64_t c = 0; c < groupChannels; ++c)
        for (int64_t k = 0; k < kernelSize; ++k)
          copy(weightOffset(DataLayout::NCHW, false, o, c, k, groupChannels, kernelSize),
               weightOffset(to, outputLanesOnly, o, c, k, groupChannels, kernelSize));
  });
  return out;
}

Expected<Tensor> unpackConvWeight(const Tensor& packed, int64_t group, DataLayout from,
                                  int64_t inChannels, int64_t outChannels, bool inputBlocked) {
  const auto& ps = packed.sizes();
  // The kernel dims sit after the two leading dims (NCHW, NCHW8c) or the first (NHWC), before
  // the lane dims.
  size_t first = from == DataLayout::NHWC ? 1 : 2;
  size_t trailing = from == DataLayout::NHWC ? 1
                    : from == DataLayout::NCHW8c ? (group == 1 && inputBlocked ? 2 : 1)
                                                 : 0;
  if (ps.size() < first + trailing + 1)
    return makeError("packed ", layoutName(from), " Conv weight ", packed.type().str(),
                     " has too few dims");
  std::vector<int64_t> kernel(ps.begin() + long(first), ps.end() - long(trailing));
  FB_ASSIGN_OR_RETURN(std::vector<int64_t> want,
                      packedWeightSizes(outChannels, inChannels, group, kernel, from,
                                        inputBlocked));
  if (want != ps)
    return makeError("packed ", layoutName(from), " Conv weight is ", packed.type().str(),
                     " but ", inChannels, " -> ", outChannels, " channels with group ", group,
                     " need ", TensorType::of(packed.dtype(), want).str());
  if (from == DataLayout::NCHW)
    return packed;
  const int64_t groupChannels = inChannels / group;
  const int64_t kernelSize = product(kernel, 0, kernel.size());
  std::vector<int64_t> sizes = {outChannels, groupChannels};
  sizes.insert(sizes.end(), kernel.begin(), kernel.end());
  const bool outputLanesOnly = group > 1 || !inputBlocked;
  FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(packed.dtype(), sizes));
  moveElements(packed, out, [&](auto copy) {
    for (int64_t o = 0; o < outChannels; ++o)
      for (int64_t c = 0; c < groupChannels; ++c)
        for (int64_t k = 0; k < kernelSize; ++k)
          copy(weightOffset(from, outputLanesOnly, o, c, k, groupChannels, kernelSize),
               weightOffset(DataLayout::NCHW, false, o, c, k, groupChannels, kernelSize));
  });
  return out;
}

Tensor packConvBias(const Tensor& bias, DataLayout to) {
  if (to != DataLayout::NCHW8c)
    return bias;
  const int64_t m = bias.numElements();
  Tensor out(bias.dtype(), {channelBlocks(m), kChannelBlock});
  std::memcpy(out.mutableRawData(), bias.rawData(), bias.byteSize());
  return out;
}

Expected<Tensor> unpackConvBias(const Tensor& packed, DataLayout from, int64_t outChannels) {
  if (from != DataLayout::NCHW8c) {
    if (packed.rank() != 1 || packed.sizes()[0] != outChannels)
      return makeError("Conv bias ", packed.type().str(), " must be [", outChannels, "]");
    return packed;
  }
  if (packed.rank() != 2 || packed.sizes()[0] != channelBlocks(outChannels) ||
      packed.sizes()[1] != kChannelBlock)
    return makeError("packed NCHW8c Conv bias ", packed.type().str(), " must be [",
                     channelBlocks(outChannels), ", ", kChannelBlock, "]");
  Tensor out(packed.dtype(), {outChannels});
  std::memcpy(out.mutableRawData(), packed.rawData(), out.byteSize());
  return out;
}

} // namespace fb
