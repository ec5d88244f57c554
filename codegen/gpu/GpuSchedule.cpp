// GPU schedules: each top-level nest is a launch; its outer independent loops are fused into one
// loop over the GPU's threads.
#include "codegen/gpu/GpuSchedule.h"
#include "codegen/gpu/GpuScheduleInternal.h"
#include "codegen/loops/LoopPrinter.h"
#include "codegen/loops/ScheduleInternal.h"
#include "codegen/loops/ScheduleOverride.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <sstream>

namespace fb::cg {

namespace gpu_detail {

using namespace schedule_detail;

bool isVarNamed(const ExprPtr& e, const std::string& name) {
  return e && e->kind == Expr::Kind::Var && e->name == name;
}

void forEachLoad(const ExprPtr& e, const std::function<void(const Expr&)>& fn) {
  if (!e)
    return;
  if (e->kind == Expr::Kind::Load)
    fn(*e);
  for (const ExprPtr& o : e->operands)
    forEachLoad(o, fn);
}

namespace {

/// True when every load inside `loop` of an argument the loop also stores to reads through the
/// same view at the same indices as a store there: each iteration reads only elements it writes
/// itself (an accumulation), never one another iteration writes (a scan, a shift).
bool readsOnlyOwnWrites(const Stmt& loop) {
  std::vector<const Stmt*> stores;
  forEachStmt(loop.body, [&](const Stmt& x) {
    if (x.kind == Stmt::Kind::Store && x.buffer->kind == Buffer::Kind::Arg)
      stores.push_back(&x);
  });
  bool ok = true;
  auto check = [&](const Expr& load) {
    if (load.buffer->kind != Buffer::Kind::Arg)
      return;
    bool written = false, own = false;
    for (const Stmt* st : stores) {
      if (st->buffer->arg != load.buffer->arg)
        continue;
      written = true;
      bool same =
          st->buffer->name == load.buffer->name && st->indices.size() == load.operands.size();
      for (size_t d = 0; same && d < st->indices.size(); ++d)
        same = equal(st->indices[d], load.operands[d]);
      own |= same;
    }
    ok &= !written || own;
  };
  forEachStmt(loop.body, [&](const Stmt& x) {
    forEachLoad(x.value, check);
    forEachLoad(x.cond, check);
    forEachLoad(x.min, check);
    forEachLoad(x.extent, check);
    for (const ExprPtr& i : x.indices)
      forEachLoad(i, check);
  });
  return ok;
}

} // namespace

bool threadsIndependent(const Stmt& loop) {
  return iterationsIndependent(loop) && readsOnlyOwnWrites(loop);
}

namespace {

/// True when `e` is an injective function of `v` alone: v, or v plus, minus or times (non-zero)
/// constants, nested (the channel offset of a Concat, the stride of a strided write).
bool injectiveIn(const ExprPtr& e, const std::string& v) {
  if (isVarNamed(e, v))
    return true;
  if (!e || e->kind != Expr::Kind::Binary || e->operands.size() != 2)
    return false;
  const ExprPtr& a = e->operands[0];
  const ExprPtr& b = e->operands[1];
  int64_t c = 0;
  switch (e->binaryOp) {
  case BinaryOp::Add:
    return (b->isIntConst() && injectiveIn(a, v)) || (a->isIntConst() && injectiveIn(b, v));
  case BinaryOp::Sub: return b->isIntConst() && injectiveIn(a, v);
  case BinaryOp::Mul:
    return (b->isIntConst(&c) && c != 0 && injectiveIn(a, v)) ||
           (a->isIntConst(&c) && c != 0 && injectiveIn(b, v));
  default: return false;
  }
}

} // namespace

bool writesThroughPlainIndices(const StmtPtr& body, const std::vector<std::string>& vars) {
  bool ok = true, any = false;
  forEachStmt(body, [&](const Stmt& x) {
    if (x.kind != Stmt::Kind::Store || x.buffer->kind != Buffer::Kind::Arg)
      return;
    any = true;
    for (const std::string& v : vars) {
      bool plain = false;
      for (const ExprPtr& i : x.indices)
        plain |= injectiveIn(i, v);
      ok &= plain;
    }
  });
  return ok && any;
}

} // namespace gpu_detail

namespace {

using namespace schedule_detail;
using namespace gpu_detail;

/// The perfectly nested loops at the top of `nest` whose iterations may all run on different
/// threads, outermost first: the chain stops at the first loop that is not independent, not
/// serial with constant bounds, or below which a store does not name every variable of the
/// chain as a plain index. Starts with `nest` itself (checked by the caller).
std::vector<const Stmt*> independentChain(const StmtPtr& nest) {
  std::vector<const Stmt*> chain{nest.get()};
  std::vector<std::string> vars{nest->var};
  int64_t total = 0;
  nest->extent->isIntConst(&total);
  for (const Stmt* cur = nest.get(); fusable(*cur); cur = cur->body.get()) {
    const Stmt& inner = *cur->body;
    std::vector<std::string> more = vars;
    more.push_back(inner.var);
    int64_t e = 0;
    inner.extent->isIntConst(&e);
    if (!threadsIndependent(inner) || !writesThroughPlainIndices(inner.body, more) ||
        __builtin_mul_overflow(total, e, &total))
      break;
    vars = std::move(more);
    chain.push_back(&inner);
  }
  return chain;
}

/// e with every Load of the local `from` replaced by a load of `to` at [lane, indices...].
ExprPtr rebufferExpr(const ExprPtr& e, const std::string& from, const BufferPtr& to,
                     const std::string& lane) {
  if (!e)
    return e;
  std::vector<ExprPtr> ops;
  for (const ExprPtr& o : e->operands)
    ops.push_back(rebufferExpr(o, from, to, lane));
  if (e->kind == Expr::Kind::Load && e->buffer && e->buffer->name == from) {
    ops.insert(ops.begin(), var(lane));
    return load(to, std::move(ops));
  }
  auto c = std::make_shared<Expr>(*e);
  c->operands = std::move(ops);
  return c;
}

/// s with every access to the local `from` going to `to` at [lane, indices...].
StmtPtr rebuffer(const StmtPtr& s, const std::string& from, const BufferPtr& to,
                 const std::string& lane) {
  if (!s)
    return s;
  auto c = std::make_shared<Stmt>(*s);
  auto ex = [&](const ExprPtr& e) { return rebufferExpr(e, from, to, lane); };
  c->min = ex(s->min);
  c->extent = ex(s->extent);
  c->value = ex(s->value);
  c->cond = ex(s->cond);
  for (ExprPtr& i : c->indices)
    i = ex(i);
  if (s->kind == Stmt::Kind::Store && s->buffer && s->buffer->name == from) {
    c->buffer = to;
    c->indices.insert(c->indices.begin(), var(lane));
  }
  c->body = rebuffer(s->body, from, to, lane);
  c->thenBody = rebuffer(s->thenBody, from, to, lane);
  c->elseBody = rebuffer(s->elseBody, from, to, lane);
  for (StmtPtr& x : c->stmts)
    x = rebuffer(x, from, to, lane);
  return c;
}

/// Unroll-and-jam: `s` run for each `lane` in [0, lanes), with the lane loop pushed down
/// through blocks, loops whose bounds do not depend on it and local allocations (which get one
/// copy per lane), to unrolled loops around the statements that compute something. Valid because
/// the lanes are iterations of a thread-independent loop: any interleaving of them is correct.
/// The copies of a reduction then share one loop, so the loads they have in common are made once.
StmtPtr jam(const StmtPtr& s, const std::string& lane, int64_t lanes) {
  switch (s->kind) {
  case Stmt::Kind::Block: {
    std::vector<StmtPtr> parts;
    for (const StmtPtr& x : s->stmts)
      parts.push_back(jam(x, lane, lanes));
    return block(std::move(parts));
  }
  case Stmt::Kind::For:
    if (!usesVar(s->min, lane) && !usesVar(s->extent, lane)) {
      auto c = std::make_shared<Stmt>(*s);
      c->body = jam(s->body, lane, lanes);
      return c;
    }
    break;
  case Stmt::Kind::Alloc: {
    std::vector<int64_t> sizes = s->buffer->sizes;
    sizes.insert(sizes.begin(), lanes);
    BufferPtr copies = makeLocalBuffer(s->buffer->name, s->buffer->dtype, sizes);
    return alloc(copies, jam(rebuffer(s->body, s->buffer->name, copies, lane), lane, lanes));
  }
  default:
    break;
  }
  return forLoop(lane, intImm(0), intImm(lanes), ForKind::Unrolled, s);
}

/// Loads of arguments in s that do not depend on `v`: what a register tile over `v` shares.
int sharedLoads(const StmtPtr& s, const std::string& v) {
  int n = 0;
  auto count = [&](const Expr& load) {
    n += load.buffer->kind == Buffer::Kind::Arg && !usesVar(std::make_shared<Expr>(load), v);
  };
  forEachStmt(s, [&](const Stmt& x) {
    forEachLoad(x.value, count);
    forEachLoad(x.cond, count);
  });
  return n;
}

/// The GPU schedule of a chain of independent loops around `body`: up to two of the chain's
/// loops whose iterations share loads (a matrix product's rows share B, its columns A) are
/// register-tiled (each thread computes a 4x4, 4x2, ... tile by unroll-and-jam), as long as
/// enough threads remain to fill a GPU; then the loops are fused into one GpuThreads loop.
/// "Enough" is a large GPU's resident threads (an H100/H200 holds 132 x 2048): measured on an
/// H200 (2026-11-27, torchvision ResNet-18/50 and MobileNet-v2 at 224x224, CUDA events), a 4x2
/// tile that left 25,088 threads took 169 us on a 56x56x64 3x3 convolution against 50 us with
/// one output per thread (200,704 threads); a 1x1 layer of 75,264 outputs tiled to 18,816
/// threads 23 against 12.5 us. A thread's reduction is a chain of dependent adds whose latency
/// only more threads hide; the loads a tile shares mostly hit L1 anyway.
StmtPtr mapChainToThreads(const std::vector<const Stmt*>& chain, StmtPtr body,
                          const GpuScheduleOptions& options) {
  const int64_t minThreads = options.registerTileForced ? 1 : int64_t(1) << 17;
  struct Dim {
    std::string var;
    int64_t min = 0, extent = 0;
    std::string comment;
  };
  std::vector<Dim> dims;
  int64_t threads = 1;
  for (const Stmt* l : chain) {
    Dim d{l->var, 0, 0, l->comment};
    l->min->isIntConst(&d.min);
    l->extent->isIntConst(&d.extent);
    threads *= d.extent;
    dims.push_back(d);
  }
  // The two dims whose tiles share the most loads, inner ones first on ties. Only a body with a
  // loop (a reduction) is tiled: there the shared loads repeat on every trip; an elementwise
  // body would only trade a load for registers.
  bool hasLoop = false;
  forEachStmt(body, [&](const Stmt& x) { hasLoop |= x.kind == Stmt::Kind::For; });
  std::vector<std::pair<int, size_t>> scored;
  for (size_t i = 0; i < dims.size() && hasLoop; ++i)
    if (int n = sharedLoads(body, dims[i].var); n > 0)
      scored.emplace_back(n, i);
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  });
  for (size_t t = 0; t < scored.size() && t < 2; ++t) {
    Dim& d = dims[scored[t].second];
    for (int64_t tile : {8, 4, 2}) {
      if (tile > options.registerTile || d.extent % tile != 0 || threads / tile < minThreads)
        continue;
      const std::string outer = d.var + "_t", lane = d.var + "_r";
      body = substitute(body, d.var,
                        add(intImm(d.min), add(mul(var(outer), intImm(tile)), var(lane))));
      body = jam(body, lane, tile);
      d.var = outer;
      d.min = 0;
      d.extent /= tile;
      threads /= tile;
      break;
    }
  }
  StmtPtr nest = body;
  for (size_t i = dims.size(); i-- > 0;)
    nest = forLoop(dims[i].var, intImm(dims[i].min), intImm(dims[i].extent), ForKind::Serial, nest,
                   dims[i].comment);
  for (size_t i = 1; i < dims.size(); ++i) {
    auto fused = fuseOne(nest);
    if (!fused.ok())
      break;
    nest = *fused;
  }
  auto c = std::make_shared<Stmt>(*nest);
  c->forKind = ForKind::GpuThreads;
  return c;
}

