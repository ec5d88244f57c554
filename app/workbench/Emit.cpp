// Emitting a snapshot's generated code as one module of the requested kind.
#include "app/workbench/Emit.h"
#include "app/workbench/TuningLog.h"
#include "codegen/exec/GpuModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/llvm/ObjectEmitter.h"

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <cassert>

namespace fb::workbench {

const char* codeKindName(CodeKind kind) {
  switch (kind) {
  case CodeKind::Loops: return "loops";
  case CodeKind::Llvm: return "llvm";
  case CodeKind::LlvmRaw: return "llvm-raw";
  case CodeKind::Assembly: return "asm";
  case CodeKind::Object: return "obj";
  case CodeKind::Ptx: return "ptx";
  }
  __builtin_unreachable();
}

std::optional<CodeKind> codeKindFromName(const std::string& name) {
  for (CodeKind k : {CodeKind::Loops, CodeKind::Llvm, CodeKind::LlvmRaw, CodeKind::Assembly,
                     CodeKind::Object, CodeKind::Ptx})
    if (name == codeKindName(k))
      return k;
  return std::nullopt;
}

namespace {

/// The GPU's code: loops as scheduled for the GPU, the launches' LLVM IR (NVPTX), or PTX.
Expected<EmittedCode> emitGpuCode(const Graph& graph, const EmitRequest& request,
                                  const cg::CompileOptions& co, const JobControl* job) {
  EmittedCode out;
  out.kind = request.kind;
  out.cpu = co.target.cpu;
  reportProgress(job, 0.0, "lower");
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> bound, cg::bindStaticShapes(graph, {}, co.dims));
  cg::LowerOptions lo = co.lower;
  lo.defaultSchedules = false;
  lo.gemmSpecs = false;
  FB_ASSIGN_OR_RETURN(std::vector<cg::Kernel> kernels, cg::lowerGraph(*bound, lo));
  FB_TRY(cg::prepareKernels(kernels, false));
  out.kernels = kernels.size();
  for (size_t i = 0; i < kernels.size(); ++i)
    out.kernelList.push_back({kernels[i].name, kernels[i].opSummary, bound->nodes()[i]->id(),
                              kernels[i].nodes, kernels[i].interpreted});
  FB_TRY(checkCancelled(job, "emit"));
  reportProgress(job, 0.3, "emit");
  const int level = request.kind == CodeKind::LlvmRaw ? -1 : co.llvmOptLevel;
  FB_ASSIGN_OR_RETURN(std::unique_ptr<cg::GpuModel> model,
                      cg::GpuModel::build(kernels, {}, 0, 0, co.target, std::max(level, 0)));
  const std::string head = "// " + std::to_string(kernels.size()) + " kernels in " +
                           std::to_string(model->launches().size()) + " launches, target " +
                           co.target.triple + " (" + co.target.cpu + ")";
  switch (request.kind) {
  case CodeKind::Loops:
    out.text = "# " + head.substr(3) + "\n" + cg::gpuLoopsText(kernels, model->launches());
    break;
  case CodeKind::Ptx:
    out.text = head + ", LLVM O" + std::to_string(co.llvmOptLevel) + "\n" + model->ptx();
    break;
  case CodeKind::Llvm:
  case CodeKind::LlvmRaw: {
    std::vector<cg::Kernel> codes;
    for (const cg::GpuLaunch& l : model->launches())
      codes.push_back(l.code);
    cg::KernelEmitOptions eo;
    eo.useGemm = false;
    FB_ASSIGN_OR_RETURN(out.text,
                        cg::modelLlvmText(codes, request.moduleName, co.target, eo, level));
    break;
  }
  case CodeKind::Assembly:
  case CodeKind::Object:
    return makeError("--emit ", codeKindName(request.kind), " is CPU code; for ", co.target.cpu,
                     " use --emit ptx");
  }
  reportProgress(job, 1.0, "emitted");
  return out;
}

} // namespace

Expected<EmittedCode> emitCode(const Graph& graph, const EmitRequest& request,
                               const JobControl* job) {
  EmitRequest req = request;
  if (req.kind == CodeKind::Ptx)
    req.settings.forGpu = true;
  FB_ASSIGN_OR_RETURN(cg::CompileOptions co, compileOptionsFor(req.settings, {}));
  co.lower.scheduleOverrides = scheduleWithTuningLog(graph, req.settings, {});
  if (req.settings.forGpu)
    return emitGpuCode(graph, req, co, job);
  EmittedCode out;
  out.kind = request.kind;
  out.cpu = co.target.cpu;
  reportProgress(job, 0.0, "lower");
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> bound, cg::bindStaticShapes(graph, {}, co.dims));
  FB_ASSIGN_OR_RETURN(std::vector<cg::Kernel> kernels, cg::lowerGraph(*bound, co.lower));
  // Pack as the backend will, so GEMM kernels also show the blocking they compile with.
  FB_TRY(cg::prepareKernels(kernels, co.emit.useGemm, co.target));
  out.kernels = kernels.size();
  // lowerGraph makes one kernel per top-level node, in the graph's order.
  assert(kernels.size() == bound->nodes().size() && "one kernel per node");
  for (size_t i = 0; i < kernels.size(); ++i)
    out.kernelList.push_back({kernels[i].name, kernels[i].opSummary, bound->nodes()[i]->id(),
                              kernels[i].nodes, kernels[i].interpreted});
  FB_TRY(checkCancelled(job, "emit"));
  reportProgress(job, 0.3, "emit");
  const int level = request.kind == CodeKind::LlvmRaw ? -1 : co.llvmOptLevel;
  switch (request.kind) {
  case CodeKind::Loops:
    out.text = cg::kernelLoopsText(kernels);
    break;
  case CodeKind::Llvm:
  case CodeKind::LlvmRaw: {
    FB_ASSIGN_OR_RETURN(out.text, cg::modelLlvmText(kernels, request.moduleName, co.target,
                                                    co.emit, level));
    break;
  }
  case CodeKind::Assembly:
  case CodeKind::Object: {
    FB_ASSIGN_OR_RETURN(cg::JitModule m, cg::buildModelModule(kernels, request.moduleName,
                                                              co.target, co.emit, level));
    FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                        cg::createTargetMachine(co.target, std::max(level, 0)));
    if (request.kind == CodeKind::Assembly) {
      FB_ASSIGN_OR_RETURN(std::string asmText, cg::compileToAssembly(*m.module, *tm));
      out.text = "# " + std::to_string(kernels.size()) + " kernels, target " + co.target.triple +
                 " (" + co.target.cpu + "), LLVM O" + std::to_string(level) + "\n" + asmText;
      break;
    }
    // An interpreted kernel (If, Loop, Scan) has no code an object file could hold.
    for (const cg::Kernel& k : kernels)
      if (k.interpreted)
        return makeUnsupported("--emit obj: kernel ", k.name, " (", k.opSummary,
                               ") has no ahead-of-time code (it runs through the interpreter); "
                               "control flow runs only in the JIT executor");
    FB_ASSIGN_OR_RETURN(out.object, cg::compileToObject(*m.module, *tm));
    cg::WeightBlob weights = cg::packWeights(kernels);
    out.header =
        cg::kernelHeaderText(kernels, request.headerGuard, weights, request.weightsFileName);
    out.weights = std::move(weights.bytes);
    break;
  }
  case CodeKind::Ptx:
    break; // emitGpuCode
  }
  reportProgress(job, 1.0, "emitted");
  return out;
}

} // namespace fb::workbench
