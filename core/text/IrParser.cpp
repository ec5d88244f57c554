// The text IR (.fbir) parser: hand-written recursive descent over the tokens of text::Lexer.
//
// Grammar (whitespace and `// comments` are insignificant; docs/text-ir.md has examples):
//
//   file        ::= graph resources? EOF
//   graph       ::= 'graph' GRAPHNAME ('opset' INT)? '{' block '}'
//   block       ::= statement*
//   statement   ::= 'input' VALUE ':' type
//                 | 'const' VALUE ':' type '=' tensor
//                 | 'output' outref (',' outref)*
//                 | node
//   node        ::= (result (',' result)* '=')? OPNAME '(' operands? ')' attrdict?
//                   NODEREF? STRING? ('from' '(' NODEREF (',' NODEREF)* ')')?
//                   (GRAPHNAME? '{' block '}')?            -- a body: only for 'fused'
//                   ('{' (IDENT GRAPHNAME? '{' block '}')* '}')?  -- named bodies: If, Loop, Scan
//                 -- after fused(...), If(...), Loop(...) and Scan(...), '{' opens attributes
//                    only when "key =" follows
//   result      ::= VALUE ':' type
//   operands    ::= operand (',' operand)*
//   operand     ::= VALUE | '_'                               -- '_': absent optional input
//   outref      ::= VALUE | '_'
//   type        ::= DTYPE '[' (dim (',' dim)*)? ']' quant?
//   dim         ::= INT | IDENT | STRING | '?'                -- size, symbol, quoted symbol, unknown
//   quant       ::= '{' qfield (',' qfield)* '}'
//   qfield      ::= 'scale' '=' '[' numbers? ']' | 'zero_point' '=' '[' ints? ']' | 'axis' '=' INT
//   tensor      ::= 'dense' '<' '[' (element (',' element)*)? ']' '>'
//                 | 'resource' '<' key '>'
//   element     ::= INT | FLOAT | 'true' | 'false'
//   attrdict    ::= '{' (attr (',' attr)*)? '}'
//   attr        ::= key '=' attrvalue
//   attrvalue   ::= INT | FLOAT | STRING | '[' list ']' | '[' ']' ':' ('ints'|'floats'|'strings')
//                 | tensor ':' type
//   resources   ::= 'resources' '{' (key ':' STRING)* '}'     -- STRING: base64, little-endian
//   key         ::= IDENT | STRING
//
// Tokens: VALUE is %name or %"any name", GRAPHNAME is @name or @"any name", NODEREF is #123,
// IDENT is [A-Za-z_][A-Za-z0-9_.]*, FLOAT has a '.', an exponent, or is inf / -inf / nan.
//
// The parser never throws and never asserts on input: every problem becomes an Error
// "file:line:col: message". Sizes come from untrusted text, so element counts are checked with
// checkedProduct before anything is allocated, dense<> must list exactly the type's element
// count, resource data must have exactly the type's byte size, and fused bodies nest at most
// kMaxBodyDepth deep. Types are kept as written; shape inference is not re-run here.
#include "core/text/IrParser.h"
#include "core/ControlFlow.h"
#include "core/FileRead.h"
#include "core/text/Parser.h"
#include "core/text/TextSyntax.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace fb::text {

// ---------------------------------------------------------------------------------------------
// Numbers

Expected<int64_t> Parser::parseInt(const Token& t) const {
  int64_t v = 0;
  const char* end = t.text.data() + t.text.size();
  auto res = std::from_chars(t.text.data(), end, v);
  if (res.ec != std::errc() || res.ptr != end)
    return errorAt(t, "integer " + t.text.substr(0, 40) + " is out of range");
  return v;
}

Expected<float> Parser::parseFloat(const Token& t) const {
  float v = 0;
  const char* end = t.text.data() + t.text.size();
  auto res = std::from_chars(t.text.data(), end, v);
  if (res.ec != std::errc() || res.ptr != end)
    return errorAt(t, "number " + t.text.substr(0, 40) + " is out of range for f32");
  return v;
}

