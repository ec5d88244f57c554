// The loop-IR → LLVM IR emitter: memory accesses, lane-affine index arithmetic, expressions.
#include "codegen/llvm/LlvmMath.h"
#include "codegen/llvm/LoopEmitter.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <cmath>

namespace fb::cg::loopemit {

/// Loads with a constant lane stride up to this become contiguous loads and a shuffle; wider
/// strides touch too many unused elements and stay gathers.
constexpr int64_t kMaxShuffleStride = 4;

namespace {

/// True when e is clamped by min/max with float immediates into a range integer dtype `to`
/// holds (QuantizeLinear's saturation): then only NaN needs care in a float → integer cast.
bool clampedIntoRange(const ExprPtr& e, DType to) {
  if (isFloat(to) || to == DType::Bool || e->kind != Expr::Kind::Binary ||
      (e->binaryOp != BinaryOp::Min && e->binaryOp != BinaryOp::Max))
    return false;
  const ExprPtr& inner = e->operands.at(0);
  const ExprPtr& bound = e->operands.at(1);
  if (bound->kind != Expr::Kind::FloatImm || inner->kind != Expr::Kind::Binary ||
      inner->binaryOp == e->binaryOp ||
      (inner->binaryOp != BinaryOp::Min && inner->binaryOp != BinaryOp::Max) ||
      inner->operands.at(1)->kind != Expr::Kind::FloatImm)
    return false;
  double lo = std::min(bound->floatValue, inner->operands.at(1)->floatValue);
  double hi = std::max(bound->floatValue, inner->operands.at(1)->floatValue);
  int bits = int(dtypeSize(to)) * 8;
  const bool un = to == DType::U8;
  double min = un ? 0 : -std::ldexp(1.0, bits - 1);
  double max = un ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
  return lo >= min && hi <= max;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Memory accesses

llvm::Value* Emitter::basePointer(const Buffer& buf) {
  if (buf.kind == Buffer::Kind::Arg) {
    if (buf.arg < 0 || size_t(buf.arg) >= m_fs.argPtrs.size() || !m_fs.argPtrs[size_t(buf.arg)]) {
      fail("buffer " + buf.name + " names argument " + std::to_string(buf.arg) +
           " which the kernel does not have");
      return nullptr;
    }
    return m_fs.argPtrs[size_t(buf.arg)];
  }
  auto it = m_fs.locals.find(buf.name);
  if (it == m_fs.locals.end()) {
    fail("local buffer " + buf.name + " is used outside its alloc");
    return nullptr;
  }
  return it->second;
}

Affine Emitter::flatIndex(const Buffer& buf, const std::vector<ExprPtr>& indices) {
  Affine flat{i64(buf.offset), 0, nullptr, 0};
  if (indices.size() != buf.rank()) {
    fail("buffer " + buf.name + " of rank " + std::to_string(buf.rank()) + " indexed with " +
         std::to_string(indices.size()) + " indices");
    return flat;
  }
  for (size_t d = 0; d < indices.size(); ++d)
    flat = addAffine(flat, scaleAffine(emitAffine(indices[d]), buf.strides[d]));
  return flat;
}

void Emitter::tagAccess(llvm::Instruction* inst, const Buffer& buf) {
  if (buf.kind != Buffer::Kind::Arg || buf.arg < 0 || size_t(buf.arg) >= m_scopeOf.size())
    return;
  if (llvm::MDNode* scope = m_scopeOf[size_t(buf.arg)]) {
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, scope);
    inst->setMetadata(llvm::LLVMContext::MD_noalias, m_noAliasOf[size_t(buf.arg)]);
  }
}

int Emitter::privateLanes(const Buffer& buf) const {
  if (buf.kind != Buffer::Kind::Local)
    return 0;
  auto it = m_fs.localLanes.find(buf.name);
  return it == m_fs.localLanes.end() ? 0 : it->second;
}

llvm::Value* Emitter::privateAddress(const Buffer& buf, const std::vector<ExprPtr>& indices,
                                     bool& contiguous) {
  int lanes = privateLanes(buf);
  llvm::Value* base = basePointer(buf);
  llvm::Type* mt = memoryType(buf.dtype);
  Affine idx = flatIndex(buf, indices);
  contiguous = idx.lanes == 0 || (!idx.vector && idx.stride == 0);
  if (contiguous)
    return m_b.CreateInBoundsGEP(mt, base, m_b.CreateMul(idx.base, i64(lanes), "", false, true));
  llvm::Value* perLane = m_b.CreateMul(splat(vectorOf(idx), lanes),
                                       m_b.CreateVectorSplat(unsigned(lanes), i64(lanes)), "",
                                       false, true);
  return m_b.CreateInBoundsGEP(mt, base, m_b.CreateAdd(perLane, stepVector(lanes), "", false, true));
}

llvm::Value* Emitter::emitLoad(const Expr& e) {
  const Buffer& buf = *e.buffer;
  llvm::Value* base = basePointer(buf);
  if (!base)
    return llvm::PoisonValue::get(scalarType(buf.dtype));
  if (int lanes = privateLanes(buf)) {
    bool contiguous = false;
    llvm::Value* addr = privateAddress(buf, e.operands, contiguous);
    auto* vt = llvm::FixedVectorType::get(memoryType(buf.dtype), unsigned(lanes));
    llvm::Align align(dtypeSize(buf.dtype));
    llvm::Value* v = nullptr;
    if (contiguous)
      v = m_mask ? static_cast<llvm::Value*>(m_b.CreateMaskedLoad(
                       vt, addr, align, m_mask, llvm::Constant::getNullValue(vt)))
                 : static_cast<llvm::Value*>(
                       m_b.CreateAlignedLoad(vt, addr, align, llvmSafeName(buf.name)));
    else
      v = m_b.CreateMaskedGather(vt, addr, align, m_mask, llvm::Constant::getNullValue(vt));
    if (buf.dtype == DType::Bool)
      v = m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    return v;
  }
  Affine idx = flatIndex(buf, e.operands);
  llvm::Type* mt = memoryType(buf.dtype);
  llvm::Align align(dtypeSize(buf.dtype));
  llvm::Value* v = nullptr;
  std::string name = llvmSafeName(buf.name);
  // lanes >= stride: each of the contiguous loads starts at or before the last lane's element.
  if (idx.lanes > 0 && !idx.vector && idx.stride >= 2 && idx.stride <= kMaxShuffleStride &&
      idx.lanes >= idx.stride && (!m_mask || idx.lanes == m_lanes)) {
    v = emitStridedLoad(e, base, idx);
  } else if (m_mask) {
    // Under a lane mask: inactive lanes must not touch memory (they may be out of bounds).
    auto* vt = llvm::FixedVectorType::get(mt, unsigned(m_lanes));
    llvm::Instruction* ld = nullptr;
    if (idx.lanes > 0 && !idx.vector && idx.stride == 1)
      ld = m_b.CreateMaskedLoad(vt, m_b.CreateInBoundsGEP(mt, base, idx.base), align, m_mask,
                                llvm::Constant::getNullValue(vt), name);
    else
      ld = m_b.CreateMaskedGather(vt, m_b.CreateInBoundsGEP(mt, base, splat(vectorOf(idx), m_lanes)),
                                  align, m_mask, llvm::Constant::getNullValue(vt), name);
    tagAccess(ld, buf);
    v = ld;
  } else if (idx.lanes == 0 || (!idx.vector && idx.stride == 0)) {
    auto* ld = m_b.CreateAlignedLoad(mt, m_b.CreateInBoundsGEP(mt, base, idx.base), align, name);
    tagAccess(ld, buf);
    v = ld;
  } else if (!idx.vector && idx.stride == 1) {
    auto* vt = llvm::FixedVectorType::get(mt, unsigned(idx.lanes));
    auto* ld = m_b.CreateAlignedLoad(vt, m_b.CreateInBoundsGEP(mt, base, idx.base), align, name);
    tagAccess(ld, buf);
    v = ld;
  } else {
    auto* vt = llvm::FixedVectorType::get(mt, unsigned(idx.lanes));
    llvm::Value* ptrs = m_b.CreateInBoundsGEP(mt, base, vectorOf(idx));
    auto* g = m_b.CreateMaskedGather(vt, ptrs, align, nullptr, nullptr, name);
    tagAccess(g, buf);
    v = g;
  }
  if (buf.dtype == DType::Bool)
    v = m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  return v;
}

llvm::Value* Emitter::emitStridedLoad(const Expr& e, llvm::Value* base, const Affine& idx) {
  // Lane l reads element base + l*s. The s loads of `lanes` elements from base cover
  // [base, base + lanes*s): every lane's element, the ones between, and s - 1 past the last
  // lane's. Unmasked, the elements up to the last lane's are read by the program anyway; the
  // trailing s - 1 may lie past the end of the storage, so unless the index range proves
  // them inside, the last load is masked to stop at the last lane's element. Under a lane
  // mask, each load is masked to the live lanes' elements alone, as the gather would be.
  const Buffer& buf = *e.buffer;
  const int lanes = idx.lanes;
  const int64_t s = idx.stride;
  llvm::Type* mt = memoryType(buf.dtype);
  auto* chunkTy = llvm::FixedVectorType::get(mt, unsigned(lanes));
  llvm::Align align(dtypeSize(buf.dtype));
  std::string name = llvmSafeName(buf.name);
  const int64_t lastNeeded = int64_t(lanes - 1) * s; // offset of the last lane's element
  bool tailInBounds = !m_mask && endsInside(buf, e.operands, s - 1);
  std::vector<llvm::Value*> chunks;
  for (int64_t k = 0; k < s; ++k) {
    llvm::Value* offset =
        k == 0 ? idx.base : m_b.CreateAdd(idx.base, i64(k * lanes), "", false, true);
    // Under a mask the chunk may start outside the buffer (a padded lane 0), so no inbounds.
    llvm::Value* ptr =
        m_mask ? m_b.CreateGEP(mt, base, offset) : m_b.CreateInBoundsGEP(mt, base, offset);
    llvm::Instruction* ld = nullptr;
    if (m_mask) {
      // Element p of this chunk is lane p/s's element when p % s == 0; else never needed
      // (index `lanes` picks a false from the second operand).
      std::vector<int> pick;
      for (int64_t p = k * lanes; p < (k + 1) * lanes; ++p)
        pick.push_back(p % s == 0 ? int(p / s) : lanes);
      llvm::Value* mask = m_b.CreateShuffleVector(
          m_mask, llvm::Constant::getNullValue(m_mask->getType()), pick, name + ".mask");
      ld = m_b.CreateMaskedLoad(chunkTy, ptr, align, mask, llvm::Constant::getNullValue(chunkTy),
                                name);
    } else if (k == s - 1 && !tailInBounds) {
      std::vector<llvm::Constant*> live;
      for (int64_t p = k * lanes; p < (k + 1) * lanes; ++p)
        live.push_back(m_b.getInt1(p <= lastNeeded));
      ld = m_b.CreateMaskedLoad(chunkTy, ptr, align, llvm::ConstantVector::get(live),
                                llvm::Constant::getNullValue(chunkTy), name);
    } else {
      ld = m_b.CreateAlignedLoad(chunkTy, ptr, align, name);
    }
    tagAccess(ld, buf);
    chunks.push_back(ld);
  }
  llvm::Value* wide = llvm::concatenateVectors(m_b, chunks);
  std::vector<int> every;
  for (int l = 0; l < lanes; ++l)
    every.push_back(int(l * s));
  return m_b.CreateShuffleVector(wide, every, name);
}

void Emitter::emitStore(const Stmt& s) {
  if (!s.buffer || !s.value)
    return fail("a store lacks its buffer or value");
  const Buffer& buf = *s.buffer;
  llvm::Value* value = emitExpr(s.value);
  llvm::Value* base = basePointer(buf);
  if (!base || !value)
    return;
  // The update of a scalar sum or product over the loop it runs in may be reassociated, as
  // `omp simd reduction` allows: that is what lets LLVM keep 8-lane partial sums (a strict
  // in-order chain stays scalar). nsz too, which SLP's horizontal reductions need; only the
  // sign of an exact zero sum can differ. Min/max updates are left in order (their NaN
  // semantics are order-dependent).
  if (m_lanes == 0 && isReductionUpdate(s, m_innermostLoop))
    if (auto* op = llvm::dyn_cast<llvm::Instruction>(value);
        op && (op->getOpcode() == llvm::Instruction::FAdd ||
               op->getOpcode() == llvm::Instruction::FMul)) {
      op->setHasAllowReassoc(true);
      op->setHasNoSignedZeros(true);
    }
  if (!s.comment.empty() && llvm::isa<llvm::Instruction>(value) && !value->hasName())
    value->setName(llvmSafeName(s.comment));
  llvm::Type* mt = memoryType(buf.dtype);
  llvm::Type* valueElem = value->getType()->getScalarType();
  if (buf.dtype == DType::Bool) {
    if (valueElem != m_b.getInt1Ty())
      return fail("store of a non-bool value to bool buffer " + buf.name);
    value = m_b.CreateZExt(value, lanesOf(value) ? llvm::FixedVectorType::get(mt, unsigned(lanesOf(value))) : mt);
  } else if (valueElem != mt) {
    return fail("store to " + buf.name + " (" + dtypeName(buf.dtype) +
                ") of a value of another type");
  }
  llvm::Align align(dtypeSize(buf.dtype));
  if (int lanes = privateLanes(buf)) {
    bool contiguous = false;
    llvm::Value* addr = privateAddress(buf, s.indices, contiguous);
    value = splat(value, lanes);
    if (contiguous && !m_mask) {
      m_b.CreateAlignedStore(value, addr, align);
    } else if (contiguous) {
      // Each lane's copy is that lane's alone, so masked-off lanes may be rewritten with what
      // they hold: a blend and a plain store keep the local promotable to a register, where a
      // masked store would pin it in memory (and stall the next load on store forwarding).
      llvm::Value* old = m_b.CreateAlignedLoad(value->getType(), addr, align);
      m_b.CreateAlignedStore(m_b.CreateSelect(m_mask, value, old), addr, align);
    } else {
      m_b.CreateMaskedScatter(value, addr, align, m_mask);
    }
    return;
  }
  Affine idx = flatIndex(buf, s.indices);
  llvm::Instruction* st = nullptr;
  if (m_mask && idx.lanes > 0) {
    value = splat(value, idx.lanes);
    if (!idx.vector && idx.stride == 1)
      st = m_b.CreateMaskedStore(value, m_b.CreateInBoundsGEP(mt, base, idx.base), align, m_mask);
    else
      st = m_b.CreateMaskedScatter(value, m_b.CreateInBoundsGEP(mt, base, vectorOf(idx)), align,
                                   m_mask);
  } else if (m_mask) {
    return fail("a masked store to a lane-invariant address of " + buf.name);
  } else if (idx.lanes == 0 || (!idx.vector && idx.stride == 0)) {
    if (int l = lanesOf(value))
      value = m_b.CreateExtractElement(value, uint64_t(l - 1));
    st = m_b.CreateAlignedStore(value, m_b.CreateInBoundsGEP(mt, base, idx.base), align);
  } else if (!idx.vector && idx.stride == 1) {
    value = splat(value, idx.lanes);
    st = m_b.CreateAlignedStore(value, m_b.CreateInBoundsGEP(mt, base, idx.base), align);
  } else {
    value = splat(value, idx.lanes);
    llvm::Value* ptrs = m_b.CreateInBoundsGEP(mt, base, vectorOf(idx));
    st = m_b.CreateMaskedScatter(value, ptrs, align);
  }
  tagAccess(st, buf);
}

// ---------------------------------------------------------------------------------------------
// Index ranges (interval arithmetic over the loop IR, for proofs that an access stays inside
// its buffer)

namespace {

std::optional<Range> rangeAdd(std::optional<Range> a, std::optional<Range> b) {
  Range r;
  if (!a || !b || __builtin_add_overflow(a->lo, b->lo, &r.lo) ||
      __builtin_add_overflow(a->hi, b->hi, &r.hi))
    return std::nullopt;
  return r;
}

std::optional<Range> rangeMul(std::optional<Range> a, std::optional<Range> b) {
  if (!a || !b)
    return std::nullopt;
  int64_t p[4];
  if (__builtin_mul_overflow(a->lo, b->lo, &p[0]) || __builtin_mul_overflow(a->lo, b->hi, &p[1]) ||
      __builtin_mul_overflow(a->hi, b->lo, &p[2]) || __builtin_mul_overflow(a->hi, b->hi, &p[3]))
    return std::nullopt;
  return Range{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

} // namespace

std::optional<Range> Emitter::rangeOf(const ExprPtr& e) {
  if (!e || e->type.dtype != DType::I64)
    return std::nullopt;
  int64_t c = 0;
  switch (e->kind) {
  case Expr::Kind::IntImm: return Range{e->intValue, e->intValue};
  case Expr::Kind::Var: {
    auto it = m_vars.find(e->name);
    return it == m_vars.end() ? std::nullopt : it->second.range;
  }
  case Expr::Kind::Binary: {
    std::optional<Range> a = rangeOf(e->operands[0]), b = rangeOf(e->operands[1]);
    switch (e->binaryOp) {
    case BinaryOp::Add: return rangeAdd(a, b);
    case BinaryOp::Sub: return rangeAdd(a, rangeMul(b, Range{-1, -1}));
    case BinaryOp::Mul: return rangeMul(a, b);
    case BinaryOp::Min:
      if (a && b)
        return Range{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
      return std::nullopt;
    case BinaryOp::Max:
      if (a && b)
        return Range{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
      return std::nullopt;
    case BinaryOp::Div: // truncating division by a positive constant is monotonic
      if (a && e->operands[1]->isIntConst(&c) && c > 0)
        return Range{a->lo / c, a->hi / c};
      return std::nullopt;
    case BinaryOp::Mod: // the sign of the dividend, magnitude below c
      if (e->operands[1]->isIntConst(&c) && c > 0)
        return a && a->lo >= 0 ? Range{0, std::min(a->hi, c - 1)} : Range{-(c - 1), c - 1};
      return std::nullopt;
    default: return std::nullopt;
    }
  }
  case Expr::Kind::Select: {
    std::optional<Range> a = rangeOf(e->operands[1]), b = rangeOf(e->operands[2]);
    if (a && b)
      return Range{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
    return std::nullopt;
  }
  case Expr::Kind::Ramp:
    return rangeAdd(rangeOf(e->operands[0]),
                    rangeMul(rangeOf(e->operands[1]), Range{0, e->type.lanes - 1}));
  case Expr::Kind::Broadcast: return rangeOf(e->operands[0]);
  default: return std::nullopt;
  }
}

int64_t Emitter::storageElements(const Buffer& buf) const {
  int64_t elemBytes = int64_t(dtypeSize(buf.dtype));
  if (buf.kind != Buffer::Kind::Arg) {
    auto it = m_localElements.find(buf.name);
    return it == m_localElements.end() ? -1 : it->second;
  }
  if (buf.arg < 0 || size_t(buf.arg) >= m_kernel.args.size())
    return -1;
  const KernelArg& a = m_kernel.args[size_t(buf.arg)];
  int64_t n = 1;
  for (int64_t d : a.sizes)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return -1;
  int64_t bytes = n * int64_t(dtypeSize(a.dtype));
  if (a.bytes > 0)
    bytes = std::min(bytes, a.bytes);
  return bytes / elemBytes;
}

bool Emitter::endsInside(const Buffer& buf, const std::vector<ExprPtr>& indices, int64_t extra) {
  int64_t size = storageElements(buf);
  if (size < 0 || indices.size() != buf.rank())
    return false;
  std::optional<Range> flat = Range{buf.offset, buf.offset};
  for (size_t d = 0; d < indices.size(); ++d)
    flat = rangeAdd(flat, rangeMul(rangeOf(indices[d]), Range{buf.strides[d], buf.strides[d]}));
  int64_t last = 0;
  return flat && !__builtin_add_overflow(flat->hi, extra, &last) && last < size;
}

// ---------------------------------------------------------------------------------------------
// Index arithmetic

bool Emitter::isLaneDependent(const ExprPtr& e) {
  if (!e)
    return false;
  if (e->type.lanes > 1 || e->kind == Expr::Kind::Ramp || e->kind == Expr::Kind::Broadcast)
    return true;
  if (m_lanes == 0)
    return false;
  if (e->kind == Expr::Kind::Var) {
    auto it = m_vars.find(e->name);
    return it != m_vars.end() && it->second.lane;
  }
  for (const ExprPtr& o : e->operands)
    if (isLaneDependent(o))
      return true;
  return false;
}

llvm::Value* Emitter::vectorOf(const Affine& a) {
  if (a.vector)
    return a.vector;
  if (a.lanes == 0)
    return a.base;
  llvm::Value* v = m_b.CreateVectorSplat(unsigned(a.lanes), a.base);
  if (a.stride == 0)
    return v;
  llvm::Value* step = stepVector(a.lanes);
  if (a.stride != 1)
    step = m_b.CreateMul(step, m_b.CreateVectorSplat(unsigned(a.lanes), i64(a.stride)));
  return m_b.CreateAdd(v, step, "", false, true);
}

Affine Emitter::addAffine(const Affine& a, const Affine& b) {
  Affine r;
  r.lanes = std::max(a.lanes, b.lanes);
  if (a.vector || b.vector) {
    llvm::Value* x = a.lanes ? vectorOf(a) : a.base;
    llvm::Value* y = b.lanes ? vectorOf(b) : b.base;
    matchLanes(x, y);
    r.vector = m_b.CreateAdd(x, y, "", false, true);
    return r;
  }
  r.base = isZero(a.base)   ? b.base
           : isZero(b.base) ? a.base
                            : m_b.CreateAdd(a.base, b.base, "", false, true);
  r.stride = a.stride + b.stride;
  return r;
}

Affine Emitter::scaleAffine(const Affine& a, int64_t c) {
  Affine r = a;
  if (a.vector) {
    r.vector = m_b.CreateMul(a.vector, m_b.CreateVectorSplat(unsigned(a.lanes), i64(c)), "",
                             false, true);
    return r;
  }
  r.base = c == 1 ? a.base : m_b.CreateMul(a.base, i64(c), "", false, true);
  r.stride = a.stride * c;
  return r;
}

Affine Emitter::emitAffine(const ExprPtr& e) {
  if (!isLaneDependent(e))
    return Affine{emitExpr(e), 0, nullptr, 0};
  int64_t c = 0;
  switch (e->kind) {
  case Expr::Kind::Var: {
    const Binding& b = m_vars[e->name];
    if (b.affine)
      return Affine{b.base, b.stride, nullptr, m_lanes};
    return Affine{nullptr, 0, b.value, lanesOf(b.value)};
  }
  case Expr::Kind::Binary:
    if (e->binaryOp == BinaryOp::Add)
      return addAffine(emitAffine(e->operands[0]), emitAffine(e->operands[1]));
    if (e->binaryOp == BinaryOp::Sub)
      return addAffine(emitAffine(e->operands[0]), scaleAffine(emitAffine(e->operands[1]), -1));
    if (e->binaryOp == BinaryOp::Mul && e->operands[1]->isIntConst(&c))
      return scaleAffine(emitAffine(e->operands[0]), c);
    if (e->binaryOp == BinaryOp::Mul && e->operands[0]->isIntConst(&c))
      return scaleAffine(emitAffine(e->operands[1]), c);
    break;
  case Expr::Kind::Ramp:
    if (!isLaneDependent(e->operands[0]) && e->operands[1]->isIntConst(&c))
      return Affine{emitExpr(e->operands[0]), c, nullptr, e->type.lanes};
    break;
  case Expr::Kind::Broadcast:
    if (!isLaneDependent(e->operands[0]))
      return Affine{emitExpr(e->operands[0]), 0, nullptr, e->type.lanes};
    break;
  default: break;
  }
  llvm::Value* v = emitExpr(e);
  return Affine{nullptr, 0, v, lanesOf(v)};
}

// ---------------------------------------------------------------------------------------------
// Expressions

llvm::Value* Emitter::emitExpr(const ExprPtr& e) {
  if (!e) {
    fail("a missing expression");
    return m_b.getInt64(0);
  }
  switch (e->kind) {
  case Expr::Kind::IntImm: {
    llvm::Value* c = llvm::ConstantInt::get(scalarType(e->type.dtype), uint64_t(e->intValue), true);
    return e->type.lanes > 1 ? splat(c, e->type.lanes) : c;
  }
  case Expr::Kind::FloatImm: {
    llvm::Value* c = llvm::ConstantFP::get(scalarType(e->type.dtype), e->floatValue);
    return e->type.lanes > 1 ? splat(c, e->type.lanes) : c;
  }
  case Expr::Kind::Var: {
    auto it = m_vars.find(e->name);
    if (it == m_vars.end()) {
      fail("variable " + e->name + " is not bound here");
      return llvm::PoisonValue::get(scalarType(e->type.dtype));
    }
    const Binding& b = it->second;
    if (b.affine)
      return vectorOf(Affine{b.base, b.stride, nullptr, m_lanes});
    return b.value;
  }
  case Expr::Kind::Load:
    if (!e->buffer) {
      fail("a load without a buffer");
      return m_b.getInt64(0);
    }
    return emitLoad(*e);
  case Expr::Kind::Unary: return emitUnary(*e, emitExpr(e->operands.at(0)));
  case Expr::Kind::Binary:
    if (m_options.gpu && m_lanes == 0 && e->binaryOp == BinaryOp::Add && e->type == Type::f32())
      // GPU code contracts a product feeding a sum into one fma (as nvcc does by default): the
      // CPU only contracts its GEMM generators' explicit fmuladd, but on a GPU an unfused
      // mul.rn + add.rn halves the FP32 throughput of every product.
      for (int m = 0; m < 2; ++m) {
        const ExprPtr& prod = e->operands[size_t(m)];
        if (prod->kind == Expr::Kind::Binary && prod->binaryOp == BinaryOp::Mul &&
            prod->type == e->type)
          return m_b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {m_b.getFloatTy()},
                                     {emitExpr(prod->operands[0]), emitExpr(prod->operands[1]),
                                      emitExpr(e->operands[size_t(1 - m)])});
      }
    return emitBinary(*e, emitExpr(e->operands.at(0)), emitExpr(e->operands.at(1)));
  case Expr::Kind::Select: {
    llvm::Value* c = emitExpr(e->operands.at(0));
    llvm::Value* a = emitExpr(e->operands.at(1));
    llvm::Value* b = emitExpr(e->operands.at(2));
    matchLanes(a, b);
    if (lanesOf(c) || !lanesOf(a)) { // a scalar condition may select whole vectors
      matchLanes(c, a);
      matchLanes(c, b);
    }
    return m_b.CreateSelect(c, a, b);
  }
  case Expr::Kind::Cast:
    return emitCast(e->operands.at(0)->type.dtype, e->type.dtype, emitExpr(e->operands.at(0)),
                    clampedIntoRange(e->operands.at(0), e->type.dtype));
  case Expr::Kind::Ramp:
  case Expr::Kind::Broadcast: return vectorOf(emitAffine(e));
  }
  __builtin_unreachable();
}

llvm::Value* Emitter::emitUnary(const Expr& e, llvm::Value* a) {
  DType d = e.operands[0]->type.dtype;
  bool fp = isFloat(d);
  switch (e.unaryOp) {
  case UnaryOp::Neg: return fp ? m_b.CreateFNeg(a) : m_b.CreateNeg(a);
  case UnaryOp::Not: return m_b.CreateNot(a);
  case UnaryOp::Abs:
    return fp ? m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a)
              : m_b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, m_b.getFalse());
  case UnaryOp::Exp: return d == DType::F32 ? emitFastExp(m_b, a) : m_b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, a);
  case UnaryOp::Log: return emitScalarizedCall(m_b, m_module, "logf", a);
  case UnaryOp::Sqrt: return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
  case UnaryOp::Tanh: return emitFastTanh(m_b, a);
  case UnaryOp::Erf: return emitFastErf(m_b, a);
  case UnaryOp::Floor: return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a);
  case UnaryOp::Ceil: return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a);
  case UnaryOp::Round: return m_b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a);
  case UnaryOp::Sigmoid: return emitFastSigmoid(m_b, a);
  case UnaryOp::Log1p: return emitScalarizedCall(m_b, m_module, "log1pf", a);
  case UnaryOp::Sin: return emitScalarizedCall(m_b, m_module, "sinf", a);
  case UnaryOp::Cos: return emitScalarizedCall(m_b, m_module, "cosf", a);
  case UnaryOp::Tan: return emitScalarizedCall(m_b, m_module, "tanf", a);
  case UnaryOp::Asin: return emitScalarizedCall(m_b, m_module, "asinf", a);
  case UnaryOp::Acos: return emitScalarizedCall(m_b, m_module, "acosf", a);
  case UnaryOp::Atan: return emitScalarizedCall(m_b, m_module, "atanf", a);
  case UnaryOp::Sinh: return emitScalarizedCall(m_b, m_module, "sinhf", a);
  case UnaryOp::Cosh: return emitScalarizedCall(m_b, m_module, "coshf", a);
  case UnaryOp::Asinh: return emitScalarizedCall(m_b, m_module, "asinhf", a);
  case UnaryOp::Acosh: return emitScalarizedCall(m_b, m_module, "acoshf", a);
  case UnaryOp::Atanh: return emitScalarizedCall(m_b, m_module, "atanhf", a);
  }
  __builtin_unreachable();
}