/// `s` with every ForKind other than Serial and Unrolled made Serial (a CPU schedule override's
/// parallel or vectorized loops run inside one GPU thread).
StmtPtr serialized(const StmtPtr& s) {
  if (!s)
    return s;
  auto c = std::make_shared<Stmt>(*s);
  if (c->kind == Stmt::Kind::For && c->forKind != ForKind::Unrolled)
    c->forKind = ForKind::Serial;
  c->body = serialized(s->body);
  c->thenBody = serialized(s->thenBody);
  c->elseBody = serialized(s->elseBody);
  for (StmtPtr& x : c->stmts)
    x = serialized(x);
  return c;
}

} // namespace

StmtPtr scheduleNestForGpu(const StmtPtr& nestIn, const GpuScheduleOptions& options) {
  StmtPtr nest = serialized(nestIn);
  int64_t extent = 0;
  if (nest->kind == Stmt::Kind::For && nest->extent->isIntConst(&extent) && extent > 1 &&
      threadsIndependent(*nest)) {
    std::vector<const Stmt*> chain = independentChain(nest);
    StmtPtr body = cacheReductions(chain.back()->body);
    if (auto p = tileThroughSharedMemory(chain, body, options))
      return p->body;
    if (auto p = blockReduceRows(chain, body, options))
      return p->body;
    return mapChainToThreads(chain, body, options);
  }
  // No loop to spread: a reduction to one element runs in one block (its threads splitting
  // the reduction) where it can, else the whole nest runs in the launch's first thread.
  StmtPtr body = cacheReductions(nest);
  if (auto p = blockReduceRows({}, body, options))
    return p->body;
  return forLoop("gpu_thread", intImm(0), intImm(1), ForKind::GpuThreads, body, "one thread");
}

