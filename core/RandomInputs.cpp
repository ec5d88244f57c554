// Seeded random inputs.
#include "core/RandomInputs.h"

#include <cmath>

namespace fb {

uint64_t SeededRandom::next() {
  uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SeededRandom::uniform() { return double(next() >> 11) * 0x1.0p-53; }

double SeededRandom::normal() {
  double u1 = uniform(), u2 = uniform();
  if (u1 < 1e-300)
    u1 = 1e-300;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::vector<int64_t> resolveSizes(const TensorType& type,
                                  const std::map<std::string, int64_t>& bindings) {
  std::vector<int64_t> sizes;
  for (const Dim& d : type.dims) {
    if (d.isStatic())
      sizes.push_back(d.size());
    else if (d.isSymbol() && bindings.count(d.symbolName()))
      sizes.push_back(bindings.at(d.symbolName()));
    else
      sizes.push_back(1);
  }
  return sizes;
}

Tensor randomTensor(DType dtype, const std::vector<int64_t>& sizes, SeededRandom& rng) {
  Tensor t(dtype, sizes);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v;
    switch (dtype) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: v = rng.uniform() * 2.0 - 1.0; break;
    case DType::I8: v = double(int64_t(rng.next() % 256) - 128); break;
    case DType::U8: v = double(rng.next() % 256); break;
    case DType::I32:
    case DType::I64: v = double(rng.next() % 8); break;
    case DType::Bool: v = double(rng.next() & 1); break;
    default: assert(false && "unknown dtype"); v = 0;
    }
    t.setFromDouble(i, v);
  }
  return t;
}

Expected<std::vector<Tensor>> makeRandomInputs(const Graph& graph, uint64_t seed,
                                               const std::map<std::string, int64_t>& bindings) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < graph.inputs().size(); ++k) {
    const Value* in = graph.inputs()[k];
    std::vector<int64_t> sizes = resolveSizes(in->type(), bindings);
    auto n = checkedProduct(sizes);
    if (!n || *n > (int64_t(1) << 31))
      return makeError("input '", in->name(), "' of type ", in->type().str(),
                       " is too large for random inputs");
    SeededRandom rng(seed * 0x100000001b3ull + k);
    out.push_back(randomTensor(in->type().dtype, sizes, rng));
  }
  return out;
}

} // namespace fb
