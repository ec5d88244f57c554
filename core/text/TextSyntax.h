// Lexical rules of the text IR shared by the printer and the parser: names, strings, numbers, base64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb::text {

/// True for a character that may appear in an unquoted value or graph name (after % or @).
bool isBareNameChar(char c);
/// True when `name` prints unquoted after % or @: one or more of [A-Za-z0-9_.:/-].
bool isBareName(std::string_view name);
/// True for a character that may start an identifier.
bool isIdentStart(char c);
/// True for a character that may continue an identifier.
bool isIdentChar(char c);
/// True when `word` prints unquoted as an identifier ([A-Za-z_][A-Za-z0-9_.]*) and is not a
/// word the lexer reads as something else (inf, nan, true, false, _).
bool isPlainIdentifier(std::string_view word);

/// The string in double quotes with \" \\ \n \t \r and \xHH escapes; other bytes stay as they are,
/// so any byte string round-trips.
std::string quoteString(std::string_view s);
/// `prefix` followed by the name, quoted unless isBareName.
std::string formatName(char prefix, std::string_view name);
/// An identifier as is, or quoted when it is not isPlainIdentifier.
std::string formatWord(std::string_view word);

/// Shortest text that reads back as the same float, always distinguishable from an integer:
/// "1.0", "0.1", "1e-05", "inf", "-inf", "nan".
std::string formatFloat(float value);

/// Standard base64 (RFC 4648, with padding).
std::string encodeBase64(const std::byte* data, size_t size);
/// Decodes standard base64; nullopt when the text is not valid base64.
std::optional<std::vector<std::byte>> decodeBase64(std::string_view text);

} // namespace fb::text