Expected<NodeId> Parser::parseNodeId(const Token& t) const {
  uint64_t v = 0;
  const char* end = t.text.data() + t.text.size();
  auto res = std::from_chars(t.text.data(), end, v);
  if (res.ec != std::errc() || res.ptr != end || v > kMaxNodeId)
    return errorAt(t, "node id #" + t.text.substr(0, 40) + " is out of range");
  return NodeId(v);
}

// ---------------------------------------------------------------------------------------------
// Graph structure

Expected<std::unique_ptr<Graph>> Parser::run() {
  // Nodes written without #id get ids after every id the text mentions, so they never collide
  // with an explicit id that comes later.
  NodeId maxId = 0;
  {
    Lexer scan(m_text);
    for (Token t = scan.next(); !t.is(TokenKind::Eof) && !t.is(TokenKind::Error); t = scan.next())
      if (t.is(TokenKind::NodeRef))
        if (auto id = parseNodeId(t); id.ok() && *id > maxId)
          maxId = *id;
  }
  consume();
  FB_TRY(expectWord("graph"));
  if (!m_tok.is(TokenKind::GraphName))
    return expected("graph name (@name)");
  auto graph = std::make_unique<Graph>(m_tok.text);
  graph->reserveNodeId(maxId);
  consume();
  if (m_tok.isWord("opset")) {
    consume();
    if (!m_tok.is(TokenKind::Integer))
      return expected("opset version");
    FB_ASSIGN_OR_RETURN(int64_t opset, parseInt(m_tok));
    graph->setOpset(opset);
    consume();
  }
  FB_TRY(expect(TokenKind::LBrace, "'{'"));
  FB_TRY(parseBlock(*graph, 0));
  FB_TRY(expect(TokenKind::RBrace, "'}'"));
  if (m_tok.isWord("resources"))
    FB_TRY(parseResources());
  if (!m_tok.is(TokenKind::Eof))
    return expected(m_resources.empty() ? "'resources' or end of input" : "end of input");
  FB_TRY(resolveResources());
  return graph;
}

Status Parser::parseBlock(Graph& g, int depth) {
  for (;;) {
    if (m_tok.is(TokenKind::RBrace))
      return Status::success();
    if (m_tok.isWord("input")) {
      FB_TRY(parseInput(g));
    } else if (m_tok.isWord("const")) {
      FB_TRY(parseConst(g));
    } else if (m_tok.isWord("output")) {
      FB_TRY(parseOutputs(g));
    } else if (m_tok.is(TokenKind::ValueName) || m_tok.is(TokenKind::Identifier)) {
      FB_TRY(parseNode(g, depth));
    } else {
      return expected("'input', 'const', 'output', a node or '}'");
    }
  }
}

Status Parser::checkNewName(const Graph& g, const Token& nameTok) const {
  if (g.findValue(nameTok.text))
    return errorAt(nameTok, "value " + formatName('%', nameTok.text) + " is defined twice");
  return Status::success();
}

Status Parser::parseInput(Graph& g) {
  consume(); // 'input'
  if (!m_tok.is(TokenKind::ValueName))
    return expected("input name (%name)");
  Token nameTok = m_tok;
  FB_TRY(checkNewName(g, nameTok));
  consume();
  FB_TRY(expect(TokenKind::Colon, "':'"));
  FB_ASSIGN_OR_RETURN(TensorType type, parseType(/*allowQuant=*/true));
  g.addInput(nameTok.text, std::move(type));
  return Status::success();
}

Status Parser::parseConst(Graph& g) {
  consume(); // 'const'
  if (!m_tok.is(TokenKind::ValueName))
    return expected("constant name (%name)");
  Token nameTok = m_tok;
  FB_TRY(checkNewName(g, nameTok));
  consume();
  FB_TRY(expect(TokenKind::Colon, "':'"));
  Token typeTok = m_tok;
  FB_ASSIGN_OR_RETURN(TensorType type, parseType(/*allowQuant=*/true));
  FB_TRY(expect(TokenKind::Equal, "'='"));
  std::optional<PendingResource> pending;
  FB_ASSIGN_OR_RETURN(Tensor data, parseTensor(type, typeTok, pending));
  Value* v = g.addConstant(nameTok.text, std::move(data));
  v->setType(type); // keeps quantization parameters and, for a pending resource, the sizes
  if (pending) {
    pending->constant = v;
    m_pending.push_back(std::move(*pending));
  }
  return Status::success();
}

