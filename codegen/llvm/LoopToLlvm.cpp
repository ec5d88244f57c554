// The loop-IR → LLVM IR emitter: functions, loops, closures for parallel loops, widening.
#include "codegen/llvm/LoopEmitter.h"
#include "codegen/ir/LoopMetadata.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <functional>
#include <utility>

namespace fb::cg {

std::string llvmSafeName(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    if (ok)
      s += c;
    else if (!s.empty() && s.back() != '_')
      s += '_';
  }
  while (!s.empty() && (s.back() == '_' || s.back() == '.'))
    s.pop_back();
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "v" + s;
  return s;
}

namespace loopemit {

/// Reduction loops of 16 to this many iterations are kept from being fully unrolled.
constexpr int64_t kMaxKeptReductionLoop = 128;

void collectUses(const ExprPtr& e, Uses& u) {
  if (!e)
    return;
  if (e->kind == Expr::Kind::Var)
    u.vars.insert(e->name);
  if (e->kind == Expr::Kind::Load && e->buffer) {
    if (e->buffer->kind == Buffer::Kind::Arg)
      u.args.insert(e->buffer->arg);
    else
      u.locals.insert(e->buffer->name);
  }
  for (const ExprPtr& o : e->operands)
    collectUses(o, u);
}

void collectUses(const StmtPtr& s, Uses& u) {
  forEachStmt(s, [&](const Stmt& st) {
    collectUses(st.min, u);
    collectUses(st.extent, u);
    collectUses(st.value, u);
    collectUses(st.cond, u);
    for (const ExprPtr& i : st.indices)
      collectUses(i, u);
    if (st.kind == Stmt::Kind::Store && st.buffer) {
      if (st.buffer->kind == Buffer::Kind::Arg)
        u.args.insert(st.buffer->arg);
      else
        u.locals.insert(st.buffer->name);
    }
  });
}

bool exprUsesAny(const ExprPtr& e, const std::set<std::string>& vars) {
  if (!e)
    return false;
  if (e->kind == Expr::Kind::Var && vars.count(e->name))
    return true;
  for (const ExprPtr& o : e->operands)
    if (exprUsesAny(o, vars))
      return true;
  return false;
}

bool exprHasExplicitVector(const ExprPtr& e) {
  if (!e)
    return false;
  if (e->type.lanes > 1 || e->kind == Expr::Kind::Ramp || e->kind == Expr::Kind::Broadcast)
    return true;
  for (const ExprPtr& o : e->operands)
    if (exprHasExplicitVector(o))
      return true;
  return false;
}

bool canWiden(const StmtPtr& body, const std::string& var) {
  std::set<std::string> laneVars{var};
  std::set<std::string> privateLocals;
  bool ok = true;
  std::function<void(const StmtPtr&)> walk = [&](const StmtPtr& s) {
    if (!s || !ok)
      return;
    switch (s->kind) {
    case Stmt::Kind::For:
      if (exprUsesAny(s->min, laneVars) || exprUsesAny(s->extent, laneVars) ||
          exprHasExplicitVector(s->min) || exprHasExplicitVector(s->extent))
        ok = false;
      walk(s->body);
      break;
    case Stmt::Kind::Store: {
      bool dep = false;
      for (const ExprPtr& i : s->indices) {
        dep = dep || exprUsesAny(i, laneVars);
        ok = ok && !exprHasExplicitVector(i);
      }
      // A store to a local allocated inside the loop writes each lane's private copy.
      bool privateLocal = s->buffer && s->buffer->kind == Buffer::Kind::Local &&
                          privateLocals.count(s->buffer->name);
      ok = ok && (dep || privateLocal) && !exprHasExplicitVector(s->value);
      break;
    }
    case Stmt::Kind::Block:
      for (const StmtPtr& c : s->stmts)
        walk(c);
      break;
    case Stmt::Kind::If: // a lane-dependent condition becomes a mask on the accesses
      if (exprHasExplicitVector(s->cond))
        ok = false;
      walk(s->thenBody);
      walk(s->elseBody);
      break;
    case Stmt::Kind::Let:
      if (exprHasExplicitVector(s->value))
        ok = false;
      if (exprUsesAny(s->value, laneVars))
        laneVars.insert(s->var);
      walk(s->body);
      break;
    case Stmt::Kind::Alloc: // privatized per lane (Emitter::emitAlloc)
      if (s->buffer)
        privateLocals.insert(s->buffer->name);
      walk(s->body);
      break;
    case Stmt::Kind::Barrier:
      ok = false;
      break;
    }
  };
  walk(body);
  return ok;
}


namespace {

bool isVarNamed(const ExprPtr& e, const std::string& name) {
  return e && e->kind == Expr::Kind::Var && e->name == name;
}

/// Checks that `outer` and `inner` occur in expressions and statements only as adjacent index
/// pairs of views where stride(outer) == innerExtent * stride(inner).
struct PairedUseCheck {
  const std::string& outer;
  const std::string& inner;
  int64_t innerExtent;
  bool ok = true;

