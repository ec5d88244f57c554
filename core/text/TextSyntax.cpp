// Lexical rules of the text IR: name quoting, string escapes, float spelling and base64.
#include "core/text/TextSyntax.h"

#include <charconv>
#include <cmath>

namespace fb::text {

bool isBareNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '/' || c == '-';
}

bool isBareName(std::string_view name) {
  if (name.empty())
    return false;
  for (char c : name)
    if (!isBareNameChar(c))
      return false;
  return true;
}

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9') || c == '.'; }

bool isPlainIdentifier(std::string_view word) {
  if (word.empty() || !isIdentStart(word[0]))
    return false;
  for (char c : word)
    if (!isIdentChar(c))
      return false;
  return word != "inf" && word != "nan" && word != "true" && word != "false" && word != "_";
}

std::string quoteString(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (u < 0x20 || u == 0x7f) {
        out += "\\x";
        out += hex[u >> 4];
        out += hex[u & 15];
      } else {
        out += c;
      }
    }
  }
  out += '"';
  return out;
}

std::string formatName(char prefix, std::string_view name) {
  std::string out(1, prefix);
  out += isBareName(name) ? std::string(name) : quoteString(name);
  return out;
}

std::string formatWord(std::string_view word) {
  return isPlainIdentifier(word) ? std::string(word) : quoteString(word);
}

std::string formatFloat(float value) {
  if (std::isnan(value))
    return std::signbit(value) ? "-nan" : "nan";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  std::string s(buf, res.ptr);
  // to_chars writes 1.0f as "1": add ".0" so the reader sees a float, not an integer.
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

namespace {
const char kBase64Chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}
} // namespace

std::string encodeBase64(const std::byte* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8 | uint32_t(data[i + 2]);
    out += kBase64Chars[(v >> 18) & 63];
    out += kBase64Chars[(v >> 12) & 63];
    out += kBase64Chars[(v >> 6) & 63];
    out += kBase64Chars[v & 63];
  }
  if (size - i == 1) {
    uint32_t v = uint32_t(data[i]) << 16;
    out += kBase64Chars[(v >> 18) & 63];
    out += kBase64Chars[(v >> 12) & 63];
    out += "==";
  } else if (size - i == 2) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8;
    out += kBase64Chars[(v >> 18) & 63];
    out += kBase64Chars[(v >> 12) & 63];
    out += kBase64Chars[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::vector<std::byte>> decodeBase64(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      char c = text[i + k];
      int d = base64Value(c);
      if (c == '=' && last && k >= 2) {
        // Padding only at the very end, and nothing but padding after the first '='.
        if (k == 2 && text[i + 3] != '=')
          return std::nullopt;
        ++pad;
        d = 0;
      } else if (d < 0 || pad > 0) {
        return std::nullopt;
      }
      v = v << 6 | uint32_t(d);
    }
    out.push_back(std::byte(v >> 16));
    if (pad < 2)
      out.push_back(std::byte((v >> 8) & 255));
    if (pad < 1)
      out.push_back(std::byte(v & 255));
  }
  return out;
}

} // namespace fb::text
