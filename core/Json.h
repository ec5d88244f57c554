// A small JSON writer for machine-readable reports (--json), with correct string escaping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

/// Writes one JSON document incrementally: objects, arrays and scalars, with commas handled.
///   JsonWriter w; w.beginObject(); w.key("nodes"); w.value(12); w.endObject(); w.str();
class JsonWriter {
public:
  void beginObject();
  void endObject();
  void beginArray();
  void endArray();
  /// Writes an object key; the next call writes its value.
  void key(std::string_view k);
  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(int64_t v);
  void value(int v) { value(int64_t(v)); }
  void value(uint64_t v);
  void value(double v);
  void value(bool v);
  void null();
  /// A key and its value at once.
  template <typename T> void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  /// The document so far.
  const std::string& str() const { return m_out; }

private:
  void separate();
  std::string m_out;
  std::vector<bool> m_first; // per open container: no element written yet
  bool m_afterKey = false;
};

/// Escapes a string as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view s);

} // namespace fb
