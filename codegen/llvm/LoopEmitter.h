// Internal to codegen/llvm: the loop-IR → LLVM emitter's state, shared by LoopToLlvm.cpp
// (functions, statements, closures) and LoopToLlvmExpr.cpp (memory accesses, expressions).
#pragma once

#include "codegen/llvm/LoopToLlvm.h"
#include "codegen/loops/LoopIR.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace fb::cg::loopemit {

constexpr int64_t kMaxStackLocalBytes = 256 * 1024;

/// A closed interval of i64 values, [lo, hi].
struct Range {
  int64_t lo = 0, hi = 0;
};

/// What a loop variable or Let variable is bound to while its scope is emitted.
struct Binding {
  llvm::Value* value = nullptr; ///< the scalar value, or the full vector when lane && !affine
  bool lane = false;            ///< differs per lane of the widened loop
  bool affine = false;          ///< lane value == base + lane * stride
  llvm::Value* base = nullptr;  ///< i64 base when affine
  int64_t stride = 0;
  std::optional<Range> range; ///< bounds on the value over all iterations and lanes, if known
};

/// An i64 index expression: base + lane * stride when `vector` is null, else the full vector;
/// `lanes` is 0 for a scalar.
struct Affine {
  llvm::Value* base = nullptr;
  int64_t stride = 0;
  llvm::Value* vector = nullptr;
  int lanes = 0;
};

/// Free variables, arguments and locals a statement tree uses.
struct Uses {
  std::set<std::string> vars;
  std::set<int> args;
  std::set<std::string> locals;
};


/// Records the free variables, arguments and locals that an expression or statement tree uses.
void collectUses(const ExprPtr& e, Uses& u);
void collectUses(const StmtPtr& s, Uses& u);
/// Whether the body of a vectorized loop over `var` can be emitted once with `var` as a
/// vector: every store's address must depend on the lane, and no branch, loop bound or
/// allocation may.
bool canWiden(const StmtPtr& body, const std::string& var);
/// When `outer` is a serial loop from 0 whose body is exactly a serial loop `inner` from 0,
/// both with constant extents, that together reduce into some element (a store whose indices
/// use neither variable), and whose variables appear only as adjacent index pairs
/// `[..., outer, inner, ...]` of views whose outer stride is inner extent x inner stride: the
/// same iterations in the same order as one loop over `inner` (outer bound to 0), which the
/// LLVM vectorizer can split into long vector sums. Else null.
StmtPtr flattenReductionNest(const Stmt& outer);
/// Whether `s` is a scalar float reduction update `acc[i] = acc[i] + x` (or `*`) whose indices
/// do not use `loopVar`, the loop it runs in: x must not read the accumulator.
bool isReductionUpdate(const Stmt& s, const std::string& loopVar);
/// Whether `body` holds a reduction update over `loopVar` outside any inner loop.
bool reducesDirectly(const StmtPtr& body, const std::string& loopVar);

/// Emits one kernel (see emitLoopKernel for the scheme).
class Emitter {
public:
  Emitter(llvm::Module& module, const Kernel& kernel, const LoopEmitOptions& options)
      : m_module(module), m_ctx(module.getContext()), m_kernel(kernel), m_options(options),
        m_b(module.getContext()) {}

  Expected<llvm::Function*> run();

private:
  /// The function being emitted: the kernel or a parallel-loop closure.
  struct FnState {
    llvm::Function* fn = nullptr;
    llvm::BasicBlock* entry = nullptr;
    bool inClosure = false;
    std::vector<llvm::Value*> argPtrs;            // per kernel argument; null when unused here
    std::map<std::string, llvm::Value*> locals;   // local buffer name → storage
    std::map<std::string, int> localLanes;        // > 0: privatized per lane of a widened loop
  };

  // -- errors --
  void fail(const std::string& message) {
    if (!m_error)
      m_error = makeError("kernel ", m_kernel.name, ": ", message);
  }

  // -- types --
  llvm::Type* scalarType(DType d) {
    switch (d) {
    case DType::F32: return m_b.getFloatTy();
    case DType::F16: return m_b.getHalfTy();
    case DType::BF16: return m_b.getBFloatTy();
    case DType::I8:
    case DType::U8: return m_b.getInt8Ty();
    case DType::I32: return m_b.getInt32Ty();
    case DType::I64: return m_b.getInt64Ty();
    case DType::Bool: return m_b.getInt1Ty();
    }
    __builtin_unreachable();
  }
  llvm::Type* memoryType(DType d) { return d == DType::Bool ? m_b.getInt8Ty() : scalarType(d); }
  static bool isUnsigned(DType d) { return d == DType::U8 || d == DType::Bool; }
  static int lanesOf(llvm::Value* v) {
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
    return vt ? int(vt->getNumElements()) : 0;
  }
  llvm::Value* splat(llvm::Value* v, int lanes) {
    if (lanes <= 0 || lanesOf(v) == lanes)
      return v;
    return m_b.CreateVectorSplat(unsigned(lanes), v);
  }
  /// Makes a and b the same shape: a scalar meets a vector as a splat.
  void matchLanes(llvm::Value*& a, llvm::Value*& b) {
    int la = lanesOf(a), lb = lanesOf(b);
    if (la && !lb)
      b = splat(b, la);
    else if (lb && !la)
      a = splat(a, lb);
  }
  llvm::Value* i64(int64_t v) { return m_b.getInt64(uint64_t(v)); }
  static bool isZero(llvm::Value* v) {
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
    return c && c->isZero();
  }
  llvm::Value* stepVector(int lanes) {
    std::vector<llvm::Constant*> c;
    for (int i = 0; i < lanes; ++i)
      c.push_back(m_b.getInt64(uint64_t(i)));
    return llvm::ConstantVector::get(c);
  }

