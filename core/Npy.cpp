// NumPy .npy reading (format 1.0-3.0) and writing, with a strict header parser for untrusted files.
#include "core/Npy.h"
#include "core/FileRead.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

namespace fb {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// Headers are padded so that the data starts on a multiple of this, as NumPy >= 1.21 does.
constexpr size_t kHeaderAlignment = 64;
/// No NumPy writes a header this large; a bigger one is a hostile or corrupt file.
constexpr uint32_t kMaxHeaderSize = 1u << 20;

/// The parsed header dictionary: {'descr': ..., 'fortran_order': ..., 'shape': (...), }.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent parser for the small subset of Python literal syntax that .npy headers
/// use. It refuses anything else (nested dicts, expressions, unknown keys) instead of guessing.
class HeaderParser {
public:
  HeaderParser(std::string_view text, const std::string& file) : m_text(text), m_file(file) {}

  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{' at the start of the header dictionary");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      auto key = parseString();
      if (!key)
        return key.error();
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after key '" + *key + "'");
      skipSpace();
      if (*key == "descr") {
        if (haveDescr)
          return fail("duplicate key 'descr'");
        haveDescr = true;
        if (peek() != '\'' && peek() != '"')
          return makeUnsupported(m_file, ": .npy structured or non-string dtype descriptions are "
                                         "not supported");
        auto v = parseString();
        if (!v)
          return v.error();
        header.descr = *v;
      } else if (*key == "fortran_order") {
        if (haveOrder)
          return fail("duplicate key 'fortran_order'");
        haveOrder = true;
        if (consumeWord("True"))
          header.fortranOrder = true;
        else if (consumeWord("False"))
          header.fortranOrder = false;
        else
          return fail("'fortran_order' must be True or False");
      } else if (*key == "shape") {
        if (haveShape)
          return fail("duplicate key 'shape'");
        haveShape = true;
        auto v = parseShape();
        if (!v)
          return v.error();
        header.shape = std::move(*v);
      } else {
        return fail("unknown header key '" + *key + "'");
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail("expected ',' or '}' in the header dictionary");
    }
    skipSpace();
    if (m_pos != m_text.size())
      return fail("unexpected characters after the header dictionary");
    if (!haveDescr || !haveOrder || !haveShape)
      return fail("the header must have the keys 'descr', 'fortran_order' and 'shape'");
    return header;
  }

private:
  char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
  bool consume(char c) {
    if (peek() != c)
      return false;
    ++m_pos;
    return true;
  }
  bool consumeWord(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word)
      return false;
    // "Truex" is not the word True.
    size_t end = m_pos + word.size();
    if (end < m_text.size() && (std::isalnum(static_cast<unsigned char>(m_text[end])) ||
                                m_text[end] == '_'))
      return false;
    m_pos = end;
    return true;
  }
  void skipSpace() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                                     m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
      ++m_pos;
  }
  Error fail(const std::string& what) const {
    return makeError(m_file, ": invalid .npy header at offset ", m_pos, ": ", what);
  }

  Expected<std::string> parseString() {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail("expected a quoted string");
    ++m_pos;
    std::string out;
    while (m_pos < m_text.size() && m_text[m_pos] != quote) {
      // Escapes never occur in NumPy's keys or dtype strings; refusing them keeps parsing exact.
      if (m_text[m_pos] == '\\')
        return fail("escape sequences are not allowed in header strings");
      out += m_text[m_pos++];
    }
    if (!consume(quote))
      return fail("unterminated string");
    return out;
  }

  Expected<std::vector<int64_t>> parseShape() {
    if (!consume('('))
      return fail("'shape' must be a tuple");
    std::vector<int64_t> dims;
    skipSpace();
    if (consume(')'))
      return dims;
    while (true) {
      skipSpace();
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        return fail("shape entries must be non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(v, int64_t(10), &v) ||
            __builtin_add_overflow(v, int64_t(peek() - '0'), &v))
          return fail("a shape entry overflows int64");
        ++m_pos;
      }
      consume('L'); // Python 2 wrote longs as 3L.
      dims.push_back(v);
      if (dims.size() > 64)
        return fail("more than 64 dimensions");
      skipSpace();
      if (consume(')'))
        break;
      if (!consume(','))
        return fail("expected ',' or ')' in the shape tuple");
      skipSpace();
      if (consume(')'))
        break;
    }
    return dims;
  }

  std::string_view m_text;
  const std::string& m_file;
  size_t m_pos = 0;
};