llvm::Value* Emitter::emitBinary(const Expr& e, llvm::Value* a, llvm::Value* b) {
  matchLanes(a, b);
  DType d = e.operands[0]->type.dtype;
  bool fp = isFloat(d), un = isUnsigned(d);
  switch (e.binaryOp) {
  case BinaryOp::Add: return fp ? m_b.CreateFAdd(a, b) : m_b.CreateAdd(a, b);
  case BinaryOp::Sub: return fp ? m_b.CreateFSub(a, b) : m_b.CreateSub(a, b);
  case BinaryOp::Mul: return fp ? m_b.CreateFMul(a, b) : m_b.CreateMul(a, b);
  case BinaryOp::Div: return fp ? m_b.CreateFDiv(a, b) : emitIntDivRem(true, un, a, b);
  case BinaryOp::Mod: return fp ? m_b.CreateFRem(a, b) : emitIntDivRem(false, un, a, b);
  // std::min / std::max semantics (the interpreter's): min(a, b) = b < a ? b : a.
  case BinaryOp::Min:
    return fp ? m_b.CreateSelect(m_b.CreateFCmpOLT(b, a), b, a)
              : m_b.CreateBinaryIntrinsic(un ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, a, b);
  case BinaryOp::Max:
    return fp ? m_b.CreateSelect(m_b.CreateFCmpOLT(a, b), b, a)
              : m_b.CreateBinaryIntrinsic(un ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, a, b);
  case BinaryOp::Pow:
    return fp ? m_b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, b) : emitIntPow(un, a, b);
  case BinaryOp::Eq: return fp ? m_b.CreateFCmpOEQ(a, b) : m_b.CreateICmpEQ(a, b);
  case BinaryOp::Ne: return fp ? m_b.CreateFCmpUNE(a, b) : m_b.CreateICmpNE(a, b);
  case BinaryOp::Lt: return fp ? m_b.CreateFCmpOLT(a, b) : un ? m_b.CreateICmpULT(a, b) : m_b.CreateICmpSLT(a, b);
  case BinaryOp::Le: return fp ? m_b.CreateFCmpOLE(a, b) : un ? m_b.CreateICmpULE(a, b) : m_b.CreateICmpSLE(a, b);
  case BinaryOp::Gt: return fp ? m_b.CreateFCmpOGT(a, b) : un ? m_b.CreateICmpUGT(a, b) : m_b.CreateICmpSGT(a, b);
  case BinaryOp::Ge: return fp ? m_b.CreateFCmpOGE(a, b) : un ? m_b.CreateICmpUGE(a, b) : m_b.CreateICmpSGE(a, b);
  case BinaryOp::And: return m_b.CreateAnd(a, b);
  case BinaryOp::Or: return m_b.CreateOr(a, b);
  }
  __builtin_unreachable();
}

