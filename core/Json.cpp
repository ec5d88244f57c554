// JsonWriter.
#include "core/Json.h"

#include <cassert>
#include <cmath>
#include <cstdio>

namespace fb {

std::string jsonQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

void JsonWriter::separate() {
  if (m_afterKey) {
    m_afterKey = false;
    return;
  }
  if (!m_first.empty()) {
    if (!m_first.back())
      m_out += ",";
    m_first.back() = false;
  }
}

void JsonWriter::beginObject() {
  separate();
  m_out += "{";
  m_first.push_back(true);
}
void JsonWriter::endObject() {
  assert(!m_first.empty() && "endObject without beginObject");
  m_first.pop_back();
  m_out += "}";
}
void JsonWriter::beginArray() {
  separate();
  m_out += "[";
  m_first.push_back(true);
}
void JsonWriter::endArray() {
  assert(!m_first.empty() && "endArray without beginArray");
  m_first.pop_back();
  m_out += "]";
}
void JsonWriter::key(std::string_view k) {
  separate();
  m_out += jsonQuote(k);
  m_out += ":";
  m_afterKey = true;
}
void JsonWriter::value(std::string_view s) {
  separate();
  m_out += jsonQuote(s);
}
void JsonWriter::value(int64_t v) {
  separate();
  m_out += std::to_string(v);
}
void JsonWriter::value(uint64_t v) {
  separate();
  m_out += std::to_string(v);
}
void JsonWriter::value(double v) {
  separate();
  if (!std::isfinite(v)) {
    m_out += "null"; // JSON has no inf/nan
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  m_out += buf;
}
void JsonWriter::value(bool v) {
  separate();
  m_out += v ? "true" : "false";
}
void JsonWriter::null() {
  separate();
  m_out += "null";
}

} // namespace fb
