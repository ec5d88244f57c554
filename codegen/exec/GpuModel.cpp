// The GPU executor: scheduling, PTX, device memory bound as the memory plan says, runs, events.
#include "codegen/exec/GpuModel.h"
#include "codegen/exec/KernelModules.h"
#include "codegen/exec/SizeChecks.h"
#include "codegen/gpu/CudaDriver.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "codegen/llvm/Optimizer.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <sstream>

namespace fb::cg {

using gpu::CudaContext;
using gpu::CudaEvent;
using gpu::CudaModule;
using gpu::DevicePtr;

struct GpuModel::Device {
  std::unique_ptr<CudaContext> context;
  std::unique_ptr<CudaModule> module;
  std::vector<void*> functions;       // per launch
  std::vector<DevicePtr> allocations; // released on destruction
  DevicePtr arena = 0, workspace = 0;
  std::vector<DevicePtr> inputs, outputs; // per graph input / output (0: unused)
  std::vector<int64_t> inputBytes, outputBytes;
  std::vector<DevicePtr> tables;                  // per launch: its argument pointer table
  std::vector<std::vector<DevicePtr>> argPtrs;    // per kernel, per argument
  std::vector<std::unique_ptr<CudaEvent>> events; // kernel boundaries, for profiles

  ~Device() {
    if (context)
      for (DevicePtr p : allocations)
        context->release(p);
  }
  Expected<DevicePtr> allocate(int64_t bytes, const std::string& what) {
    FB_ASSIGN_OR_RETURN(DevicePtr p, context->allocate(std::max<int64_t>(bytes, 1), what));
    allocations.push_back(p);
    return p;
  }
};

GpuModel::~GpuModel() = default;

namespace {

std::string printModule(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  os.flush();
  return text;
}

/// All `launches` in one NVPTX module, optimized at `level` (< 0: as emitted) and, with
/// `ptx`, compiled to PTX.
Status launchesCode(const std::vector<GpuLaunch>& launches, const std::string& name,
                    const TargetInfo& target, int level, std::string* llvmText, std::string* ptx) {
  std::vector<Kernel> codes;
  for (const GpuLaunch& l : launches)
    codes.push_back(l.code);
  KernelEmitOptions eo;
  eo.useGemm = false;
  eo.parallel = false;
  FB_ASSIGN_OR_RETURN(JitModule jm, buildModelModule(codes, name, target, eo, level));
  if (llvmText)
    *llvmText = printModule(*jm.module);
  if (ptx) {
    FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                        createTargetMachine(target, std::max(level, 0)));
    FB_ASSIGN_OR_RETURN(*ptx, compileToAssembly(*jm.module, *tm));
  }
  return Status::success();
}

} // namespace

Expected<std::unique_ptr<GpuModel>> GpuModel::build(const std::vector<Kernel>& kernels,
                                                    std::vector<std::vector<GpuArgPlace>> places,
                                                    int64_t arenaBytes, int64_t workspaceBytes,
                                                    const TargetInfo& target, int optLevel) {
  if (!target.isGpu())
    return makeError("GpuModel::build needs a GPU target, got ", target.triple);
  std::unique_ptr<GpuModel> m(new GpuModel());
  m->m_places = std::move(places);
  m->m_arenaBytes = arenaBytes;
  m->m_workspaceBytes = workspaceBytes;
  m->m_target = target;
  m->m_optLevel = optLevel;
  for (size_t k = 0; k < kernels.size(); ++k) {
    m->m_interpreted.push_back(kernels[k].interpreted);
    if (kernels[k].interpreted)
      continue; // run on the host by run()
    FB_ASSIGN_OR_RETURN(std::vector<GpuLaunch> launches, gpuLaunchesOf(kernels[k], k));
    for (GpuLaunch& l : launches)
      m->m_launches.push_back(std::move(l));
  }
  FB_TRY(launchesCode(m->m_launches, "model", target, std::max(optLevel, 0), nullptr, &m->m_ptx));
  return m;
}