llvm::Value* Emitter::emitIntDivRem(bool isDiv, bool un, llvm::Value* a, llvm::Value* b) {
  // x86's div and idiv trap on a zero divisor and on INT_MIN / -1; LLVM makes both undefined.
  // Divide by a safe divisor (1 in those cases) and fix the quotient up: x % 1 is already the
  // 0 wanted for the remainder, x / 1 becomes 0 (zero divisor) or -x (divisor -1, wrapping).
  const llvm::ConstantInt* c = llvm::dyn_cast<llvm::ConstantInt>(b);
  if (auto* k = llvm::dyn_cast<llvm::Constant>(b); k && !c)
    c = llvm::dyn_cast_or_null<llvm::ConstantInt>(k->getSplatValue());
  if (c && !c->isZero() && (un || !c->isMinusOne())) // index math: no guard needed
    return isDiv ? (un ? m_b.CreateUDiv(a, b) : m_b.CreateSDiv(a, b))
                 : (un ? m_b.CreateURem(a, b) : m_b.CreateSRem(a, b));
  llvm::Type* t = b->getType();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* isZero = m_b.CreateICmpEQ(b, llvm::Constant::getNullValue(t));
  llvm::Value* isMinusOne =
      un ? nullptr : m_b.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(t));
  llvm::Value* unsafe = isMinusOne ? m_b.CreateOr(isZero, isMinusOne) : isZero;
  llvm::Value* safe = m_b.CreateSelect(unsafe, one, b);
  if (!isDiv)
    return un ? m_b.CreateURem(a, safe) : m_b.CreateSRem(a, safe);
  llvm::Value* q = un ? m_b.CreateUDiv(a, safe) : m_b.CreateSDiv(a, safe);
  if (isMinusOne)
    q = m_b.CreateSelect(isMinusOne, m_b.CreateNeg(a), q);
  return m_b.CreateSelect(isZero, llvm::Constant::getNullValue(t), q);
}

