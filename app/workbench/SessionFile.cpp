// Session files: capture, write, read, restore.
#include "app/workbench/SessionFile.h"

#include "app/workbench/HeaderLines.h"
#include "app/workbench/Reproducer.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/FileRead.h"
#include "core/Verifier.h"
#include "core/text/IrParser.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace fb::workbench {

namespace {

/// The first line of every session file.
constexpr const char* kSignature = "// fusebox session, version 1";

Expected<int64_t> parseCount(const std::string& value) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < 0)
    return makeError("expected a count (0 or more), got '", value, "'");
  return v;
}

std::vector<std::string> splitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep))
    if (!part.empty())
      out.push_back(part);
  return out;
}

/// Applies one header line to `state`; `schedule.K` keys carry snapshot K's overrides.
Status applyLine(SessionState& state, const std::string& key, const std::string& value) {
  if (key == "model") {
    state.modelName = value;
  } else if (key == "model-path") {
    state.modelPath = value;
  } else if (key == "pipeline") {
    if (!value.empty()) {
      FB_ASSIGN_OR_RETURN(state.pipeline, parsePipeline(value));
    }
  } else if (key == "current") {
    FB_ASSIGN_OR_RETURN(int64_t v, parseCount(value));
    state.current = size_t(v);
  } else if (key == "pass-limit") {
    if (value != "none") {
      FB_ASSIGN_OR_RETURN(int64_t v, parseCount(value));
      state.passLimit = v;
    }
  } else if (key == "disabled") {
    for (const std::string& p : splitOn(value, ','))
      state.disabled.insert(p);
  } else if (key.rfind("schedule.", 0) == 0) {
    FB_ASSIGN_OR_RETURN(int64_t index, parseCount(key.substr(9)));
    if (auto parsed = cg::parseScheduleOverrides(value); !parsed.ok())
      return parsed.error();
    state.schedules[size_t(index)] = value;
  } else if (key == "faults") {
    if (value != "none") {
      FB_ASSIGN_OR_RETURN(state.faults, parseFaultList({value}));
    }
  } else if (key == "compare") {
    const std::vector<std::string> ab = splitOn(value, ',');
    if (ab.size() != 2)
      return makeError("expected two snapshot indices 'A,B', got '", value, "'");
    FB_ASSIGN_OR_RETURN(int64_t a, parseCount(ab[0]));
    FB_ASSIGN_OR_RETURN(int64_t b, parseCount(ab[1]));
    state.compare = std::make_pair(size_t(a), size_t(b));
  }
  return Status::success(); // unknown keys: a newer writer's, ignored
}

} // namespace

size_t lastSnapshotNeeded(const SessionState& state) {
  size_t last = state.current;
  if (state.compare)
    last = std::max({last, state.compare->first, state.compare->second});
  return last;
}

SessionState captureSession(const Session& session, const PassManagerOptions& options,
                            std::optional<std::pair<size_t, size_t>> compare) {
  SessionState s;
  s.model = session.graph(0);
  s.modelName = session.displayName();
  s.modelPath = session.modelPath();
  s.pipeline = session.pipeline();
  s.current = session.currentIndex();
  s.passLimit = options.passLimit;
  s.disabled = options.disabled;
  for (size_t i = 0; i < session.snapshotCount(); ++i)
    if (std::string text = session.scheduleText(i); !text.empty())
      s.schedules[i] = text;
  s.faults = enabledFaults();
  s.compare = compare;
  return s;
}

Status writeSessionFile(const std::string& path, const SessionState& state) {
  if (!state.model)
    return makeError(path, ": no model to save");
  std::ostringstream h;
  h << kSignature << "; open it with fusebox (File > Open Session)\n";
  h << "// model: " << state.modelName << "\n";
  if (!state.modelPath.empty())
    h << "// model-path: " << state.modelPath << "\n";
  h << "// pipeline: " << pipelineText(state.pipeline) << "\n";
  h << "// current: " << state.current << "\n";
  h << "// pass-limit: " << (state.passLimit ? std::to_string(*state.passLimit) : "none") << "\n";
  std::string disabled;
  for (const std::string& p : state.disabled)
    disabled += (disabled.empty() ? "" : ",") + p;
  h << "// disabled: " << disabled << "\n";
  for (const auto& [index, text] : state.schedules)
    h << "// schedule." << index << ": " << text << "\n";
  std::string faults;
  for (Fault f : state.faults)
    faults += (faults.empty() ? "" : ",") + std::string(faultInfo(f).name);
  h << "// faults: " << (faults.empty() ? "none" : faults) << "\n";
  if (state.compare)
    h << "// compare: " << state.compare->first << "," << state.compare->second << "\n";
  h << "\n";
  FB_TRY(writeHeaderAndGraph(path, h.str(), *state.model));
  return Status::success();
}

Expected<SessionState> readSessionFile(const std::string& path) {
  FB_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "session file"));
  const Header header = readHeader(text);
  if (header.firstLine.rfind(kSignature, 0) != 0)
    return makeError(path, ": not a Fusebox session file (its first line is not '", kSignature,
                     "')");
  SessionState state;
  for (const HeaderLine& h : header.lines)
    if (Status st = applyLine(state, h.key, h.value); !st.ok())
      return makeError(path, ":", h.line, ": ", h.key, ": ", st.error().message());
  FB_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, parseGraph(text, path));
  FB_TRY(verify(*graph));
  state.model = std::move(graph);
  if (state.modelName.empty())
    state.modelName = "session model";
  return state;
}

void applySessionOptions(Session& session, const SessionState& state) {
  PassManagerOptions& pm = session.passManagerOptions();
  pm.passLimit = state.passLimit;
  pm.disabled = state.disabled;
  for (Fault f : state.faults)
    setFaultEnabled(f, true);
}

void applySessionSchedules(Session& session, const SessionState& state) {
  for (const auto& [index, text] : state.schedules)
    if (index < session.snapshotCount())
      if (auto overrides = cg::parseScheduleOverrides(text); overrides.ok())
        session.setScheduleOverrides(index, std::move(overrides).value());
}

Status restoreSession(Session& session, const SessionState& state) {
  if (!state.model)
    return makeError("the session has no model");
  session.loadGraph(state.model->clone(), state.modelName);
  session.setPipelineSteps(state.pipeline);
  applySessionOptions(session, state);
  while (session.snapshotCount() <= lastSnapshotNeeded(state) && session.canStep()) {
    Expected<size_t> at = session.step();
    if (!at.ok())
      return at.error().withContext("restoring the session: step " +
                                    std::to_string(session.snapshotCount()));
  }
  applySessionSchedules(session, state);
  session.select(std::min(state.current, session.snapshotCount() - 1));
  return Status::success();
}

} // namespace fb::workbench