  void indices(const std::vector<ExprPtr>& idx, const Buffer& buf) {
    for (size_t d = 0; d < idx.size() && ok; ++d) {
      if (isVarNamed(idx[d], outer)) {
        ok = d + 1 < idx.size() && isVarNamed(idx[d + 1], inner) &&
             buf.strides.size() == idx.size() && buf.strides[d] == innerExtent * buf.strides[d + 1];
        ++d; // the inner index of the pair
      } else {
        expr(idx[d]);
      }
    }
  }
  void expr(const ExprPtr& e) {
    if (!e || !ok)
      return;
    if (e->kind == Expr::Kind::Var && (e->name == outer || e->name == inner)) {
      ok = false;
      return;
    }
    if (e->kind == Expr::Kind::Load && e->buffer)
      return indices(e->operands, *e->buffer);
    for (const ExprPtr& o : e->operands)
      expr(o);
  }
  void stmt(const StmtPtr& s) {
    if (!s || !ok)
      return;
    expr(s->min);
    expr(s->extent);
    expr(s->value);
    expr(s->cond);
    if (s->kind == Stmt::Kind::Store && s->buffer)
      indices(s->indices, *s->buffer);
    stmt(s->body);
    stmt(s->thenBody);
    stmt(s->elseBody);
    for (const StmtPtr& c : s->stmts)
      stmt(c);
  }
};

bool loadsBuffer(const ExprPtr& e, const std::string& buffer) {
  if (!e)
    return false;
  if (e->kind == Expr::Kind::Load && e->buffer && e->buffer->name == buffer)
    return true;
  for (const ExprPtr& o : e->operands)
    if (loadsBuffer(o, buffer))
      return true;
  return false;
}

} // namespace

StmtPtr flattenReductionNest(const Stmt& outer) {
  const StmtPtr& inner = outer.body;
  int64_t outerMin = -1, innerMin = -1, outerExtent = 0, innerExtent = 0, total = 0;
  if (outer.kind != Stmt::Kind::For || outer.forKind != ForKind::Serial || !inner ||
      inner->kind != Stmt::Kind::For || inner->forKind != ForKind::Serial || !inner->body ||
      !outer.min || !outer.min->isIntConst(&outerMin) || outerMin != 0 || !inner->min ||
      !inner->min->isIntConst(&innerMin) || innerMin != 0 || !outer.extent ||
      !outer.extent->isIntConst(&outerExtent) || !inner->extent ||
      !inner->extent->isIntConst(&innerExtent) || outerExtent < 1 || innerExtent < 1 ||
      __builtin_mul_overflow(outerExtent, innerExtent, &total))
    return nullptr;
  bool reduces = false;
  forEachStmt(inner->body, [&](const Stmt& x) {
    if (x.kind != Stmt::Kind::Store)
      return;
    bool usesEither = false;
    for (const ExprPtr& i : x.indices)
      usesEither = usesEither || usesVar(i, outer.var) || usesVar(i, inner->var);
    reduces = reduces || !usesEither;
  });
  if (!reduces)
    return nullptr;
  PairedUseCheck check{outer.var, inner->var, innerExtent};
  check.stmt(inner->body);
  if (!check.ok)
    return nullptr;
  // [.., 0, f, ..] addresses f * stride(inner) = outer * stride(outer) + inner * stride(inner).
  return forLoop(inner->var, intImm(0), intImm(total), ForKind::Serial,
                 substitute(inner->body, outer.var, intImm(0)), inner->comment);
}

bool reducesDirectly(const StmtPtr& body, const std::string& loopVar) {
  if (!body)
    return false;
  switch (body->kind) {
  case Stmt::Kind::Store: return isReductionUpdate(*body, loopVar);
  case Stmt::Kind::Block:
    return std::any_of(body->stmts.begin(), body->stmts.end(),
                       [&](const StmtPtr& c) { return reducesDirectly(c, loopVar); });
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: return reducesDirectly(body->body, loopVar);
  case Stmt::Kind::If:
    return reducesDirectly(body->thenBody, loopVar) || reducesDirectly(body->elseBody, loopVar);
  case Stmt::Kind::For: return false; // the update belongs to the inner loop
  case Stmt::Kind::Barrier:
    return false;
  }
  return false;
}

bool isReductionUpdate(const Stmt& s, const std::string& loopVar) {
  if (s.kind != Stmt::Kind::Store || !s.buffer || !s.value || loopVar.empty())
    return false;
  const Expr& v = *s.value;
  if (v.kind != Expr::Kind::Binary ||
      (v.binaryOp != BinaryOp::Add && v.binaryOp != BinaryOp::Mul) || !v.type.isFloat() ||
      !v.type.isScalar() || v.operands.size() != 2)
    return false;
  for (const ExprPtr& i : s.indices)
    if (usesVar(i, loopVar))
      return false;
  auto isAccumulator = [&](const ExprPtr& e) {
    if (e->kind != Expr::Kind::Load || !e->buffer || e->buffer->name != s.buffer->name ||
        e->operands.size() != s.indices.size())
      return false;
    for (size_t d = 0; d < s.indices.size(); ++d)
      if (!equal(e->operands[d], s.indices[d]))
        return false;
    return true;
  };
  for (int a = 0; a < 2; ++a)
    if (isAccumulator(v.operands[size_t(a)]) &&
        !loadsBuffer(v.operands[size_t(1 - a)], s.buffer->name))
      return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// Functions

namespace {

/// Above this many stores in straight-line code a kernel is emitted `optnone` (Emitter::run).
constexpr int64_t kMaxStraightLineStores = 1024;

/// The number of stores s executes outside loops (an unrolled loop of constant extent counts
/// its body that many times), capped just above kMaxStraightLineStores.
int64_t straightLineStores(const StmtPtr& s) {
  if (!s)
    return 0;
  int64_t n = 0;
  switch (s->kind) {
  case Stmt::Kind::Store: return 1;
  case Stmt::Kind::For:
    if (s->forKind == ForKind::Unrolled && s->extent && s->extent->kind == Expr::Kind::IntImm)
      n = std::min(s->extent->intValue, kMaxStraightLineStores + 1) * straightLineStores(s->body);
    else if (s->forKind == ForKind::GpuThreads || s->forKind == ForKind::GpuBlocks ||
             s->forKind == ForKind::GpuLanes) // each thread's body is one straight run
      n = straightLineStores(s->body);
    break;
  case Stmt::Kind::Block:
    for (const StmtPtr& c : s->stmts)
      if ((n += straightLineStores(c)) > kMaxStraightLineStores)
        break;
    break;
  case Stmt::Kind::If: n = straightLineStores(s->thenBody) + straightLineStores(s->elseBody); break;
  case Stmt::Kind::Let:
  case Stmt::Kind::Alloc: n = straightLineStores(s->body); break;
  case Stmt::Kind::Barrier:
    break;
  }
  return std::min(n, kMaxStraightLineStores + 1);
}

} // namespace

Expected<llvm::Function*> Emitter::run() {
  if (!m_kernel.body)
    return makeError("kernel ", m_kernel.name, " has no loop nest to emit");
  if (m_module.getFunction(m_kernel.name))
    return makeError("kernel ", m_kernel.name, " is defined twice in module ",
                     m_module.getModuleIdentifier());
  llvm::Type* ptr = m_b.getPtrTy();
  auto* fnTy = llvm::FunctionType::get(m_b.getVoidTy(), {ptr}, false);
  llvm::Function* fn =
      llvm::Function::Create(fnTy, llvm::Function::ExternalLinkage, m_kernel.name, m_module);
  fn->setDoesNotThrow();
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(0, llvm::Attribute::NoCapture);
  fn->addParamAttr(0, llvm::Attribute::ReadOnly);
  fn->getArg(0)->setName("args");

  // Alias scopes: one per noalias argument, in one domain per kernel. Each access lists every
  // other argument's scope, and LLVM compares those lists per pair of accesses: with thousands
  // of arguments (a Split into 3,000 outputs) that is cubic and one kernel compiled for minutes.
  // Kernels that wide are copies with nothing to vectorize across arguments, so they get none.
  constexpr size_t kMaxScopedArgs = 64;
  size_t n = m_kernel.args.size();
  llvm::MDBuilder mdb(m_ctx);
  // Scope names carry no graph names, so that identical kernels print (and hash) alike.
  llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain("fb.args");
  std::vector<llvm::MDNode*> scopes(n, nullptr);
  for (size_t i = 0; i < n && n <= kMaxScopedArgs; ++i)
    if (m_options.noAliasArgs.empty() || (i < m_options.noAliasArgs.size() && m_options.noAliasArgs[i]))
      scopes[i] = mdb.createAnonymousAliasScope(domain, "arg" + std::to_string(i));
  m_scopeOf.assign(n, nullptr);
  m_noAliasOf.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    if (!scopes[i])
      continue;
    m_scopeOf[i] = llvm::MDNode::get(m_ctx, {scopes[i]});
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < n; ++j)
      if (j != i && scopes[j])
        others.push_back(scopes[j]);
    m_noAliasOf[i] = llvm::MDNode::get(m_ctx, others);
  }

