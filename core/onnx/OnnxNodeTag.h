// Private to core/onnx: the doc_string tag that carries a node's Fusebox id and provenance
// through an ONNX file ("fusebox:id=12;from=3,4"), since NodeProto has no metadata in ONNX 1.12.
#pragma once

#include "core/Graph.h"

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb::onnxio {

/// A node's identity as kept in an ONNX file.
struct NodeTag {
  NodeId id = 0;
  std::vector<NodeId> provenance;
};

/// Formats the tag written to NodeProto.doc_string.
inline std::string formatNodeTag(const Node& node) {
  std::string s = "fusebox:id=" + std::to_string(node.id());
  if (!node.provenance().empty()) {
    s += ";from=";
    for (size_t i = 0; i < node.provenance().size(); ++i) {
      if (i)
        s += ',';
      s += std::to_string(node.provenance()[i]);
    }
  }
  return s;
}

/// Parses a positive id at the start of `text`, advancing past it.
inline std::optional<NodeId> parseTagId(std::string_view& text) {
  NodeId v = 0;
  auto [ptr, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || ptr == text.data() || v == 0)
    return std::nullopt;
  text.remove_prefix(size_t(ptr - text.data()));
  return v;
}

/// Parses a doc_string written by formatNodeTag. Any other doc_string (a human comment, a
/// malformed tag) yields nullopt and is ignored by the importer.
inline std::optional<NodeTag> parseNodeTag(std::string_view doc) {
  constexpr std::string_view kPrefix = "fusebox:id=";
  if (doc.substr(0, kPrefix.size()) != kPrefix)
    return std::nullopt;
  doc.remove_prefix(kPrefix.size());
  NodeTag tag;
  auto id = parseTagId(doc);
  if (!id)
    return std::nullopt;
  tag.id = *id;
  if (doc.empty())
    return tag;
  constexpr std::string_view kFrom = ";from=";
  if (doc.substr(0, kFrom.size()) != kFrom)
    return std::nullopt;
  doc.remove_prefix(kFrom.size());
  for (;;) {
    auto p = parseTagId(doc);
    if (!p)
      return std::nullopt;
    tag.provenance.push_back(*p);
    if (doc.empty())
      return tag;
    if (doc.front() != ',')
      return std::nullopt;
    doc.remove_prefix(1);
  }
}

} // namespace fb::onnxio
