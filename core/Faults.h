// Built-in faults: realistic miscompiles in real passes and kernels, off by default, that a
// user turns on to learn the debugging tools (bisect, numeric diff) or a test turns on to check
// that those tools find them. Passes and codegen consult faultEnabled() at the faulty spot.
#pragma once

#include "core/Error.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fb {

/// One fault per entry of core/Faults.def.
enum class Fault : uint8_t {
#define FAULT(Id, Name, Where, Description) Id,
#include "core/Faults.def"
};

/// What --list-faults prints about a fault.
struct FaultInfo {
  Fault fault;
  const char* name;        ///< kebab-case, as --inject-fault takes it
  const char* where;       ///< the pass that carries it, or "codegen"
  const char* description; ///< one paragraph: what goes wrong and when it shows
  /// True for a fault in generated code: bisection over passes cannot name it, kernel
  /// bisection (mixed execution) does.
  bool inCodegen() const { return std::string_view(where) == "codegen"; }
};

/// Every fault, in the order of Faults.def.
const std::vector<FaultInfo>& allFaults();
const FaultInfo& faultInfo(Fault fault);
/// The fault named `name`, or an error listing the names.
Expected<Fault> faultFromName(std::string_view name);

/// True when `fault` is on. One relaxed atomic load, so a pass may ask at every rewrite; the
/// set is process-wide and may change from any thread (the GUI's fault menu, a test).
bool faultEnabled(Fault fault);
void setFaultEnabled(Fault fault, bool enabled);
/// The faults that are on, in the order of Faults.def.
std::vector<Fault> enabledFaults();
/// Turns every fault off.
void disableAllFaults();
/// Parses "a,b" (the names of --inject-fault, repeatable) into faults; an unknown name is an
/// error that lists the known ones.
Expected<std::vector<Fault>> parseFaultList(const std::vector<std::string>& lists);

/// Turns `faults` on for its lifetime and restores the previous set when it ends (tests, a
/// bisection the GUI runs with a chosen fault).
class ScopedFaults {
public:
  explicit ScopedFaults(const std::vector<Fault>& faults);
  ~ScopedFaults();
  ScopedFaults(const ScopedFaults&) = delete;
  ScopedFaults& operator=(const ScopedFaults&) = delete;

private:
  std::vector<Fault> m_previous;
};

} // namespace fb