  m_fs.fn = fn;
  m_fs.entry = llvm::BasicBlock::Create(m_ctx, "entry", fn);
  m_b.SetInsertPoint(m_fs.entry);
  for (size_t i = 0; i < n; ++i) {
    llvm::Value* slot = m_b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), i);
    auto* p = m_b.CreateLoad(ptr, slot, llvmSafeName(m_kernel.args[i].name));
    p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(m_ctx, {}));
    // On a GPU every argument is device memory: accesses through address space 1 become
    // ld.global / st.global instead of generic loads.
    llvm::Value* argPtr =
        m_options.gpu ? m_b.CreateAddrSpaceCast(p, m_b.getPtrTy(1), p->getName() + ".global") : p;
    m_fs.argPtrs.push_back(argPtr);
  }
  emitStmt(m_kernel.body);
  m_b.CreateRetVoid();
  // LLVM's instruction schedulers are quadratic in the memory operations of one basic block:
  // a Split into 3,000 single-element outputs, one straight run of 3,000 copies, took 8 s in
  // them. Such a kernel only moves data, so it is compiled without optimization instead.
  if (straightLineStores(m_kernel.body) > kMaxStraightLineStores) {
    fn->addFnAttr(llvm::Attribute::OptimizeNone);
    fn->addFnAttr(llvm::Attribute::NoInline);
  }
  if (m_error) {
    fn->eraseFromParent();
    for (llvm::Function& f : llvm::make_early_inc_range(m_module))
      if (f.getName().starts_with(m_kernel.name + ".") && f.use_empty())
        f.eraseFromParent();
    return *m_error;
  }
  return fn;
}

