// The tokenizer of the text IR: positions, tokens and a pull-based Lexer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fb::text {

/// The kinds of token in the text IR.
enum class TokenKind : uint8_t {
  Eof,
  Error,      ///< text is the message
  Identifier, ///< [A-Za-z_][A-Za-z0-9_.]*: keywords, op names, dtypes, symbols, attribute names
  Integer,    ///< -?[0-9]+
  Float,      ///< a number with '.', an exponent, or inf / nan
  String,     ///< "..." with escapes decoded into text
  ValueName,  ///< %name or %"name": text is the name
  GraphName,  ///< @name or @"name": text is the name
  NodeRef,    ///< #123: text is the digits
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Less,
  Greater,
  Comma,
  Colon,
  Equal,
  Question,
};

/// One token with where it starts (1-based line and column).
struct Token {
  TokenKind kind = TokenKind::Eof;
  std::string text;
  int line = 1;
  int column = 1;

  bool is(TokenKind k) const { return kind == k; }
  bool isWord(std::string_view w) const { return kind == TokenKind::Identifier && text == w; }
  /// How errors show the token: "identifier 'Foo'", "'{'", "end of input", ...
  std::string describe() const;
};

/// Splits text into tokens, skipping whitespace and // comments. Never fails: bad characters
/// come back as an Error token.
class Lexer {
public:
  explicit Lexer(std::string_view text) : m_text(text) {}
  /// The next token.
  Token next();

private:
  void skipSpaceAndComments();
  char peek(size_t ahead = 0) const {
    return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
  }
  void advance();
  /// Reads a quoted string starting at the opening quote into `out`; false with a message.
  bool lexQuoted(std::string& out, std::string& error);
  Token lexNumber(Token tok);
  Token lexName(Token tok, TokenKind kind);

  std::string_view m_text;
  size_t m_pos = 0;
  int m_line = 1;
  int m_column = 1;
};

} // namespace fb::text