  // -- expressions --
  llvm::Value* emitExpr(const ExprPtr& e);
  llvm::Value* emitUnary(const Expr& e, llvm::Value* a);
  llvm::Value* emitBinary(const Expr& e, llvm::Value* a, llvm::Value* b);
  /// Integer a / b or a % b that never traps: x / 0 and x % 0 are 0, INT_MIN / -1 wraps (the
  /// interpreter's and the loop evaluator's results). The guards fold away for a constant b.
  llvm::Value* emitIntDivRem(bool isDiv, bool un, llvm::Value* a, llvm::Value* b);
  /// a ** b on integers as the interpreter computes it (wrapping; 0 for b < 0 unless |a| = 1).
  llvm::Value* emitIntPow(bool un, llvm::Value* a, llvm::Value* b);
  /// v converted from `from` to `to`; float → integer by the interpreter's rule (NaN is 0,
  /// beyond int64 clamps, then wraps to the width), cheaper when `inRange` (the value is known
  /// to lie in the target's range or be NaN).
  llvm::Value* emitCast(DType from, DType to, llvm::Value* v, bool inRange = false);
  /// The float → integer part of emitCast (v: f32, f16 or bf16, scalar or vector).
  llvm::Value* emitFloatToInt(DType to, llvm::Value* v, bool inRange);
  Affine emitAffine(const ExprPtr& e);
  llvm::Value* vectorOf(const Affine& a);
  Affine addAffine(const Affine& a, const Affine& b);
  Affine scaleAffine(const Affine& a, int64_t c);
  bool isLaneDependent(const ExprPtr& e);
  /// The storage pointer of a buffer view and the flat element index of `indices`.
  llvm::Value* basePointer(const Buffer& buf);
  Affine flatIndex(const Buffer& buf, const std::vector<ExprPtr>& indices);
  llvm::Value* emitLoad(const Expr& e);
  /// A load whose index is base + lane * idx.stride with a small constant stride: idx.stride
  /// contiguous vector loads and a shuffle that keeps every stride-th element (no gather).
  llvm::Value* emitStridedLoad(const Expr& e, llvm::Value* base, const Affine& idx);
  /// Bounds on an i64 index expression over every iteration and lane in scope, if known.
  std::optional<Range> rangeOf(const ExprPtr& e);
  /// Elements of the storage behind a buffer view (its argument or local array), or -1.
  int64_t storageElements(const Buffer& buf) const;
  /// Whether the element `extra` past the highest one the access `indices` can touch (over
  /// every lane and iteration in scope) still lies inside the buffer's storage. Only the upper
  /// end is checked: the elements below are read by the program itself.
  bool endsInside(const Buffer& buf, const std::vector<ExprPtr>& indices, int64_t extra);
  /// Lanes of a privatized local (allocated inside a widened loop), else 0.
  int privateLanes(const Buffer& buf) const;
  /// The address(es) of a privatized local's element: one pointer to `lanes` contiguous
  /// elements when the index is lane-invariant (contiguous = true), else a vector of pointers.
  llvm::Value* privateAddress(const Buffer& buf, const std::vector<ExprPtr>& indices,
                              bool& contiguous);
  void emitStore(const Stmt& s);
  void tagAccess(llvm::Instruction* inst, const Buffer& buf);

  // -- statements --
  void emitStmt(const StmtPtr& s);
  void emitFor(const Stmt& s);
  /// A counted loop from lo to hi; `step` (default 1) is the increment, `start` (default lo)
  /// the first value.
  void emitSerialLoop(const Stmt& s, const std::string& label, llvm::MDNode* loopMd,
                      llvm::Value* lo, llvm::Value* hi, llvm::Value* step = nullptr,
                      llvm::Value* start = nullptr);
  /// A ForKind::GpuThreads loop: thread ctaid * ntid + tid of nctaid * ntid threads runs
  /// iterations lo + thread, lo + thread + threads, ... below hi. A ForKind::GpuBlocks loop:
  /// block ctaid of nctaid runs iterations lo + ctaid, lo + ctaid + nctaid, ...
  void emitGridStride(const Stmt& s, const std::string& label);
  /// A ForKind::GpuLanes loop: its variable is the thread's index in the block (tid.x) and its
  /// body runs once on every thread; the launch's block size is the loop's extent.
  void emitBlockThreads(const Stmt& s);
  /// bar.sync 0 (llvm.nvvm.barrier0).
  void emitBarrier();
  /// An Alloc of a Shared buffer: an array in address space 3, one per block.
  void emitSharedAlloc(const Stmt& s);
  void emitParallel(const Stmt& s, const std::string& label);
  void emitWidened(const Stmt& s, int lanes);
  void emitIf(const Stmt& s);
  void emitLet(const Stmt& s);
  void emitAlloc(const Stmt& s);
  llvm::AllocaInst* entryAlloca(llvm::Type* t, llvm::Value* count, const std::string& name);

  llvm::Module& m_module;
  llvm::LLVMContext& m_ctx;
  const Kernel& m_kernel;
  const LoopEmitOptions& m_options;
  llvm::IRBuilder<> m_b;
  FnState m_fs;
  std::unordered_map<std::string, Binding> m_vars;
  int m_lanes = 0; // > 0 while emitting a widened vectorized body
  std::string m_innermostLoop; // variable of the innermost loop being emitted as a loop, if any
  llvm::Value* m_mask = nullptr; // <m_lanes x i1>: lanes whose memory accesses happen (if-conversion)
  std::vector<llvm::MDNode*> m_scopeOf, m_noAliasOf; // per argument, null when not noalias
  std::optional<Error> m_error;
  int m_closureCount = 0;
  std::map<std::string, int64_t> m_localElements; // local buffer name → elements allocated
};


} // namespace fb::cg::loopemit