/// Maps a descr such as "<f4" to a dtype. Byte order must be little-endian, or '|' (not
/// applicable) for one-byte types.
Expected<DType> dtypeFromDescr(const std::string& descr, const std::string& file) {
  if (descr.size() < 2)
    return makeError(file, ": invalid .npy dtype '", descr, "'");
  char order = descr[0];
  std::string kind = descr.substr(1);
  struct Entry {
    const char* kind;
    DType dtype;
  };
  static constexpr Entry kTable[] = {{"f4", DType::F32}, {"f2", DType::F16}, {"i1", DType::I8},
                                     {"u1", DType::U8},  {"i4", DType::I32}, {"i8", DType::I64},
                                     {"b1", DType::Bool}};
  if (order != '<' && order != '|' && order != '>' && order != '=')
    return makeError(file, ": invalid .npy dtype '", descr, "' (bad byte-order character)");
  for (const Entry& e : kTable) {
    if (kind != e.kind)
      continue;
    bool oneByte = dtypeSize(e.dtype) == 1;
    // '=' is native order, which is little-endian on every host Fusebox builds for.
    if (!oneByte && order == '>')
      return makeUnsupported(file, ": big-endian .npy data ('", descr,
                             "') is not supported; save it little-endian");
    if (!oneByte && order == '|')
      return makeError(file, ": invalid .npy dtype '", descr,
                       "' ('|' byte order on a multi-byte type)");
    return e.dtype;
  }
  return makeUnsupported(file, ": .npy dtype '", descr,
                         "' is not supported (supported: <f4 <f2 |i1 |u1 <i4 <i8 |b1)");
}

uint32_t readLittleEndian(std::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= uint32_t(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return v;
}

const char* descrFor(DType dtype) {
  switch (dtype) {
  case DType::F32: return "<f4";
  case DType::F16: return "<f2";
  case DType::BF16: return "<f4"; // NumPy has no bfloat16: widened to f32 on write.
  case DType::I8: return "|i1";
  case DType::U8: return "|u1";
  case DType::I32: return "<i4";
  case DType::I64: return "<i8";
  case DType::Bool: return "|b1";
  }
  assert(false && "unknown dtype");
  return "";
}

} // namespace

