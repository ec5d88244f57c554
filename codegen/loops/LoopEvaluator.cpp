// The loop-IR interpreter: a tree walk over Stmt/Expr with bounds-checked buffer accesses.
#include "codegen/loops/LoopEvaluator.h"
#include "codegen/loops/LoopEvaluatorLanes.h"
#include "core/ops/MathUtil.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <unordered_map>

namespace fb::cg {

namespace {

using namespace eval_detail;

struct Storage {
  std::byte* data = nullptr;
  int64_t elements = 0;
  DType dtype = DType::F32;
};

class Evaluator {
public:
  explicit Evaluator(std::vector<Tensor>& args) {
    for (Tensor& t : args)
      m_args.push_back(t.valid() ? Storage{t.mutableRawData(), t.numElements(), t.dtype()}
                                 : Storage{});
  }

  Status run(const StmtPtr& s) {
    if (!s)
      return Status::success();
    switch (s->kind) {
    case Stmt::Kind::For: {
      if (s->forKind == ForKind::GpuLanes && hasBarrier(s->body))
        return runInLockStep(*s);
      FB_ASSIGN_OR_RETURN(Val lo, eval(s->min));
      FB_ASSIGN_OR_RETURN(Val n, eval(s->extent));
      m_vars.push_back({s->var, {}});
      size_t slot = m_vars.size() - 1;
      m_vars[slot].second = Val{Lane{}};
      // The threads of a GPU launch run in no particular order: in reverse here, so that an
      // iteration that reads what another writes gives a wrong result instead of passing.
      const bool reverse = s->forKind == ForKind::GpuThreads || s->forKind == ForKind::GpuBlocks ||
                           s->forKind == ForKind::GpuLanes;
      // The threads of a block with no barrier: one phase of shared-memory accesses.
      const bool lanes = s->forKind == ForKind::GpuLanes;
      m_phase += lanes;
      for (int64_t k = 0; k < n[0].i; ++k) {
        int64_t i = reverse ? lo[0].i + n[0].i - 1 - k : lo[0].i + k;
        m_vars[slot].second[0] = Lane{double(i), i};
        if (lanes)
          m_thread = int32_t(k);
        Status st = run(s->body);
        if (!st.ok()) {
          m_thread = -1;
          return st;
        }
      }
      if (lanes) {
        m_thread = -1;
        m_sharedAccess.clear();
      }
      m_vars.pop_back();
      return Status::success();
    }
    case Stmt::Kind::Store: {
      if (isScalarStore(*s)) {
        Lane v = evalS(*s->value);
        int64_t idx[8];
        for (size_t d = 0; d < s->indices.size(); ++d)
          idx[d] = evalS(*s->indices[d]).i;
        if (m_failed)
          return takeError();
        FB_ASSIGN_OR_RETURN(std::byte * p, addressS(*s->buffer, idx));
        if (!noteShared(*s->buffer, p, true))
          return takeError();
        writeElement(p, s->buffer->dtype, v);
        return Status::success();
      }
      FB_ASSIGN_OR_RETURN(Val v, eval(s->value));
      std::vector<Val> idx;
      for (const ExprPtr& e : s->indices) {
        FB_ASSIGN_OR_RETURN(Val x, eval(e));
        idx.push_back(std::move(x));
      }
      size_t lanes = v.size();
      for (const Val& x : idx)
        lanes = std::max(lanes, x.size());
      for (size_t l = 0; l < lanes; ++l) {
        FB_ASSIGN_OR_RETURN(std::byte * p, address(*s->buffer, idx, l));
        if (!noteShared(*s->buffer, p, true))
          return takeError();
        writeElement(p, s->buffer->dtype, v[v.size() == 1 ? 0 : l]);
      }
      return Status::success();
    }
    case Stmt::Kind::Block:
      for (const StmtPtr& x : s->stmts)
        FB_TRY(run(x));
      return Status::success();
    case Stmt::Kind::If: {
      if (s->cond->type.lanes == 1) {
        Lane c = evalS(*s->cond);
        if (m_failed)
          return takeError();
        return run(c.i ? s->thenBody : s->elseBody);
      }
      FB_ASSIGN_OR_RETURN(Val c, eval(s->cond));
      if (c.size() != 1)
        return makeError("loop IR: vector condition in an If");
      return run(c[0].i ? s->thenBody : s->elseBody);
    }
    case Stmt::Kind::Let: {
      FB_ASSIGN_OR_RETURN(Val v, eval(s->value));
      m_vars.push_back({s->var, std::move(v)});
      Status st = run(s->body);
      m_vars.pop_back();
      return st;
    }
    case Stmt::Kind::Alloc: {
      const Buffer& b = *s->buffer;
      // Shared memory starts as all-ones bytes (NaN for floats), so reading an element no
      // thread of the block wrote shows in the result.
      std::vector<std::byte> bytes(size_t(b.numElements()) * dtypeSize(b.dtype),
                                   b.kind == Buffer::Kind::Shared ? std::byte{0xff} : std::byte{0});
      m_locals.push_back({b.name, Storage{bytes.data(), b.numElements(), b.dtype}});
      Status st = run(s->body);
      m_locals.pop_back();
      return st;
    }
    case Stmt::Kind::Barrier:
      return makeError("loop IR: a barrier outside the threads of a GPU block (gpu_lanes)");
    }
    return makeError("loop IR: unknown statement kind");
  }

private:
  // ---- the threads of a GPU block, run in lock step from barrier to barrier ----