Status Parser::parseOutputs(Graph& g) {
  consume(); // 'output'
  for (;;) {
    if (m_tok.isWord("_")) {
      g.addOutput(nullptr);
      consume();
    } else if (m_tok.is(TokenKind::ValueName)) {
      Value* v = g.findValue(m_tok.text);
      if (!v)
        return errorAt(m_tok, "undefined value " + formatName('%', m_tok.text));
      g.addOutput(v);
      consume();
    } else {
      return expected("output value (%name)");
    }
    if (!m_tok.is(TokenKind::Comma))
      return Status::success();
    consume();
  }
}

Expected<Value*> Parser::parseOperand(const Graph& g) {
  if (m_tok.isWord("_")) {
    consume();
    return static_cast<Value*>(nullptr);
  }
  if (!m_tok.is(TokenKind::ValueName))
    return expected("operand (%name or _)");
  Value* v = g.findValue(m_tok.text);
  if (!v)
    return errorAt(m_tok, "undefined value " + formatName('%', m_tok.text));
  consume();
  return v;
}

bool Parser::startsAttrDict() const {
  // After a fused group's operands, '{' opens its attributes when "key =" follows and its body
  // otherwise (a body starts with a statement). Only text written without #id needs this.
  Lexer ahead = m_lexer;
  Token first = ahead.next();
  Token second = ahead.next();
  return (first.is(TokenKind::Identifier) || first.is(TokenKind::String)) &&
         second.is(TokenKind::Equal);
}

