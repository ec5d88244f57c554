// The fault registry: the table from Faults.def and one atomic bit set.
#include "core/Faults.h"

#include <atomic>
#include <cstdint>

namespace fb {

namespace {

/// Bit i set: fault i is on. Faults are read at rewrite sites and in kernel emitters running on
/// several threads, so reads are lock-free.
std::atomic<uint64_t> g_enabled{0};

constexpr unsigned kFaultCount = 0
#define FAULT(Id, Name, Where, Description) +1
#include "core/Faults.def"
    ;
static_assert(kFaultCount <= 64, "the enabled set is one 64-bit word");

uint64_t bit(Fault f) { return uint64_t(1) << unsigned(f); }

} // namespace

const std::vector<FaultInfo>& allFaults() {
  static const std::vector<FaultInfo> faults = {
#define FAULT(Id, Name, Where, Description) {Fault::Id, Name, Where, Description},
#include "core/Faults.def"
  };
  return faults;
}

const FaultInfo& faultInfo(Fault fault) { return allFaults().at(size_t(fault)); }

Expected<Fault> faultFromName(std::string_view name) {
  std::string names;
  for (const FaultInfo& f : allFaults()) {
    if (name == f.name)
      return f.fault;
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  return makeError("unknown fault '", std::string(name), "' (faults: ", names, ")");
}

bool faultEnabled(Fault fault) {
  return (g_enabled.load(std::memory_order_relaxed) & bit(fault)) != 0;
}

void setFaultEnabled(Fault fault, bool enabled) {
  if (enabled)
    g_enabled.fetch_or(bit(fault));
  else
    g_enabled.fetch_and(~bit(fault));
}

std::vector<Fault> enabledFaults() {
  std::vector<Fault> on;
  for (const FaultInfo& f : allFaults())
    if (faultEnabled(f.fault))
      on.push_back(f.fault);
  return on;
}

void disableAllFaults() { g_enabled.store(0); }

Expected<std::vector<Fault>> parseFaultList(const std::vector<std::string>& lists) {
  std::vector<Fault> faults;
  for (const std::string& list : lists) {
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      std::string name = list.substr(start, comma == std::string::npos ? std::string::npos
                                                                        : comma - start);
      if (name.empty())
        return makeError("empty fault name in '", list, "'");
      FB_ASSIGN_OR_RETURN(Fault f, faultFromName(name));
      faults.push_back(f);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  }
  return faults;
}

ScopedFaults::ScopedFaults(const std::vector<Fault>& faults) : m_previous(enabledFaults()) {
  for (Fault f : faults)
    setFaultEnabled(f, true);
}

ScopedFaults::~ScopedFaults() {
  disableAllFaults();
  for (Fault f : m_previous)
    setFaultEnabled(f, true);
}

} // namespace fb