Expected<Tensor> parseNpy(std::string_view bytes, const std::string& displayName) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    return makeError(displayName, ": not a .npy file (missing the \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return makeUnsupported(displayName, ": .npy format version ", major, ".", minor,
                           " is not supported (1.0, 2.0 and 3.0 are)");
  size_t lenWidth = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + lenWidth;
  if (bytes.size() < prefix)
    return makeError(displayName, ": truncated .npy file (no header length)");
  uint32_t headerLen = readLittleEndian(bytes, kMagicSize + 2, lenWidth);
  if (headerLen > kMaxHeaderSize)
    return makeError(displayName, ": .npy header length ", headerLen, " is implausibly large");
  if (bytes.size() - prefix < headerLen)
    return makeError(displayName, ": truncated .npy header (declares ", headerLen, " bytes, ",
                     bytes.size() - prefix, " present)");
  std::string_view headerText = bytes.substr(prefix, headerLen);
  for (char c : headerText) {
    // Version 3.0 allows UTF-8, but the keys and values we accept are ASCII; a NUL or control
    // character means corruption.
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r')
      return makeError(displayName, ": invalid .npy header (control character)");
  }

  FB_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(headerText, displayName).parse());
  if (header.fortranOrder)
    return makeUnsupported(displayName,
                           ": Fortran-order .npy arrays are not supported; save a C-contiguous "
                           "array (numpy.ascontiguousarray)");
  FB_ASSIGN_OR_RETURN(DType dtype, dtypeFromDescr(header.descr, displayName));
  // The data must be there before anything is allocated: a header may claim terabytes.
  {
    auto count = checkedProduct(header.shape);
    size_t need = 0;
    const size_t have = bytes.size() - prefix - headerLen;
    if (!count || __builtin_mul_overflow(size_t(*count), dtypeSize(dtype), &need))
      return makeError(displayName, ": .npy shape ", TensorType::of(dtype, header.shape).str(),
                       " overflows 64 bits");
    if (need != have)
      return makeError(displayName, ": .npy data of ", TensorType::of(dtype, header.shape).str(),
                       " needs ", need, " bytes, but the file has ", have,
                       have < need ? " (truncated)" : " (trailing bytes)");
  }
  auto created = Tensor::create(dtype, header.shape);
  if (!created)
    return created.error().withContext(displayName);
  Tensor tensor = std::move(created).value();

  size_t expected = tensor.byteSize();
  size_t actual = bytes.size() - prefix - headerLen;
  if (actual != expected)
    return makeError(displayName, ": .npy data of ", tensor.type().str(), " needs ", expected,
                     " bytes, but the file has ", actual,
                     actual < expected ? " (truncated)" : " (trailing bytes)");
  if (expected > 0)
    std::memcpy(tensor.mutableRawData(), bytes.data() + prefix + headerLen, expected);
  if (dtype == DType::Bool) {
    // A byte other than 0/1 in a C++ bool is undefined behaviour; NumPy reads any non-zero as
    // true, so normalise the same way.
    auto* raw = reinterpret_cast<unsigned char*>(tensor.mutableRawData());
    for (size_t i = 0; i < expected; ++i)
      raw[i] = raw[i] != 0 ? 1 : 0;
  }
  return tensor;
}

Expected<Tensor> readNpy(const std::string& path) {
  FB_ASSIGN_OR_RETURN(std::string bytes, readRegularFile(path, ".npy"));
  return parseNpy(bytes, path);
}

Status writeNpy(const std::string& path, const Tensor& tensor) {
  if (!tensor.valid())
    return makeError(path, ": cannot write an empty (invalid) tensor as .npy");
  std::ostringstream dict;
  dict << "{'descr': '" << descrFor(tensor.dtype()) << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.rank(); ++i)
    dict << tensor.sizes()[i] << (tensor.rank() == 1 || i + 1 < tensor.rank() ? "," : "")
         << (i + 1 < tensor.rank() ? " " : "");
  dict << "), }";
  std::string header = dict.str();

  // Version 1.0 has a 16-bit header length; fall back to 2.0 only when the header needs more.
  size_t lenWidth = 2;
  unsigned char major = 1;
  size_t total = kMagicSize + 2 + lenWidth + header.size() + 1;
  if (total + kHeaderAlignment > 65535) {
    lenWidth = 4;
    major = 2;
    total = kMagicSize + 2 + lenWidth + header.size() + 1;
  }
  size_t padding = (kHeaderAlignment - total % kHeaderAlignment) % kHeaderAlignment;
  header.append(padding, ' ');
  header += '\n';

  std::string out(kMagic, kMagicSize);
  out += char(major);
  out += char(0);
  uint32_t len = uint32_t(header.size());
  for (size_t i = 0; i < lenWidth; ++i)
    out += char((len >> (8 * i)) & 0xff);
  out += header;

  if (tensor.dtype() == DType::BF16) {
    std::vector<float> widened(size_t(tensor.numElements()));
    auto src = tensor.data<bf16_t>();
    for (size_t i = 0; i < widened.size(); ++i)
      widened[i] = float(src[i]);
    out.append(reinterpret_cast<const char*>(widened.data()), widened.size() * sizeof(float));
  } else {
    out.append(reinterpret_cast<const char*>(tensor.rawData()), tensor.byteSize());
  }

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file)
    return makeError(path, ": cannot open for writing");
  file.write(out.data(), std::streamsize(out.size()));
  file.close();
  if (!file)
    return makeError(path, ": write error");
  return Status::success();
}

} // namespace fb