llvm::AllocaInst* Emitter::entryAlloca(llvm::Type* t, llvm::Value* count, const std::string& name) {
  llvm::IRBuilder<> eb(m_fs.entry, m_fs.entry->getFirstInsertionPt());
  llvm::AllocaInst* a = eb.CreateAlloca(t, count, name);
  a->setAlignment(llvm::Align(64));
  return a;
}

// ---------------------------------------------------------------------------------------------
// Statements

void Emitter::emitStmt(const StmtPtr& s) {
  if (!s || m_error)
    return;
  switch (s->kind) {
  case Stmt::Kind::For: emitFor(*s); return;
  case Stmt::Kind::Store: emitStore(*s); return;
  case Stmt::Kind::Block:
    for (const StmtPtr& c : s->stmts)
      emitStmt(c);
    return;
  case Stmt::Kind::If: emitIf(*s); return;
  case Stmt::Kind::Let: emitLet(*s); return;
  case Stmt::Kind::Alloc: emitAlloc(*s); return;
  case Stmt::Kind::Barrier:
    emitBarrier();
    return;
  }
  __builtin_unreachable();
}

void Emitter::emitFor(const Stmt& s) {
  // Blocks are named after the loop's comment ("n12.i"), else after the kernel's first node
  // and the loop variable, so that the IR points back to the graph.
  std::string label = llvmSafeName(
      !s.comment.empty()        ? s.comment
      : m_kernel.nodes.empty()  ? s.var
                                : "n" + std::to_string(m_kernel.nodes.front()) + "." + s.var);
  if (!s.min || !s.extent || !s.body)
    return fail("loop " + s.var + " lacks bounds or a body");
  if (isLaneDependent(s.min) || isLaneDependent(s.extent))
    return fail("loop " + s.var + " has bounds that differ per vector lane");
  int64_t extent = 0;
  bool constExtent = s.extent->isIntConst(&extent);
  if (s.forKind == ForKind::GpuThreads || s.forKind == ForKind::GpuBlocks ||
      s.forKind == ForKind::GpuLanes) {
    if (!m_options.gpu || m_lanes != 0)
      return fail("loop " + s.var + " runs on GPU threads, which only GPU code has");
    if (s.forKind == ForKind::GpuLanes)
      return emitBlockThreads(s);
    return emitGridStride(s, label);
  }
  if (s.forKind == ForKind::Parallel && m_options.parallel && !m_options.gpu && !m_fs.inClosure &&
      m_lanes == 0 && !(constExtent && extent <= 1))
    return emitParallel(s, label);
  if (s.forKind == ForKind::Vectorized && m_lanes == 0 && constExtent && extent > 1 &&
      extent <= 64 && canWiden(s.body, s.var))
    return emitWidened(s, int(extent));
  if (s.forKind == ForKind::Serial && m_lanes == 0)
    if (StmtPtr flat = flattenReductionNest(s))
      return emitFor(*flat);
  llvm::MDNode* md = nullptr;
  if (s.forKind == ForKind::Vectorized) {
    llvm::Metadata* enable[] = {llvm::MDString::get(m_ctx, "llvm.loop.vectorize.enable"),
                                llvm::ConstantAsMetadata::get(m_b.getTrue())};
    llvm::Metadata* width[] = {
        llvm::MDString::get(m_ctx, "llvm.loop.vectorize.width"),
        llvm::ConstantAsMetadata::get(m_b.getInt32(uint32_t(constExtent ? std::min<int64_t>(extent, 16) : 8)))};
    md = loopId(m_ctx, {llvm::MDNode::get(m_ctx, enable), llvm::MDNode::get(m_ctx, width)});
  } else if (s.forKind == ForKind::Unrolled) {
    md = loopId(m_ctx,
                {llvm::MDNode::get(m_ctx, {llvm::MDString::get(m_ctx, "llvm.loop.unroll.full")})});
  } else if (!m_options.gpu && m_lanes == 0 && constExtent && extent >= 16 &&
             extent <= kMaxKeptReductionLoop && reducesDirectly(s.body, s.var)) {
    // A short reduction loop stays a loop for the vectorizer (whose cost model still decides):
    // fully unrolled first (7x7 = 49 iterations), its chain would make LLVM vectorize the
    // enclosing loop with gathers instead. Longer loops are never fully unrolled, and LLVM
    // interleaves their vector sums 4 ways and unrolls them further when left alone.
    llvm::Metadata* noUnroll = llvm::MDString::get(m_ctx, "llvm.loop.unroll.disable");
    md = loopId(m_ctx, {llvm::MDNode::get(m_ctx, {noUnroll})});
  }
  llvm::Value* lo = emitExpr(s.min);
  llvm::Value* hi = m_b.CreateAdd(lo, emitExpr(s.extent), s.var + ".end", false, true);
  // A vectorized loop that could not be widened is usually a reduction; the schedule asked for
  // vectorization, so float operations in it may be reassociated (as `omp simd reduction`
  // allows), which is what lets LLVM's loop vectorizer split the sum across lanes.
  llvm::IRBuilderBase::FastMathFlagGuard fmfGuard(m_b);
  if (s.forKind == ForKind::Vectorized) {
    llvm::FastMathFlags fmf = m_b.getFastMathFlags();
    fmf.setAllowReassoc();
    m_b.setFastMathFlags(fmf);
  }
  emitSerialLoop(s, label, md, lo, hi);
}

