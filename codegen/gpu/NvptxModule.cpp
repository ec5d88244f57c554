// Kernel annotations and libdevice math for NVPTX modules.
#include "codegen/gpu/NvptxModule.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

namespace fb::cg {

void annotateGpuKernel(llvm::Function& fn, int maxThreadsPerBlock, int minBlocksPerMultiprocessor) {
  llvm::Module& m = *fn.getParent();
  llvm::LLVMContext& ctx = m.getContext();
  llvm::NamedMDNode* md = m.getOrInsertNamedMetadata("nvvm.annotations");
  auto i32 = [&](int v) {
    return llvm::ConstantAsMetadata::get(
        llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), uint64_t(v)));
  };
  md->addOperand(llvm::MDNode::get(
      ctx, {llvm::ValueAsMetadata::get(&fn), llvm::MDString::get(ctx, "kernel"), i32(1)}));
  md->addOperand(
      llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(&fn), llvm::MDString::get(ctx, "maxntidx"),
                              i32(maxThreadsPerBlock)}));
  if (minBlocksPerMultiprocessor > 0)
    md->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(&fn),
                                           llvm::MDString::get(ctx, "minctasm"),
                                           i32(minBlocksPerMultiprocessor)}));
}

std::string libdevicePath() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (const char* p = std::getenv("FUSEBOX_LIBDEVICE"); p && *p)
    return fs::exists(p, ec) ? std::string(p) : std::string();
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* p = std::getenv(var); p && *p)
      roots.push_back(std::string(p) + "/nvvm/libdevice");
  roots.push_back("/usr/local/cuda/nvvm/libdevice");
  roots.push_back("/usr/lib/nvidia-cuda-toolkit/libdevice");
  roots.push_back("/usr/lib/cuda/nvvm/libdevice");
  for (const std::string& r : roots) {
    fs::path p = fs::path(r) / "libdevice.10.bc";
    if (fs::exists(p, ec))
      return p.string();
  }
  return {};
}

namespace {

/// libdevice's name for a math function or intrinsic the NVPTX backend cannot lower.
const std::map<std::string, std::string>& deviceMathNames() {
  static const std::map<std::string, std::string> names = [] {
    std::map<std::string, std::string> m;
    for (const char* f : {"exp",   "exp2",  "exp10", "log",  "log2", "log10", "log1p", "sin",
                          "cos",   "tan",   "asin",  "acos", "atan", "sinh",  "cosh",  "tanh",
                          "asinh", "acosh", "atanh", "pow",  "erf",  "expm1"}) {
      m[std::string(f) + "f"] = std::string("__nv_") + f + "f";
      m[std::string(f)] = std::string("__nv_") + f;
      m[std::string("llvm.") + f + ".f32"] = std::string("__nv_") + f + "f";
      m[std::string("llvm.") + f + ".f64"] = std::string("__nv_") + f;
    }
    return m;
  }();
  return names;
}

} // namespace

Status linkDeviceMath(llvm::Module& module) {
  std::vector<llvm::Function*> replaced;
  std::set<std::string> needed;
  for (llvm::Function& f : module)
    if (f.isDeclaration() && deviceMathNames().count(f.getName().str()))
      replaced.push_back(&f);
  for (llvm::Function* f : replaced) {
    const std::string& nv = deviceMathNames().at(f->getName().str());
    llvm::FunctionCallee callee = module.getOrInsertFunction(nv, f->getFunctionType());
    f->replaceAllUsesWith(callee.getCallee());
    f->eraseFromParent();
    needed.insert(nv);
  }
  // What is left undefined must not be: the backend would emit an extern call ptxas rejects.
  for (llvm::Function& f : module)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.getName().starts_with("__nv_"))
      return makeError("GPU code calls '", f.getName().str(), "', which no GPU library provides");
  if (!needed.empty()) {
    std::string path = libdevicePath();
    if (path.empty()) {
      std::string list;
      for (const std::string& n : needed)
        list += (list.empty() ? "" : ", ") + n;
      return makeUnsupported("GPU code needs ", list,
                             " from libdevice.10.bc (CUDA toolkit), which is not on this machine; "
                             "set FUSEBOX_LIBDEVICE to its path");
    }
    llvm::SMDiagnostic diag;
    std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, diag, module.getContext());
    if (!lib)
      return makeError("cannot read libdevice at ", path, ": ", diag.getMessage().str());
    lib->setTargetTriple(module.getTargetTriple());
    lib->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
      return makeError("cannot link libdevice (", path, ") into ", module.getModuleIdentifier());
  }
  // Kernel entries stay external; everything else (libdevice, helpers) may be inlined away.
  std::set<const llvm::Value*> kernels;
  if (llvm::NamedMDNode* md = module.getNamedMetadata("nvvm.annotations"))
    for (llvm::MDNode* op : md->operands())
      if (op->getNumOperands() >= 1)
        if (auto* v = llvm::dyn_cast_or_null<llvm::ValueAsMetadata>(op->getOperand(0).get()))
          kernels.insert(v->getValue());
  for (llvm::Function& f : module)
    if (!f.isDeclaration() && !kernels.count(&f))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  return Status::success();
}

} // namespace fb::cg
