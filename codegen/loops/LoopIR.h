// The kernel loop IR: buffers, loops, loads, stores, scalar and vector expressions.
//
// A kernel body (Kernel::body) is a tree of immutable Stmt and Expr nodes shared through
// shared_ptr<const ...>; schedules rewrite a tree into a new one and never mutate a node in
// place, so an unscheduled and a scheduled nest can share their unchanged subtrees.
//
// Semantics, in short (the printer, the evaluator and the LLVM emitter all follow this):
// - Variables are named. A For binds its `var` (i64) in its body; a Let binds `var` to `value`
//   in its body. A name is never re-bound inside its own scope (no shadowing); sibling scopes
//   may reuse a name (two consecutive nests may both loop over `i`).
// - All index arithmetic is i64. Loop bounds are expressions; after lowering of static-shape
//   graphs they are IntImm constants ("known trip counts"), except where a loop's bounds depend
//   on an outer variable (a tail or a boundary region), which is then an ordinary expression.
// - A Buffer is a strided view of one kernel argument (Buffer::arg indexes Kernel::args) or of
//   a local scratch array created by an Alloc. The element (i0, ..., in) of a view is at
//   element offset `offset + sum(i_d * strides[d])` from the start of its storage. Several
//   views may alias one argument (a reshape reads its input through a 1-D view).
// - Load/Store take one index expression per dimension of the view. Reductions are plain
//   read-modify-write stores (`Y[i] = Y[i] + X[i, k]`), printed as `Y[i] += X[i, k]`.
// - ForKind::Vectorized: the loop's extent is a constant (the vector width, 8 for f32 on
//   AVX2) and its body is scalar code in the loop variable. An emitter may widen it itself,
//   emit it as a loop with vectorization metadata, or first call widenVectorizedLoops()
//   (codegen/loops/Vectorize.h, when present), which rewrites such loops into explicit vector
//   expressions: Ramp/Broadcast and Type::lanes > 1.
// - ForKind::Parallel: iterations are independent and may run on any thread through
//   fb_parallel_for (runtime/RuntimeAbi.h). Locals allocated inside the body are private to
//   each iteration. A parallel loop nested in another parallel loop runs serially.
// - ForKind::Unrolled: a hint to unroll fully (the extent is a small constant).
// - ForKind::GpuThreads: the iterations are independent and spread over every thread of a GPU
//   launch (a grid-stride loop: thread t of T runs t, t + T, ...); only at the top of a GPU
//   launch's body (codegen/gpu/GpuSchedule.h). On the CPU the evaluator runs the iterations in
//   reverse order, so that one that depends on another shows up as a wrong result.
// - ForKind::GpuBlocks: the iterations are independent thread blocks of a GPU launch (a
//   grid-stride loop over the launch's blocks); only at the top of a launch's body. Its body is
//   the block's program: Allocs of Shared buffers around one ForKind::GpuLanes loop.
// - ForKind::GpuLanes: the threads of one block; the extent is the launch's block size and the
//   variable is the thread's index in the block. The body runs on every thread at once (SPMD),
//   and a Barrier in it makes every thread of the block wait until all have reached it (writes
//   to shared memory before it are seen by every thread after it). A Barrier must be reached by
//   all threads: it is never under an If, nor in a loop whose bounds differ between threads.
//   The evaluator runs the threads one after another (in reverse) from barrier to barrier, so a
//   missing barrier shows up as a wrong result.
#pragma once

#include "core/DType.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fb::cg {

/// The type of an expression: an element type and a number of vector lanes (1 = scalar).
/// Index expressions are i64; comparisons yield bool.
struct Type {
  DType dtype = DType::F32;
  int lanes = 1;

  static Type f32(int lanes = 1) { return {DType::F32, lanes}; }
  static Type i64(int lanes = 1) { return {DType::I64, lanes}; }
  static Type i32(int lanes = 1) { return {DType::I32, lanes}; }
  static Type boolean(int lanes = 1) { return {DType::Bool, lanes}; }
  bool isScalar() const { return lanes == 1; }
  bool isFloat() const { return fb::isFloat(dtype); }
  /// The same element type with `n` lanes.
  Type withLanes(int n) const { return {dtype, n}; }
  bool operator==(const Type& other) const = default;
};

