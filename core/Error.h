// Error values for bad input: Error, Expected<T> and Status. No exception crosses a library boundary.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace fb {

/// What kind of failure an Error reports.
enum class ErrorKind : uint8_t {
  Invalid,     ///< the input is wrong (malformed file, shape mismatch, cycle, ...)
  Unsupported, ///< the input is valid but uses something Fusebox does not implement
  /// The operation needs static shapes and the graph has symbolic dims (N): a front end says
  /// how to bind them (fusebox-opt's --dim, the GUI's dims field).
  SymbolicShape,
};

/// A user-facing error: one message that names what went wrong and where.
class Error {
public:
  Error() = default;
  explicit Error(std::string message, ErrorKind kind = ErrorKind::Invalid)
      : m_message(std::move(message)), m_kind(kind) {}

  /// The message, without an "error:" prefix.
  const std::string& message() const { return m_message; }
  ErrorKind kind() const { return m_kind; }
  bool isUnsupported() const { return m_kind == ErrorKind::Unsupported; }

  /// Returns a new error whose message is `context: message`, for adding where an error happened.
  Error withContext(const std::string& context) const {
    return Error(context + ": " + m_message, m_kind);
  }

private:
  std::string m_message;
  ErrorKind m_kind = ErrorKind::Invalid;
};

/// Either a value of type T or an Error. Modelled on std::expected (C++23), which GCC 12 lacks.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return m_state.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok() && "value() on an Expected that holds an error");
    return std::get<0>(m_state);
  }
  const T& value() const& {
    assert(ok() && "value() on an Expected that holds an error");
    return std::get<0>(m_state);
  }
  T&& value() && {
    assert(ok() && "value() on an Expected that holds an error");
    return std::get<0>(std::move(m_state));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    assert(!ok() && "error() on an Expected that holds a value");
    return std::get<1>(m_state);
  }

private:
  std::variant<T, Error> m_state;
};

/// Success, or an Error.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : m_error(std::move(error)), m_failed(true) {}
  static Status success() { return Status(); }

  bool ok() const { return !m_failed; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(m_failed && "error() on a successful Status");
    return m_error;
  }

private:
  Error m_error;
  bool m_failed = false;
};

/// Builds an Error from streamable parts: makeError("node ", name, ": bad rank ", rank).
template <typename... Parts> Error makeError(const Parts&... parts);
/// Builds an Unsupported error from streamable parts.
template <typename... Parts> Error makeUnsupported(const Parts&... parts);

} // namespace fb

#include <sstream>

namespace fb {
template <typename... Parts> Error makeError(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return Error(os.str());
}
template <typename... Parts> Error makeUnsupported(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return Error(os.str(), ErrorKind::Unsupported);
}
} // namespace fb

/// Propagates an error from an expression yielding Status: FB_TRY(verify(g));
#define FB_TRY(expr)                                                                               \
  do {                                                                                             \
    auto fbTryStatus_ = (expr);                                                                    \
    if (!fbTryStatus_.ok())                                                                        \
      return fbTryStatus_.error();                                                                 \
  } while (0)

#define FB_CONCAT_INNER(a, b) a##b
#define FB_CONCAT(a, b) FB_CONCAT_INNER(a, b)
/// Declares `decl` from an Expected-yielding expression, or returns its error.
#define FB_ASSIGN_OR_RETURN(decl, expr)                                                            \
  auto FB_CONCAT(fbTmp_, __LINE__) = (expr);                                                       \
  if (!FB_CONCAT(fbTmp_, __LINE__).ok())                                                           \
    return FB_CONCAT(fbTmp_, __LINE__).error();                                                    \
  decl = std::move(FB_CONCAT(fbTmp_, __LINE__)).value()