  /// One thread of a block: its variables and locals while it waits at a barrier, the storage
  /// of its locals allocated around a barrier, and where it waits (a position per enclosing
  /// statement: a Block's child, a loop's iteration, 0 for a Let or an Alloc).
  /// Who touched an element of shared memory since the last barrier (phase): the writer and a
  /// reader (-2: several), -1 for none.
  struct SharedAccess {
    int64_t phase = -1;
    int32_t writer = -1, reader = -1;
  };

  struct BlockThread {
    std::vector<std::pair<std::string, Val>> vars;
    std::vector<std::pair<std::string, Storage>> locals;
    std::vector<std::unique_ptr<std::vector<std::byte>>> owned;
    std::vector<int64_t> waitsAt;
    bool done = false;
  };

  /// Between two barriers, the threads of a block may not share an element of shared memory
  /// that one of them writes (whatever order they ran in here, a GPU could run them in
  /// another): false, with the race as the error, when the current thread's access would.
  bool noteShared(const Buffer& b, const std::byte* p, bool write) {
    if (b.kind != Buffer::Kind::Shared || m_thread < 0)
      return true;
    const Storage* st = storageOf(b);
    if (!st)
      return false;
    std::vector<SharedAccess>& table = m_sharedAccess[st->data];
    table.resize(size_t(st->elements));
    const size_t e = size_t(p - st->data) / dtypeSize(b.dtype);
    SharedAccess& a = table[e];
    if (a.phase != m_phase)
      a = SharedAccess{m_phase, -1, -1};
    int32_t other = -1;
    if (a.writer >= 0 && a.writer != m_thread)
      other = a.writer;
    else if (write && a.reader != -1 && a.reader != m_thread)
      other = a.reader;
    if (other != -1) {
      fail("loop IR: GPU threads " + std::to_string(m_thread) + " and " +
           (other >= 0 ? std::to_string(other) : std::string("others")) + " of a block " +
           (write || a.writer >= 0 ? "write and access" : "access") + " element " +
           std::to_string(e) + " of shared " + b.name +
           " between the same two barriers: a barrier is missing");
      return false;
    }
    if (write)
      a.writer = m_thread;
    else
      a.reader = a.reader == -1 || a.reader == m_thread ? m_thread : -2;
    return true;
  }

