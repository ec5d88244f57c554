// The op table built from Ops.def and filled by the registration functions in core/ops.
#include "core/OpTable.h"
#include "core/ops/OpRegistration.h"

#include <array>
#include <cassert>
#include <cstring>

namespace fb {

namespace {

std::array<OpInfo, kNumOpKinds> buildBaseTable() {
  std::array<OpInfo, kNumOpKinds> t{};
#define OP(Enum, OnnxName, Category, MinIn, MaxIn, MinOut, MaxOut)                                 \
  t[size_t(OpKind::Enum)] = OpInfo{OpKind::Enum,                                                  \
                                   OpKind::Enum == OpKind::Fused ? "fused" : #Enum,                \
                                   OnnxName,           OpCategory::Category,                       \
                                   MinIn,              MaxIn,                                      \
                                   MinOut,             MaxOut};
#include "core/Ops.def"
  return t;
}

std::array<OpInfo, kNumOpKinds>& mutableTable() {
  static std::array<OpInfo, kNumOpKinds> table = [] {
    auto t = buildBaseTable();
    return t;
  }();
  return table;
}

const std::array<OpInfo, kNumOpKinds>& table() {
  // Registration runs once, after the base table exists, on first use from any thread.
  static const bool registered = [] {
    OpRegistry registry;
    registerAllOps(registry);
    return true;
  }();
  (void)registered;
  return mutableTable();
}

} // namespace

void OpRegistry::setInfer(OpKind kind, InferFn fn) { mutableTable()[size_t(kind)].infer = fn; }
void OpRegistry::setEval(OpKind kind, EvalFn fn) { mutableTable()[size_t(kind)].eval = fn; }
void OpRegistry::setCost(OpKind kind, CostFn fn) { mutableTable()[size_t(kind)].cost = fn; }

const OpInfo& opInfo(OpKind kind) {
  assert(size_t(kind) < kNumOpKinds && "op kind out of range");
  return table()[size_t(kind)];
}

const char* opName(OpKind kind) { return opInfo(kind).name; }

std::optional<OpKind> opKindFromName(std::string_view name) {
  for (const OpInfo& info : table())
    if (name == info.name)
      return info.kind;
  return std::nullopt;
}

std::optional<OpKind> opKindFromOnnx(std::string_view onnxType) {
  if (onnxType.empty())
    return std::nullopt;
  for (const OpInfo& info : table())
    if (onnxType == info.onnxName)
      return info.kind;
  return std::nullopt;
}

const char* opCategoryName(OpCategory category) {
  switch (category) {
  case OpCategory::Elementwise: return "elementwise";
  case OpCategory::Broadcast: return "broadcast";
  case OpCategory::Injective: return "injective";
  case OpCategory::Reduction: return "reduction";
  case OpCategory::ComplexOutFusable: return "complex-out-fusable";
  case OpCategory::Opaque: return "opaque";
  }
  assert(false && "unknown op category");
  return "?";
}

} // namespace fb
