// The compiled-kernel object cache.
#include "codegen/llvm/KernelCache.h"

#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <llvm/Config/llvm-config.h>
#include <unistd.h>

namespace fb::cg {

KernelCache& KernelCache::global() {
  static KernelCache cache;
  return cache;
}

std::string KernelCache::keyOf(const llvm::Module& module, const std::string& targetKey,
                               int optLevel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)h.high64,
                (unsigned long long)h.low64);
  return std::string(hex) + "|O" + std::to_string(optLevel) + "|" + targetKey;
}

std::string KernelCache::fileFor(const std::string& key) const {
  // key = "<32 hex>|O<level>|<target key>"
  size_t bar = key.find('|'), bar2 = key.find('|', bar + 1);
  std::string salt = "fusebox-kernel-cache-v1|LLVM " LLVM_VERSION_STRING "|" + key.substr(bar2 + 1);
  char hex[24];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)llvm::xxh3_64bits(salt));
  return (std::filesystem::path(m_directory) /
          (key.substr(0, bar) + "-" + key.substr(bar + 1, bar2 - bar - 1) + "-" + hex + ".o"))
      .string();
}

std::shared_ptr<const std::string> KernelCache::find(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_objects.find(key);
  if (it != m_objects.end()) {
    ++m_hits;
    return it->second;
  }
  if (!m_directory.empty()) {
    std::ifstream f(fileFor(key), std::ios::binary);
    if (f) {
      std::ostringstream os;
      os << f.rdbuf();
      if (f && !os.str().empty()) {
        auto object = std::make_shared<const std::string>(os.str());
        m_objects[key] = object;
        ++m_hits;
        ++m_diskHits;
        return object;
      }
    }
  }
  ++m_misses;
  return nullptr;
}

void KernelCache::insert(const std::string& key, std::shared_ptr<const std::string> object) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_directory.empty()) {
    // Write to a private name, then rename: readers in other processes see whole files only.
    std::string path = fileFor(key);
    std::string tmp = path + ".tmp" + std::to_string(::getpid());
    std::error_code ec;
    std::filesystem::create_directories(m_directory, ec);
    std::ofstream f(tmp, std::ios::binary);
    f.write(object->data(), std::streamsize(object->size()));
    f.close();
    if (f)
      std::filesystem::rename(tmp, path, ec);
    else
      std::filesystem::remove(tmp, ec);
  }
  m_objects[key] = std::move(object);
}

void KernelCache::setDirectory(std::string dir) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_directory = std::move(dir);
}

std::string KernelCache::directory() {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_directory;
}

std::string KernelCache::defaultDirectory() {
  if (const char* env = std::getenv("FUSEBOX_KERNEL_CACHE"))
    return std::string(env) == "off" ? std::string() : std::string(env);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (std::filesystem::path(xdg) / "fusebox" / "kernels").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (std::filesystem::path(home) / ".cache" / "fusebox" / "kernels").string();
  return "";
}

void KernelCache::clear() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_objects.clear();
  m_hits = m_misses = m_diskHits = 0;
}

size_t KernelCache::size() {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_objects.size();
}

namespace {

std::string hashText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  uint64_t h = llvm::xxh3_64bits(text);
  char hex[24];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  return hex;
}

/// Renames every defined function and global named `from` or `from` + suffix to `to` + suffix.
void renamePrefix(llvm::Module& module, const std::string& from, const std::string& to) {
  auto rename = [&](llvm::GlobalValue& gv) {
    if (gv.isDeclaration())
      return;
    llvm::StringRef name = gv.getName();
    if (name == from || name.starts_with(from + "."))
      gv.setName(to + name.substr(from.size()).str());
  };
  for (llvm::Function& f : module)
    rename(f);
  for (llvm::GlobalVariable& g : module.globals())
    rename(g);
}

} // namespace

std::string canonicalizeKernelModule(llvm::Module& module, const std::string& kernelName) {
  for (llvm::Function& f : module) {
    if (f.isDeclaration())
      continue;
    for (llvm::Argument& a : f.args())
      a.setName("");
    for (llvm::BasicBlock& bb : f) {
      bb.setName("");
      for (llvm::Instruction& i : bb)
        if (!i.getType()->isVoidTy())
          i.setName("");
    }
  }
  for (llvm::StructType* st : module.getIdentifiedStructTypes())
    if (st->hasName())
      st->setName("");
  module.setModuleIdentifier("fbk");
  module.setSourceFileName("fbk");
  // Helpers (closures, micro-kernels) are numbered in module order: their names carry loop and
  // node names that differ between otherwise identical kernels.
  int counter = 0;
  auto renumber = [&](llvm::GlobalValue& gv, const char* kind) {
    llvm::StringRef name = gv.getName();
    if (gv.isDeclaration() || !name.starts_with(kernelName + "."))
      return;
    gv.setName(kernelName + "." + kind + std::to_string(counter++));
  };
  for (llvm::Function& f : module)
    renumber(f, "f");
  for (llvm::GlobalVariable& g : module.globals())
    renumber(g, "g");
  renamePrefix(module, kernelName, "fbk");
  std::string name = "fbk_" + hashText(module);
  renamePrefix(module, "fbk", name);
  module.setModuleIdentifier(name);
  module.setSourceFileName(name);
  return name;
}

} // namespace fb::cg
