// The operator table: one OpInfo per op kind, generated from Ops.def, with per-op behaviour
// (shape inference, interpreter kernel, cost) registered by core/ops/*.cpp.
#pragma once

#include "core/Error.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace fb {

/// Every operator kind, from Ops.def.
enum class OpKind : uint16_t {
#define OP(Enum, OnnxName, Category, MinIn, MaxIn, MinOut, MaxOut) Enum,
#include "core/Ops.def"
};

/// Number of op kinds.
inline constexpr size_t kNumOpKinds = 0
#define OP(Enum, OnnxName, Category, MinIn, MaxIn, MinOut, MaxOut) +1
#include "core/Ops.def"
    ;

/// Fusion categories, ordered as TVM orders its op patterns: a producer of a lower category can
/// be fused into a consumer more freely.
enum class OpCategory : uint8_t {
  Elementwise,       ///< out[i] = f(in[i]) on same-shaped tensors
  Broadcast,         ///< elementwise after NumPy broadcasting
  Injective,         ///< each output element reads one input element (reshape, transpose, slice)
  Reduction,         ///< output elements combine many input elements
  ComplexOutFusable, ///< conv, matmul, pooling: can absorb elementwise epilogues
  Opaque,            ///< cannot be fused
};
const char* opCategoryName(OpCategory category);

class InferContext;
class EvalContext;
class CostContext;

/// FLOPs and bytes moved by one node, for reports and the roofline.
struct OpCost {
  double flops = 0;
  double bytes = 0;
};

using InferFn = Status (*)(InferContext&);
using EvalFn = Status (*)(EvalContext&);
using CostFn = OpCost (*)(const CostContext&);

/// Everything the compiler knows about one op kind.
struct OpInfo {
  OpKind kind;
  const char* name;     ///< IR spelling (same as the ONNX op type; "fused" for groups)
  const char* onnxName; ///< ONNX op type in the default domain, or "" when not an ONNX op
  OpCategory category;
  int minInputs, maxInputs;   ///< maxInputs == -1: variadic
  int minOutputs, maxOutputs; ///< maxOutputs == -1: variadic
  InferFn infer = nullptr;    ///< sets output types; registered by core/ops
  EvalFn eval = nullptr;      ///< reference interpreter kernel; registered by core/ops
  CostFn cost = nullptr;      ///< FLOPs; bytes default to inputs + outputs when null
};

/// The table entry of an op kind.
const OpInfo& opInfo(OpKind kind);
/// The IR name of an op kind ("Conv", "fused").
const char* opName(OpKind kind);
/// Looks an op up by its IR name.
std::optional<OpKind> opKindFromName(std::string_view name);
/// Looks an op up by its ONNX op type (default domain).
std::optional<OpKind> opKindFromOnnx(std::string_view onnxType);

/// Per-op behaviour is filled in by registration functions, one per file in core/ops.
class OpRegistry {
public:
  void setInfer(OpKind kind, InferFn fn);
  void setEval(OpKind kind, EvalFn fn);
  void setCost(OpKind kind, CostFn fn);
  /// Registers all three at once.
  void set(OpKind kind, InferFn infer, EvalFn eval, CostFn cost = nullptr) {
    setInfer(kind, infer);
    setEval(kind, eval);
    if (cost)
      setCost(kind, cost);
  }
};

} // namespace fb
