// The recursive-descent parser class behind parseGraph; private to core/text.
#pragma once

#include "core/Graph.h"
#include "core/text/Lexer.h"

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace fb::text {

/// Deepest nesting of bodies (fused groups, branches, loop bodies) accepted; deeper text is an error, not a stack overflow.
constexpr int kMaxBodyDepth = 64;
/// The largest node id accepted; one more must still fit in a NodeId for reserveNodeId.
constexpr uint64_t kMaxNodeId = std::numeric_limits<NodeId>::max() - 1;

/// A resource<key> reference waiting for the trailing resources section.
struct PendingResource {
  std::string key;
  Token where;
  TensorType type;
  Value* constant = nullptr; // set for a constant
  Node* node = nullptr;      // set for a tensor attribute, with attrName
  std::string attrName;
};

/// A parsed attribute whose tensor may still be a resource reference.
struct ParsedAttr {
  AttrValue value;
  std::optional<PendingResource> pending;
};

/// Parses one .fbir text. IrParser.cpp holds the graph structure, ParserTypes.cpp types,
/// tensors and attributes.
class Parser {
public:
  Parser(std::string_view text, std::string fileName)
      : m_text(text), m_lexer(text), m_file(std::move(fileName)) {}

  Expected<std::unique_ptr<Graph>> run();

private:
  // -- tokens and errors --
  void consume() { m_tok = m_lexer.next(); }
  Error errorAt(const Token& t, const std::string& message) const {
    return makeError(m_file, ":", t.line, ":", t.column, ": ", message);
  }
  Error expected(const std::string& what) const {
    if (m_tok.is(TokenKind::Error))
      return errorAt(m_tok, m_tok.text);
    return errorAt(m_tok, "expected " + what + " but found " + m_tok.describe());
  }
  Status expect(TokenKind kind, const std::string& what) {
    if (!m_tok.is(kind))
      return expected(what);
    consume();
    return Status::success();
  }
  Status expectWord(const char* word) {
    if (!m_tok.isWord(word))
      return expected(std::string("'") + word + "'");
    consume();
    return Status::success();
  }

  // -- numbers --
  Expected<int64_t> parseInt(const Token& t) const;
  Expected<float> parseFloat(const Token& t) const;
  Expected<NodeId> parseNodeId(const Token& t) const;

  // -- structure --
  Status parseBlock(Graph& g, int depth);
  Status parseInput(Graph& g);
  Status parseConst(Graph& g);
  Status parseOutputs(Graph& g);
  Status parseNode(Graph& g, int depth);
  /// The `{ role @name? { block } ... }` bodies of an If, Loop or Scan node.
  Status parseControlFlowBodies(Node& node, const Graph& g, int depth);
  /// True when the '{' at the current token opens an attribute dictionary, not a body.
  bool startsAttrDict() const;
  Status parseResources();
  Status resolveResources();
  Status checkNewName(const Graph& g, const Token& nameTok) const;
  Expected<Value*> parseOperand(const Graph& g);

  // -- types, tensors, attributes --
  Expected<TensorType> parseType(bool allowQuant);
  Expected<Dim> parseDim();
  Status parseQuant(QuantParams& q);
  Expected<std::vector<float>> parseFloatList();
  Expected<std::vector<int64_t>> parseIntList();
  /// Parses dense<...> or resource<...> for `type`; a resource comes back in `pending`.
  Expected<Tensor> parseTensor(const TensorType& type, const Token& typeTok,
                               std::optional<PendingResource>& pending);
  /// Reads dense<[...]>'s elements as tokens; buildDense() checks them against the type.
  Expected<std::vector<Token>> parseDenseElements();
  Expected<Tensor> buildDense(const TensorType& type, const Token& typeTok,
                              const std::vector<Token>& elements) const;
  Expected<ParsedAttr> parseAttrValue();
  Expected<AttrValue> parseAttrList();
  Expected<std::string> parseKey(const char* what);

  std::string_view m_text;
  Lexer m_lexer;
  Token m_tok;
  std::string m_file;
  std::unordered_set<NodeId> m_ids;          // every node id seen, across all bodies
  std::vector<PendingResource> m_pending;    // resource references in text order
  std::map<std::string, std::pair<std::vector<std::byte>, Token>> m_resources;
};

} // namespace fb::text
