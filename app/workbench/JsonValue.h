// A small JSON reader for files the workbench writes and reads back (the tuning log): a parsed
// document as a tree of values, with errors that say where the text stopped making sense.
#pragma once

#include "core/Error.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fb::workbench {

/// One JSON value. Objects keep their keys sorted (std::map); numbers are doubles.
struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isString() const { return kind == Kind::String; }
  bool isNumber() const { return kind == Kind::Number; }
  /// The member `key` of an object, or nullptr (also for a non-object).
  const JsonValue* find(const std::string& key) const;
};

/// Parses one JSON document (RFC 8259; \u escapes become UTF-8). An error names the line and
/// column where parsing failed and what was expected there.
Expected<JsonValue> parseJson(std::string_view text);

} // namespace fb::workbench
