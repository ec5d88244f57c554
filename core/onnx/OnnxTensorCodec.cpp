// TensorProto decoding (raw, typed fields, external data with path checks) and encoding, plus the
// backend-test .pb tensor reader.
#include "core/onnx/OnnxTensorCodec.h"
#include "core/FileRead.h"
#include "core/onnx/OnnxImport.h"

#include <google/protobuf/io/coded_stream.h>

#include <bit>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fb::onnxio {

// ONNX stores raw_data little-endian; copying bytes straight into storage relies on that.
static_assert(std::endian::native == std::endian::little, "raw_data decoding assumes little-endian");

namespace fs = std::filesystem;
using onnx::TensorProto;

std::optional<DType> dtypeFromOnnx(int32_t elemType) {
  switch (elemType) {
  case TensorProto::FLOAT: return DType::F32;
  case TensorProto::UINT8: return DType::U8;
  case TensorProto::INT8: return DType::I8;
  case TensorProto::INT32: return DType::I32;
  case TensorProto::INT64: return DType::I64;
  case TensorProto::BOOL: return DType::Bool;
  case TensorProto::FLOAT16: return DType::F16;
  case TensorProto::BFLOAT16: return DType::BF16;
  default: return std::nullopt;
  }
}

int32_t dtypeToOnnx(DType dtype) {
  switch (dtype) {
  case DType::F32: return TensorProto::FLOAT;
  case DType::F16: return TensorProto::FLOAT16;
  case DType::BF16: return TensorProto::BFLOAT16;
  case DType::I8: return TensorProto::INT8;
  case DType::U8: return TensorProto::UINT8;
  case DType::I32: return TensorProto::INT32;
  case DType::I64: return TensorProto::INT64;
  case DType::Bool: return TensorProto::BOOL;
  }
  assert(false && "unknown dtype");
  return TensorProto::UNDEFINED;
}

std::string onnxElemTypeName(int32_t elemType) {
  if (TensorProto::DataType_IsValid(elemType))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elemType));
  return "element type " + std::to_string(elemType);
}

/// True when every component of `base` is a leading component of `path` and `path` is longer.
static bool isStrictlyInside(const fs::path& base, const fs::path& path) {
  auto b = base.begin(), p = path.begin();
  for (; b != base.end(); ++b, ++p) {
    // A trailing separator shows up as an empty last component of `base`.
    if (b->empty() && std::next(b) == base.end())
      break;
    if (p == path.end() || *b != *p)
      return false;
  }
  return p != path.end();
}

Expected<std::string> resolveExternalPath(const std::string& baseDir, const std::string& location) {
  if (baseDir.empty())
    return makeError("external data '", location,
                     "' is refused: the model was not loaded from a folder");
  if (location.empty())
    return makeError("external data has an empty location");
  if (location.find('\0') != std::string::npos)
    return makeError("external data location contains a NUL byte");
  fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory())
    return makeError("external data path '", location,
                     "' is absolute; only paths inside the model's folder are allowed");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(baseDir), ec);
  if (ec)
    return makeError("cannot resolve model folder '", baseDir, "': ", ec.message());
  fs::path target = fs::weakly_canonical(base / loc, ec);
  if (ec)
    return makeError("cannot resolve external data path '", location, "': ", ec.message());
  if (!isStrictlyInside(base, target))
    return makeError("external data path '", location,
                     "' escapes the model's folder (resolves to '", target.string(), "')");
  if (!fs::is_regular_file(target, ec))
    return makeError("external data file '", location, "' does not exist (looked for '",
                     target.string(), "')");
  return target.string();
}

static Expected<int64_t> parseNonNegative(const std::string& key, const std::string& text) {
  int64_t v = 0;
  auto [ptr, err] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (err != std::errc() || ptr != text.data() + text.size() || v < 0)
    return makeError("external data '", key, "' is not a non-negative integer: '", text, "'");
  return v;
}

/// Where an external tensor's bytes are, once checked against the file.
struct ExternalSlice {
  std::string path;
  std::string location;
  int64_t offset = 0;
};

