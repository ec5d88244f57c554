// Typed attribute access with defaults and type errors.
#include "core/Attribute.h"

namespace fb {

const AttrValue* AttrMap::find(const std::string& name) const {
  auto it = m_attrs.find(name);
  return it == m_attrs.end() ? nullptr : &it->second;
}

namespace {
template <typename T>
Expected<T> getTyped(const AttrMap& m, const std::string& name, const T& dflt, const char* want) {
  const AttrValue* v = m.find(name);
  if (!v)
    return dflt;
  if (const T* p = std::get_if<T>(v))
    return *p;
  return makeError("attribute '", name, "' is ", attrKindName(*v), ", expected ", want);
}
} // namespace

Expected<int64_t> AttrMap::getInt(const std::string& name, int64_t dflt) const {
  return getTyped<int64_t>(*this, name, dflt, "int");
}
Expected<float> AttrMap::getFloat(const std::string& name, float dflt) const {
  // An integer literal is accepted where a float is wanted.
  if (const AttrValue* v = find(name))
    if (const int64_t* i = std::get_if<int64_t>(v))
      return float(*i);
  return getTyped<float>(*this, name, dflt, "float");
}
Expected<std::string> AttrMap::getString(const std::string& name, const std::string& dflt) const {
  return getTyped<std::string>(*this, name, dflt, "string");
}
Expected<std::vector<int64_t>> AttrMap::getInts(const std::string& name,
                                                const std::vector<int64_t>& dflt) const {
  return getTyped<std::vector<int64_t>>(*this, name, dflt, "ints");
}
Expected<std::vector<float>> AttrMap::getFloats(const std::string& name,
                                                const std::vector<float>& dflt) const {
  return getTyped<std::vector<float>>(*this, name, dflt, "floats");
}
Expected<Tensor> AttrMap::getTensor(const std::string& name) const {
  const AttrValue* v = find(name);
  if (!v)
    return makeError("required attribute '", name, "' is missing");
  if (const Tensor* t = std::get_if<Tensor>(v))
    return *t;
  return makeError("attribute '", name, "' is ", attrKindName(*v), ", expected tensor");
}

bool AttrMap::operator==(const AttrMap& other) const {
  if (m_attrs.size() != other.m_attrs.size())
    return false;
  for (auto a = m_attrs.begin(), b = other.m_attrs.begin(); a != m_attrs.end(); ++a, ++b)
    if (a->first != b->first || !attrEquals(a->second, b->second))
      return false;
  return true;
}

const char* attrKindName(const AttrValue& value) {
  switch (value.index()) {
  case 0: return "int";
  case 1: return "float";
  case 2: return "string";
  case 3: return "ints";
  case 4: return "floats";
  case 5: return "strings";
  case 6: return "tensor";
  }
  assert(false && "unknown attribute kind");
  return "?";
}

bool attrEquals(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index())
    return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Tensor>)
          return x.identical(std::get<Tensor>(b));
        else
          return x == std::get<X>(b);
      },
      a);
}

} // namespace fb