void Emitter::emitSerialLoop(const Stmt& s, const std::string& label, llvm::MDNode* loopMd,
                             llvm::Value* lo, llvm::Value* hi, llvm::Value* step,
                             llvm::Value* start) {
  llvm::Function* fn = m_fs.fn;
  llvm::BasicBlock* pre = m_b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(m_ctx, label + ".header", fn);
  auto* body = llvm::BasicBlock::Create(m_ctx, label + ".body", fn);
  auto* exit = llvm::BasicBlock::Create(m_ctx, label + ".exit", fn);
  m_b.CreateBr(header);
  m_b.SetInsertPoint(header);
  llvm::PHINode* iv = m_b.CreatePHI(m_b.getInt64Ty(), 2, s.var);
  iv->addIncoming(start ? start : lo, pre);
  m_b.CreateCondBr(m_b.CreateICmpSLT(iv, hi, s.var + ".cond"), body, exit);
  m_b.SetInsertPoint(body);
  auto saved = m_vars.find(s.var) != m_vars.end() ? std::optional<Binding>(m_vars[s.var]) : std::nullopt;
  Binding ivBinding;
  ivBinding.value = iv;
  std::optional<Range> first = rangeOf(s.min), ext = rangeOf(s.extent);
  if (first && ext && !__builtin_add_overflow(first->hi, ext->hi - 1, &first->hi))
    ivBinding.range = first;
  m_vars[s.var] = ivBinding;
  std::string outerLoop = std::exchange(m_innermostLoop, s.var);
  emitStmt(s.body);
  m_innermostLoop = outerLoop;
  if (saved)
    m_vars[s.var] = *saved;
  else
    m_vars.erase(s.var);
  llvm::Value* next = m_b.CreateAdd(iv, step ? step : i64(1), s.var + ".next", true, true);
  llvm::BasicBlock* latch = m_b.GetInsertBlock();
  llvm::BranchInst* back = m_b.CreateBr(header);
  if (loopMd)
    back->setMetadata(llvm::LLVMContext::MD_loop, loopMd);
  iv->addIncoming(next, latch);
  m_b.SetInsertPoint(exit);
}