Status GpuModel::load(const std::vector<int64_t>& inputBytes,
                      const std::vector<int64_t>& outputBytes) {
  auto d = std::make_unique<Device>();
  FB_ASSIGN_OR_RETURN(d->context, CudaContext::create(0));
  FB_ASSIGN_OR_RETURN(d->module, d->context->loadPtx(m_ptx, "the model's PTX"));
  for (const GpuLaunch& l : m_launches) {
    FB_ASSIGN_OR_RETURN(void* fn, d->module->function(l.code.name));
    d->functions.push_back(fn);
  }
  FB_ASSIGN_OR_RETURN(d->arena, d->allocate(m_arenaBytes, "the activation arena"));
  FB_ASSIGN_OR_RETURN(d->workspace, d->allocate(m_workspaceBytes, "the kernels' workspace"));
  d->inputBytes = inputBytes;
  d->outputBytes = outputBytes;
  d->inputs.assign(inputBytes.size(), 0);
  d->outputs.assign(outputBytes.size(), 0);
  std::map<const void*, DevicePtr> hostCopies;
  d->argPtrs.resize(m_places.size());
  for (size_t k = 0; k < m_places.size(); ++k) {
    for (const GpuArgPlace& p : m_places[k]) {
      DevicePtr ptr = 0;
      switch (p.kind) {
      case GpuArgPlace::Kind::Arena:
        ptr = d->arena + DevicePtr(p.offset);
        break;
      case GpuArgPlace::Kind::Workspace:
        ptr = d->workspace + DevicePtr(p.offset);
        break;
      case GpuArgPlace::Kind::Host: {
        auto it = hostCopies.find(p.host);
        if (it == hostCopies.end()) {
          FB_ASSIGN_OR_RETURN(DevicePtr copy, d->allocate(p.bytes, "a weight"));
          if (p.host && p.bytes > 0)
            FB_TRY(d->context->upload(copy, p.host, p.bytes));
          it = hostCopies.emplace(p.host, copy).first;
        }
        ptr = it->second;
        break;
      }
      case GpuArgPlace::Kind::Input:
        if (p.index >= d->inputs.size())
          return makeError("a kernel argument names graph input ", p.index, " of ",
                           d->inputs.size());
        if (!d->inputs[p.index]) {
          FB_ASSIGN_OR_RETURN(
              d->inputs[p.index],
              d->allocate(inputBytes[p.index], "graph input " + std::to_string(p.index)));
        }
        ptr = d->inputs[p.index];
        break;
      case GpuArgPlace::Kind::Output:
        if (p.index >= d->outputs.size())
          return makeError("a kernel argument names graph output ", p.index, " of ",
                           d->outputs.size());
        if (!d->outputs[p.index]) {
          FB_ASSIGN_OR_RETURN(
              d->outputs[p.index],
              d->allocate(outputBytes[p.index], "graph output " + std::to_string(p.index)));
        }
        ptr = d->outputs[p.index];
        break;
      }
      d->argPtrs[k].push_back(ptr);
    }
  }
  for (const GpuLaunch& l : m_launches) {
    const std::vector<DevicePtr>& ptrs = d->argPtrs.at(l.kernel);
    FB_ASSIGN_OR_RETURN(DevicePtr table, d->allocate(int64_t(ptrs.size() * sizeof(DevicePtr)),
                                                     "the argument table of " + l.code.name));
    if (!ptrs.empty())
      FB_TRY(d->context->upload(table, ptrs.data(), int64_t(ptrs.size() * sizeof(DevicePtr))));
    d->tables.push_back(table);
  }
  m_device = std::move(d);
  return Status::success();
}

bool GpuModel::loaded() const {
  return m_device != nullptr;
}

std::string GpuModel::deviceDescription() const {
  if (!m_device)
    return {};
  const gpu::DeviceInfo& info = m_device->context->device();
  return info.name + ", " + info.smName() + ", " + std::to_string(info.multiprocessors) + " SMs";
}

