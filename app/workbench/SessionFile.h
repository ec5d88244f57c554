// Session files (.fbsession): a whole workbench session as one file, so a bug report is one
// attachment. Format (docs/decisions.md, "Session files"): `// key: value` header lines (the
// pipeline, the pass manager's limits, the current snapshot, schedule overrides per snapshot,
// the faults that are on, the snapshots being compared) followed by the imported model as
// self-contained text IR (constants included), so the file opens on any machine.
#pragma once

#include "app/workbench/Session.h"
#include "core/Faults.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fb::workbench {

/// Everything a session file holds.
struct SessionState {
  std::shared_ptr<const Graph> model; ///< the imported model (snapshot 0), dims bound
  std::string modelName;              ///< its display name ("resnet18.onnx")
  std::string modelPath;              ///< where it was opened from (information only)
  std::vector<PipelineStep> pipeline;
  size_t current = 0; ///< the snapshot shown
  std::optional<int64_t> passLimit;
  std::set<std::string> disabled; ///< passes disabled in the pass manager
  /// Schedule overrides by snapshot index, as --schedule text ("k2:tile=32x32").
  std::map<size_t, std::string> schedules;
  std::vector<Fault> faults;                        ///< built-in faults that were on
  std::optional<std::pair<size_t, size_t>> compare; ///< the snapshots in the diff view
};

/// The last snapshot a restore must compute: the current one or a compared one.
size_t lastSnapshotNeeded(const SessionState& state);

/// The state of `session` (which must have a model) under its pass manager `options`
/// (Session::passManagerOptions()); `compare` is the GUI's diff selection.
SessionState captureSession(const Session& session, const PassManagerOptions& options,
                            std::optional<std::pair<size_t, size_t>> compare = std::nullopt);

/// Writes `state` to `path` (.fbsession). Errors name the file.
Status writeSessionFile(const std::string& path, const SessionState& state);

/// Reads a session file: the header (an unknown key is ignored; a bad value is an error naming
/// FILE:LINE and the key) and the model (verified).
Expected<SessionState> readSessionFile(const std::string& path);

/// The parts of a restore around the steps, for callers that run the steps themselves (the GUI,
/// in the background): before them, the pass manager's limits and the faults (turned on,
/// process-wide); after them, the schedule overrides of the snapshots that exist (the header
/// was checked when read, so these cannot fail).
void applySessionOptions(Session& session, const SessionState& state);
void applySessionSchedules(Session& session, const SessionState& state);

/// Puts `state` into `session` synchronously: the model, the pipeline and the pass manager's
/// limits, every pipeline step up to `current` run, the schedule overrides, and the current
/// snapshot selected. Turns the state's faults on (process-wide, as --inject-fault). On a
/// failing step the snapshots before it stay and the error says which step.
Status restoreSession(Session& session, const SessionState& state);

} // namespace fb::workbench
