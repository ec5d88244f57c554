// Describing each kernel's compiled schedule from its lowered loop nest and GEMM spec.
#include "app/workbench/KernelSchedule.h"
#include "app/workbench/TuningLog.h"

#include "codegen/exec/KernelModules.h"
#include "codegen/gemm/DirectConv.h"
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/GemmPlan.h"
#include "codegen/gemm/Int8GemmEmitter.h"
#include "codegen/gemm/Winograd.h"
#include "codegen/loops/LoopIR.h"

#include <algorithm>

namespace fb::workbench {

namespace {

void collectLoops(const cg::StmtPtr& s, int depth, std::vector<LoopDescription>& out) {
  if (!s)
    return;
  switch (s->kind) {
  case cg::Stmt::Kind::For: {
    LoopDescription d;
    d.var = s->var;
    int64_t extent = 0;
    if (s->extent && s->extent->isIntConst(&extent))
      d.extent = extent;
    d.kind = cg::forKindName(s->forKind);
    d.depth = depth;
    out.push_back(std::move(d));
    collectLoops(s->body, depth + 1, out);
    return;
  }
  case cg::Stmt::Kind::Block:
    for (const cg::StmtPtr& x : s->stmts)
      collectLoops(x, depth, out);
    return;
  case cg::Stmt::Kind::If:
    collectLoops(s->thenBody, depth, out);
    collectLoops(s->elseBody, depth, out);
    return;
  case cg::Stmt::Kind::Let:
  case cg::Stmt::Kind::Alloc:
    collectLoops(s->body, depth, out);
    return;
  case cg::Stmt::Kind::Store:
  case cg::Stmt::Kind::Barrier:
    return;
  }
}

} // namespace

Expected<std::vector<KernelSchedule>> describeSchedules(const Graph& graph,
                                                        const CompileSettings& settings,
                                                        const JobControl* job) {
  FB_ASSIGN_OR_RETURN(cg::CompileOptions co, compileOptionsFor(settings, {}));
  co.lower.scheduleOverrides = scheduleWithTuningLog(graph, settings, {});
  reportProgress(job, 0.0, "lower");
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> bound, cg::bindStaticShapes(graph, {}, co.dims));
  FB_ASSIGN_OR_RETURN(std::vector<cg::Kernel> kernels, cg::lowerGraph(*bound, co.lower));
  // Pack as the backend does: packing pins the register tile the code is generated with.
  FB_TRY(cg::prepareKernels(kernels, co.emit.useGemm, co.target));
  FB_TRY(checkCancelled(job, "describe schedules"));
  std::vector<KernelSchedule> out;
  out.reserve(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    const cg::Kernel& k = kernels[i];
    KernelSchedule s;
    s.index = i;
    s.kernel = k.name;
    s.opSummary = k.opSummary;
    s.node = i < bound->nodes().size() ? bound->nodes()[i]->id() : 0;
    s.nodes = k.nodes;
    s.override = k.schedule;
    s.interpreted = k.interpreted;
    s.loopsText = cg::kernelLoopText(k);
    collectLoops(k.body, 0, s.loops);
    if (k.int8) {
      s.int8 = true;
      s.blocking = cg::describeInt8Blocking(k);
    }
    if (k.gemm && co.emit.useGemm) {
      if (auto blocking = cg::describeGemmBlocking(k); blocking.ok())
        s.blocking = *blocking;
      s.depthwise = cg::isDepthwise(*k.gemm);
      if (!s.depthwise) {
        if (k.gemm->conv)
          s.convAlgorithm = k.gemm->winograd ? (k.gemm->winograd->m == 4 ? "winograd4" : "winograd")
                            : k.gemm->direct ? "direct"
                                             : "im2col";
        s.winogradApplies = cg::winogradApplies(*k.gemm);
        s.directApplies =
            cg::directConvApplies(*k.gemm, k.gemm->vectorRegisters > 0 ? k.gemm->vectorRegisters
                                                                       : cg::hostVectorRegisters());
        // A spec the generator rejects compiles from its loop nest (KernelModules.h).
        // A Winograd kernel's blocking is that of its GEMMs.
        auto planOf = [&]() -> Expected<cg::GemmPlan> {
          if (!k.gemm->winograd)
            return cg::planGemm(k, co.threads);
          FB_ASSIGN_OR_RETURN(cg::WinogradGemm wg, cg::winogradGemm(k));
          return wg.plan;
        };
        // A direct convolution has no GEMM blocking (its tile is in `blocking`).
        Expected<cg::GemmPlan> plan =
            k.gemm->direct ? Expected<cg::GemmPlan>(makeError("direct")) : planOf();
        if (k.gemm->direct) {
          s.gemm = true;
          s.gemmParallel = k.gemm->parallel;
          s.mr = k.gemm->direct->lanes *
                 k.gemm->direct->ocVectors; // the tile's output channels (`mr=`)
        }
        if (plan.ok()) {
          s.gemm = true;
          s.mr = plan->mr;
          s.nr = plan->nr;
          s.mc = plan->mc;
          s.kc = plan->kc;
          s.nc = plan->nc;
          s.gemmParallel = plan->parallel;
          s.columnTile = plan->mVectors;
        }
      }
    }
    out.push_back(std::move(s));
  }
  reportProgress(job, 1.0, "described");
  return out;
}

std::vector<cg::ScheduleOverride> withOverride(std::vector<cg::ScheduleOverride> current,
                                               const cg::ScheduleOverride& update) {
  auto it = std::find_if(current.begin(), current.end(), [&](const cg::ScheduleOverride& o) {
    return o.kernel == update.kernel;
  });
  if (update.directives.empty()) {
    if (it != current.end())
      current.erase(it);
  } else if (it != current.end()) {
    *it = update;
  } else {
    current.push_back(update);
  }
  return current;
}

} // namespace fb::workbench
