// Host target detection and TargetMachine creation.
#include "codegen/llvm/Target.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace fb::cg {

TargetInfo TargetInfo::host() {
  static const TargetInfo info = [] {
    TargetInfo t;
    t.triple = llvm::sys::getProcessTriple();
    t.cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> features;
    for (const auto& f : llvm::sys::getHostCPUFeatures())
      features.push_back((f.second ? "+" : "-") + f.first().str());
    std::sort(features.begin(), features.end());
    for (const std::string& f : features)
      t.features += (t.features.empty() ? "" : ",") + f;
    return t;
  }();
  return info;
}

Expected<TargetInfo> TargetInfo::forCpu(const std::string& cpu) {
  TargetInfo t;
  t.triple = host().triple;
  t.cpu = cpu;
  // Ask the subtarget table before building a TargetMachine: one for an unknown CPU prints
  // LLVM's own warning to stderr.
  initializeNativeTarget();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target)
    return makeError("no LLVM target for ", t.triple, ": ", err);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(t.triple, "", ""));
  if (!sti || !sti->isCPUStringValid(cpu))
    return makeError("unknown CPU '", cpu, "' for ", t.triple,
                     " (try host, x86-64-v2, x86-64-v3, x86-64-v4, skylake, znver3, ...)");
  return t;
}

Expected<TargetInfo> TargetInfo::forGpu(const std::string& arch) {
  TargetInfo t;
  t.triple = "nvptx64-nvidia-cuda";
  t.cpu = arch;
  initializeNativeTarget();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target)
    return makeError("no LLVM target for ", t.triple, " in this LLVM: ", err);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(t.triple, "", ""));
  if (arch.rfind("sm_", 0) != 0 || !sti || !sti->isCPUStringValid(arch))
    return makeError("unknown GPU target '", arch,
                     "' (an NVIDIA compute capability: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90)");
  return t;
}

bool TargetInfo::hasAvx2Fma() const {
  auto has = [&](const std::string& f) {
    std::string s = "," + features + ",";
    return s.find(",+" + f + ",") != std::string::npos;
  };
  return has("avx2") && has("fma");
}

int TargetInfo::vectorRegisters() const {
  return hasFeature("avx512f") && hasFeature("avx512vl") ? 32 : 16;
}

bool TargetInfo::hasFeature(const std::string& name) const {
  if (isGpu())
    return false;
  initializeNativeTarget();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, cpu.empty() ? "generic" : cpu, features));
  return sti && sti->checkFeatures("+" + name);
}

bool TargetInfo::runsOnHost() const {
  if (key() == host().key())
    return true;
  if (triple != host().triple)
    return false;
  auto mine = createTargetMachine(*this, 0);
  if (!mine.ok())
    return false;
  // Compare instruction-set features by name: the host's list (from cpuid) names only those,
  // so the CPU model's tuning flags (which differ between CPUs that run the same code) are
  // skipped.
  // System instructions the code generator never emits on its own (only their intrinsics
  // do) are skipped too: a virtual machine often hides them (a Zen 4 guest without mwaitx,
  // rdpru and wbnoinvd still runs znver2 code).
  static const std::set<std::string> systemOnly = {
      "clflushopt", "clwb",     "clzero", "enqcmd",    "fsgsbase", "hreset",   "invpcid",  "kl",
      "movdir64b",  "movdiri",  "mwaitx", "pconfig",   "pku",      "ptwrite",  "rdpid",    "rdpru",
      "rdrnd",      "rdseed",   "rtm",    "serialize", "sgx",      "shstk",    "tsxldtrk", "uintr",
      "waitpkg",    "wbnoinvd", "widekl", "xsave",     "xsavec",   "xsaveopt", "xsaves"};
  const llvm::MCSubtargetInfo* sti = (*mine)->getMCSubtargetInfo();
  const llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures()) {
    if (!sti->getFeatureBits()[kv.Value] || systemOnly.count(kv.Key))
      continue;
    auto it = hostFeatures.find(kv.Key);
    if (it != hostFeatures.end() && !it->second)
      return false;
  }
  return true;
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(const TargetInfo& target,
                                                                   int optLevel) {
  initializeNativeTarget();
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, err);
  if (!t)
    return makeError("no LLVM target for '", target.triple, "': ", err);
  llvm::TargetOptions options;
  // Contract only explicit llvm.fmuladd: results then match the reference within tolerance
  // however the optimizer reassociates nothing else.
  options.AllowFPOpFusion = llvm::FPOpFusion::Standard;
  llvm::CodeGenOptLevel level = optLevel <= 0   ? llvm::CodeGenOptLevel::None
                                : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm)
    return makeError("cannot create a target machine for '", target.triple, "' (", target.cpu,
                     ")");
  return tm;
}

void setTargetAttributes(llvm::Function& fn, const TargetInfo& target) {
  fn.addFnAttr("target-cpu", target.cpu);
  fn.addFnAttr("target-features", target.features);
}

Status configureModule(llvm::Module& module, const TargetInfo& target) {
  static std::mutex mutex;
  static std::map<std::string, std::string> layouts; // target key -> data layout string
  std::string layout;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = layouts.find(target.key());
    if (it != layouts.end())
      layout = it->second;
  }
  if (layout.empty()) {
    FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, createTargetMachine(target, 0));
    layout = tm->createDataLayout().getStringRepresentation();
    std::lock_guard<std::mutex> lock(mutex);
    layouts[target.key()] = layout;
  }
  module.setTargetTriple(target.triple);
  module.setDataLayout(layout);
  for (llvm::Function& fn : module)
    if (!fn.isDeclaration())
      setTargetAttributes(fn, target);
  return Status::success();
}

} // namespace fb::cg