void Emitter::emitWidened(const Stmt& s, int lanes) {
  llvm::Value* base = emitExpr(s.min);
  Binding lane;
  lane.lane = true;
  lane.affine = true;
  lane.base = base;
  lane.stride = 1;
  if (std::optional<Range> r = rangeOf(s.min);
      r && !__builtin_add_overflow(r->hi, lanes - 1, &r->hi))
    lane.range = r;
  auto saved = m_vars.find(s.var) != m_vars.end() ? std::optional<Binding>(m_vars[s.var]) : std::nullopt;
  m_vars[s.var] = lane;
  m_lanes = lanes;
  std::string outerLoop = std::exchange(m_innermostLoop, s.var);
  emitStmt(s.body);
  m_innermostLoop = outerLoop;
  m_lanes = 0;
  if (saved)
    m_vars[s.var] = *saved;
  else
    m_vars.erase(s.var);
}

void Emitter::emitParallel(const Stmt& s, const std::string& label) {
  // 1. What the body needs from the enclosing function.
  Uses uses;
  collectUses(s.body, uses);
  std::vector<std::string> capturedVars;
  for (const std::string& v : uses.vars)
    if (m_vars.count(v) && v != s.var)
      capturedVars.push_back(v);
  std::vector<int> capturedArgs;
  for (int a : uses.args) {
    if (a < 0 || size_t(a) >= m_fs.argPtrs.size() || !m_fs.argPtrs[size_t(a)])
      return fail("loop " + s.var + " uses argument " + std::to_string(a) + " which is not available");
    capturedArgs.push_back(a);
  }
  std::vector<std::string> capturedLocals;
  for (const std::string& l : uses.locals)
    if (m_fs.locals.count(l))
      capturedLocals.push_back(l);

  // 2. The context struct: min, then args, locals and variables.
  llvm::Value* lo = emitExpr(s.min);
  llvm::Value* extent = emitExpr(s.extent);
  std::vector<llvm::Type*> fieldTypes{m_b.getInt64Ty()};
  std::vector<llvm::Value*> fieldValues{lo};
  for (int a : capturedArgs) {
    fieldTypes.push_back(m_b.getPtrTy());
    fieldValues.push_back(m_fs.argPtrs[size_t(a)]);
  }
  for (const std::string& l : capturedLocals) {
    fieldTypes.push_back(m_b.getPtrTy());
    fieldValues.push_back(m_fs.locals[l]);
  }
  for (const std::string& v : capturedVars) {
    fieldTypes.push_back(m_vars[v].value->getType());
    fieldValues.push_back(m_vars[v].value);
  }
  auto* ctxTy = llvm::StructType::create(m_ctx, fieldTypes, m_kernel.name + "." + label + ".ctx");
  llvm::AllocaInst* ctx = entryAlloca(ctxTy, nullptr, label + ".ctx");
  for (size_t i = 0; i < fieldValues.size(); ++i)
    m_b.CreateStore(fieldValues[i], m_b.CreateStructGEP(ctxTy, ctx, unsigned(i)));

  // 3. The closure.
  llvm::Type* ptr = m_b.getPtrTy();
  auto* closureTy =
      llvm::FunctionType::get(m_b.getVoidTy(), {ptr, m_b.getInt64Ty(), m_b.getInt64Ty()}, false);
  std::string closureName = m_kernel.name + "." + label + ".par" + std::to_string(m_closureCount++);
  llvm::Function* closure = llvm::Function::Create(closureTy, llvm::Function::InternalLinkage,
                                                   closureName, m_module);
  closure->setDoesNotThrow();
  closure->addParamAttr(0, llvm::Attribute::NoAlias);
  closure->addParamAttr(0, llvm::Attribute::NoCapture);
  closure->addParamAttr(0, llvm::Attribute::ReadOnly);
  closure->getArg(0)->setName("ctx");
  closure->getArg(1)->setName(s.var + ".begin");
  closure->getArg(2)->setName(s.var + ".end");

  FnState outer = std::move(m_fs);
  auto outerVars = m_vars;
  llvm::IRBuilderBase::InsertPoint outerIp = m_b.saveIP();

  m_fs = FnState();
  m_fs.fn = closure;
  m_fs.inClosure = true;
  m_fs.entry = llvm::BasicBlock::Create(m_ctx, "entry", closure);
  m_fs.argPtrs.assign(outer.argPtrs.size(), nullptr);
  m_b.SetInsertPoint(m_fs.entry);
  auto field = [&](unsigned i, const std::string& name) {
    return m_b.CreateLoad(fieldTypes[i], m_b.CreateStructGEP(ctxTy, closure->getArg(0), i), name);
  };
  llvm::Value* innerLo = field(0, s.var + ".min");
  unsigned f = 1;
  for (int a : capturedArgs)
    m_fs.argPtrs[size_t(a)] = field(f++, llvmSafeName(m_kernel.args[size_t(a)].name));
  for (const std::string& l : capturedLocals)
    m_fs.locals[l] = field(f++, llvmSafeName(l));
  m_vars.clear();
  for (const std::string& v : capturedVars) {
    Binding b;
    b.value = field(f++, v);
    b.range = outerVars[v].range;
    m_vars[v] = b;
  }
  llvm::Value* begin = m_b.CreateAdd(innerLo, closure->getArg(1), s.var + ".lo", false, true);
  llvm::Value* end = m_b.CreateAdd(innerLo, closure->getArg(2), s.var + ".hi", false, true);
  emitSerialLoop(s, label, nullptr, begin, end);
  m_b.CreateRetVoid();

  m_fs = std::move(outer);
  m_vars = std::move(outerVars);
  m_b.restoreIP(outerIp);

  // 4. The call.
  llvm::FunctionCallee pfor = m_module.getOrInsertFunction(
      "fb_parallel_for",
      llvm::FunctionType::get(m_b.getVoidTy(), {ptr, ptr, m_b.getInt64Ty()}, false));
  m_b.CreateCall(pfor, {closure, ctx, extent});
}