/// Validates a tensor's external_data entries against the file on disk, before anything is
/// allocated: the path must stay inside the model's folder and the file must hold `needed` bytes.
static Expected<ExternalSlice> locateExternal(const TensorProto& proto,
                                              const ExternalDataPolicy& policy, int64_t needed,
                                              const std::string& typeStr) {
  ExternalSlice slice;
  std::optional<int64_t> length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      slice.location = entry.value();
    } else if (entry.key() == "offset") {
      FB_ASSIGN_OR_RETURN(slice.offset, parseNonNegative("offset", entry.value()));
    } else if (entry.key() == "length") {
      FB_ASSIGN_OR_RETURN(length, parseNonNegative("length", entry.value()));
    }
  }
  if (slice.location.empty())
    return makeError("external data has no 'location' entry");
  FB_ASSIGN_OR_RETURN(slice.path, resolveExternalPath(policy.baseDir, slice.location));
  if (length && *length != needed)
    return makeError("external data length ", *length, " bytes does not match the declared ",
                     typeStr, " (", needed, " bytes)");
  std::error_code ec;
  const uintmax_t fileSize = fs::file_size(slice.path, ec);
  if (ec)
    return makeError("cannot read external data file '", slice.location, "': ", ec.message());
  if (uintmax_t(slice.offset) > fileSize || fileSize - uintmax_t(slice.offset) < uintmax_t(needed))
    return makeError("external data file '", slice.location, "' is too short: needs ", needed,
                     " bytes at offset ", slice.offset, ", file has ", fileSize, " bytes");
  return slice;
}

static Status readExternal(const ExternalSlice& slice, Tensor& out) {
  std::ifstream in(slice.path, std::ios::binary);
  if (!in)
    return makeError("cannot open external data file '", slice.location, "'");
  in.seekg(std::streamoff(slice.offset));
  in.read(reinterpret_cast<char*>(out.mutableRawData()), std::streamsize(out.byteSize()));
  if (!in)
    return makeError("reading external data file '", slice.location, "' failed");
  return Status::success();
}

/// The typed field a tensor of `dtype` keeps its elements in, and how many it holds.
static std::pair<const char*, int64_t> typedField(const TensorProto& proto, DType dtype) {
  switch (dtype) {
  case DType::F32: return {"float_data", proto.float_data_size()};
  case DType::I64: return {"int64_data", proto.int64_data_size()};
  case DType::F16:
  case DType::BF16:
  case DType::I8:
  case DType::U8:
  case DType::I32:
  case DType::Bool:
    // Everything narrower than 64 bits that is not f32 travels in int32_data; 16-bit floats as
    // their bit patterns.
    return {"int32_data", proto.int32_data_size()};
  }
  assert(false && "unknown dtype");
  return {"?", 0};
}

/// Copies the typed field into `out`, whose element count has been checked against it.
static void readTypedFields(const TensorProto& proto, Tensor& out) {
  const int64_t n = out.numElements();
  std::byte* dst = out.mutableRawData();
  if (n == 0)
    return;
  switch (out.dtype()) {
  case DType::F32: std::memcpy(dst, proto.float_data().data(), size_t(n) * 4); return;
  case DType::I64: std::memcpy(dst, proto.int64_data().data(), size_t(n) * 8); return;
  case DType::F16:
  case DType::BF16:
  case DType::I8:
  case DType::U8:
  case DType::I32:
  case DType::Bool: break;
  }
  const auto& src = proto.int32_data();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = src[int(i)];
    switch (out.dtype()) {
    case DType::F16:
    case DType::BF16: {
      const uint16_t bits = uint16_t(v);
      std::memcpy(dst + i * 2, &bits, 2);
      break;
    }
    case DType::I8: reinterpret_cast<int8_t*>(dst)[i] = int8_t(v); break;
    case DType::U8: reinterpret_cast<uint8_t*>(dst)[i] = uint8_t(v); break;
    case DType::I32: reinterpret_cast<int32_t*>(dst)[i] = v; break;
    case DType::Bool: reinterpret_cast<uint8_t*>(dst)[i] = v != 0; break;
    default: assert(false && "64-bit and f32 types are copied above"); break;
    }
  }
}

/// A bool byte other than 0 or 1 is undefined behaviour when read as bool.
static void normalizeBools(Tensor& t) {
  if (t.dtype() != DType::Bool)
    return;
  auto* p = reinterpret_cast<uint8_t*>(t.mutableRawData());
  for (size_t i = 0; i < t.byteSize(); ++i)
    p[i] = p[i] != 0;
}