Expected<std::vector<GpuLaunch>> gpuLaunchesOf(const Kernel& kernel, size_t kernelIndex,
                                               const GpuScheduleOptions& defaults) {
  // The kernel's own override (block=, regtile=) over the defaults.
  GpuScheduleOptions options = defaults;
  if (!kernel.schedule.empty()) {
    FB_ASSIGN_OR_RETURN(std::vector<ScheduleOverride> overrides,
                        parseScheduleOverrides("*:" + kernel.schedule));
    for (const ScheduleOverride& o : overrides)
      for (const ScheduleDirective& d : o.directives) {
        int64_t v = 0; // checked by lowering (applyScheduleOverride)
        std::from_chars(d.value.data(), d.value.data() + d.value.size(), v);
        if (d.name == "block" && v >= 32 && v <= kGpuMaxBlockSize)
          options.blockSize = int(v);
        if (d.name == "regtile" && v >= 1) {
          options.registerTile = v;
          options.registerTileForced = true;
        }
      }
  }
  if (kernel.interpreted)
    return makeUnsupported("kernel ", kernel.name, ": ", kernel.opSummary,
                           " (control flow) runs through the interpreter, which the gpu "
                           "backend does not do yet");
  if (!kernel.body)
    return makeError("kernel ", kernel.name, " has no loop nest");
  std::vector<StmtPtr> nests;
  if (kernel.body->kind == Stmt::Kind::Block)
    nests = kernel.body->stmts;
  else
    nests.push_back(kernel.body);
  std::vector<GpuLaunch> launches;
  for (size_t i = 0; i < nests.size(); ++i) {
    StmtPtr scheduled = scheduleNestForGpu(nests[i], options);
    int64_t threads = 1;
    scheduled->extent->isIntConst(&threads);
    int64_t blockThreads = 0; // the threads of a block program (GpuBlocks around GpuLanes)
    if (scheduled->forKind == ForKind::GpuBlocks)
      forEachStmt(scheduled, [&](const Stmt& x) {
        if (x.kind == Stmt::Kind::For && x.forKind == ForKind::GpuLanes)
          x.extent->isIntConst(&blockThreads);
      });
    // Consecutive nests that each run on one thread run one after the other on that thread:
    // the same order as separate launches, in one (a Split into 3,000 single values is then
    // one kernel, not 3,000).
    if (threads == 1 && scheduled->forKind == ForKind::GpuThreads && !launches.empty() &&
        launches.back().threads == 1 && launches.back().code.body->forKind == ForKind::GpuThreads) {
      auto merged = std::make_shared<Stmt>(*launches.back().code.body);
      merged->body = block({merged->body, scheduled->body});
      launches.back().code.body = merged;
      continue;
    }
    GpuLaunch launch;
    launch.kernel = kernelIndex;
    launch.code = kernel;
    launch.code.gemm.reset();
    launch.code.name = nests.size() == 1 ? kernel.name : kernel.name + "_s" + std::to_string(i);
    launch.code.body = scheduled;
    if (blockThreads > 0) {
      launch.threads = threads * blockThreads;
      launch.blockSize = unsigned(blockThreads);
      launch.blocks = unsigned(std::min<int64_t>(threads, options.maxBlocks));
      launches.push_back(std::move(launch));
      continue;
    }
    launch.threads = std::max<int64_t>(threads, 1);
    int64_t block = std::min<int64_t>(options.blockSize, (launch.threads + 31) / 32 * 32);
    launch.blockSize = unsigned(block);
    launch.blocks =
        unsigned(std::min<int64_t>((launch.threads + block - 1) / block, options.maxBlocks));
    launches.push_back(std::move(launch));
  }
  return launches;
}

