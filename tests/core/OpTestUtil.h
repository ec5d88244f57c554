// Helpers the core op tests share: tensor values as doubles, comparison within float32 ulps of
// a NumPy reference, error-message checks and attribute maps.
#pragma once

#include "core/Graph.h"

#include <QtGlobal>

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace fb::test {

/// Elements of a tensor as doubles.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numElements(); ++i)
    v.push_back(t.getAsDouble(i));
  return v;
}

/// Element-wise comparison within `tol` relative to max(1, |want|) (a few float32 ulps by
/// default); the first differing element is reported.
inline bool near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 2e-6) {
  if (got.size() != want.size()) {
    qWarning("%zu elements, want %zu", got.size(), want.size());
    return false;
  }
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * std::max(1.0, std::fabs(want[i])))) {
      qWarning("element %zu: got %.9g, want %.9g", i, got[i], want[i]);
      return false;
    }
  return true;
}

/// True when the error's message contains `s` (else the message is reported).
inline bool contains(const Error& e, const std::string& s) {
  if (e.message().find(s) != std::string::npos)
    return true;
  qWarning("message '%s' lacks '%s'", e.message().c_str(), s.c_str());
  return false;
}

/// An attribute map from name/value pairs.
inline AttrMap attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  AttrMap m;
  for (const auto& [k, v] : list)
    m.set(k, v);
  return m;
}

} // namespace fb::test