Status Parser::parseNode(Graph& g, int depth) {
  // Results.
  std::vector<std::string> names;
  std::vector<TensorType> types;
  std::unordered_set<std::string> seen; // result names of this node, for duplicates
  if (m_tok.is(TokenKind::ValueName)) {
    for (;;) {
      if (!m_tok.is(TokenKind::ValueName))
        return expected("result name (%name)");
      Token nameTok = m_tok;
      FB_TRY(checkNewName(g, nameTok));
      if (!seen.insert(nameTok.text).second)
        return errorAt(nameTok, "value " + formatName('%', nameTok.text) + " is defined twice");
      consume();
      FB_TRY(expect(TokenKind::Colon, "':'"));
      FB_ASSIGN_OR_RETURN(TensorType type, parseType(/*allowQuant=*/true));
      names.push_back(nameTok.text);
      types.push_back(std::move(type));
      if (!m_tok.is(TokenKind::Comma))
        break;
      consume();
    }
    FB_TRY(expect(TokenKind::Equal, "'='"));
  }
  // Op and operands.
  if (!m_tok.is(TokenKind::Identifier))
    return expected("op name");
  std::optional<OpKind> op = opKindFromName(m_tok.text);
  if (!op)
    return errorAt(m_tok, "unknown op '" + m_tok.text.substr(0, 60) + "'");
  consume();
  FB_TRY(expect(TokenKind::LParen, "'('"));
  std::vector<Value*> inputs;
  if (!m_tok.is(TokenKind::RParen)) {
    for (;;) {
      FB_ASSIGN_OR_RETURN(Value * in, parseOperand(g));
      inputs.push_back(in);
      if (!m_tok.is(TokenKind::Comma))
        break;
      consume();
    }
  }
  FB_TRY(expect(TokenKind::RParen, "',' or ')'"));
  // Attributes.
  AttrMap attrs;
  std::vector<PendingResource> pendingAttrs;
  const bool hasBodies = *op == OpKind::Fused || isControlFlowOp(*op);
  if (m_tok.is(TokenKind::LBrace) && (!hasBodies || startsAttrDict())) {
    consume();
    while (!m_tok.is(TokenKind::RBrace)) {
      Token keyTok = m_tok;
      FB_ASSIGN_OR_RETURN(std::string key, parseKey("attribute name"));
      if (attrs.has(key))
        return errorAt(keyTok, "attribute '" + key + "' is given twice");
      FB_TRY(expect(TokenKind::Equal, "'='"));
      FB_ASSIGN_OR_RETURN(ParsedAttr attr, parseAttrValue());
      attrs.set(key, std::move(attr.value));
      if (attr.pending) {
        attr.pending->attrName = key;
        pendingAttrs.push_back(std::move(*attr.pending));
      }
      if (!m_tok.is(TokenKind::Comma))
        break;
      consume();
    }
    FB_TRY(expect(TokenKind::RBrace, "',' or '}'"));
  }
  // Metadata: #id, name, provenance.
  std::optional<NodeId> id;
  if (m_tok.is(TokenKind::NodeRef)) {
    FB_ASSIGN_OR_RETURN(NodeId parsed, parseNodeId(m_tok));
    if (m_ids.count(parsed))
      return errorAt(m_tok, "node id #" + std::to_string(parsed) + " is used twice");
    id = parsed;
    consume();
  }
  std::string nodeName;
  if (m_tok.is(TokenKind::String)) {
    nodeName = m_tok.text;
    consume();
  }
  std::vector<NodeId> provenance;
  if (m_tok.isWord("from")) {
    consume();
    FB_TRY(expect(TokenKind::LParen, "'('"));
    for (;;) {
      if (!m_tok.is(TokenKind::NodeRef))
        return expected("node id (#n)");
      FB_ASSIGN_OR_RETURN(NodeId p, parseNodeId(m_tok));
      provenance.push_back(p);
      consume();
      if (!m_tok.is(TokenKind::Comma))
        break;
      consume();
    }
    FB_TRY(expect(TokenKind::RParen, "',' or ')'"));
  }
  NodeId nodeId = id ? *id : g.allocateNodeId();
  m_ids.insert(nodeId);
  Node* node = g.addNodeWithId(nodeId, *op, inputs, names.size(), names, nodeName);
  for (size_t i = 0; i < types.size(); ++i)
    node->output(i)->setType(std::move(types[i]));
  node->attrs() = std::move(attrs);
  node->setProvenance(std::move(provenance));
  for (PendingResource& p : pendingAttrs) {
    p.node = node;
    m_pending.push_back(std::move(p));
  }
  if (isControlFlowOp(*op) && m_tok.is(TokenKind::LBrace))
    return parseControlFlowBodies(*node, g, depth);
  // Body of a fused group.
  if (m_tok.is(TokenKind::GraphName) || m_tok.is(TokenKind::LBrace)) {
    if (*op != OpKind::Fused)
      return errorAt(m_tok, std::string("only fused groups have a body, not ") + opName(*op));
    if (depth + 1 > kMaxBodyDepth)
      return errorAt(m_tok, "fused bodies are nested more than " + std::to_string(kMaxBodyDepth) +
                                " deep");
    std::string bodyName = "main";
    if (m_tok.is(TokenKind::GraphName)) {
      bodyName = m_tok.text;
      consume();
    }
    FB_TRY(expect(TokenKind::LBrace, "'{'"));
    node->setBody(std::make_unique<Graph>(bodyName));
    node->body()->setOpset(g.opset());
    FB_TRY(parseBlock(*node->body(), depth + 1));
    FB_TRY(expect(TokenKind::RBrace, "'}'"));
  }
  return Status::success();
}