Expected<Tensor> decodeTensor(const TensorProto& proto, const std::string& what,
                              const ExternalDataPolicy& external) {
  if (proto.has_segment())
    return makeUnsupported(what, ": segmented tensors are not supported");
  if (proto.data_type() == TensorProto::UNDEFINED)
    return makeError(what, ": has no data_type");
  std::optional<DType> dtype = dtypeFromOnnx(proto.data_type());
  if (!dtype)
    return makeUnsupported(what, ": element type ", onnxElemTypeName(proto.data_type()),
                           " is not supported (Fusebox has f32, f16, bf16, i8, u8, i32, i64, "
                           "bool)");
  std::vector<int64_t> sizes(proto.dims().begin(), proto.dims().end());
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0)
      return makeError(what, ": dimension ", i, " is negative (", sizes[i], ")");
  const std::string typeStr = TensorType::of(*dtype, sizes).str();
  std::optional<int64_t> count = checkedProduct(sizes);
  int64_t bytes = 0;
  if (!count || __builtin_mul_overflow(*count, int64_t(dtypeSize(*dtype)), &bytes))
    return makeError(what, ": the size of ", typeStr, " overflows");

  // Every size is checked against the data the file really holds before anything is allocated,
  // so a hostile header cannot make the importer reserve memory it never fills.
  std::optional<ExternalSlice> slice;
  if (proto.data_location() == TensorProto::EXTERNAL) {
    auto located = locateExternal(proto, external, bytes, typeStr);
    if (!located.ok())
      return located.error().withContext(what);
    slice = std::move(located).value();
  } else if (proto.has_raw_data()) {
    if (proto.raw_data().size() != uint64_t(bytes))
      return makeError(what, ": declared ", typeStr, " needs ", bytes, " bytes but raw_data holds ",
                       proto.raw_data().size(), " bytes");
  } else {
    auto [field, have] = typedField(proto, *dtype);
    if (have != *count)
      return makeError(what, ": declared ", typeStr, " needs ", bytes, " bytes but ", field,
                       " holds ", have * int64_t(dtypeSize(*dtype)), " bytes");
  }

  auto created = Tensor::create(*dtype, sizes);
  if (!created.ok())
    return created.error().withContext(what);
  Tensor t = std::move(created).value();
  if (slice) {
    Status st = readExternal(*slice, t);
    if (!st.ok())
      return st.error().withContext(what);
  } else if (proto.has_raw_data()) {
    if (bytes)
      std::memcpy(t.mutableRawData(), proto.raw_data().data(), size_t(bytes));
  } else {
    readTypedFields(proto, t);
  }
  normalizeBools(t);
  return t;
}

void encodeTensor(const Tensor& tensor, const std::string& name, TensorProto& proto) {
  proto.set_name(name);
  proto.set_data_type(dtypeToOnnx(tensor.dtype()));
  for (int64_t s : tensor.sizes())
    proto.add_dims(s);
  proto.set_raw_data(reinterpret_cast<const char*>(tensor.rawData()), tensor.byteSize());
}

} // namespace fb::onnxio

namespace fb {

Expected<Tensor> tensorFromOnnxProtoBytes(std::string_view bytes, const std::string& displayName) {
  if (bytes.size() > size_t(INT_MAX))
    return makeError(displayName, ": larger than 2 GB, the protobuf limit");
  onnx::TensorProto proto;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            int(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  if (!proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return makeError(displayName, ": not a valid ONNX TensorProto (truncated or corrupt)");
  const std::string what = proto.name().empty() ? "tensor" : "tensor '" + proto.name() + "'";
  auto t = onnxio::decodeTensor(proto, what, onnxio::ExternalDataPolicy{});
  if (!t.ok())
    return t.error().withContext(displayName);
  return t;
}

Expected<Tensor> readOnnxTensorFile(const std::string& path) {
  FB_ASSIGN_OR_RETURN(std::string bytes, readRegularFile(path, "ONNX tensor"));
  return tensorFromOnnxProtoBytes(bytes, path);
}

} // namespace fb
