// A recursive-descent JSON parser into JsonValue trees.
#include "app/workbench/JsonValue.h"

#include <cctype>
#include <cstdlib>

namespace fb::workbench {

const JsonValue* JsonValue::find(const std::string& key) const {
  if (kind != Kind::Object)
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

namespace {

/// Nesting deeper than this is refused rather than risking the stack on a hostile file.
constexpr int kMaxDepth = 256;

class JsonParser {
public:
  explicit JsonParser(std::string_view text) : m_text(text) {}

  Expected<JsonValue> document() {
    FB_ASSIGN_OR_RETURN(JsonValue v, value(0));
    skipSpace();
    if (m_pos != m_text.size())
      return fail("end of the document");
    return v;
  }

private:
  Error fail(const std::string& expected) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < m_pos && i < m_text.size(); ++i) {
      if (m_text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Error("JSON line " + std::to_string(line) + " column " + std::to_string(column) +
                 ": expected " + expected);
  }

  void skipSpace() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\n' ||
                                     m_text[m_pos] == '\r' || m_text[m_pos] == '\t'))
      ++m_pos;
  }

  bool consume(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word)
      return false;
    m_pos += word.size();
    return true;
  }

  Expected<JsonValue> value(int depth) {
    if (depth > kMaxDepth)
      return fail("at most " + std::to_string(kMaxDepth) + " levels of nesting");
    skipSpace();
    JsonValue v;
    if (m_pos >= m_text.size())
      return fail("a value");
    char c = m_text[m_pos];
    if (c == '{')
      return object(depth);
    if (c == '[')
      return array(depth);
    if (c == '"') {
      v.kind = JsonValue::Kind::String;
      FB_ASSIGN_OR_RETURN(v.string, string());
      return v;
    }
    if (consume("true") || consume("false")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = m_text[m_pos - 1] == 'e' && m_text[m_pos - 2] == 'u';
      return v;
    }
    if (consume("null"))
      return v;
    return number();
  }

  Expected<JsonValue> number() {
    size_t start = m_pos;
    if (m_pos < m_text.size() && m_text[m_pos] == '-')
      ++m_pos;
    while (m_pos < m_text.size() &&
           (std::isdigit(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '.' ||
            m_text[m_pos] == 'e' || m_text[m_pos] == 'E' || m_text[m_pos] == '+' ||
            m_text[m_pos] == '-'))
      ++m_pos;
    std::string digits(m_text.substr(start, m_pos - start));
    char* end = nullptr;
    double d = digits.empty() ? 0 : std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size()) {
      m_pos = start;
      return fail("a value");
    }
    JsonValue v;
    v.kind = JsonValue::Kind::Number;
    v.number = d;
    return v;
  }

  static void appendUtf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  Expected<unsigned> hex4() {
    if (m_pos + 4 > m_text.size())
      return fail("four hex digits");
    unsigned cp = 0;
    for (int i = 0; i < 4; ++i) {
      char h = m_text[m_pos++];
      cp <<= 4;
      if (h >= '0' && h <= '9')
        cp |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f')
        cp |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        cp |= unsigned(h - 'A' + 10);
      else
        return fail("four hex digits");
    }
    return cp;
  }

  Expected<std::string> string() {
    ++m_pos; // the opening quote
    std::string out;
    while (m_pos < m_text.size()) {
      char c = m_text[m_pos++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("no control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (m_pos >= m_text.size())
        break;
      char e = m_text[m_pos++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        FB_ASSIGN_OR_RETURN(unsigned cp, hex4());
        if (cp >= 0xD800 && cp < 0xDC00 && consume("\\u")) {
          FB_ASSIGN_OR_RETURN(unsigned low, hex4());
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --m_pos;
        return fail("a valid escape");
      }
    }
    return fail("the closing quote of a string");
  }

  Expected<JsonValue> array(int depth) {
    ++m_pos;
    JsonValue v;
    v.kind = JsonValue::Kind::Array;
    skipSpace();
    if (consume("]"))
      return v;
    while (true) {
      FB_ASSIGN_OR_RETURN(JsonValue element, value(depth + 1));
      v.array.push_back(std::move(element));
      skipSpace();
      if (consume("]"))
        return v;
      if (!consume(","))
        return fail("',' or ']'");
    }
  }

  Expected<JsonValue> object(int depth) {
    ++m_pos;
    JsonValue v;
    v.kind = JsonValue::Kind::Object;
    skipSpace();
    if (consume("}"))
      return v;
    while (true) {
      skipSpace();
      if (m_pos >= m_text.size() || m_text[m_pos] != '"')
        return fail("a key string");
      FB_ASSIGN_OR_RETURN(std::string key, string());
      skipSpace();
      if (!consume(":"))
        return fail("':'");
      FB_ASSIGN_OR_RETURN(JsonValue member, value(depth + 1));
      v.object[key] = std::move(member);
      skipSpace();
      if (consume("}"))
        return v;
      if (!consume(","))
        return fail("',' or '}'");
    }
  }

  std::string_view m_text;
  size_t m_pos = 0;
};

} // namespace

Expected<JsonValue> parseJson(std::string_view text) {
  return JsonParser(text).document();
}

} // namespace fb::workbench