  bool hasBarrier(const StmtPtr& s) {
    if (!s)
      return false;
    auto it = m_hasBarrier.find(s.get());
    if (it != m_hasBarrier.end())
      return it->second;
    bool found = false;
    forEachStmt(s, [&](const Stmt& x) { found |= x.kind == Stmt::Kind::Barrier; });
    m_hasBarrier.emplace(s.get(), found);
    return found;
  }

  /// A GpuLanes loop whose body has barriers: each thread (in reverse order) runs until it
  /// reaches a barrier, then the next; when all wait at the same barrier they go on from there.
  /// A thread that reads what another writes before the barrier that should order them reads
  /// the old value, as it may on a GPU.
  Status runInLockStep(const Stmt& s) {
    FB_ASSIGN_OR_RETURN(Val lo, eval(s.min));
    FB_ASSIGN_OR_RETURN(Val n, eval(s.extent));
    const int64_t count = n[0].i;
    if (count < 1 || count > 1024)
      return makeError("loop IR: a GPU block of ", count, " threads (1 to 1024)");
    std::vector<BlockThread> threads(static_cast<size_t>(count));
    for (int64_t t = 0; t < count; ++t) {
      threads[size_t(t)].vars = m_vars;
      threads[size_t(t)].vars.push_back({s.var, Val{Lane{double(lo[0].i + t), lo[0].i + t}}});
      threads[size_t(t)].locals = m_locals;
    }
    std::swap(m_vars, m_blockVars);
    std::swap(m_locals, m_blockLocals);
    Status result = Status::success();
    for (bool waiting = true; waiting && result.ok();) {
      waiting = false;
      int64_t finished = -1, waiter = -1;
      for (int64_t t = count; t-- > 0;) {
        BlockThread& th = threads[size_t(t)];
        if (th.done)
          continue;
        std::swap(m_vars, th.vars);
        std::swap(m_locals, th.locals);
        m_owned = &th.owned;
        m_thread = int32_t(t);
        m_resume = th.waitsAt;
        m_resuming = !m_resume.empty();
        m_path.clear();
        m_parked = false;
        Status st = runToBarrier(s.body, 0);
        std::swap(m_vars, th.vars);
        std::swap(m_locals, th.locals);
        if (!st.ok()) {
          result = st.error().withContext("GPU thread " + std::to_string(t));
          break;
        }
        th.done = !m_parked;
        th.waitsAt = m_path;
        (th.done ? finished : waiter) = t;
      }
      ++m_phase; // every thread is at the barrier (or done): a new phase of shared accesses
      if (!result.ok() || waiter < 0)
        break;
      waiting = true;
      if (finished >= 0)
        result = makeError("loop IR: GPU thread ", finished, " of a block finished while thread ",
                           waiter, " waits at a barrier");
      for (const BlockThread& th : threads)
        if (result.ok() && !th.done && th.waitsAt != threads[size_t(waiter)].waitsAt)
          result = makeError("loop IR: the threads of a GPU block wait at different barriers "
                             "(a barrier in a loop whose trip count differs between threads)");
    }
    std::swap(m_vars, m_blockVars);
    std::swap(m_locals, m_blockLocals);
    m_blockVars.clear();
    m_blockLocals.clear();
    m_owned = nullptr;
    m_thread = -1;
    m_sharedAccess.clear(); // the block's shared arrays end with it
    return result;
  }