Status Parser::parseControlFlowBodies(Node& node, const Graph& g, int depth) {
  consume(); // '{'
  if (depth + 1 > kMaxBodyDepth)
    return errorAt(m_tok, "bodies are nested more than " + std::to_string(kMaxBodyDepth) +
                              " deep");
  const std::vector<const char*> roles = controlFlowBodyRoles(node.op());
  while (m_tok.is(TokenKind::Identifier)) {
    Token roleTok = m_tok;
    bool known = false;
    std::string list;
    for (const char* r : roles) {
      known = known || roleTok.text == r;
      list += (list.empty() ? "" : ", ") + std::string(r);
    }
    if (!known)
      return errorAt(roleTok, std::string(opName(node.op())) + " has no body '" +
                                  roleTok.text.substr(0, 60) + "' (its bodies: " + list + ")");
    if (node.bodyNamed(roleTok.text))
      return errorAt(roleTok, "body '" + roleTok.text + "' is given twice");
    consume();
    std::string bodyName = "main";
    if (m_tok.is(TokenKind::GraphName)) {
      bodyName = m_tok.text;
      consume();
    }
    FB_TRY(expect(TokenKind::LBrace, "'{'"));
    Graph* body = node.addBody(roleTok.text, std::make_unique<Graph>(bodyName));
    body->setOpset(g.opset());
    FB_TRY(parseBlock(*body, depth + 1));
    FB_TRY(expect(TokenKind::RBrace, "'}'"));
  }
  return expect(TokenKind::RBrace, "a body name or '}'");
}

// ---------------------------------------------------------------------------------------------
// Resources

Status Parser::parseResources() {
  consume(); // 'resources'
  FB_TRY(expect(TokenKind::LBrace, "'{'"));
  while (!m_tok.is(TokenKind::RBrace)) {
    Token keyTok = m_tok;
    FB_ASSIGN_OR_RETURN(std::string key, parseKey("resource name or '}'"));
    FB_TRY(expect(TokenKind::Colon, "':'"));
    if (!m_tok.is(TokenKind::String))
      return expected("base64 data in quotes");
    auto bytes = decodeBase64(m_tok.text);
    if (!bytes)
      return errorAt(m_tok, "the data of resource '" + key + "' is not valid base64");
    if (m_resources.count(key))
      return errorAt(keyTok, "resource '" + key + "' is defined twice");
    m_resources.emplace(key, std::make_pair(std::move(*bytes), keyTok));
    consume();
  }
  consume(); // '}'
  return Status::success();
}

Status Parser::resolveResources() {
  for (const PendingResource& p : m_pending) {
    std::string what = p.constant ? "constant " + formatName('%', p.constant->name())
                                  : "attribute '" + p.attrName + "' of " + p.node->describe();
    auto it = m_resources.find(p.key);
    if (it == m_resources.end())
      return errorAt(p.where, what + " refers to resource<" + p.key +
                                  ">, but the file has no data for it: printed IR without a "
                                  "resources section is a display form and cannot be loaded "
                                  "(save with -o FILE.fbir to keep constant data)");
    const std::vector<std::byte>& bytes = it->second.first;
    std::vector<int64_t> sizes = p.type.staticSizes();
    auto count = checkedProduct(sizes);
    size_t want = 0;
    if (!count || __builtin_mul_overflow(size_t(*count), dtypeSize(p.type.dtype), &want) ||
        want != bytes.size())
      return errorAt(p.where, "resource '" + p.key + "' holds " + std::to_string(bytes.size()) +
                                  " bytes, but " + what + " of type " + p.type.str() +
                                  " needs " + (count ? std::to_string(want) : "too many"));
    if (p.type.dtype == DType::Bool)
      for (std::byte b : bytes)
        if (b != std::byte{0} && b != std::byte{1})
          return errorAt(p.where, "resource '" + p.key + "' holds a bool that is not 0 or 1");
    FB_ASSIGN_OR_RETURN(Tensor t, Tensor::create(p.type.dtype, sizes));
    if (!bytes.empty())
      std::memcpy(t.mutableRawData(), bytes.data(), bytes.size());
    if (p.constant) {
      TensorType declared = p.constant->type();
      p.constant->setConstantData(std::move(t));
      p.constant->setType(std::move(declared));
    } else {
      p.node->attrs().set(p.attrName, std::move(t));
    }
  }
  return Status::success();
}

} // namespace fb::text

namespace fb {

Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text, const std::string& fileName) {
  return text::Parser(text, fileName).run();
}

Expected<std::unique_ptr<Graph>> parseGraphFile(const std::string& path) {
  FB_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "Fusebox IR"));
  return parseGraph(text, path);
}

} // namespace fb