void Emitter::emitIf(const Stmt& s) {
  if (!s.cond || !s.thenBody)
    return fail("an if statement lacks its condition or body");
  if (m_lanes > 0 && isLaneDependent(s.cond)) {
    // Predication: both branches run with the lanes where they apply as the access mask.
    llvm::Value* cond = splat(emitExpr(s.cond), m_lanes);
    if (cond->getType()->getScalarType() != m_b.getInt1Ty())
      return fail("an if condition is not a bool");
    llvm::Value* outer = m_mask;
    llvm::Value* thenMask = outer ? m_b.CreateAnd(outer, cond, "if.mask") : cond;
    m_mask = thenMask;
    emitStmt(s.thenBody);
    if (s.elseBody) {
      llvm::Value* notCond = m_b.CreateNot(cond);
      m_mask = outer ? m_b.CreateAnd(outer, notCond, "else.mask") : notCond;
      emitStmt(s.elseBody);
    }
    m_mask = outer;
    return;
  }
  llvm::Value* cond = emitExpr(s.cond);
  if (cond->getType() != m_b.getInt1Ty())
    return fail("an if condition is not a scalar bool");
  llvm::Function* fn = m_fs.fn;
  auto* thenBb = llvm::BasicBlock::Create(m_ctx, "if.then", fn);
  auto* elseBb = s.elseBody ? llvm::BasicBlock::Create(m_ctx, "if.else", fn) : nullptr;
  auto* merge = llvm::BasicBlock::Create(m_ctx, "if.end", fn);
  m_b.CreateCondBr(cond, thenBb, elseBb ? elseBb : merge);
  m_b.SetInsertPoint(thenBb);
  emitStmt(s.thenBody);
  m_b.CreateBr(merge);
  if (elseBb) {
    m_b.SetInsertPoint(elseBb);
    emitStmt(s.elseBody);
    m_b.CreateBr(merge);
  }
  m_b.SetInsertPoint(merge);
}

