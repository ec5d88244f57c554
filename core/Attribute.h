// Typed node attributes: int, float, string, lists of those, and tensors.
#pragma once

#include "core/Tensor.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace fb {

/// One attribute value. Floats are stored as float, as ONNX stores them, so round trips are exact.
using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

/// Attributes of a node, ordered by name so printing and comparison are deterministic.
class AttrMap {
public:
  bool has(const std::string& name) const { return m_attrs.count(name) != 0; }
  const AttrValue* find(const std::string& name) const;
  void set(const std::string& name, AttrValue value) { m_attrs[name] = std::move(value); }
  void erase(const std::string& name) { m_attrs.erase(name); }
  bool empty() const { return m_attrs.empty(); }
  size_t size() const { return m_attrs.size(); }
  auto begin() const { return m_attrs.begin(); }
  auto end() const { return m_attrs.end(); }

  /// Typed getters with a default for an absent attribute. A present attribute of another type
  /// yields an error naming it.
  Expected<int64_t> getInt(const std::string& name, int64_t dflt) const;
  Expected<float> getFloat(const std::string& name, float dflt) const;
  Expected<std::string> getString(const std::string& name, const std::string& dflt) const;
  Expected<std::vector<int64_t>> getInts(const std::string& name,
                                         const std::vector<int64_t>& dflt) const;
  Expected<std::vector<float>> getFloats(const std::string& name,
                                         const std::vector<float>& dflt) const;
  /// A required tensor attribute.
  Expected<Tensor> getTensor(const std::string& name) const;

  /// Structural equality (tensors compared by contents).
  bool operator==(const AttrMap& other) const;

private:
  std::map<std::string, AttrValue> m_attrs;
};

/// "int", "float", "string", "ints", "floats", "strings" or "tensor".
const char* attrKindName(const AttrValue& value);
/// Equality of two attribute values (tensors by contents).
bool attrEquals(const AttrValue& a, const AttrValue& b);

} // namespace fb
