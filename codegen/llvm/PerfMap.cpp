// The JIT's perf map (see PerfMap.h): a JITLink plugin that appends each linked graph's
// callable symbols once their addresses are final.
#include "codegen/llvm/PerfMap.h"

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unistd.h>
#include <unordered_map>

namespace fb::cg {

namespace {

/// One map file per process, shared by every JIT of the process (perf reads
/// /tmp/perf-PID.map); lines are appended under a lock and flushed at once.
class PerfMapFile {
public:
  static PerfMapFile& instance() {
    static PerfMapFile file;
    return file;
  }
  void write(llvm::jitlink::LinkGraph& graph) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_file)
      return;
    for (llvm::jitlink::Symbol* sym : graph.defined_symbols()) {
      if (!sym->isCallable() || !sym->hasName() || sym->getSize() == 0)
        continue;
      std::string name = sym->getName().str();
      const std::string module = name.substr(0, name.find('.'));
      if (auto it = m_labels.find(module); it != m_labels.end())
        name = it->second + name.substr(module.size()) + " [" + module + "]";
      std::fprintf(m_file, "%llx %llx %s\n",
                   static_cast<unsigned long long>(sym->getAddress().getValue()),
                   static_cast<unsigned long long>(sym->getSize()), name.c_str());
    }
    std::fflush(m_file);
  }
  void setLabel(const std::string& symbol, const std::string& label) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_labels[symbol] = label;
  }

private:
  PerfMapFile() { m_file = std::fopen(perfMapPath().c_str(), "a"); }
  std::mutex m_mutex;
  std::FILE* m_file = nullptr;
  std::unordered_map<std::string, std::string> m_labels;
};

/// Local functions that nothing refers to by relocation (calls inside one section are resolved
/// by the assembler) would be pruned as dead symbols; their code stays, so keep their names.
llvm::Error keepFunctionNames(llvm::jitlink::LinkGraph& graph) {
  for (llvm::jitlink::Symbol* sym : graph.defined_symbols())
    if (sym->isCallable() && sym->hasName() && sym->getSize() > 0)
      sym->setLive(true);
  return llvm::Error::success();
}

llvm::Error writeGraph(llvm::jitlink::LinkGraph& graph) {
  PerfMapFile::instance().write(graph);
  return llvm::Error::success();
}

class PerfMapPlugin : public llvm::orc::ObjectLinkingLayer::Plugin {
public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    config.PrePrunePasses.emplace_back(&keepFunctionNames);
    config.PostFixupPasses.emplace_back(&writeGraph);
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override {
    return llvm::Error::success();
  }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey,
                                   llvm::orc::ResourceKey) override {}
};

} // namespace

std::string perfMapPath() {
  return "/tmp/perf-" + std::to_string(::getpid()) + ".map";
}

bool perfMapRequested() {
  const char* v = std::getenv("FUSEBOX_PERF_MAP");
  return v && *v && std::strcmp(v, "0") != 0 && std::strcmp(v, "off") != 0;
}

void setPerfMapLabel(const std::string& symbol, const std::string& label) {
  PerfMapFile::instance().setLabel(symbol, label);
}

bool addPerfMapWriter(llvm::orc::LLJIT& jit) {
  auto* layer = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&jit.getObjLinkingLayer());
  if (!layer)
    return false;
  layer->addPlugin(std::make_unique<PerfMapPlugin>());
  return true;
}

} // namespace fb::cg