/// A strided view of a kernel argument or of a local scratch array.
struct Buffer {
  enum class Kind : uint8_t {
    Arg,   ///< Kernel::args[arg]
    Local, ///< created by an Alloc statement; lives for the Alloc's body
    /// A GPU block's shared memory (address space 3): created by an Alloc inside a GpuBlocks
    /// loop and outside its GpuLanes loop, one array per block seen by all of its threads.
    Shared,
  };
  std::string name;              ///< printed name; unique per view within a kernel
  Kind kind = Kind::Arg;
  int arg = -1;                  ///< index into Kernel::args when kind == Arg
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;    ///< the view's logical shape
  std::vector<int64_t> strides;  ///< in elements, one per dimension
  int64_t offset = 0;            ///< in elements, from the start of the storage

  size_t rank() const { return sizes.size(); }
  /// Product of sizes.
  int64_t numElements() const;
  /// True when strides are the row-major strides of sizes and offset is 0.
  bool isContiguous() const;
};
using BufferPtr = std::shared_ptr<const Buffer>;

/// A row-major view of argument `arg`.
BufferPtr makeArgBuffer(std::string name, int arg, DType dtype, std::vector<int64_t> sizes);
/// A row-major local scratch buffer (for an Alloc).
BufferPtr makeLocalBuffer(std::string name, DType dtype, std::vector<int64_t> sizes);
/// A row-major array in a GPU block's shared memory (for an Alloc in a GpuBlocks loop).
BufferPtr makeSharedBuffer(std::string name, DType dtype, std::vector<int64_t> sizes);
/// Row-major strides of sizes.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& sizes);

enum class UnaryOp : uint8_t {
  Neg, Not, Abs, Exp, Log, Sqrt, Tanh, Erf, Floor, Ceil,
  Round, ///< to nearest, ties to even (QuantizeLinear)
  Sigmoid, ///< 1 / (1 + exp(-x)); kept as one op so emitters can pick a fast form
  Log1p,   ///< log(1 + x), accurate for small x (softplus)
  // Trigonometric and hyperbolic functions: libm calls (sinf ...) in emitted code.
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
};
enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div,
  Mod, ///< remainder with the sign of the dividend (C's %, fmod); an integer x % 0 is 0
  Min, Max,
  Pow, ///< float power (std::pow)
  Eq, Ne, Lt, Le, Gt, Ge, ///< comparisons: bool result
  And, Or,                ///< on bool
};
/// "exp", "max", ...: the printer's spelling.
const char* unaryOpName(UnaryOp op);
/// "+", "<", "min", ...
const char* binaryOpName(BinaryOp op);
/// True for Eq..Ge.
bool isComparison(BinaryOp op);

struct Expr;
struct Stmt;
using ExprPtr = std::shared_ptr<const Expr>;
using StmtPtr = std::shared_ptr<const Stmt>;

/// An expression node. Which fields are meaningful depends on `kind` (listed per kind).
struct Expr {
  enum class Kind : uint8_t {
    IntImm,    ///< intValue (type i64, i32 or bool)
    FloatImm,  ///< floatValue (type f32)
    Var,       ///< name: a loop or Let variable
    Load,      ///< buffer[operands...] (one index per view dimension)
    Unary,     ///< unaryOp(operands[0])
    Binary,    ///< binaryOp(operands[0], operands[1]); both operands have the same type
    Select,    ///< operands[0] ? operands[1] : operands[2]
    Cast,      ///< operands[0] converted to `type` (float→int: the interpreter's floatToInt)
    Ramp,      ///< vector <base, base+stride, ...> with type.lanes lanes; operands {base, stride}
    Broadcast, ///< operands[0] (scalar) repeated type.lanes times
  } kind = Kind::IntImm;
  Type type;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string name;
  UnaryOp unaryOp = UnaryOp::Neg;
  BinaryOp binaryOp = BinaryOp::Add;
  BufferPtr buffer;
  std::vector<ExprPtr> operands;

  /// True for an IntImm, with its value in *v when v is non-null.
  bool isIntConst(int64_t* v = nullptr) const;
};

/// How a loop runs.
enum class ForKind : uint8_t {
  Serial,
  Parallel,
  Vectorized,
  Unrolled,
  GpuThreads,
  GpuBlocks,
  GpuLanes
};
const char* forKindName(ForKind kind);

/// A statement node. Which fields are meaningful depends on `kind` (listed per kind).
struct Stmt {
  enum class Kind : uint8_t {
    For,     ///< for var in [min, min + extent): body          (var, min, extent, forKind, body)
    Store,   ///< buffer[indices...] = value                      (buffer, indices, value)
    Block,   ///< stmts in order                                   (stmts)
    If,      ///< if cond: thenBody else elseBody (elseBody may be null)
    Let,     ///< var = value; body                                (var, value, body)
    Alloc,   ///< a local scratch buffer for body (a cached tile, a packed panel, an accumulator)
    Barrier, ///< every thread of a GPU block waits for all (only in a GpuLanes loop; no fields)
  } kind = Kind::Block;