Status GpuModel::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                     const std::vector<Kernel>& kernels, Profile* profile, int runIndex,
                     double runStartUs, const HostKernel& interpret) {
  if (!m_device)
    return makeError("the GPU model is not loaded on a device");
  Device& d = *m_device;
  for (size_t i = 0; i < inputs.size() && i < d.inputs.size(); ++i)
    if (d.inputs[i])
      FB_TRY(d.context->upload(d.inputs[i], inputs[i].rawData(),
                               std::min<int64_t>(int64_t(inputs[i].byteSize()), d.inputBytes[i])));
  const size_t numKernels = m_places.size();
  if (profile && d.events.size() != numKernels + 1) {
    d.events.clear();
    for (size_t e = 0; e <= numKernels; ++e) {
      FB_ASSIGN_OR_RETURN(std::unique_ptr<CudaEvent> ev, d.context->createEvent());
      d.events.push_back(std::move(ev));
    }
  }
  size_t next = 0;
  for (size_t k = 0; k < numKernels; ++k) {
    if (k < kernels.size() && !kernels[k].indexChecks.empty()) {
      // The checked indices are on the device: copy them back, check them on the host.
      FB_TRY(d.context->synchronize());
      std::vector<std::vector<std::byte>> copies(kernels[k].args.size());
      std::vector<void*> hostArgs(kernels[k].args.size(), nullptr);
      for (const IndexCheck& c : kernels[k].indexChecks) {
        size_t a = size_t(c.arg);
        if (hostArgs[a])
          continue;
        int64_t bytes = kernels[k].args[a].bytes;
        copies[a].resize(size_t(std::max<int64_t>(bytes, 1)));
        FB_TRY(d.context->download(copies[a].data(), d.argPtrs[k][a], bytes));
        hostArgs[a] = copies[a].data();
      }
      FB_TRY(checkKernelIndices(kernels[k], hostArgs));
    }
    if (profile)
      FB_TRY(d.events[k]->record());
    if (k < m_interpreted.size() && m_interpreted[k]) {
      // Control flow: the node runs on the host with the interpreter, on copies.
      const Kernel& kern = kernels.at(k);
      FB_TRY(d.context->synchronize());
      std::vector<std::vector<std::byte>> copies(kern.args.size());
      std::vector<void*> hostArgs;
      for (size_t a = 0; a < kern.args.size(); ++a) {
        copies[a].resize(size_t(std::max<int64_t>(kern.args[a].bytes, 1)));
        if (kern.args[a].role != KernelArg::Role::Output && kern.args[a].bytes > 0)
          FB_TRY(d.context->download(copies[a].data(), d.argPtrs[k][a], kern.args[a].bytes));
        hostArgs.push_back(copies[a].data());
      }
      if (!interpret)
        return makeError("kernel ", kern.name, " runs on the host, but no interpreter was given");
      FB_TRY(interpret(k, hostArgs));
      for (size_t a = 0; a < kern.args.size(); ++a)
        if (kern.args[a].role == KernelArg::Role::Output && kern.args[a].bytes > 0)
          FB_TRY(d.context->upload(d.argPtrs[k][a], copies[a].data(), kern.args[a].bytes));
      continue;
    }
    for (; next < m_launches.size() && m_launches[next].kernel == k; ++next) {
      const GpuLaunch& l = m_launches[next];
      void* params[] = {&d.tables[next]};
      FB_TRY(
          d.context->launch(d.functions[next], {l.blocks, 1, 1}, {l.blockSize, 1, 1}, 0, params));
    }
  }
  if (profile)
    FB_TRY(d.events[numKernels]->record());
  for (size_t j = 0; j < outputs.size() && j < d.outputs.size(); ++j)
    if (d.outputs[j] && outputs[j].valid())
      FB_TRY(
          d.context->download(outputs[j].mutableRawData(), d.outputs[j],
                              std::min<int64_t>(int64_t(outputs[j].byteSize()), d.outputBytes[j])));
  FB_TRY(d.context->synchronize());
  if (profile) {
    for (size_t k = 0; k < numKernels; ++k) {
      FB_ASSIGN_OR_RETURN(float startMs, d.events[k]->millisecondsSince(*d.events[0]));
      FB_ASSIGN_OR_RETURN(float ms, d.events[k + 1]->millisecondsSince(*d.events[k]));
      profile->events.push_back(
          {int(k), runIndex, runStartUs + double(startMs) * 1e3, double(ms) * 1e3});
    }
  }
  return Status::success();
}

Expected<KernelCode> GpuModel::kernelCode(const std::vector<Kernel>& kernels, size_t k) const {
  if (k >= kernels.size())
    return makeError("kernel ", k, " does not exist (the model has ", kernels.size(), " kernels)");
  const Kernel& kern = kernels[k];
  std::vector<GpuLaunch> mine;
  for (const GpuLaunch& l : m_launches)
    if (l.kernel == k)
      mine.push_back(l);
  KernelCode code;
  code.name = kern.name;
  code.opSummary = kern.opSummary;
  code.nodes = kern.nodes;
  code.schedule = kern.schedule;
  code.flops = kern.flops;
  code.bytes = kern.bytes;
  code.generator = "gpu";
  if (kern.interpreted) {
    code.generator = "interpreted";
    code.loops = code.llvmRaw = code.llvmOptimized = code.assembly =
        "// " + kern.name + " has no GPU code: " + kern.opSummary +
        " (control flow) runs on the host with the reference interpreter\n";
    return code;
  }
  std::vector<GpuLaunch> renumbered = mine;
  for (GpuLaunch& l : renumbered)
    l.kernel = 0;
  code.loops = gpuLoopsText({kern}, renumbered);
  FB_TRY(launchesCode(mine, kern.name, m_target, -1, &code.llvmRaw, nullptr));
  FB_TRY(launchesCode(mine, kern.name, m_target, std::max(m_optLevel, 0), &code.llvmOptimized,
                      &code.assembly));
  return code;
}

} // namespace fb::cg
