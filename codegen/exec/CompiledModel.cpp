// The CPU executor: lowering, argument binding on the memory plan, JIT compilation and runs.
#include "codegen/exec/CompiledModel.h"
#include "codegen/exec/AlignedBuffer.h"
#include "codegen/exec/GpuModel.h"
#include "codegen/exec/KernelThreading.h"
#include "codegen/exec/MixedExecution.h"
#include "codegen/exec/OnAllCores.h"
#include "codegen/exec/SizeChecks.h"
#include "codegen/gemm/EpilogueInPlace.h"
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/Int8GemmEmitter.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/KernelCache.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "codegen/llvm/Optimizer.h"
#include "codegen/llvm/PerfMap.h"
#include "codegen/runtime/ThreadPool.h"
#include "core/Cost.h"
#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/ShapeInference.h"
#include "core/Verifier.h"
#include "passes/MemoryPlan.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unordered_map>

namespace fb::cg {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Where a kernel argument lives.
struct ArgSlot {
  enum class Kind { Fixed, Input, Output, Dynamic } kind = Kind::Fixed;
  size_t index = 0;      ///< graph input / output index; Dynamic: the run's tensor table index
  void* ptr = nullptr;   ///< Fixed: the address
  // For the overlap test: which memory space and which byte range in it.
  int64_t space = 0, begin = 0, end = 0;
};

/// The byte size of an argument (checkKernelArgSizes has ruled out overflow).
int64_t argBytes(const KernelArg& a) {
  if (a.bytes > 0)
    return a.bytes;
  int64_t n = 1;
  for (int64_t s : a.sizes)
    n *= std::max<int64_t>(s, 0);
  return n * int64_t(dtypeSize(a.dtype));
}

std::string shapeText(const KernelArg& a) {
  std::string s = std::string(dtypeName(a.dtype)) + "[";
  for (size_t i = 0; i < a.sizes.size(); ++i)
    s += (i ? "," : "") + (a.sizes[i] < 0 ? std::string("?") : std::to_string(a.sizes[i]));
  return s + "]";
}

} // namespace

struct CompiledModel::Impl {
  std::unique_ptr<Jit> jit;
  std::vector<FbKernelFn> fns;
  std::vector<std::vector<void*>> args;                       // per kernel
  std::vector<std::vector<std::pair<size_t, ArgSlot>>> dynamic; // per kernel: inputs/outputs
  AlignedBuffer arena;
  std::vector<AlignedBuffer> buffers;   // separate activations
  AlignedBuffer workspace;              // every kernel's scratch arguments, from offset 0
  std::vector<std::vector<int64_t>> inputSizes;
  std::vector<DType> inputTypes;
  std::vector<std::vector<int64_t>> outputSizes;
  std::vector<DType> outputTypes;
  /// Per graph output: -1 when a kernel writes it, else how to fill it after the run.
  struct OutputSource {
    enum class Kind { Kernel, Input, Constant, Output, Dynamic } kind = Kind::Kernel;
    size_t index = 0;
    Tensor constant;
  };
  std::vector<OutputSource> outputSources;
  std::vector<KernelGenerator> generators;
  std::vector<Tensor> specialized; // per input: the values compiled in, or invalid
  /// Values whose sizes are known only at run time: interpreted kernels pass them as tensors
  /// through this table (one slot per value), which each run fills.
  size_t numDynamicValues = 0;
  std::vector<std::vector<int>> dynamicArgs; // per kernel, per argument: table slot or -1
  int threads = 0;
  bool adaptiveThreads = true;
  KernelThreading threading; // per kernel: pool or calling thread, by measured time
  Clock::time_point origin = Clock::now();
  // What kernelCode needs to rebuild a kernel's module as compile() built it.
  TargetInfo target;
  KernelEmitOptions emit;
  int llvmOptLevel = 3;
  std::vector<std::vector<bool>> noAlias; // per kernel, per argument
  /// Per kernel: a Concat in place (the memory plan put its inputs in its result), not run.
  std::vector<bool> elided;
  bool runnable = true;
  /// The GPU backend's model (a GPU target): every run goes to it.
  std::unique_ptr<GpuModel> gpu;
  std::string notRunnableReason; ///< why runnable is false
};

CompiledModel::~CompiledModel() = default;