  /// Runs `s` (which holds a barrier) for the current thread until it reaches a barrier
  /// (m_parked, with m_path saying where) or its end; while m_resuming it first goes down
  /// m_resume to the barrier it waited at and continues after it.
  Status runToBarrier(const StmtPtr& s, size_t depth) {
    const bool resuming = m_resuming && depth < m_resume.size();
    switch (s->kind) {
    case Stmt::Kind::Barrier:
      if (m_resuming)
        m_resuming = false; // the barrier this thread waited at: go on after it
      else
        m_parked = true;
      return Status::success();
    case Stmt::Kind::Block:
      for (size_t i = resuming ? size_t(m_resume[depth]) : 0; i < s->stmts.size(); ++i) {
        if (!hasBarrier(s->stmts[i])) {
          FB_TRY(run(s->stmts[i]));
          continue;
        }
        m_path.push_back(int64_t(i));
        FB_TRY(runToBarrier(s->stmts[i], depth + 1));
        if (m_parked)
          return Status::success();
        m_path.pop_back();
      }
      return Status::success();
    case Stmt::Kind::For: {
      FB_ASSIGN_OR_RETURN(Val lo, eval(s->min));
      FB_ASSIGN_OR_RETURN(Val n, eval(s->extent));
      if (!resuming)
        m_vars.push_back({s->var, Val{Lane{}}});
      size_t slot = m_vars.size();
      while (slot-- > 0 && m_vars[slot].first != s->var) {
      }
      for (int64_t k = resuming ? m_resume[depth] : 0; k < n[0].i; ++k) {
        m_vars[slot].second = Val{Lane{double(lo[0].i + k), lo[0].i + k}};
        m_path.push_back(k);
        FB_TRY(runToBarrier(s->body, depth + 1));
        if (m_parked)
          return Status::success();
        m_path.pop_back();
      }
      m_vars.pop_back();
      return Status::success();
    }
    case Stmt::Kind::Let:
    case Stmt::Kind::Alloc:
      if (!resuming && s->kind == Stmt::Kind::Let) {
        FB_ASSIGN_OR_RETURN(Val v, eval(s->value));
        m_vars.push_back({s->var, std::move(v)});
      } else if (!resuming) {
        const Buffer& b = *s->buffer;
        if (b.kind == Buffer::Kind::Shared)
          return makeError("loop IR: shared buffer ", b.name, " allocated by each GPU thread");
        m_owned->push_back(
            std::make_unique<std::vector<std::byte>>(size_t(b.numElements()) * dtypeSize(b.dtype)));
        m_locals.push_back({b.name, Storage{m_owned->back()->data(), b.numElements(), b.dtype}});
      }
      m_path.push_back(0);
      FB_TRY(runToBarrier(s->body, depth + 1));
      if (m_parked)
        return Status::success();
      m_path.pop_back();
      if (s->kind == Stmt::Kind::Let)
        m_vars.pop_back();
      else
        m_locals.pop_back();
      return Status::success();
    case Stmt::Kind::If:
      return makeError("loop IR: a barrier under an If (not every GPU thread may reach it)");
    case Stmt::Kind::Store:
      break;
    }
    return makeError("loop IR: unknown statement kind");
  }

  static bool allScalar(const Expr& e) {
    if (e.type.lanes != 1 || e.kind == Expr::Kind::Ramp || e.kind == Expr::Kind::Broadcast)
      return false;
    for (const ExprPtr& o : e.operands)
      if (!allScalar(*o))
        return false;
    return true;
  }
  static bool isScalarStore(const Stmt& s) {
    if (s.indices.size() > 8 || !allScalar(*s.value))
      return false;
    for (const ExprPtr& i : s.indices)
      if (!allScalar(*i))
        return false;
    return true;
  }
  Status takeError() {
    m_failed = false;
    return makeError(m_error);
  }
  void fail(std::string message) {
    if (!m_failed) {
      m_failed = true;
      m_error = std::move(message);
    }
  }

  /// The scalar fast path of address().
  Expected<std::byte*> addressS(const Buffer& b, const int64_t* idx) {
    std::vector<Val> v;
    v.reserve(b.rank());
    for (size_t d = 0; d < b.rank(); ++d)
      v.push_back(Val{Lane{0, idx[d]}});
    return address(b, v, 0);
  }