int gpuMinBlocksPerMultiprocessor(const Kernel& launchCode) {
  bool tiles = false;
  int64_t rounds = 0;
  if (launchCode.body)
    forEachStmt(launchCode.body, [&](const Stmt& s) {
      if (s.kind != Stmt::Kind::For)
        return;
      if (s.forKind == ForKind::GpuBlocks && s.comment == kSharedTileComment)
        tiles = true;
      if (s.var == kSharedTileRoundVar && s.extent && s.extent->kind == Expr::Kind::IntImm)
        rounds = s.extent->intValue;
    });
  return tiles && rounds > 2 ? 3 : 0;
}

std::string gpuLoopsText(const std::vector<Kernel>& kernels,
                         const std::vector<GpuLaunch>& launches) {
  std::ostringstream os;
  size_t next = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel& kern = kernels[k];
    os << "# " << kern.name << " (" << kern.opSummary << ")";
    size_t count = 0;
    for (size_t i = next; i < launches.size() && launches[i].kernel == k; ++i)
      ++count;
    os << ": " << count << (count == 1 ? " launch\n" : " launches\n");
    for (; next < launches.size() && launches[next].kernel == k; ++next) {
      const GpuLaunch& l = launches[next];
      os << "# launch " << l.code.name << ": grid " << l.blocks << " x block " << l.blockSize;
      if (l.code.body && l.code.body->forKind == ForKind::GpuBlocks)
        os << " threads, " << l.threads / l.blockSize << " blocks of work\n";
      else
        os << " threads for " << l.threads << (l.threads == 1 ? " iteration\n" : " iterations\n");
      os << printKernel(l.code);
    }
    os << "\n";
  }
  return os.str();
}

} // namespace fb::cg