Expected<std::unique_ptr<CompiledModel>> CompiledModel::compile(const Graph& graph,
                                                                const CompileOptions& options) {
  auto start = Clock::now();
  std::unique_ptr<CompiledModel> model(new CompiledModel());
  model->m_impl = std::make_unique<Impl>();
  Impl& impl = *model->m_impl;
  CompileStats& stats = model->m_stats;
  impl.threads = options.threads;
  impl.adaptiveThreads = options.adaptiveThreads;
  impl.target = options.target;
  impl.emit = options.emit;
  impl.llvmOptLevel = options.llvmOptLevel;
  impl.runnable = options.target.runsOnHost();
  auto stage = [&](const char* name, double fraction) -> Status {
    if (options.cancel && options.cancel->load())
      return makeError("compilation cancelled");
    if (options.progress)
      options.progress(name, fraction);
    return Status::success();
  };
  FB_TRY(stage("bind shapes", 0.0));

  // 1. Static shapes.
  std::vector<std::vector<int64_t>> sizes = options.inputSizes;
  if (sizes.empty())
    for (const Tensor& t : options.specializeInputs)
      sizes.push_back(t.sizes());
  FB_ASSIGN_OR_RETURN(model->m_graph, bindStaticShapes(graph, sizes, options.dims,
                                                       options.specializeInputs,
                                                       &impl.specialized));
  const Graph& g = *model->m_graph;
  // Before anything loops over a shape or sizes a buffer from it.
  FB_TRY(checkValueSizes(g));

  // 2. Kernels.
  FB_TRY(stage("lower", 0.05));
  auto t = Clock::now();
  // Lowering builds tables with the interpreter (Resize's probes, folded constants); a
  // Tensor it cannot allocate throws, and no exception may leave the library.
  const bool gpu = options.target.isGpu();
  LowerOptions lowerOptions = options.lower;
  if (gpu) { // textbook nests, scheduled for the GPU by GpuModel
    lowerOptions.defaultSchedules = false;
    lowerOptions.gemmSpecs = false;
  }
  try {
    FB_ASSIGN_OR_RETURN(model->m_kernels, lowerGraph(g, lowerOptions));
  } catch (const std::bad_alloc& e) {
    return makeError("lowering ran out of memory: ", e.what());
  }
  FB_TRY(prepareKernels(model->m_kernels, options.emit.useGemm && !gpu, options.target));
  FB_TRY(checkKernelArgSizes(model->m_kernels));
  stats.lowerMs = msSince(t);
  std::vector<Kernel>& kernels = model->m_kernels;

  // 3. Memory: the plan's arena for intermediates, graph inputs/outputs per run.
  FB_TRY(stage("plan memory", 0.15));
  std::unordered_map<std::string, int64_t> arenaOffset, arenaSize;
  std::set<size_t> epilogueInPlace; // kernels storing their result over an epilogue operand
  if (options.useMemoryPlan) {
    MemoryPlanOptions mpo;
    mpo.skipDynamic = true;
    mpo.concatInPlace = !gpu; // the GPU's places follow the CPU binding but run every kernel
    // A convolution's residual Add stores its result over the residual where the generator
    // reads each element just before storing it (cg::epilogueMayOverwrite): ResNet-50's
    // bottleneck expansions then touch each line of the residual once. Not on the GPU, whose
    // threads do not keep that order.
    if (!gpu)
      mpo.overwritesInput = [&](int step, const Value& in) {
        if (step < 0 || size_t(step) >= kernels.size() ||
            !epilogueMayOverwrite(kernels[size_t(step)], in.name()))
          return false;
        epilogueInPlace.insert(size_t(step));
        return true;
      };
    auto plan = planMemory(g, mpo);
    if (plan.ok()) {
      FB_ASSIGN_OR_RETURN(impl.arena,
                          AlignedBuffer::allocate(plan->arenaBytes, "the activation arena"));
      stats.arenaBytes = plan->arenaBytes;
      stats.memoryPlanUsed = true;
      for (const BufferAssignment& b : plan->buffers) {
        arenaOffset[b.value] = b.offset;
        arenaSize[b.value] = b.size;
      }
      // A Concat whose inputs were all computed into their slices of its result copies nothing.
      impl.elided.assign(kernels.size(), false);
      const std::set<std::string> inPlace(plan->concatsInPlace.begin(), plan->concatsInPlace.end());
      for (size_t k = 0; k < kernels.size() && k < g.nodes().size(); ++k) {
        const Node& n = *g.nodes()[k];
        if (n.op() == OpKind::Concat && inPlace.count(n.output(0)->name()))
          impl.elided[k] = true;
      }
      if (!inPlace.empty())
        stats.notes.push_back(std::to_string(inPlace.size()) +
                              " Concat(s) in place: their inputs are computed into their slices "
                              "of the result, nothing is copied");
      if (!epilogueInPlace.empty())
        stats.notes.push_back(std::to_string(epilogueInPlace.size()) +
                              " kernel(s) store their result over their epilogue's operand (a "
                              "residual Add in place)");
    } else {
      stats.notes.push_back("no memory plan (" + plan.error().message() +
                            "): one buffer per tensor");
    }
  }
  std::unordered_map<const Value*, size_t> inputIndex, outputIndex;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    inputIndex.emplace(g.inputs()[i], i);
    impl.inputSizes.push_back(g.inputs()[i]->type().staticSizes());
    impl.inputTypes.push_back(g.inputs()[i]->type().dtype);
  }
  std::unordered_map<std::string, size_t> dynamicSlot; // value name → tensor table slot
  auto dynamicSlotOf = [&](const std::string& name) {
    auto [it, inserted] = dynamicSlot.emplace(name, impl.numDynamicValues);
    if (inserted)
      ++impl.numDynamicValues;
    return it->second;
  };
  for (size_t j = 0; j < g.outputs().size(); ++j) {
    const Value* v = g.outputs()[j];
    const bool dynamicOutput = !v->type().isStatic();
    if (dynamicOutput && (!v->producer() || !runsInterpreted(*v->producer())))
      return makeError("output ", v->name(), " has a non-static type ", v->type().str());
    impl.outputSizes.push_back(dynamicOutput ? std::vector<int64_t>{} : v->type().staticSizes());
    impl.outputTypes.push_back(v->type().dtype);
    Impl::OutputSource src;
    if (dynamicOutput) {
      src.kind = Impl::OutputSource::Kind::Dynamic;
      src.index = dynamicSlotOf(v->name());
    } else if (auto it = outputIndex.find(v); it != outputIndex.end()) {
      src.kind = Impl::OutputSource::Kind::Output;
      src.index = it->second;
    } else if (v->isInput()) {
      src.kind = Impl::OutputSource::Kind::Input;
      src.index = inputIndex.at(v);
      outputIndex.emplace(v, j);
    } else if (v->isConstant()) {
      src.kind = Impl::OutputSource::Kind::Constant;
      src.constant = v->constantData();
      outputIndex.emplace(v, j);
    } else {
      outputIndex.emplace(v, j);
    }
    impl.outputSources.push_back(std::move(src));
  }
  std::unordered_map<std::string, void*> separate; // activations outside the arena
  std::vector<std::vector<bool>> noAlias(kernels.size());
  impl.args.resize(kernels.size());
  impl.dynamic.resize(kernels.size());
  std::vector<std::vector<ArgSlot>> allSlots; // per kernel, for the GPU backend
  // Scratch arguments (fused intermediates, a GEMM's shared packed B) live only while their
  // kernel runs, and kernels run one at a time: all share one workspace.
  auto scratchSpan = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  int64_t workspaceBytes = 0;
  for (const Kernel& kern : kernels) {
    int64_t sum = 0;
    for (const KernelArg& arg : kern.args)
      if (arg.role == KernelArg::Role::Scratch)
        sum += scratchSpan(argBytes(arg));
    workspaceBytes = std::max(workspaceBytes, sum);
  }
  FB_ASSIGN_OR_RETURN(impl.workspace,
                      AlignedBuffer::allocate(workspaceBytes, "the kernels' workspace"));
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel& kern = kernels[k];
    std::vector<ArgSlot> slots;
    int64_t scratchAt = 0;
    for (size_t a = 0; a < kern.args.size(); ++a) {
      const KernelArg& arg = kern.args[a];
      int64_t bytes = argBytes(arg);
      ArgSlot slot;
      auto fixed = [&](const void* p, int64_t space) {
        slot.kind = ArgSlot::Kind::Fixed;
        slot.ptr = const_cast<void*>(p);
        slot.space = space;
        slot.begin = int64_t(reinterpret_cast<uintptr_t>(p));
        slot.end = slot.begin + bytes;
      };
      const Value* v = arg.role == KernelArg::Role::Scratch ? nullptr : g.findValue(arg.name);
      if (arg.dynamicShape) {
        slot.kind = ArgSlot::Kind::Dynamic;
        slot.index = dynamicSlotOf(arg.name);
        slot.space = 4000000 + int64_t(slot.index);
      } else if (arg.role == KernelArg::Role::Scratch) {
        fixed(impl.workspace.data() + scratchAt, 1);
        scratchAt += scratchSpan(bytes);
      } else if (arg.role == KernelArg::Role::Weight && arg.data && arg.data->valid()) {
        fixed(arg.data->rawData(), 1);
        stats.weightBytes += int64_t(arg.data->byteSize());
      } else if (!v) {
        return makeError("kernel ", kern.name, ": argument ", a, " '", arg.name,
                         "' names no value of the graph");
      } else if (auto it = outputIndex.find(v);
                 it != outputIndex.end() && !v->isInput() && !v->isConstant()) {
        slot.kind = ArgSlot::Kind::Output;
        slot.index = it->second;
        slot.space = 3000000 + int64_t(it->second);
        slot.end = bytes;
      } else if (v->isInput()) {
        slot.kind = ArgSlot::Kind::Input;
        slot.index = inputIndex.at(v);
        slot.space = 2000000 + int64_t(slot.index);
        slot.end = bytes;
      } else if (v->isConstant()) {
        fixed(v->constantData().rawData(), 1);
        stats.weightBytes += int64_t(v->constantData().byteSize());
      } else if (auto off = arenaOffset.find(arg.name); off != arenaOffset.end()) {
        if (bytes > arenaSize[arg.name])
          return makeError("kernel ", kern.name, ": argument '", arg.name, "' needs ", bytes,
                           " bytes but the memory plan gives it ", arenaSize[arg.name]);
        slot.kind = ArgSlot::Kind::Fixed;
        slot.ptr = impl.arena.data() + off->second;
        slot.space = 0;
        slot.begin = off->second;
        slot.end = off->second + bytes;
      } else {
        auto [it, inserted] = separate.emplace(arg.name, nullptr);
        if (inserted) {
          int64_t size = std::max(bytes, int64_t(typeBytes(v->type())));
          FB_ASSIGN_OR_RETURN(AlignedBuffer buffer,
                              AlignedBuffer::allocate(size, "value '" + arg.name + "'"));
          impl.buffers.push_back(std::move(buffer));
          it->second = impl.buffers.back().data();
          stats.separateBytes += size;
        }
        fixed(it->second, 1);
      }
      slots.push_back(slot);
    }
    allSlots.push_back(slots);
    noAlias[k].assign(slots.size(), true);
    for (size_t a = 0; a < slots.size(); ++a)
      for (size_t b = a + 1; b < slots.size(); ++b)
        if (slots[a].space == slots[b].space && slots[a].begin < slots[b].end &&
            slots[b].begin < slots[a].end)
          noAlias[k][a] = noAlias[k][b] = false;
    impl.dynamicArgs.emplace_back(slots.size(), -1);
    for (size_t a = 0; a < slots.size(); ++a) {
      impl.args[k].push_back(slots[a].kind == ArgSlot::Kind::Fixed ? slots[a].ptr : nullptr);
      if (slots[a].kind == ArgSlot::Kind::Dynamic)
        impl.dynamicArgs[k][a] = int(slots[a].index);
      else if (slots[a].kind != ArgSlot::Kind::Fixed)
        impl.dynamic[k].emplace_back(a, slots[a]);
    }
  }

  impl.noAlias = noAlias;
  stats.kernels = int(kernels.size());
  if (gpu) {
    FB_TRY(stage("ptx", 0.2));
    t = Clock::now();
    // The GPU gets device memory of its own for each place the CPU binding chose.
    std::vector<std::vector<GpuArgPlace>> places(kernels.size());
    const std::byte* ws = impl.workspace.data();
    for (size_t k = 0; k < kernels.size(); ++k)
      for (const ArgSlot& slot : allSlots[k]) {
        GpuArgPlace p;
        p.index = slot.index;
        p.bytes = slot.end - slot.begin;
        const auto* ptr = static_cast<const std::byte*>(slot.ptr);
        switch (slot.kind) {
        case ArgSlot::Kind::Input:
          p.kind = GpuArgPlace::Kind::Input;
          break;
        case ArgSlot::Kind::Output:
          p.kind = GpuArgPlace::Kind::Output;
          break;
        case ArgSlot::Kind::Dynamic:
          return makeUnsupported("kernel ", kernels[k].name,
                                 ": a value whose sizes are known only at run time cannot run "
                                 "on the gpu backend yet");
        case ArgSlot::Kind::Fixed:
          if (slot.space == 0) {
            p.kind = GpuArgPlace::Kind::Arena;
            p.offset = slot.begin;
          } else if (ws && ptr >= ws && ptr < ws + workspaceBytes) {
            p.kind = GpuArgPlace::Kind::Workspace;
            p.offset = ptr - ws;
          } else {
            p.kind = GpuArgPlace::Kind::Host;
            p.host = slot.ptr;
          }
          break;
        }
        places[k].push_back(p);
      }
    FB_ASSIGN_OR_RETURN(impl.gpu,
                        GpuModel::build(kernels, std::move(places), stats.arenaBytes,
                                        workspaceBytes, options.target, options.llvmOptLevel));
    impl.generators.assign(kernels.size(), KernelGenerator::Loops);
    stats.emitMs = msSince(t);
    FB_TRY(stage("load", 0.8));
    t = Clock::now();
    std::vector<int64_t> inputBytes, outputBytes;
    for (size_t i = 0; i < impl.inputSizes.size(); ++i)
      inputBytes.push_back(
          int64_t(typeBytes(TensorType::of(impl.inputTypes[i], impl.inputSizes[i]))));
    for (size_t j = 0; j < impl.outputSizes.size(); ++j)
      outputBytes.push_back(
          int64_t(typeBytes(TensorType::of(impl.outputTypes[j], impl.outputSizes[j]))));
    Status loaded = impl.gpu->load(inputBytes, outputBytes);
    impl.runnable = loaded.ok();
    if (!loaded.ok()) {
      impl.notRunnableReason = "the gpu backend cannot run here: " + loaded.error().message();
      stats.notes.push_back(impl.notRunnableReason + " (the PTX can be read)");
    } else {
      stats.notes.push_back("running on " + impl.gpu->deviceDescription());
    }
    stats.jitMs = msSince(t);
    stats.totalMs = msSince(start);
    return model;
  }
  if (!impl.runnable) {
    // Code for another CPU: kernelCode shows it; nothing is compiled to run here.
    stats.notes.push_back("compiled for " + options.target.cpu +
                          ", which this host cannot run: code views only");
    stats.totalMs = msSince(start);
    return model;
  }

  // 4. Code.
  FB_TRY(stage("emit", 0.2));
  t = Clock::now();
  JitOptions jo;
  jo.target = options.target;
  jo.optLevel = options.llvmOptLevel;
  jo.useCache = options.useCache;
  FB_ASSIGN_OR_RETURN(impl.jit, Jit::create(jo));
  // Emission (and the canonical renaming, which prints and hashes each module) runs on all
  // cores too: every kernel has its own LLVMContext.
  struct Built {
    JitModule module;
    KernelGenerator generator = KernelGenerator::Loops;
    std::string note, symbol;
    std::optional<Error> error;
  };
  std::vector<Built> built(kernels.size());
  forEachOnAllCores(kernels.size(), [&](size_t k) {
    Built& b = built[k];
    if (options.cancel && options.cancel->load()) {
      b.error = makeError("compilation cancelled");
      return;
    }
    if (kernels[k].interpreted) {
      b.generator = KernelGenerator::Interpreted;
      return;
    }
    if (k < impl.elided.size() && impl.elided[k])
      return; // a Concat in place: never run, so never compiled
    KernelEmitOptions eo = options.emit;
    eo.noAliasArgs = noAlias[k];
    b.module.context = std::make_unique<llvm::LLVMContext>();
    auto m = buildKernelModule(*b.module.context, kernels[k], jo.target, eo, &b.generator, &b.note);
    if (!m.ok()) {
      b.error = m.error();
      return;
    }
    // The plan put this kernel's result over an epilogue operand on the generator's word that
    // it reads each element before storing it; a loop nest taken instead does not promise that.
    if (epilogueInPlace.count(k) && b.generator == KernelGenerator::Loops) {
      b.error = makeError("kernel ", kernels[k].name,
                          ": its result was planned over its "
                          "epilogue operand, but it compiled as a loop nest (",
                          b.note, "); compile without the memory plan");
      return;
    }
    b.module.module = std::move(*m);
    b.symbol = options.shareIdenticalKernels
                   ? canonicalizeKernelModule(*b.module.module, kernels[k].name)
                   : kernels[k].name;
  });
  std::vector<JitModule> modules;
  std::vector<std::string> symbols; // per kernel: its entry symbol in the JIT
  std::unordered_map<std::string, size_t> seen;
  for (size_t k = 0; k < kernels.size(); ++k) {
    Built& b = built[k];
    if (b.error)
      return *b.error;
    if (!b.note.empty())
      stats.notes.push_back(kernels[k].name + ": " + b.note);
    impl.generators.push_back(b.generator);
    stats.gemmKernels += b.generator == KernelGenerator::Gemm ||
                                 b.generator == KernelGenerator::Winograd ||
                                 b.generator == KernelGenerator::DirectConv
                             ? 1
                             : 0;
    symbols.push_back(b.symbol);
    if (b.generator == KernelGenerator::Interpreted || !b.module.module)
      continue;
    if (seen.emplace(b.symbol, k).second)
      modules.push_back(std::move(b.module));
  }
  if (perfMapRequested()) { // label each shared module with the kernels it serves
    std::unordered_map<std::string, std::string> labels;
    for (size_t k = 0; k < kernels.size(); ++k)
      if (!symbols[k].empty() && symbols[k] != kernels[k].name) {
        std::string& label = labels[symbols[k]];
        label += (label.empty() ? "" : ",") + kernels[k].name;
      }
    for (const auto& [symbol, label] : labels)
      setPerfMapLabel(symbol, label);
  }
  stats.distinctKernels = int(modules.size());
  stats.emitMs = msSince(t);
  FB_TRY(stage("jit", 0.4));
  t = Clock::now();
  FB_TRY(impl.jit->addModules(std::move(modules)));
  for (size_t k = 0; k < symbols.size(); ++k) {
    if (kernels[k].interpreted) {
      impl.fns.push_back(nullptr); // run() interprets the node
      ++stats.interpretedKernels;
      continue;
    }
    if (k < impl.elided.size() && impl.elided[k]) {
      impl.fns.push_back(nullptr); // run() skips it
      continue;
    }
    FB_ASSIGN_OR_RETURN(FbKernelFn fn, impl.jit->lookupKernel(symbols[k]));
    impl.fns.push_back(fn);
  }
  impl.threading.reset(impl.fns.size());
  if (stats.interpretedKernels > 0)
    stats.notes.push_back(std::to_string(stats.interpretedKernels) +
                          " control-flow kernels run through the interpreter");
  stats.jitMs = msSince(t);
  stats.kernels = int(kernels.size());
  JitStats js = impl.jit->stats();
  stats.cacheHits = js.cacheHits;
  stats.optimizeMs = js.optimizeMs;
  stats.codegenMs = js.codegenMs;
  stats.totalMs = msSince(start);
  return model;
}