  /// Scalar evaluation without allocation; errors set m_failed.
  Lane evalS(const Expr& e) {
    switch (e.kind) {
    case Expr::Kind::IntImm: return normalize(Lane{double(e.intValue), e.intValue}, e.type);
    case Expr::Kind::FloatImm: return Lane{double(float(e.floatValue)), 0};
    case Expr::Kind::Var:
      for (size_t i = m_vars.size(); i-- > 0;)
        if (m_vars[i].first == e.name)
          return m_vars[i].second[0];
      fail("loop IR: unbound variable " + e.name);
      return Lane{};
    case Expr::Kind::Load: {
      const Buffer& b = *e.buffer;
      const Storage* st = storageOf(b);
      if (!st)
        return Lane{};
      int64_t off = b.offset;
      for (size_t d = 0; d < e.operands.size(); ++d) {
        int64_t i = evalS(*e.operands[d]).i;
        if (i < 0 || i >= b.sizes[d]) {
          fail("loop IR: index " + std::to_string(i) + " out of bounds [0, " +
               std::to_string(b.sizes[d]) + ") in dimension " + std::to_string(d) + " of " + b.name);
          return Lane{};
        }
        off += i * b.strides[d];
      }
      if (off < 0 || off >= st->elements) {
        fail("loop IR: element " + std::to_string(off) + " outside " + b.name);
        return Lane{};
      }
      const std::byte* p = st->data + size_t(off) * dtypeSize(b.dtype);
      if (!noteShared(b, p, false))
        return Lane{};
      return readElement(p, b.dtype);
    }
    case Expr::Kind::Unary:
      return normalize(unaryLane(e.unaryOp, evalS(*e.operands[0]), e.type.isFloat()), e.type);
    case Expr::Kind::Binary:
      return normalize(binaryLane(e.binaryOp, evalS(*e.operands[0]), evalS(*e.operands[1]),
                                  e.operands[0]->type.isFloat()),
                       e.type);
    case Expr::Kind::Select: {
      Lane c = evalS(*e.operands[0]);
      Lane a = evalS(*e.operands[1]);
      Lane b = evalS(*e.operands[2]);
      return c.i ? a : b;
    }
    case Expr::Kind::Cast: {
      bool fromFloat = e.operands[0]->type.isFloat();
      Lane x = evalS(*e.operands[0]);
      Lane y;
      if (e.type.isFloat())
        y.f = fromFloat ? x.f : double(x.i);
      else if (e.type.dtype == DType::Bool)
        y.i = fromFloat ? x.f != 0 : x.i != 0;
      else
        y.i = fromFloat ? math::floatToInt<int64_t>(x.f) : x.i; // then wrapped to the width
      return normalize(y, e.type);
    }
    default: break;
    }
    fail("loop IR: vector expression on the scalar path");
    return Lane{};
  }

  const Storage* storageOf(const Buffer& b) {
    const Storage* st = nullptr;
    if (b.kind == Buffer::Kind::Arg) {
      if (b.arg < 0 || size_t(b.arg) >= m_args.size() || !m_args[size_t(b.arg)].data) {
        fail("loop IR: buffer " + b.name + " refers to a missing argument");
        return nullptr;
      }
      st = &m_args[size_t(b.arg)];
    } else {
      for (size_t i = m_locals.size(); i-- > 0;)
        if (m_locals[i].first == b.name) {
          st = &m_locals[i].second;
          break;
        }
      if (!st) {
        fail("loop IR: local buffer " + b.name + " used outside its Alloc");
        return nullptr;
      }
    }
    if (st->dtype != b.dtype) {
      fail("loop IR: buffer " + b.name + " has the wrong dtype for its storage");
      return nullptr;
    }
    return st;
  }

