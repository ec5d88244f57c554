// A process-wide cache of compiled kernel objects keyed by (LLVM IR hash, target, opt level).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace llvm {
class Module;
}

namespace fb::cg {

/// Compiled relocatable objects of kernel modules, so recompiling an unchanged model (the same
/// kernels for the same target and level) skips optimization and code generation. Thread-safe.
class KernelCache {
public:
  /// The cache every Jit uses by default.
  static KernelCache& global();

  /// The key of a module: a hash of its printed (unoptimized) IR with the target key and
  /// optimization level. Two modules with the same key compile to the same object.
  static std::string keyOf(const llvm::Module& module, const std::string& targetKey, int optLevel);

  /// The object stored under `key`, or nullptr.
  std::shared_ptr<const std::string> find(const std::string& key);
  void insert(const std::string& key, std::shared_ptr<const std::string> object);
  void clear();

  int64_t hits() const { return m_hits; }
  int64_t misses() const { return m_misses; }
  /// Of the hits, how many were read from the disk directory.
  int64_t diskHits() const { return m_diskHits; }
  size_t size();

  /// Also keeps objects as files in `dir` (created when needed), so that another process
  /// compiling the same kernels finds them; empty (the default) keeps the cache in memory.
  /// File names carry the key's hash, level, and a hash of the target and of the compiler
  /// (Fusebox cache version, LLVM version), so a changed compiler never reads stale objects.
  void setDirectory(std::string dir);
  std::string directory();
  /// Where fusebox-opt keeps the cache: $FUSEBOX_KERNEL_CACHE ("off": nowhere), else
  /// $XDG_CACHE_HOME/fusebox/kernels, else $HOME/.cache/fusebox/kernels ("" without HOME).
  static std::string defaultDirectory();

private:
  std::string fileFor(const std::string& key) const;

  std::mutex m_mutex;
  std::unordered_map<std::string, std::shared_ptr<const std::string>> m_objects;
  std::string m_directory; // guarded by m_mutex
  std::atomic<int64_t> m_hits{0}, m_misses{0}, m_diskHits{0};
};

/// Makes a kernel module's symbols depend on its code only, so that identical kernels (the
/// same conv shape at several places of a model, or in another model) share one compiled
/// object and one symbol: strips value, block and struct-type names, renames the entry
/// function and every function or global whose name starts with `kernelName` to
/// "fbk_<hash of the stripped module>" (+ the same suffix), and returns the new entry name.
/// For the JIT only: the IR loses the names that point back to the graph.
std::string canonicalizeKernelModule(llvm::Module& module, const std::string& kernelName);

} // namespace fb::cg