const TargetInfo& CompiledModel::target() const { return m_impl->target; }

bool CompiledModel::runnable() const { return m_impl->runnable; }

Expected<KernelCode> CompiledModel::kernelCode(size_t index) const {
  if (index >= m_kernels.size())
    return makeError("kernel ", index, " does not exist (the model has ", m_kernels.size(),
                     " kernels)");
  const Kernel& kern = m_kernels[index];
  KernelCode code;
  code.name = kern.name;
  code.opSummary = kern.opSummary;
  code.nodes = kern.nodes;
  code.schedule = kern.schedule;
  code.flops = kern.flops;
  code.bytes = kern.bytes;
  code.loops = kernelLoopText(kern);
  if (kern.interpreted) {
    code.generator = kernelGeneratorName(KernelGenerator::Interpreted);
    code.llvmRaw = code.llvmOptimized = code.assembly =
        "; " + kern.name + " has no code: the executor runs " + kern.opSummary +
        " with the reference interpreter\n";
    return code;
  }
  if (m_impl->gpu)
    return m_impl->gpu->kernelCode(m_kernels, index);
  if (kern.gemm)
    if (auto blocking = describeGemmBlocking(kern); blocking.ok())
      code.blocking = *blocking;
  if (kern.int8)
    code.blocking = describeInt8Blocking(kern);
  llvm::LLVMContext context;
  KernelEmitOptions eo = m_impl->emit;
  eo.noAliasArgs = m_impl->noAlias.at(index);
  KernelGenerator generator = KernelGenerator::Loops;
  FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> module,
                      buildKernelModule(context, kern, m_impl->target, eo, &generator));
  code.generator = kernelGeneratorName(generator);
  auto print = [](const llvm::Module& m) {
    std::string text;
    llvm::raw_string_ostream os(text);
    m.print(os, nullptr);
    os.flush();
    return text;
  };
  code.llvmRaw = print(*module);
  const int level = m_impl->llvmOptLevel;
  FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                      createTargetMachine(m_impl->target, level));
  FB_TRY(verifyModule(*module));
  FB_TRY(optimizeModule(*module, *tm, level));
  code.llvmOptimized = print(*module);
  FB_ASSIGN_OR_RETURN(code.assembly, compileToAssembly(*module, *tm));
  return code;
}

