// ORC LLJIT wrapper: runtime symbols, parallel compilation, the kernel object cache.
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/KernelCache.h"
#include "codegen/llvm/ObjectEmitter.h"
#include "codegen/llvm/Optimizer.h"
#include "codegen/llvm/PerfMap.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

namespace fb::cg {

namespace {

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

Error toFbError(llvm::Error err, const std::string& context) {
  return makeError(context, ": ", llvm::toString(std::move(err)));
}

// libm entry points generated code may call (vector math falls back to these), resolved to
// this process's definitions explicitly so that the JIT does not depend on dynamic symbol
// export of the host executable.
float fbExpf(float x) { return std::exp(x); }
float fbLogf(float x) { return std::log(x); }
float fbTanhf(float x) { return std::tanh(x); }
float fbErff(float x) { return std::erf(x); }
float fbPowf(float x, float y) { return std::pow(x, y); }
double fbPow(double x, double y) { return std::pow(x, y); }
float fbSinf(float x) { return std::sin(x); }
float fbCosf(float x) { return std::cos(x); }
float fbTanf(float x) { return std::tan(x); }
float fbAsinf(float x) { return std::asin(x); }
float fbAcosf(float x) { return std::acos(x); }
float fbAtanf(float x) { return std::atan(x); }
float fbSinhf(float x) { return std::sinh(x); }
float fbCoshf(float x) { return std::cosh(x); }
float fbAsinhf(float x) { return std::asinh(x); }
float fbAcoshf(float x) { return std::acosh(x); }
float fbAtanhf(float x) { return std::atanh(x); }
float fbLog1pf(float x) { return std::log1p(x); }
float fbFmodf(float x, float y) { return std::fmod(x, y); }
float fbRoundf(float x) { return std::round(x); }
float fbSqrtf(float x) { return std::sqrt(x); }
float fbFloorf(float x) { return std::floor(x); }
float fbCeilf(float x) { return std::ceil(x); }
float fbNearbyintf(float x) { return std::nearbyint(x); }
float fbRintf(float x) { return std::rint(x); }
void* fbMemset(void* d, int c, size_t n) { return std::memset(d, c, n); }
void* fbMemcpy(void* d, const void* s, size_t n) { return std::memcpy(d, s, n); }
void* fbMemmove(void* d, const void* s, size_t n) { return std::memmove(d, s, n); }

} // namespace

struct Jit::State {
  std::mutex mutex; // guards the LLJIT's linking and stats
  JitStats stats;
};

JitModule newJitModule(const std::string& name, const TargetInfo& target) {
  JitModule m;
  m.context = std::make_unique<llvm::LLVMContext>();
  m.module = std::make_unique<llvm::Module>(name, *m.context);
  m.module->setSourceFileName(name);
  // A failure here means the host target cannot be created; compileModuleToObject reports it.
  (void)configureModule(*m.module, target);
  return m;
}

Expected<std::shared_ptr<const std::string>> compileModuleToObject(llvm::Module& module,
                                                                   const TargetInfo& target,
                                                                   int optLevel, bool useCache,
                                                                   bool* hit, JitStats* stats) {
  if (hit)
    *hit = false;
  FB_TRY(configureModule(module, target));
  FB_TRY(verifyModule(module));
  std::string key;
  if (useCache) {
    key = KernelCache::keyOf(module, target.key(), optLevel);
    if (auto object = KernelCache::global().find(key)) {
      if (hit)
        *hit = true;
      return object;
    }
  }
  FB_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                      createTargetMachine(target, optLevel));
  auto start = std::chrono::steady_clock::now();
  FB_TRY(optimizeModule(module, *tm, optLevel));
  double optMs = msSince(start);
  start = std::chrono::steady_clock::now();
  FB_ASSIGN_OR_RETURN(std::string object, compileToObject(module, *tm));
  double cgMs = msSince(start);
  if (stats) {
    stats->optimizeMs += optMs;
    stats->codegenMs += cgMs;
  }
  auto shared = std::make_shared<const std::string>(std::move(object));
  if (useCache)
    KernelCache::global().insert(key, shared);
  return shared;
}