  Expected<std::byte*> address(const Buffer& b, const std::vector<Val>& idx, size_t lane) {
    const Storage* st = nullptr;
    if (b.kind == Buffer::Kind::Arg) {
      if (b.arg < 0 || size_t(b.arg) >= m_args.size() || !m_args[size_t(b.arg)].data)
        return makeError("loop IR: buffer ", b.name, " refers to missing argument ", b.arg);
      st = &m_args[size_t(b.arg)];
    } else {
      for (size_t i = m_locals.size(); i-- > 0;)
        if (m_locals[i].first == b.name) {
          st = &m_locals[i].second;
          break;
        }
      if (!st)
        return makeError("loop IR: local buffer ", b.name, " used outside its Alloc");
    }
    if (st->dtype != b.dtype)
      return makeError("loop IR: buffer ", b.name, " is ", dtypeName(b.dtype), " but its storage is ",
                       dtypeName(st->dtype));
    int64_t off = b.offset;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = idx[d][idx[d].size() == 1 ? 0 : lane].i;
      if (i < 0 || i >= b.sizes[d])
        return makeError("loop IR: index ", i, " out of bounds [0, ", b.sizes[d], ") in dimension ",
                         d, " of ", b.name);
      off += i * b.strides[d];
    }
    if (off < 0 || off >= st->elements)
      return makeError("loop IR: element ", off, " outside the ", st->elements, " elements of ",
                       b.name);
    return st->data + size_t(off) * dtypeSize(b.dtype);
  }

  static Lane unaryLane(UnaryOp op, Lane a, bool isFloat) {
    Lane r;
    double x = a.f;
    switch (op) {
    case UnaryOp::Neg:
      r.f = -x;
      r.i = -a.i;
      return r;
    case UnaryOp::Not: r.i = !a.i; return r;
    case UnaryOp::Abs:
      r.f = std::fabs(x);
      r.i = a.i < 0 ? -a.i : a.i;
      return r;
    case UnaryOp::Exp: r.f = std::exp(float(x)); break;
    case UnaryOp::Log: r.f = std::log(float(x)); break;
    case UnaryOp::Sqrt: r.f = std::sqrt(float(x)); break;
    case UnaryOp::Tanh: r.f = std::tanh(float(x)); break;
    case UnaryOp::Erf: r.f = std::erf(float(x)); break;
    case UnaryOp::Floor: r.f = std::floor(x); break;
    case UnaryOp::Ceil: r.f = std::ceil(x); break;
    case UnaryOp::Round: r.f = std::nearbyint(x); break;
    case UnaryOp::Sigmoid: r.f = 1.0f / (1.0f + std::exp(-float(x))); break;
    // The float libm functions, as the emitted code calls them (sinf ...).
    case UnaryOp::Log1p: r.f = std::log1p(float(x)); break;
    case UnaryOp::Sin: r.f = std::sin(float(x)); break;
    case UnaryOp::Cos: r.f = std::cos(float(x)); break;
    case UnaryOp::Tan: r.f = std::tan(float(x)); break;
    case UnaryOp::Asin: r.f = std::asin(float(x)); break;
    case UnaryOp::Acos: r.f = std::acos(float(x)); break;
    case UnaryOp::Atan: r.f = std::atan(float(x)); break;
    case UnaryOp::Sinh: r.f = std::sinh(float(x)); break;
    case UnaryOp::Cosh: r.f = std::cosh(float(x)); break;
    case UnaryOp::Asinh: r.f = std::asinh(float(x)); break;
    case UnaryOp::Acosh: r.f = std::acosh(float(x)); break;
    case UnaryOp::Atanh: r.f = std::atanh(float(x)); break;
    }
    (void)isFloat;
    r.i = int64_t(r.f);
    return r;
  }