Profile CompiledModel::newProfile() const {
  Profile p;
  for (size_t k = 0; k < m_kernels.size(); ++k) {
    const Kernel& kern = m_kernels[k];
    KernelProfileInfo info;
    info.name = kern.name;
    info.op = kern.opSummary;
    info.nodes = kern.nodes;
    for (NodeId id : kern.nodes)
      if (const Node* n = m_graph->findNode(id); n && !n->name().empty())
        info.nodeNames += (info.nodeNames.empty() ? "" : ",") + n->name();
    for (const KernelArg& a : kern.args) {
      if (a.role == KernelArg::Role::Output)
        info.outputShapes += (info.outputShapes.empty() ? "" : ", ") + shapeText(a);
      else if (a.role != KernelArg::Role::Scratch)
        info.inputShapes += (info.inputShapes.empty() ? "" : ", ") + shapeText(a);
    }
    info.generator = k < m_impl->generators.size() ? kernelGeneratorName(m_impl->generators[k])
                                                   : "not compiled";
    info.flops = kern.flops;
    info.bytes = kern.bytes;
    p.kernels.push_back(std::move(info));
  }
  p.threads = m_impl->threads > 0 ? m_impl->threads : fb_get_num_threads();
  return p;
}

/// Runs an interpreted kernel (a control-flow node): copies its bound operands into tensors,
/// evaluates the node with the interpreter's kernel (which interprets the bodies), and copies
/// the results, which must have the compiled sizes, into their bound buffers.
static Status runInterpretedKernel(const Kernel& kern, const Graph& graph,
                                   const std::vector<void*>& args,
                                   const std::vector<int>& dynamicArgs,
                                   std::vector<Tensor>& dynamicValues) {
  const Node* node = kern.nodes.empty() ? nullptr : graph.findNode(kern.nodes[0]);
  if (!node)
    return makeError("kernel ", kern.name, ": its node is missing from the compiled graph");
  std::vector<Tensor> ins;
  size_t a = 0;
  for (const Value* in : node->inputs()) {
    if (!in) {
      ins.emplace_back();
      continue;
    }
    const KernelArg& arg = kern.args.at(a);
    if (dynamicArgs[a] >= 0) {
      ins.push_back(dynamicValues[size_t(dynamicArgs[a])]);
      ++a;
      continue;
    }
    FB_ASSIGN_OR_RETURN(Tensor t, Tensor::create(arg.dtype, arg.sizes));
    if (t.byteSize())
      std::memcpy(t.mutableRawData(), args[a], t.byteSize());
    ins.push_back(std::move(t));
    ++a;
  }
  FB_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluateNode(*node, std::move(ins)));
  for (size_t i = 0; i < node->numOutputs(); ++i, ++a) {
    const KernelArg& arg = kern.args.at(a);
    Tensor& t = outs[i];
    if (dynamicArgs[a] >= 0) {
      dynamicValues[size_t(dynamicArgs[a])] = std::move(t);
      continue;
    }
    if (!t.valid() || t.dtype() != arg.dtype || t.sizes() != arg.sizes)
      return makeError(node->describe(), ": result ", i, " is ",
                       t.valid() ? t.type().str() : std::string("missing"),
                       " at run time but was compiled as ", shapeText(arg),
                       " (recompile for these inputs)");
    if (t.byteSize())
      std::memcpy(args[a], t.rawData(), t.byteSize());
  }
  return Status::success();
}

