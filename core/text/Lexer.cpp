// The tokenizer of the text IR.
#include "core/text/Lexer.h"
#include "core/text/TextSyntax.h"

#include <cassert>

namespace fb::text {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }

int hexValue(char c) {
  if (isDigit(c))
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Keeps error messages short and printable when they quote input text.
std::string clip(const std::string& s) {
  std::string q = quoteString(s.size() > 40 ? s.substr(0, 40) + "..." : s);
  return q;
}
} // namespace

std::string Token::describe() const {
  switch (kind) {
  case TokenKind::Eof: return "end of input";
  case TokenKind::Error: return text;
  case TokenKind::Identifier: return "identifier '" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "'";
  case TokenKind::Integer: return "integer " + text.substr(0, 40);
  case TokenKind::Float: return "number " + text.substr(0, 40);
  case TokenKind::String: return "string " + clip(text);
  case TokenKind::ValueName: return "value " + formatName('%', text.substr(0, 40));
  case TokenKind::GraphName: return "graph name " + formatName('@', text.substr(0, 40));
  case TokenKind::NodeRef: return "node id #" + text.substr(0, 40);
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LBracket: return "'['";
  case TokenKind::RBracket: return "']'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::Less: return "'<'";
  case TokenKind::Greater: return "'>'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Equal: return "'='";
  case TokenKind::Question: return "'?'";
  default: break;
  }
  assert(false && "unknown token kind");
  return "token";
}

void Lexer::advance() {
  if (m_pos >= m_text.size())
    return;
  if (m_text[m_pos] == '\n') {
    ++m_line;
    m_column = 1;
  } else {
    ++m_column;
  }
  ++m_pos;
}

void Lexer::skipSpaceAndComments() {
  for (;;) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (m_pos < m_text.size() && peek() != '\n')
        advance();
    } else {
      return;
    }
  }
}

bool Lexer::lexQuoted(std::string& out, std::string& error) {
  advance(); // opening quote
  for (;;) {
    if (m_pos >= m_text.size()) {
      error = "unterminated string";
      return false;
    }
    char c = peek();
    if (c == '"') {
      advance();
      return true;
    }
    if (c == '\n') {
      error = "newline in string (write it as \\n)";
      return false;
    }
    if (c != '\\') {
      out += c;
      advance();
      continue;
    }
    advance();
    char e = peek();
    switch (e) {
    case '"': out += '"'; break;
    case '\\': out += '\\'; break;
    case 'n': out += '\n'; break;
    case 't': out += '\t'; break;
    case 'r': out += '\r'; break;
    case 'x': {
      int hi = hexValue(peek(1)), lo = hexValue(peek(2));
      if (hi < 0 || lo < 0) {
        error = "bad \\x escape in string (expected two hex digits)";
        return false;
      }
      out += char(hi * 16 + lo);
      advance();
      advance();
      break;
    }
    default:
      error = "unknown escape in string";
      return false;
    }
    advance();
  }
}

Token Lexer::lexNumber(Token tok) {
  size_t start = m_pos;
  bool isFloat = false;
  if (peek() == '-')
    advance();
  // -inf and -nan are numbers; bare inf and nan are handled with identifiers.
  if (!isDigit(peek())) {
    for (std::string_view w : {"inf", "nan"})
      if (m_text.substr(m_pos, 3) == w && !isIdentChar(peek(3))) {
        for (int i = 0; i < 3; ++i)
          advance();
        tok.kind = TokenKind::Float;
        tok.text = std::string(m_text.substr(start, m_pos - start));
        return tok;
      }
    tok.kind = TokenKind::Error;
    tok.text = "'-' not followed by a number";
    return tok;
  }
  while (isDigit(peek()))
    advance();
  if (peek() == '.' && isDigit(peek(1))) {
    isFloat = true;
    advance();
    while (isDigit(peek()))
      advance();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
    isFloat = true;
    advance();
    if (peek() == '+' || peek() == '-')
      advance();
    while (isDigit(peek()))
      advance();
  }
  tok.kind = isFloat ? TokenKind::Float : TokenKind::Integer;
  tok.text = std::string(m_text.substr(start, m_pos - start));
  return tok;
}

Token Lexer::lexName(Token tok, TokenKind kind) {
  char sigil = peek();
  advance();
  if (peek() == '"') {
    std::string error;
    if (!lexQuoted(tok.text, error)) {
      tok.kind = TokenKind::Error;
      tok.text = error;
      return tok;
    }
  } else {
    while (m_pos < m_text.size() && isBareNameChar(peek())) {
      tok.text += peek();
      advance();
    }
  }
  if (tok.text.empty()) {
    tok.kind = TokenKind::Error;
    tok.text = std::string("empty name after '") + sigil + "'";
    return tok;
  }
  tok.kind = kind;
  return tok;
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token tok;
  tok.line = m_line;
  tok.column = m_column;
  if (m_pos >= m_text.size()) {
    tok.kind = TokenKind::Eof;
    return tok;
  }
  char c = peek();
  if (isDigit(c) || c == '-')
    return lexNumber(std::move(tok));
  if (isIdentStart(c)) {
    while (m_pos < m_text.size() && isIdentChar(peek())) {
      tok.text += peek();
      advance();
    }
    tok.kind = (tok.text == "inf" || tok.text == "nan") ? TokenKind::Float : TokenKind::Identifier;
    return tok;
  }
  if (c == '%')
    return lexName(std::move(tok), TokenKind::ValueName);
  if (c == '@')
    return lexName(std::move(tok), TokenKind::GraphName);
  if (c == '"') {
    std::string error;
    if (!lexQuoted(tok.text, error)) {
      tok.kind = TokenKind::Error;
      tok.text = error;
      return tok;
    }
    tok.kind = TokenKind::String;
    return tok;
  }
  if (c == '#') {
    advance();
    while (isDigit(peek())) {
      tok.text += peek();
      advance();
    }
    if (tok.text.empty()) {
      tok.kind = TokenKind::Error;
      tok.text = "'#' not followed by a node id";
      return tok;
    }
    tok.kind = TokenKind::NodeRef;
    return tok;
  }
  TokenKind kind;
  switch (c) {
  case '(': kind = TokenKind::LParen; break;
  case ')': kind = TokenKind::RParen; break;
  case '[': kind = TokenKind::LBracket; break;
  case ']': kind = TokenKind::RBracket; break;
  case '{': kind = TokenKind::LBrace; break;
  case '}': kind = TokenKind::RBrace; break;
  case '<': kind = TokenKind::Less; break;
  case '>': kind = TokenKind::Greater; break;
  case ',': kind = TokenKind::Comma; break;
  case ':': kind = TokenKind::Colon; break;
  case '=': kind = TokenKind::Equal; break;
  case '?': kind = TokenKind::Question; break;
  default: {
    tok.kind = TokenKind::Error;
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x21 && u < 0x7f)
      tok.text = std::string("unexpected character '") + c + "'";
    else
      tok.text = "unexpected byte " + quoteString(std::string(1, c));
    return tok;
  }
  }
  advance();
  tok.kind = kind;
  return tok;
}

} // namespace fb::text