Expected<std::unique_ptr<Jit>> Jit::create(const JitOptions& options) {
  initializeNativeTarget();
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(options.target.triple)};
  jtmb.setCPU(options.target.cpu);
  std::vector<std::string> features;
  for (size_t pos = 0; pos < options.target.features.size();) {
    size_t comma = options.target.features.find(',', pos);
    if (comma == std::string::npos)
      comma = options.target.features.size();
    if (comma > pos)
      features.push_back(options.target.features.substr(pos, comma - pos));
    pos = comma + 1;
  }
  jtmb.addFeatures(features);
  auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!built)
    return toFbError(built.takeError(), "cannot create the LLVM JIT");
  std::unique_ptr<llvm::orc::LLJIT> lljit = std::move(*built);
  if (perfMapRequested())
    addPerfMapWriter(*lljit);

  llvm::orc::JITDylib& jd = lljit->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  auto define = [&](const char* name, auto* fn) {
    symbols[lljit->mangleAndIntern(name)] = {
        llvm::orc::ExecutorAddr::fromPtr(reinterpret_cast<void*>(fn)),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  };
  define("fb_parallel_for", &fb_parallel_for);
  define("fb_set_num_threads", &fb_set_num_threads);
  define("fb_get_num_threads", &fb_get_num_threads);
  define("expf", &fbExpf);
  define("logf", &fbLogf);
  define("tanhf", &fbTanhf);
  define("erff", &fbErff);
  define("powf", &fbPowf);
  define("pow", &fbPow);
  define("sinf", &fbSinf);
  define("cosf", &fbCosf);
  define("tanf", &fbTanf);
  define("asinf", &fbAsinf);
  define("acosf", &fbAcosf);
  define("atanf", &fbAtanf);
  define("sinhf", &fbSinhf);
  define("coshf", &fbCoshf);
  define("asinhf", &fbAsinhf);
  define("acoshf", &fbAcoshf);
  define("atanhf", &fbAtanhf);
  define("log1pf", &fbLog1pf);
  define("fmodf", &fbFmodf);
  define("roundf", &fbRoundf);
  define("sqrtf", &fbSqrtf);
  define("floorf", &fbFloorf);
  define("ceilf", &fbCeilf);
  define("nearbyintf", &fbNearbyintf);
  define("rintf", &fbRintf);
  define("memset", &fbMemset);
  define("memcpy", &fbMemcpy);
  define("memmove", &fbMemmove);
  if (llvm::Error err = jd.define(llvm::orc::absoluteSymbols(std::move(symbols))))
    return toFbError(std::move(err), "cannot define the runtime symbols in the JIT");
  // Anything else (other libm functions) resolves against the process.
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      lljit->getDataLayout().getGlobalPrefix());
  if (!generator)
    return toFbError(generator.takeError(), "cannot search the process for symbols");
  jd.addGenerator(std::move(*generator));
  return std::unique_ptr<Jit>(new Jit(options, std::move(lljit)));
}

Jit::Jit(const JitOptions& options, std::unique_ptr<llvm::orc::LLJIT> jit)
    : m_options(options), m_jit(std::move(jit)), m_state(std::make_unique<State>()) {}

Jit::~Jit() = default;

Status Jit::addObject(const std::string& name, const std::string& object) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, name);
  if (llvm::Error err = m_jit->addObjectFile(std::move(buffer)))
    return toFbError(std::move(err), "cannot link module '" + name + "' in the JIT");
  return Status::success();
}

Status Jit::addModule(JitModule module) {
  std::vector<JitModule> one;
  one.push_back(std::move(module));
  return addModules(std::move(one));
}

Status Jit::addModules(std::vector<JitModule> modules) {
  auto start = std::chrono::steady_clock::now();
  size_t n = modules.size();
  std::vector<std::shared_ptr<const std::string>> objects(n);
  std::vector<std::optional<Error>> errors(n);
  std::vector<char> hits(n, 0);
  std::vector<JitStats> threadStats;
  std::atomic<size_t> next{0};
  auto work = [&](JitStats& st) {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      bool hit = false;
      int level = modules[i].optLevel >= 0 ? modules[i].optLevel : m_options.optLevel;
      auto obj = compileModuleToObject(*modules[i].module, m_options.target, level,
                                       m_options.useCache, &hit, &st);
      if (!obj.ok()) {
        errors[i] = obj.error();
        continue;
      }
      objects[i] = *obj;
      hits[i] = hit;
    }
  };
  int threads = m_options.compileThreads > 0
                    ? m_options.compileThreads
                    : int(std::max(1u, std::thread::hardware_concurrency()));
  threads = int(std::min<size_t>(size_t(threads), n));
  threadStats.resize(size_t(std::max(threads, 1)));
  if (threads <= 1) {
    work(threadStats[0]);
  } else {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
      pool.emplace_back(work, std::ref(threadStats[size_t(t)]));
    work(threadStats[0]);
    for (std::thread& t : pool)
      t.join();
  }
  for (size_t i = 0; i < n; ++i)
    if (errors[i])
      return *errors[i];

  std::lock_guard<std::mutex> lock(m_state->mutex);
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = modules[i].module->getModuleIdentifier();
    Status linked = addObject(name, *objects[i]);
    if (!linked.ok() && hits[i]) {
      // A cached object that does not link (a damaged file on disk): compile it afresh.
      int level = modules[i].optLevel >= 0 ? modules[i].optLevel : m_options.optLevel;
      FB_ASSIGN_OR_RETURN(auto fresh, compileModuleToObject(*modules[i].module, m_options.target,
                                                            level, /*useCache=*/false));
      hits[i] = 0;
      linked = addObject(name, *fresh);
    }
    FB_TRY(linked);
  }
  JitStats& s = m_state->stats;
  for (const JitStats& t : threadStats) {
    s.optimizeMs += t.optimizeMs;
    s.codegenMs += t.codegenMs;
  }
  s.modules += int(n);
  s.cacheHits += int(std::count(hits.begin(), hits.end(), 1));
  s.wallMs += msSince(start);
  return Status::success();
}

Expected<void*> Jit::lookup(const std::string& name) {
  std::lock_guard<std::mutex> lock(m_state->mutex);
  auto addr = m_jit->lookup(name);
  if (!addr)
    return toFbError(addr.takeError(), "JIT lookup of '" + name + "'");
  return addr->toPtr<void*>();
}

Expected<FbKernelFn> Jit::lookupKernel(const std::string& name) {
  FB_ASSIGN_OR_RETURN(void* p, lookup(name));
  return reinterpret_cast<FbKernelFn>(p);
}

JitStats Jit::stats() const {
  std::lock_guard<std::mutex> lock(m_state->mutex);
  return m_state->stats;
}

} // namespace fb::cg
