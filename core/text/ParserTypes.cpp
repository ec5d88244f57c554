// The text IR parser, part two: types, quantization parameters, tensor literals and attributes.
#include "core/text/Parser.h"
#include "core/text/TextSyntax.h"

#include <limits>

namespace fb::text {

Expected<std::string> Parser::parseKey(const char* what) {
  if (!m_tok.is(TokenKind::Identifier) && !m_tok.is(TokenKind::String))
    return expected(what);
  std::string key = m_tok.text;
  consume();
  return key;
}

// ---------------------------------------------------------------------------------------------
// Types

Expected<Dim> Parser::parseDim() {
  Token t = m_tok;
  switch (t.kind) {
  case TokenKind::Integer: {
    FB_ASSIGN_OR_RETURN(int64_t size, parseInt(t));
    if (size < 0)
      return errorAt(t, "dimension " + t.text + " is negative");
    consume();
    return Dim(size);
  }
  case TokenKind::Identifier:
  case TokenKind::String:
    if (t.text.empty())
      return errorAt(t, "a symbolic dimension needs a name");
    consume();
    return Dim::symbol(t.text);
  case TokenKind::Question: consume(); return Dim::unknown();
  default: return expected("dimension (a size, a symbol or ?)");
  }
}

Expected<TensorType> Parser::parseType(bool allowQuant) {
  if (!m_tok.is(TokenKind::Identifier))
    return expected("type (f32[...], i64[...], ...)");
  std::optional<DType> dtype = parseDType(m_tok.text);
  if (!dtype)
    return errorAt(m_tok, "unknown element type '" + m_tok.text.substr(0, 40) +
                              "' (expected f32, f16, bf16, i8, u8, i32, i64 or bool)");
  consume();
  TensorType type(*dtype, {});
  FB_TRY(expect(TokenKind::LBracket, "'[' after the element type"));
  if (!m_tok.is(TokenKind::RBracket)) {
    for (;;) {
      FB_ASSIGN_OR_RETURN(Dim d, parseDim());
      type.dims.push_back(std::move(d));
      if (!m_tok.is(TokenKind::Comma))
        break;
      consume();
    }
  }
  FB_TRY(expect(TokenKind::RBracket, "',' or ']' in the dimensions"));
  if (allowQuant && m_tok.is(TokenKind::LBrace)) {
    QuantParams q;
    FB_TRY(parseQuant(q));
    type.quant = std::move(q);
  }
  return type;
}

Status Parser::parseQuant(QuantParams& q) {
  consume(); // '{'
  bool seenScale = false, seenZeroPoint = false;
  for (;;) {
    Token keyTok = m_tok;
    if (keyTok.isWord("scale") && !seenScale) {
      consume();
      FB_TRY(expect(TokenKind::Equal, "'='"));
      FB_ASSIGN_OR_RETURN(q.scales, parseFloatList());
      seenScale = true;
    } else if (keyTok.isWord("zero_point") && !seenZeroPoint) {
      consume();
      FB_TRY(expect(TokenKind::Equal, "'='"));
      FB_ASSIGN_OR_RETURN(q.zeroPoints, parseIntList());
      seenZeroPoint = true;
    } else if (keyTok.isWord("axis") && !q.axis) {
      consume();
      FB_TRY(expect(TokenKind::Equal, "'='"));
      if (!m_tok.is(TokenKind::Integer))
        return expected("quantization axis");
      FB_ASSIGN_OR_RETURN(int64_t axis, parseInt(m_tok));
      q.axis = axis;
      consume();
    } else {
      return expected("quantization parameter (scale, zero_point or axis, each once)");
    }
    if (!m_tok.is(TokenKind::Comma))
      break;
    consume();
  }
  return expect(TokenKind::RBrace, "',' or '}' after quantization parameters");
}

Expected<std::vector<float>> Parser::parseFloatList() {
  FB_TRY(expect(TokenKind::LBracket, "'['"));
  std::vector<float> out;
  while (!m_tok.is(TokenKind::RBracket)) {
    if (!m_tok.is(TokenKind::Integer) && !m_tok.is(TokenKind::Float))
      return expected("number");
    FB_ASSIGN_OR_RETURN(float v, parseFloat(m_tok));
    out.push_back(v);
    consume();
    if (!m_tok.is(TokenKind::Comma))
      break;
    consume();
  }
  FB_TRY(expect(TokenKind::RBracket, "',' or ']'"));
  return out;
}

Expected<std::vector<int64_t>> Parser::parseIntList() {
  FB_TRY(expect(TokenKind::LBracket, "'['"));
  std::vector<int64_t> out;
  while (!m_tok.is(TokenKind::RBracket)) {
    if (!m_tok.is(TokenKind::Integer))
      return expected("integer");
    FB_ASSIGN_OR_RETURN(int64_t v, parseInt(m_tok));
    out.push_back(v);
    consume();
    if (!m_tok.is(TokenKind::Comma))
      break;
    consume();
  }
  FB_TRY(expect(TokenKind::RBracket, "',' or ']'"));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tensor literals

namespace {
/// Stores one parsed element, range-checked for the tensor's dtype.
template <typename T> bool storeInteger(Tensor& t, int64_t i, int64_t v) {
  if (v < int64_t(std::numeric_limits<T>::min()) || v > int64_t(std::numeric_limits<T>::max()))
    return false;
  t.mutableData<T>()[size_t(i)] = T(v);
  return true;
}
} // namespace

Expected<Tensor> Parser::parseTensor(const TensorType& type, const Token& typeTok,
                                     std::optional<PendingResource>& pending) {
  if (!type.isStatic())
    return errorAt(typeTok, "a tensor literal needs a static type, not " + type.str());
  if (!checkedProduct(type.staticSizes()))
    return errorAt(typeTok, "the element count of " + type.str() + " overflows");
  if (m_tok.isWord("dense")) {
    FB_ASSIGN_OR_RETURN(std::vector<Token> elements, parseDenseElements());
    return buildDense(type, typeTok, elements);
  }
  if (!m_tok.isWord("resource"))
    return expected("tensor (dense<[...]> or resource<name>)");
  PendingResource p;
  p.where = m_tok;
  p.type = type;
  consume();
  FB_TRY(expect(TokenKind::Less, "'<'"));
  FB_ASSIGN_OR_RETURN(p.key, parseKey("resource name"));
  FB_TRY(expect(TokenKind::Greater, "'>'"));
  pending = std::move(p);
  // An empty placeholder of the right dtype; resolveResources() puts the data in. Nothing of
  // the declared size is allocated before data of that size has been read.
  return Tensor(type.dtype, {0});
}

Expected<std::vector<Token>> Parser::parseDenseElements() {
  consume(); // 'dense'
  FB_TRY(expect(TokenKind::Less, "'<'"));
  FB_TRY(expect(TokenKind::LBracket, "'['"));
  std::vector<Token> elements;
  while (!m_tok.is(TokenKind::RBracket)) {
    if (!m_tok.is(TokenKind::Integer) && !m_tok.is(TokenKind::Float) && !m_tok.isWord("true") &&
        !m_tok.isWord("false"))
      return expected("tensor element");
    elements.push_back(m_tok);
    consume();
    if (!m_tok.is(TokenKind::Comma))
      break;
    consume();
  }
  FB_TRY(expect(TokenKind::RBracket, "',' or ']'"));
  FB_TRY(expect(TokenKind::Greater, "'>'"));
  return elements;
}

Expected<Tensor> Parser::buildDense(const TensorType& type, const Token& typeTok,
                                    const std::vector<Token>& elements) const {
  int64_t count = *checkedProduct(type.staticSizes());
  if (int64_t(elements.size()) != count)
    return errorAt(typeTok, "dense<> lists " + std::to_string(elements.size()) +
                                " elements but " + type.str() + " has " + std::to_string(count));
  FB_ASSIGN_OR_RETURN(Tensor t, Tensor::create(type.dtype, type.staticSizes()));
  for (size_t i = 0; i < elements.size(); ++i) {
    const Token& e = elements[i];
    if (type.dtype == DType::Bool) {
      if (e.isWord("true") || e.isWord("false")) {
        t.mutableData<bool>()[i] = e.isWord("true");
        continue;
      }
      if (e.is(TokenKind::Integer) && (e.text == "0" || e.text == "1")) {
        t.mutableData<bool>()[i] = e.text == "1";
        continue;
      }
      return errorAt(e, "expected true or false in a bool tensor but found " + e.describe());
    }
    if (isFloat(type.dtype)) {
      if (!e.is(TokenKind::Integer) && !e.is(TokenKind::Float))
        return errorAt(e, "expected a number but found " + e.describe());
      FB_ASSIGN_OR_RETURN(float v, parseFloat(e));
      if (type.dtype == DType::F32)
        t.mutableData<float>()[i] = v;
      else if (type.dtype == DType::F16)
        t.mutableData<f16_t>()[i] = f16_t(v);
      else
        t.mutableData<bf16_t>()[i] = bf16_t(v);
      continue;
    }
    if (!e.is(TokenKind::Integer))
      return errorAt(e, std::string("expected an integer in an ") + dtypeName(type.dtype) +
                            " tensor but found " + e.describe());
    FB_ASSIGN_OR_RETURN(int64_t v, parseInt(e));
    bool inRange = false;
    switch (type.dtype) {
    case DType::I8: inRange = storeInteger<int8_t>(t, int64_t(i), v); break;
    case DType::U8: inRange = storeInteger<uint8_t>(t, int64_t(i), v); break;
    case DType::I32: inRange = storeInteger<int32_t>(t, int64_t(i), v); break;
    case DType::I64: inRange = storeInteger<int64_t>(t, int64_t(i), v); break;
    default: assert(false && "float and bool dtypes are handled above"); break;
    }
    if (!inRange)
      return errorAt(e, "integer " + e.text + " is out of range for " + dtypeName(type.dtype));
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Attributes

Expected<ParsedAttr> Parser::parseAttrValue() {
  ParsedAttr out;
  switch (m_tok.kind) {
  case TokenKind::Integer: {
    FB_ASSIGN_OR_RETURN(int64_t v, parseInt(m_tok));
    out.value = v;
    consume();
    return out;
  }
  case TokenKind::Float: {
    FB_ASSIGN_OR_RETURN(float v, parseFloat(m_tok));
    out.value = v;
    consume();
    return out;
  }
  case TokenKind::String:
    out.value = m_tok.text;
    consume();
    return out;
  case TokenKind::LBracket: {
    FB_ASSIGN_OR_RETURN(out.value, parseAttrList());
    return out;
  }
  default: break;
  }
  if (!m_tok.isWord("dense") && !m_tok.isWord("resource"))
    return expected("attribute value");
  // The type follows the literal: read the literal first, then build it for the type.
  Token literalTok = m_tok;
  std::optional<std::string> key;
  std::vector<Token> elements;
  if (m_tok.isWord("resource")) {
    consume();
    FB_TRY(expect(TokenKind::Less, "'<'"));
    FB_ASSIGN_OR_RETURN(key, parseKey("resource name"));
    FB_TRY(expect(TokenKind::Greater, "'>'"));
  } else {
    FB_ASSIGN_OR_RETURN(elements, parseDenseElements());
  }
  FB_TRY(expect(TokenKind::Colon, "':' and the tensor type"));
  Token typeTok = m_tok;
  FB_ASSIGN_OR_RETURN(TensorType type, parseType(/*allowQuant=*/false));
  if (!type.isStatic() || !checkedProduct(type.staticSizes()))
    return errorAt(typeTok, "a tensor attribute needs a static type, not " + type.str());
  if (!key) {
    FB_ASSIGN_OR_RETURN(out.value, buildDense(type, typeTok, elements));
    return out;
  }
  PendingResource p;
  p.key = std::move(*key);
  p.where = literalTok;
  p.type = type;
  out.pending = std::move(p);
  // A placeholder until resolveResources() has read data of the declared size.
  out.value = Tensor(type.dtype, {0});
  return out;
}

Expected<AttrValue> Parser::parseAttrList() {
  consume(); // '['
  std::vector<Token> items;
  while (!m_tok.is(TokenKind::RBracket)) {
    if (!m_tok.is(TokenKind::Integer) && !m_tok.is(TokenKind::Float) &&
        !m_tok.is(TokenKind::String))
      return expected("list element (a number or a string)");
    items.push_back(m_tok);
    consume();
    if (!m_tok.is(TokenKind::Comma))
      break;
    consume();
  }
  FB_TRY(expect(TokenKind::RBracket, "',' or ']'"));
  if (items.empty()) {
    // An empty list keeps its kind: [] : ints, [] : floats or [] : strings.
    FB_TRY(expect(TokenKind::Colon, "':' and the kind of the empty list (ints, floats, strings)"));
    if (m_tok.isWord("ints")) {
      consume();
      return AttrValue(std::vector<int64_t>{});
    }
    if (m_tok.isWord("floats")) {
      consume();
      return AttrValue(std::vector<float>{});
    }
    if (m_tok.isWord("strings")) {
      consume();
      return AttrValue(std::vector<std::string>{});
    }
    return expected("ints, floats or strings");
  }
  bool anyString = false, anyFloat = false;
  for (const Token& t : items) {
    anyString |= t.is(TokenKind::String);
    anyFloat |= t.is(TokenKind::Float);
  }
  if (anyString) {
    std::vector<std::string> out;
    for (const Token& t : items) {
      if (!t.is(TokenKind::String))
        return errorAt(t, "a list of strings holds " + t.describe());
      out.push_back(t.text);
    }
    return AttrValue(std::move(out));
  }
  if (anyFloat) {
    std::vector<float> out;
    for (const Token& t : items) {
      FB_ASSIGN_OR_RETURN(float v, parseFloat(t));
      out.push_back(v);
    }
    return AttrValue(std::move(out));
  }
  std::vector<int64_t> out;
  for (const Token& t : items) {
    FB_ASSIGN_OR_RETURN(int64_t v, parseInt(t));
    out.push_back(v);
  }
  return AttrValue(std::move(out));
}

} // namespace fb::text
