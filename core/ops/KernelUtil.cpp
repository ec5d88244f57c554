// Axis normalization, broadcasting and strided iteration shared by the op implementations.
#include "core/ops/KernelUtil.h"

#include <algorithm>
#include <set>

namespace fb {

Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return makeError("axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

Expected<std::vector<int64_t>> normalizeAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    FB_ASSIGN_OR_RETURN(int64_t n, normalizeAxis(a, rank));
    if (!seen.insert(n).second)
      return makeError("axis ", a, " is repeated");
    out.push_back(n);
  }
  return out;
}

static std::string dimsStr(const std::vector<Dim>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + d[i].str();
  return s + "]";
}

Expected<std::vector<Dim>> broadcastDims(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim one(1);
    const Dim& da = i < rank - a.size() ? one : a[i - (rank - a.size())];
    const Dim& db = i < rank - b.size() ? one : b[i - (rank - b.size())];
    if (da == db)
      out[i] = da;
    else if (da.isStatic() && da.size() == 1)
      out[i] = db;
    else if (db.isStatic() && db.size() == 1)
      out[i] = da;
    else if (da.isStatic() && db.isStatic())
      return makeError("shapes ", dimsStr(a), " and ", dimsStr(b), " cannot be broadcast (dim ",
                       i, ": ", da.size(), " vs ", db.size(), ")");
    else if (da.isStatic())
      out[i] = da; // the symbol must equal da (or be 1) at run time
    else if (db.isStatic())
      out[i] = db;
    else
      out[i] = Dim::unknown();
  }
  return out;
}

Expected<std::vector<Dim>> broadcastDimsAll(const std::vector<std::vector<Dim>>& shapes) {
  std::vector<Dim> acc;
  for (const auto& s : shapes) {
    FB_ASSIGN_OR_RETURN(acc, broadcastDims(acc, s));
  }
  return acc;
}

Expected<std::vector<int64_t>> broadcastSizes(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return makeError("shapes ", dimsStr(dimsOf(a)), " and ", dimsStr(dimsOf(b)),
                       " cannot be broadcast");
  }
  return out;
}

std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& inSizes,
                                      const std::vector<int64_t>& outSizes) {
  std::vector<int64_t> strides(outSizes.size(), 0);
  int64_t acc = 1;
  size_t offset = outSizes.size() - inSizes.size();
  for (size_t i = inSizes.size(); i-- > 0;) {
    strides[i + offset] = inSizes[i] == 1 ? 0 : acc;
    acc *= inSizes[i];
  }
  return strides;
}

void forEachBroadcast(const std::vector<int64_t>& outSizes,
                      const std::vector<std::vector<int64_t>>& inStrides,
                      const std::function<void(int64_t, const int64_t*)>& fn) {
  size_t rank = outSizes.size();
  size_t nIn = inStrides.size();
  int64_t total = 1;
  for (int64_t s : outSizes)
    total *= s;
  if (total == 0)
    return;
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> offsets(nIn, 0);
  // Iterate the innermost dimension in a tight loop; carry into outer dimensions.
  int64_t inner = rank ? outSizes[rank - 1] : 1;
  std::vector<int64_t> innerStride(nIn, 0);
  for (size_t k = 0; k < nIn; ++k)
    innerStride[k] = rank ? inStrides[k][rank - 1] : 0;
  std::vector<int64_t> cur(nIn);
  for (int64_t out = 0; out < total; out += inner) {
    for (size_t k = 0; k < nIn; ++k)
      cur[k] = offsets[k];
    for (int64_t j = 0; j < inner; ++j) {
      fn(out + j, cur.data());
      for (size_t k = 0; k < nIn; ++k)
        cur[k] += innerStride[k];
    }
    // Advance the multi-index over dims [0, rank-1).
    for (size_t d = rank ? rank - 1 : 0; d-- > 0;) {
      ++index[d];
      for (size_t k = 0; k < nIn; ++k)
        offsets[k] += inStrides[k][d];
      if (index[d] < outSizes[d])
        break;
      for (size_t k = 0; k < nIn; ++k)
        offsets[k] -= inStrides[k][d] * outSizes[d];
      index[d] = 0;
    }
  }
}

std::optional<int64_t> staticProduct(const std::vector<Dim>& dims) {
  int64_t p = 1;
  for (const Dim& d : dims) {
    if (!d.isStatic())
      return std::nullopt;
    if (__builtin_mul_overflow(p, d.size(), &p))
      return std::nullopt; // no such tensor; shape inference refuses the type
  }
  return p;
}

Dim mulDims(const Dim& a, const Dim& b) {
  if (a.isStatic() && b.isStatic()) {
    // An overflowing product becomes -1, which shape inference refuses (checkCountable).
    int64_t p = 0;
    return __builtin_mul_overflow(a.size(), b.size(), &p) ? Dim(-1) : Dim(p);
  }
  if (a.isStatic() && a.size() == 1)
    return b;
  if (b.isStatic() && b.size() == 1)
    return a;
  return Dim::unknown();
}

std::vector<Dim> dimsOf(const std::vector<int64_t>& sizes) {
  std::vector<Dim> out;
  for (int64_t s : sizes)
    out.emplace_back(s);
  return out;
}

bool dimsConflict(const Dim& a, const Dim& b) {
  return a.isStatic() && b.isStatic() && a.size() != b.size();
}

std::vector<int64_t> tensorToInts(const Tensor& t) {
  if (!t.valid())
    return {};
  return t.toInt64Vector();
}

} // namespace fb
