// Linux perf's map of JIT code (/tmp/perf-PID.map): with $FUSEBOX_PERF_MAP set, every function
// the JIT links is listed by address, size and name, so `perf record` / `perf report` name the
// kernels' own functions (a Winograd kernel's input transform, its GEMM micro-kernel, its
// output transform) instead of raw addresses.
#pragma once

#include <string>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace fb::cg {

/// The map's path for this process: /tmp/perf-PID.map, where perf looks for it.
std::string perfMapPath();

/// Whether $FUSEBOX_PERF_MAP asks for the map (set and not "0" or "off").
bool perfMapRequested();

/// Names the map gives a shared kernel module's functions: "`label`.f2" for "`symbol`.f2"
/// (a module shared by identical kernels is named by its hash; the label names the kernels).
void setPerfMapLabel(const std::string& symbol, const std::string& label);

/// Adds the map writer to the JIT's object linking layer (JITLink); returns false where the
/// JIT links another way and nothing is written.
bool addPerfMapWriter(llvm::orc::LLJIT& jit);

} // namespace fb::cg