  static Lane binaryLane(BinaryOp op, Lane a, Lane b, bool isFloat) {
    Lane r;
    if (isFloat) {
      float x = float(a.f), y = float(b.f);
      switch (op) {
      case BinaryOp::Add: r.f = x + y; break;
      case BinaryOp::Sub: r.f = x - y; break;
      case BinaryOp::Mul: r.f = x * y; break;
      case BinaryOp::Div: r.f = x / y; break;
      case BinaryOp::Mod: r.f = std::fmod(x, y); break;
      case BinaryOp::Min: r.f = std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y); break;
      case BinaryOp::Max: r.f = std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); break;
      case BinaryOp::Pow: r.f = std::pow(x, y); break;
      case BinaryOp::Eq: r.i = x == y; break;
      case BinaryOp::Ne: r.i = x != y; break;
      case BinaryOp::Lt: r.i = x < y; break;
      case BinaryOp::Le: r.i = x <= y; break;
      case BinaryOp::Gt: r.i = x > y; break;
      case BinaryOp::Ge: r.i = x >= y; break;
      case BinaryOp::And: r.i = (x != 0) && (y != 0); break;
      case BinaryOp::Or: r.i = (x != 0) || (y != 0); break;
      }
      if (isComparison(op) || op == BinaryOp::And || op == BinaryOp::Or)
        r.f = double(r.i);
      return r;
    }
    int64_t x = a.i, y = b.i;
    switch (op) {
    case BinaryOp::Add: r.i = int64_t(uint64_t(x) + uint64_t(y)); break;
    case BinaryOp::Sub: r.i = int64_t(uint64_t(x) - uint64_t(y)); break;
    case BinaryOp::Mul: r.i = int64_t(uint64_t(x) * uint64_t(y)); break;
    // x / 0 and x % 0 are 0 and x / -1 wraps, as in the interpreter and the emitted code.
    case BinaryOp::Div: r.i = y == 0 ? 0 : y == -1 ? int64_t(0 - uint64_t(x)) : x / y; break;
    case BinaryOp::Mod: r.i = y == 0 || y == -1 ? 0 : x % y; break;
    case BinaryOp::Min: r.i = std::min(x, y); break;
    case BinaryOp::Max: r.i = std::max(x, y); break;
    case BinaryOp::Pow: r.i = intPow(x, y); break;
    case BinaryOp::Eq: r.i = x == y; break;
    case BinaryOp::Ne: r.i = x != y; break;
    case BinaryOp::Lt: r.i = x < y; break;
    case BinaryOp::Le: r.i = x <= y; break;
    case BinaryOp::Gt: r.i = x > y; break;
    case BinaryOp::Ge: r.i = x >= y; break;
    case BinaryOp::And: r.i = x && y; break;
    case BinaryOp::Or: r.i = x || y; break;
    }
    r.f = double(r.i);
    return r;
  }

  Expected<Val> eval(const ExprPtr& e) {
    switch (e->kind) {
    case Expr::Kind::IntImm: return Val{normalize(Lane{double(e->intValue), e->intValue}, e->type)};
    case Expr::Kind::FloatImm: return Val{Lane{double(float(e->floatValue)), 0}};
    case Expr::Kind::Var:
      for (size_t i = m_vars.size(); i-- > 0;)
        if (m_vars[i].first == e->name)
          return m_vars[i].second;
      return makeError("loop IR: unbound variable ", e->name);
    case Expr::Kind::Load: {
      std::vector<Val> idx;
      size_t lanes = 1;
      for (const ExprPtr& o : e->operands) {
        FB_ASSIGN_OR_RETURN(Val x, eval(o));
        lanes = std::max(lanes, x.size());
        idx.push_back(std::move(x));
      }
      Val r;
      for (size_t l = 0; l < lanes; ++l) {
        FB_ASSIGN_OR_RETURN(std::byte * p, address(*e->buffer, idx, l));
        if (!noteShared(*e->buffer, p, false))
          return takeError().error();
        r.push_back(readElement(p, e->buffer->dtype));
      }
      return r;
    }
    default: break;
    }
    std::vector<Val> ops;
    size_t lanes = 1;
    for (const ExprPtr& o : e->operands) {
      FB_ASSIGN_OR_RETURN(Val x, eval(o));
      lanes = std::max(lanes, x.size());
      ops.push_back(std::move(x));
    }
    auto at = [&](size_t k, size_t l) { return ops[k][ops[k].size() == 1 ? 0 : l]; };
    Val r;
    switch (e->kind) {
    case Expr::Kind::Unary:
      for (size_t l = 0; l < lanes; ++l)
        r.push_back(normalize(unaryLane(e->unaryOp, at(0, l), e->type.isFloat()), e->type));
      return r;
    case Expr::Kind::Binary: {
      bool isFloat = e->operands[0]->type.isFloat();
      for (size_t l = 0; l < lanes; ++l)
        r.push_back(normalize(binaryLane(e->binaryOp, at(0, l), at(1, l), isFloat), e->type));
      return r;
    }
    case Expr::Kind::Select:
      for (size_t l = 0; l < lanes; ++l)
        r.push_back(at(0, l).i ? at(1, l) : at(2, l));
      return r;
    case Expr::Kind::Cast: {
      bool fromFloat = e->operands[0]->type.isFloat();
      for (size_t l = 0; l < lanes; ++l) {
        Lane x = at(0, l);
        Lane y;
        if (e->type.isFloat())
          y.f = fromFloat ? x.f : double(x.i);
        else if (e->type.dtype == DType::Bool)
          y.i = fromFloat ? x.f != 0 : x.i != 0;
        else
          y.i = fromFloat ? math::floatToInt<int64_t>(x.f) : x.i; // then wrapped to the width
        r.push_back(normalize(y, e->type));
      }
      return r;
    }
    case Expr::Kind::Ramp:
      for (int l = 0; l < e->type.lanes; ++l) {
        int64_t v = ops[0][0].i + l * ops[1][0].i;
        r.push_back(Lane{double(v), v});
      }
      return r;
    case Expr::Kind::Broadcast: return Val(size_t(e->type.lanes), ops[0][0]);
    default: break;
    }
    return makeError("loop IR: unknown expression kind");
  }

  std::vector<Storage> m_args;
  std::vector<std::pair<std::string, Storage>> m_locals;
  std::vector<std::pair<std::string, Val>> m_vars;
  bool m_failed = false;
  std::string m_error;
  // Lock-step state (runInLockStep): the block's variables and locals while its threads run,
  // the running thread's locals storage, where it resumes and where it stopped.
  std::vector<std::pair<std::string, Val>> m_blockVars;
  std::vector<std::pair<std::string, Storage>> m_blockLocals;
  std::vector<std::unique_ptr<std::vector<std::byte>>>* m_owned = nullptr;
  std::vector<int64_t> m_resume, m_path;
  bool m_resuming = false, m_parked = false;
  std::unordered_map<const Stmt*, bool> m_hasBarrier;
  int32_t m_thread = -1; // the block thread running in lock step, else -1
  int64_t m_phase = 0;
  std::unordered_map<const std::byte*, std::vector<SharedAccess>> m_sharedAccess;
};

} // namespace

