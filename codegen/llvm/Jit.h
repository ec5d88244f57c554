// In-process compilation of kernel modules with ORC LLJIT, through the compiled-kernel cache.
#pragma once

#include "codegen/llvm/Target.h"
#include "codegen/runtime/RuntimeAbi.h"
#include "core/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class LLJIT;
}
} // namespace llvm

namespace fb::cg {

/// How a Jit compiles what it is given.
struct JitOptions {
  TargetInfo target = TargetInfo::host();
  int optLevel = 3;       ///< LLVM pipeline level (0..3) that addModule runs before codegen
  bool useCache = true;   ///< look objects up in (and add them to) KernelCache::global()
  int compileThreads = 0; ///< threads addModules compiles with; 0 = hardware concurrency
};

/// An LLVM module with the context that owns it (contexts are per module so that modules can
/// be compiled on several threads at once).
struct JitModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  /// LLVM pipeline level for this module; -1 takes JitOptions::optLevel.
  int optLevel = -1;
};

/// A fresh, empty module named `name`, configured for `target` (triple, data layout), in its
/// own context. Emitters add functions to it; configureModule tags them with the target CPU.
JitModule newJitModule(const std::string& name, const TargetInfo& target = TargetInfo::host());

/// What the compilations of one Jit cost.
struct JitStats {
  int modules = 0;         ///< modules added
  int cacheHits = 0;       ///< of which found compiled in the kernel cache
  double optimizeMs = 0;   ///< summed over compile threads
  double codegenMs = 0;    ///< summed over compile threads
  double wallMs = 0;       ///< wall time of addModule(s) calls, linking included
};

/// An ORC LLJIT instance for the host with the runtime (fb_parallel_for, ...) and libm defined.
/// Modules are verified, optimized at JitOptions::optLevel, compiled to objects (or taken from
/// the kernel cache) and linked; kernels are then looked up by name. Methods are thread-safe.
///
/// Typical use (a test):
///   auto jit = Jit::create();                     // Expected<std::unique_ptr<Jit>>
///   JitModule m = newJitModule("t");
///   emitSomething(*m.module);                     // defines `void k(void* const*)`
///   FB_TRY((*jit)->addModule(std::move(m)));
///   FbKernelFn k = *(*jit)->lookupKernel("k");
///   void* args[] = {a, b, c}; k(args);
class Jit {
public:
  static Expected<std::unique_ptr<Jit>> create(const JitOptions& options = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  const JitOptions& options() const { return m_options; }

  /// Compiles one module and makes its functions available. The module is consumed.
  Status addModule(JitModule module);
  /// Compiles several modules in parallel (JitOptions::compileThreads) and links them all.
  /// Fails with the first error in module order.
  Status addModules(std::vector<JitModule> modules);

  /// The address of a defined function or global.
  Expected<void*> lookup(const std::string& name);
  /// A kernel entry point with the FbKernelFn ABI.
  Expected<FbKernelFn> lookupKernel(const std::string& name);

  JitStats stats() const;

private:
  Jit(const JitOptions& options, std::unique_ptr<llvm::orc::LLJIT> jit);
  Status addObject(const std::string& name, const std::string& object);

  JitOptions m_options;
  std::unique_ptr<llvm::orc::LLJIT> m_jit;
  struct State;
  std::unique_ptr<State> m_state; // stats and the lock
};

/// Compiles one configured module to a relocatable object in memory for `target`: verifies,
/// optimizes at `optLevel`, generates code; uses and fills KernelCache::global() when
/// `useCache`. `hit` (when given) tells whether the cache answered.
Expected<std::shared_ptr<const std::string>> compileModuleToObject(llvm::Module& module,
                                                                   const TargetInfo& target,
                                                                   int optLevel, bool useCache,
                                                                   bool* hit = nullptr,
                                                                   JitStats* stats = nullptr);

} // namespace fb::cg