Expected<std::vector<Tensor>> CompiledModel::run(const std::vector<Tensor>& inputs,
                                                 Profile* profile) {
  Impl& impl = *m_impl;
  if (!impl.runnable && !impl.notRunnableReason.empty())
    return makeError(impl.notRunnableReason);
  if (!impl.runnable)
    return makeError("the model was compiled for ", impl.target.cpu,
                     ", whose instructions this host does not have; it can be read, not run");
  if (inputs.size() != impl.inputSizes.size())
    return makeError("the compiled model takes ", impl.inputSizes.size(), " inputs, got ",
                     inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() != impl.inputTypes[i] || inputs[i].sizes() != impl.inputSizes[i])
      return makeError("input ", i, " (", m_graph->inputs()[i]->name(), ") is ",
                       inputs[i].type().str(), " but the model was compiled for ",
                       TensorType::of(impl.inputTypes[i], impl.inputSizes[i]).str());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (impl.specialized[i].valid() && !impl.specialized[i].identical(inputs[i]))
      return makeError("input ", i, " (", m_graph->inputs()[i]->name(),
                       ") was compiled in as a constant (it determines shapes) and must keep "
                       "the values it was compiled for; recompile for other values");
  std::lock_guard<std::mutex> lock(m_runMutex);
  if (impl.threads > 0 && fb_get_num_threads() != impl.threads)
    fb_set_num_threads(impl.threads);
  std::vector<Tensor> outputs;
  for (size_t j = 0; j < impl.outputSizes.size(); ++j)
    if (impl.outputSources[j].kind == Impl::OutputSource::Kind::Dynamic)
      outputs.emplace_back(); // filled from the run's tensor table
    else {
      FB_ASSIGN_OR_RETURN(Tensor out, Tensor::create(impl.outputTypes[j], impl.outputSizes[j]));
      outputs.push_back(std::move(out));
    }
  std::vector<Tensor> dynamicValues(impl.numDynamicValues);
  int runIndex = profile ? int(profile->runs.size()) : 0;
  auto runStart = Clock::now();
  auto us = [&](Clock::time_point tp) {
    return std::chrono::duration<double, std::micro>(tp - impl.origin).count();
  };
  if (impl.gpu) {
    auto interpret = [&](size_t k, const std::vector<void*>& hostArgs) {
      return runInterpretedKernel(m_kernels[k], *m_graph, hostArgs, impl.dynamicArgs[k],
                                  dynamicValues);
    };
    FB_TRY(impl.gpu->run(inputs, outputs, m_kernels, profile, runIndex, us(runStart), interpret));
  }
  // With several threads, each kernel runs on the pool or alone, whichever is measured faster.
  const bool adapt = impl.adaptiveThreads && !impl.gpu && fb_get_num_threads() > 1;
  if (adapt)
    impl.threading.beginRun();
  for (size_t k = 0; k < impl.fns.size(); ++k) {
    if (k < impl.elided.size() && impl.elided[k])
      continue;
    std::vector<void*>& args = impl.args[k];
    for (const auto& [a, slot] : impl.dynamic[k])
      args[a] = slot.kind == ArgSlot::Kind::Input
                    ? const_cast<std::byte*>(inputs[slot.index].rawData())
                    : outputs[slot.index].mutableRawData();
    if (k < m_kernels.size() && !m_kernels[k].indexChecks.empty())
      FB_TRY(checkKernelIndices(m_kernels[k], args));
    if (impl.fns[k] && k < m_interpretedKernels.size() && m_interpretedKernels[k]) {
      FB_TRY(runKernelWithInterpreter(m_kernels[k], *m_graph->nodes().at(k), args));
      continue;
    }
    if (!impl.fns[k]) {
      auto t0 = Clock::now();
      FB_TRY(runInterpretedKernel(m_kernels[k], *m_graph, args, impl.dynamicArgs[k],
                                  dynamicValues));
      if (profile)
        profile->events.push_back({int(k), runIndex, us(t0),
                                   std::chrono::duration<double, std::micro>(Clock::now() - t0)
                                       .count()});
      continue;
    }
    const bool serial = adapt && impl.threading.serial(k);
    SerialScope scope(serial);
    if (profile || (adapt && impl.threading.timed(k))) {
      auto t0 = Clock::now();
      impl.fns[k](args.data());
      auto t1 = Clock::now();
      const double took = std::chrono::duration<double, std::micro>(t1 - t0).count();
      if (adapt)
        impl.threading.record(k, took);
      if (profile)
        profile->events.push_back({int(k), runIndex, us(t0), took, serial});
    } else {
      impl.fns[k](args.data());
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Impl::OutputSource& src = impl.outputSources[j];
    switch (src.kind) {
    case Impl::OutputSource::Kind::Kernel: break;
    case Impl::OutputSource::Kind::Input: outputs[j] = inputs[src.index]; break;
    case Impl::OutputSource::Kind::Constant: outputs[j] = src.constant; break;
    case Impl::OutputSource::Kind::Output: outputs[j] = outputs[src.index]; break;
    case Impl::OutputSource::Kind::Dynamic: outputs[j] = dynamicValues[src.index]; break;
    }
  }
  if (profile)
    profile->runs.emplace_back(us(runStart),
                               std::chrono::duration<double, std::micro>(Clock::now() - runStart).count());
  return outputs;
}

} // namespace fb::cg