llvm::Value* Emitter::emitIntPow(bool un, llvm::Value* a, llvm::Value* b) {
  // The interpreter's integer power: exact and wrapping (square and multiply over every bit of
  // the exponent: a fixed chain that vectorizes), and for a negative exponent 1 / a^|e|
  // truncated: 0 unless |a| is 1. Through f64, as before, results past 2^53 were inexact and
  // those past the type's range poison.
  llvm::Type* t = a->getType();
  const unsigned width = t->getScalarSizeInBits();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* zero = llvm::Constant::getNullValue(t);
  llvm::Value* r = one;
  llvm::Value* base = a;
  for (unsigned bit = 0; bit < (un ? width : width - 1); ++bit) {
    llvm::Value* set = m_b.CreateICmpNE(
        m_b.CreateAnd(m_b.CreateLShr(b, llvm::ConstantInt::get(t, bit)), one), zero);
    r = m_b.CreateSelect(set, m_b.CreateMul(r, base), r);
    base = m_b.CreateMul(base, base);
  }
  if (un)
    return r;
  llvm::Value* minusOne = llvm::Constant::getAllOnesValue(t);
  llvm::Value* odd = m_b.CreateICmpNE(m_b.CreateAnd(b, one), zero);
  llvm::Value* negative = m_b.CreateSelect(
      m_b.CreateICmpEQ(a, one), one,
      m_b.CreateSelect(m_b.CreateICmpEQ(a, minusOne), m_b.CreateSelect(odd, minusOne, one), zero));
  return m_b.CreateSelect(m_b.CreateICmpSLT(b, zero), negative, r);
}

