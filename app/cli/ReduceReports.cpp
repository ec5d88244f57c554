// The reduce and replay reports.
#include "app/cli/ReduceReports.h"
#include "app/cli/PipelineReports.h"

#include <cstdio>
#include <sstream>

namespace fb::cli {

namespace {

std::string nodeLabel(const Node& n) {
  std::string name = n.name().empty() ? std::string(opName(n.op())) : n.name();
  return name + " (" + std::string(opName(n.op())) + " #" + std::to_string(n.id()) + ")";
}

std::string nodes(size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

std::string faultNames(const std::vector<Fault>& faults) {
  std::string s;
  for (Fault f : faults)
    s += (s.empty() ? "" : ",") + std::string(faultInfo(f).name);
  return s.empty() ? "none" : s;
}

} // namespace

std::string reduceText(const workbench::ReduceReport& r, const std::string& backend,
                       const std::string& file, const std::vector<std::string>& inputFiles) {
  std::ostringstream os;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", r.seconds);
  os << "reduce: " << nodes(r.nodesBefore) << " -> " << nodes(r.nodesAfter) << " on " << backend
     << ", " << r.probes << (r.probes == 1 ? " run" : " runs") << " compared (" << secs << ")\n";
  if (r.probeLimitHit)
    os << "  stopped at the bound of " << r.probes
       << " runs: a smaller reproducer may exist\n";
  if (r.candidates > 0)
    os << "  " << r.candidates << " candidates skipped unchecked (no output, no verify or "
       << "symbolic shapes)\n";
  os << "  kept:";
  for (const auto& n : r.reduced->nodes())
    os << " " << nodeLabel(*n);
  os << "\n  inputs: " << r.reduced->inputs().size() << " (" << r.cutValues
     << " recorded values of dropped nodes), outputs: " << r.reduced->outputs().size() << "\n";
  for (const workbench::OutputComparison& o : r.outcome.comparison.outputs) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "  output %s: max_abs %.3e  max_rel %.3e  %s\n",
                  o.name.c_str(), o.result.maxAbs, o.result.maxRel,
                  o.result.ok ? "ok" : "MISMATCH");
    os << buf;
  }
  os << "wrote " << file;
  for (const std::string& f : inputFiles)
    os << ", " << f;
  os << "\nreplay: fusebox-opt --replay " << file << "\n";
  return os.str();
}

void writeReduceJson(JsonWriter& w, const workbench::ReduceReport& r, const std::string& backend,
                     const std::string& file, const std::vector<std::string>& inputFiles) {
  w.field("nodes_before", int64_t(r.nodesBefore));
  w.field("nodes_after", int64_t(r.nodesAfter));
  w.field("cut_values", int64_t(r.cutValues));
  w.field("probes", r.probes);
  w.field("skipped_candidates", r.candidates);
  w.field("probe_limit_hit", r.probeLimitHit);
  w.field("seconds", r.seconds);
  w.key("kept");
  w.beginArray();
  for (const auto& n : r.reduced->nodes())
    w.value(n->name().empty() ? std::string(opName(n->op())) + "#" + std::to_string(n->id())
                              : n->name());
  w.endArray();
  w.field("file", file);
  w.key("inputs");
  w.beginArray();
  for (const std::string& f : inputFiles)
    w.value(f);
  w.endArray();
  w.field("replay", "fusebox-opt --replay " + file);
  writeCompareJson(w, backend, r.outcome.comparison.outputs, r.outcome.comparison.ok);
}

std::string replayText(const std::string& file, const workbench::Reproducer& repro,
                       const workbench::ReplayReport& report) {
  std::ostringstream os;
  const std::string backend = workbench::backendName(repro.check.run.backend);
  const std::string pipeline = workbench::pipelineText(repro.check.pipeline);
  os << "replay: " << file << ": " << nodes(repro.graph->numNodes()) << ", pipeline '"
     << pipeline << "', backend " << backend << ", faults " << faultNames(report.faults) << "\n";
  os << compareText(backend, report.outcome.comparison.outputs, report.outcome.comparison.ok);
  if (report.outcome.mismatch)
    os << "still fails: the result on " << backend << " disagrees with the interpreter\n";
  else
    os << "passes: the result on " << backend << " agrees with the interpreter\n";
  return os.str();
}

void writeReplayJson(JsonWriter& w, const std::string& file, const workbench::Reproducer& repro,
                     const workbench::ReplayReport& report) {
  w.field("file", file);
  w.field("nodes", int64_t(repro.graph->numNodes()));
  w.field("pipeline", workbench::pipelineText(repro.check.pipeline));
  w.key("faults");
  w.beginArray();
  for (Fault f : report.faults)
    w.value(faultInfo(f).name);
  w.endArray();
  w.field("mismatch", report.outcome.mismatch);
  writeCompareJson(w, workbench::backendName(repro.check.run.backend),
                   report.outcome.comparison.outputs, report.outcome.comparison.ok);
}

} // namespace fb::cli