Status evaluateBody(const StmtPtr& body, std::vector<Tensor>& args) {
  Evaluator ev(args);
  return ev.run(body);
}

Status evaluateKernel(const Kernel& kernel, std::vector<Tensor>& args) {
  if (args.size() != kernel.args.size())
    return makeError("kernel ", kernel.name, " takes ", kernel.args.size(), " arguments, got ",
                     args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].valid())
      continue;
    const KernelArg& a = kernel.args[i];
    if (a.data)
      args[i] = *a.data;
    else {
      FB_ASSIGN_OR_RETURN(args[i], Tensor::create(a.dtype, a.sizes));
    }
  }
  Status st = evaluateBody(kernel.body, args);
  if (!st.ok())
    return st.error().withContext("kernel " + kernel.name);
  return Status::success();
}

Status evaluateKernels(const std::vector<Kernel>& kernels,
                       std::unordered_map<std::string, Tensor>& values) {
  for (const Kernel& k : kernels) {
    std::vector<Tensor> args;
    for (const KernelArg& a : k.args) {
      if (a.role == KernelArg::Role::Input) {
        auto it = values.find(a.name);
        if (it == values.end())
          return makeError("kernel ", k.name, ": input ", a.name, " was not computed");
        args.push_back(it->second);
      } else {
        args.emplace_back();
      }
    }
    FB_TRY(evaluateKernel(k, args));
    for (size_t i = 0; i < args.size(); ++i)
      if (k.args[i].role == KernelArg::Role::Output)
        values[k.args[i].name] = args[i];
  }
  return Status::success();
}

} // namespace fb::cg
