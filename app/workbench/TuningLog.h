// The tuning log: the schedules `fusebox-opt --tune` measured best, one entry per kernel
// signature and CPU, in a JSON file that later compilations read (as TVM's tuning logs are
// read by ApplyHistoryBest). The file sits next to the kernel cache unless a path is given.
//
// File format (version 1):
//   {"format": "fusebox-tuning-log", "version": 1,
//    "entries": [{"signature": "Conv<...>(...)->f32[...]", "cpu": "znver4", "isa": "avx512",
//                 "op": "Conv+Relu", "kernel": "k3_conv_relu", "model": "resnet18.onnx",
//                 "directives": "mr=6,nr=32", "default_us": 120.5, "tuned_us": 98.2}]}
// "directives" is an override's text after "kN:" (codegen/loops/ScheduleOverride.h); empty
// when the default schedule measured best. Entries are looked up by (signature, cpu, isa).
#pragma once

#include "app/workbench/Compile.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// One kernel's tuning result.
struct TuningEntry {
  std::string signature;  ///< kernelSignature() of the kernel's node
  std::string cpu, isa;   ///< the host CPU as LLVM names it, targetIsa() of the target
  std::string op;         ///< "Conv+Relu": for people reading the file
  std::string kernel;     ///< the kernel's name in the model it was tuned in
  std::string model;      ///< that model's file name
  std::string directives; ///< "mr=6,nr=32"; empty: the default schedule is the best found
  double defaultUs = 0;   ///< the kernel's median time with the default schedule
  double tunedUs = 0;     ///< and with `directives`
};

/// Every entry of one file.
struct TuningLog {
  std::vector<TuningEntry> entries;
  /// The entry for this kernel on this CPU, or nullptr.
  const TuningEntry* find(const std::string& signature, const std::string& cpu,
                          const std::string& isa) const;
  /// Adds `entry`, replacing the one with the same signature, cpu and isa.
  void record(const TuningEntry& entry);
};

/// $FUSEBOX_TUNING_LOG ("off": none), else $XDG_CACHE_HOME/fusebox/tuning-log.json, else
/// $HOME/.cache/fusebox/tuning-log.json (next to the kernel cache); "" without any of them.
std::string defaultTuningLogPath();
/// The file CompileSettings::tuningLog names: the default for "", none ("") for "off".
std::string tuningLogPath(const std::string& setting);

/// Parses a log's text; errors say what is wrong (an entry's position and the missing key).
Expected<TuningLog> parseTuningLog(const std::string& text);
/// The log as JSON text (the format above), entries in order.
std::string tuningLogJson(const TuningLog& log);
/// Reads the log at `path`: an empty log when the file does not exist, an error naming the
/// file for one that cannot be read or parsed.
Expected<TuningLog> readTuningLog(const std::string& path);
/// Writes `log` to `path` (through a temporary file and a rename, creating the folder).
Status writeTuningLog(const std::string& path, const TuningLog& log);

/// kernelSignature() of each kernel `graph` compiles to under `settings` on `inputs`: kernel i
/// is node i of the graph with its shapes bound as the compilation binds them.
Expected<std::vector<std::string>> kernelSignatures(const Graph& graph,
                                                    const CompileSettings& settings,
                                                    const std::vector<Tensor>& inputs);

/// The overrides a compilation of `graph` for `target` uses: the log's directives for every
/// kernel whose signature and CPU match an entry, then `explicitSchedule` (listed last, so an
/// explicit override of the same kernel, by name, "kN" or "*", wins). `inputs` bind symbolic
/// dims as the compilation does (else `dims`). A log that cannot be read adds nothing and its
/// error goes to `warning` when given.
std::vector<cg::ScheduleOverride> scheduleWithTuningLog(const Graph& graph,
                                                        const CompileSettings& settings,
                                                        const std::vector<Tensor>& inputs,
                                                        std::string* warning = nullptr);

} // namespace fb::workbench