void Emitter::emitLet(const Stmt& s) {
  if (!s.value)
    return fail("let " + s.var + " has no value");
  Binding b;
  b.range = rangeOf(s.value);
  if (isLaneDependent(s.value)) {
    b.lane = true;
    if (s.value->type.dtype == DType::I64) {
      Affine a = emitAffine(s.value);
      if (!a.vector && a.lanes > 0) {
        b.affine = true;
        b.base = a.base;
        b.stride = a.stride;
      } else {
        b.value = vectorOf(a);
      }
    } else {
      b.value = emitExpr(s.value);
    }
  } else {
    b.value = emitExpr(s.value);
    if (b.value)
      b.value->setName(s.var);
  }
  auto saved = m_vars.find(s.var) != m_vars.end() ? std::optional<Binding>(m_vars[s.var]) : std::nullopt;
  m_vars[s.var] = b;
  emitStmt(s.body);
  if (saved)
    m_vars[s.var] = *saved;
  else
    m_vars.erase(s.var);
}

void Emitter::emitAlloc(const Stmt& s) {
  if (s.buffer && s.buffer->kind == Buffer::Kind::Shared)
    return emitSharedAlloc(s);
  if (!s.buffer || s.buffer->kind != Buffer::Kind::Local)
    return fail("an alloc without a local buffer");
  const Buffer& buf = *s.buffer;
  int64_t count = std::max<int64_t>(buf.numElements(), 1);
  // Inside a widened loop every lane gets its own copy: element e of lane l is at e*lanes + l,
  // so a lane-invariant index reads and writes one contiguous vector.
  int lanes = m_lanes;
  count *= std::max(lanes, 1);
  llvm::Type* t = memoryType(buf.dtype);
  int64_t bytes = count * int64_t(dtypeSize(buf.dtype));
  std::string name = llvmSafeName(buf.name);
  llvm::Value* storage = nullptr;
  llvm::FunctionCallee freeFn;
  if (bytes <= kMaxStackLocalBytes) {
    storage = entryAlloca(t, i64(count), name);
  } else if (m_options.gpu) {
    return fail("local buffer " + buf.name + " needs " + std::to_string(bytes) +
                " bytes per thread, more than GPU code keeps in a thread's local memory (" +
                std::to_string(kMaxStackLocalBytes) + ")");
  } else {
    llvm::FunctionCallee mallocFn = m_module.getOrInsertFunction(
        "malloc", llvm::FunctionType::get(m_b.getPtrTy(), {m_b.getInt64Ty()}, false));
    freeFn = m_module.getOrInsertFunction(
        "free", llvm::FunctionType::get(m_b.getVoidTy(), {m_b.getPtrTy()}, false));
    storage = m_b.CreateCall(mallocFn, {i64(bytes)}, name);
  }
  // Local names are unique within a kernel (never shadowed), so the scope just ends here.
  m_fs.locals[buf.name] = storage;
  m_fs.localLanes[buf.name] = lanes;
  m_localElements[buf.name] = count;
  emitStmt(s.body);
  m_localElements.erase(buf.name);
  m_fs.localLanes.erase(buf.name);
  if (freeFn)
    m_b.CreateCall(freeFn, {storage});
  m_fs.locals.erase(buf.name);
}


} // namespace loopemit

Expected<llvm::Function*> emitLoopKernel(llvm::Module& module, const Kernel& kernel,
                                         const LoopEmitOptions& options) {
  return loopemit::Emitter(module, kernel, options).run();
}

} // namespace fb::cg