  std::string var;
  ExprPtr min, extent;
  ForKind forKind = ForKind::Serial;
  StmtPtr body;

  BufferPtr buffer;
  std::vector<ExprPtr> indices;
  ExprPtr value;

  std::vector<StmtPtr> stmts;

  ExprPtr cond;
  StmtPtr thenBody, elseBody;

  /// Where this came from, e.g. "n12 Relu" on a Store or "n12.i" on a loop: the printer shows
  /// it as a comment and the LLVM emitter may use it to name values and blocks.
  std::string comment;
};

// ---- Expression builders (fold nothing unless stated; all return fresh nodes) ----

ExprPtr intImm(int64_t v, Type type = Type::i64());
ExprPtr floatImm(double v);
ExprPtr boolImm(bool v);
ExprPtr var(std::string name, Type type = Type::i64());
ExprPtr load(BufferPtr buffer, std::vector<ExprPtr> indices);
ExprPtr unary(UnaryOp op, ExprPtr a);
/// Binary with constant folding of two integer constants and of the identities x+0, x*1, x*0
/// on integers (keeps index expressions readable).
ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b);
ExprPtr select(ExprPtr cond, ExprPtr a, ExprPtr b);
/// A Cast, or `a` itself when it already has that type.
ExprPtr cast(Type type, ExprPtr a);
ExprPtr ramp(ExprPtr base, ExprPtr stride, int lanes);
ExprPtr broadcast(ExprPtr scalar, int lanes);

inline ExprPtr add(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
inline ExprPtr sub(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
inline ExprPtr mul(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
inline ExprPtr div(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
inline ExprPtr min(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
inline ExprPtr max(ExprPtr a, ExprPtr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }

// ---- Statement builders ----

StmtPtr forLoop(std::string var, ExprPtr min, ExprPtr extent, ForKind kind, StmtPtr body,
                std::string comment = "");
/// for var in [0, extent) with a constant extent.
StmtPtr forRange(std::string var, int64_t extent, StmtPtr body, ForKind kind = ForKind::Serial);
StmtPtr store(BufferPtr buffer, std::vector<ExprPtr> indices, ExprPtr value,
              std::string comment = "");
/// A Block; nested Blocks are flattened and a one-statement block returns that statement.
StmtPtr block(std::vector<StmtPtr> stmts);
StmtPtr ifThen(ExprPtr cond, StmtPtr thenBody, StmtPtr elseBody = nullptr);
StmtPtr let(std::string var, ExprPtr value, StmtPtr body);
StmtPtr alloc(BufferPtr localBuffer, StmtPtr body);
/// A Barrier of the threads of a GPU block.
StmtPtr barrier();
/// A copy of `s` with its comment replaced.
StmtPtr withComment(const StmtPtr& s, std::string comment);

// ---- Utilities used by schedules, the printer and the emitters ----

/// Replaces every Var named `name` in e by `replacement`.
ExprPtr substitute(const ExprPtr& e, const std::string& name, const ExprPtr& replacement);
StmtPtr substitute(const StmtPtr& s, const std::string& name, const ExprPtr& replacement);
/// Folds integer constant subexpressions (and x+0, x*1, x*0, min/max of constants) and
/// gathers the constants of integer sums into one trailing term.
ExprPtr simplify(const ExprPtr& e);
/// simplify() on every expression of a statement tree.
StmtPtr simplify(const StmtPtr& s);
/// True when the variable `name` occurs in e / s.
bool usesVar(const ExprPtr& e, const std::string& name);
bool usesVar(const StmtPtr& s, const std::string& name);
/// Calls fn on every statement of the tree in pre-order.
void forEachStmt(const StmtPtr& s, const std::function<void(const Stmt&)>& fn);
/// Structural equality of two trees (buffers compared by name and layout).
bool equal(const ExprPtr& a, const ExprPtr& b);
bool equal(const StmtPtr& a, const StmtPtr& b);
/// `x != x ? x : step`: a max/min reduction step that lets a NaN element x propagate, as the
/// interpreter's ReduceMax/ReduceMin (np.max) do.
ExprPtr nanPropagating(const ExprPtr& x, ExprPtr step);
/// When `value` is nanPropagating(x, step): step, with x in *x; else null.
const Expr* nanPropagatingStep(const Expr& value, ExprPtr* x);

} // namespace fb::cg