llvm::Value* Emitter::emitCast(DType from, DType to, llvm::Value* v, bool inRange) {
  if (from == to)
    return v;
  int lanes = lanesOf(v);
  llvm::Type* t = scalarType(to);
  if (lanes)
    t = llvm::FixedVectorType::get(t, unsigned(lanes));
  bool fromFp = isFloat(from), toFp = isFloat(to);
  if (to == DType::Bool)
    return fromFp ? m_b.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()))
                  : m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  if (fromFp && toFp)
    return m_b.CreateFPCast(v, t);
  if (fromFp)
    return emitFloatToInt(to, v, inRange);
  if (toFp)
    return isUnsigned(from) ? m_b.CreateUIToFP(v, t) : m_b.CreateSIToFP(v, t);
  return m_b.CreateIntCast(v, t, !isUnsigned(from));
}

llvm::Value* Emitter::emitFloatToInt(DType to, llvm::Value* v, bool inRange) {
  // fptosi/fptoui of NaN or of a value beyond the target is poison in LLVM (x86 returns
  // INT_MIN). The interpreter's rule (floatToInt in core/ops/MathUtil.h): NaN is 0, truncate,
  // clamp to int64, then wrap to the width. Every step below is exact in f32 and keeps vectors
  // (a conversion through i64 would be scalarized on AVX2: 3x slower); no fast-math flags.
  llvm::IRBuilderBase::FastMathFlagGuard guard(m_b);
  m_b.clearFastMathFlags();
  const int lanes = lanesOf(v);
  auto typed = [&](llvm::Type* t) -> llvm::Type* {
    return lanes ? llvm::FixedVectorType::get(t, unsigned(lanes)) : t;
  };
  llvm::Type* f32 = typed(m_b.getFloatTy());
  llvm::Type* i32 = typed(m_b.getInt32Ty());
  llvm::Type* target = typed(scalarType(to));
  if (v->getType()->getScalarType() != m_b.getFloatTy())
    v = m_b.CreateFPExt(v, f32); // f16 and bf16 widen exactly
  auto fconst = [&](double c) { return llvm::ConstantFP::get(f32, c); };
  llvm::Value* zero = fconst(0);
  if (to == DType::I64) // saturates and maps NaN to 0: exactly the rule
    return m_b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {target, f32}, {v});
  auto narrow = [&](llvm::Value* x32) {
    return target == i32 ? x32 : m_b.CreateTrunc(x32, target);
  };
  llvm::Value* isNan = m_b.CreateFCmpUNO(v, v);
  if (inRange) // within the target's range, or NaN (QuantizeLinear's clamp)
    return narrow(m_b.CreateFPToSI(m_b.CreateSelect(isNan, zero, v), i32));
  // |v| < 2^31: the i32 conversion is exact.
  llvm::Value* mag = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
  llvm::Value* small = m_b.CreateFCmpOLT(mag, fconst(0x1p31));
  llvm::Value* asSmall = m_b.CreateFPToSI(m_b.CreateSelect(small, v, zero), i32);
  // 2^31 <= |v| < 2^63: v is an integer; its low 32 bits are v - 2^32 floor(v / 2^32), a value
  // in [0, 2^32) that f32 holds exactly.
  llvm::Value* inI64 = m_b.CreateFCmpOLT(mag, fconst(0x1p63));
  llvm::Value* q =
      m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, m_b.CreateFMul(v, fconst(0x1p-32)));
  llvm::Value* low = m_b.CreateFSub(v, m_b.CreateFMul(q, fconst(0x1p32)));
  llvm::Value* asLarge = m_b.CreateFPToUI(
      m_b.CreateSelect(m_b.CreateAnd(inI64, m_b.CreateNot(small)), low, zero), i32);
  // Beyond int64 (and ±inf): INT64_MAX's low bits are all ones, INT64_MIN's zero; NaN is 0.
  llvm::Value* saturated =
      m_b.CreateSelect(m_b.CreateFCmpOGT(v, zero), llvm::Constant::getAllOnesValue(i32),
                       llvm::Constant::getNullValue(i32));
  llvm::Value* r = m_b.CreateSelect(small, asSmall, m_b.CreateSelect(inI64, asLarge, saturated));
  return narrow(r);
}

} // namespace fb::cg::loopemit
