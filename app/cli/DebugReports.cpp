// Text and JSON of --bisect and --list-faults.
#include "app/cli/DebugReports.h"
#include "core/Faults.h"

#include <cstdio>
#include <sstream>

namespace fb::cli {

namespace {

/// `text` wrapped at `width` columns, each line indented by `indent` spaces.
std::string wrap(const std::string& text, size_t indent, size_t width) {
  std::istringstream words(text);
  std::string word, line, out;
  const std::string pad(indent, ' ');
  while (words >> word) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += pad + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty())
    out += pad + line + "\n";
  return out;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

} // namespace

std::string bisectText(const workbench::BisectReport& r, const std::string& backend,
                       const std::string& reproduce) {
  std::ostringstream os;
  os << "bisect: " << r.snapshots << " snapshots on " << backend << ", " << r.probes
     << (r.probes == 1 ? " run" : " runs") << " compared";
  char secs[32];
  std::snprintf(secs, sizeof secs, " (%.1f s)\n", r.seconds);
  os << secs;
  if (!r.mismatch) {
    os << "no mismatch: the last snapshot passes --compare on " << backend << "\n";
    return os.str();
  }
  if (r.index == 0) {
    os << "first failing state: the imported model itself (snapshot 0) on " << backend
       << ": no pass to blame\n";
  } else {
    os << "first failing pass application: " << r.index << " " << r.pass;
    if (r.step != r.pass)
      os << " (" << r.step << ")";
    os << "\n";
    if (r.rewrite) {
      os << "  first failing rewrite: " << *r.rewrite << " of " << r.rewrites
         << " (stopped after " << *r.rewrite - 1 << " it passes, after " << *r.rewrite
         << " it fails)\n";
      if (!r.nodes.empty()) {
        os << "  nodes it touched (" << r.nodesFrom << "):";
        for (const workbench::TouchedNode& n : r.nodes)
          os << " " << n.name << " (#" << n.id << ")";
        os << "\n";
      }
    } else if (r.rewrites > 0) {
      os << "  no single rewrite of its " << r.rewrites << " fails alone\n";
    } else {
      os << "  the pass counts no rewrites\n";
    }
  }
  if (!r.runError.empty())
    os << "  it fails to run: " << r.runError << "\n";
  if (!r.runError.empty())
    os << "  it fails to run: " << r.runError << "\n";
  for (const workbench::OutputComparison& o : r.comparison.outputs)
    os << "  output " << o.name << ": max_abs " << sci(o.result.maxAbs) << "  cosine "
       << o.result.cosine << (o.result.ok ? "  ok" : "  MISMATCH") << "\n";
  if (r.firstDivergent)
    os << "  first divergent node: " << r.firstDivergentName << " (#" << *r.firstDivergent
       << ")\n";
  else
    os << "  first divergent node: none (on the interpreter every matched value agrees)\n";
  if (backend != "interp") {
    if (r.interpreterAgrees)
      os << "  the interpreter computes this graph right: " << backend
         << "'s code for it is wrong\n";
    else
      os << "  the interpreter disagrees too: the graph itself is wrong\n";
  }
  if (r.kernel) {
    const workbench::KernelBlame& k = *r.kernel;
    os << "  first kernel whose code disagrees: " << k.name << " (" << k.opSummary << ", "
       << k.generator << (k.schedule.empty() ? "" : ", schedule " + k.schedule) << ")";
    if (!k.nodeNames.empty())
      os << " computing " << k.nodeNames;
    os << "\n";
  }
  if (!reproduce.empty())
    os << "  reproduce: " << reproduce << "\n";
  os << "MISMATCH\n";
  return os.str();
}

void writeBisectJson(JsonWriter& w, const workbench::BisectReport& r, const std::string& backend) {
  w.field("mismatch", r.mismatch);
  w.field("backend", backend);
  w.field("snapshots", int64_t(r.snapshots));
  w.key("pass");
  if (r.mismatch && r.index > 0)
    w.value(r.pass);
  else
    w.null();
  w.key("index");
  if (r.mismatch)
    w.value(int64_t(r.index));
  else
    w.null();
  w.field("step", r.step);
  w.field("rewrites", r.rewrites);
  w.key("rewrite");
  if (r.rewrite)
    w.value(*r.rewrite);
  else
    w.null();
  w.key("kernel");
  if (r.kernel) {
    w.beginObject();
    w.field("index", int64_t(r.kernel->index));
    w.field("name", r.kernel->name);
    w.field("op", r.kernel->opSummary);
    w.field("generator", r.kernel->generator);
    w.field("schedule", r.kernel->schedule);
    w.field("nodes", r.kernel->nodeNames);
    w.endObject();
  } else {
    w.null();
  }
  w.key("nodes");
  w.beginArray();
  for (const workbench::TouchedNode& n : r.nodes)
    w.value(n.name);
  w.endArray();
  w.key("node_ids");
  w.beginArray();
  for (const workbench::TouchedNode& n : r.nodes)
    w.value(int64_t(n.id));
  w.endArray();
  w.field("nodes_from", r.nodesFrom);
  w.key("first_divergent_node");
  if (r.firstDivergent)
    w.value(r.firstDivergentName);
  else
    w.null();
  w.key("max_abs");
  if (r.mismatch)
    w.value(r.maxAbs);
  else
    w.null();
  w.field("interpreter_agrees", r.interpreterAgrees);
  if (!r.runError.empty())
    w.field("run_error", r.runError);
  w.key("outputs");
  w.beginArray();
  for (const workbench::OutputComparison& o : r.comparison.outputs) {
    w.beginObject();
    w.field("name", o.name);
    w.field("max_abs", o.result.maxAbs);
    w.field("max_rel", o.result.maxRel);
    w.field("cosine", o.result.cosine);
    w.field("ok", o.result.ok);
    w.endObject();
  }
  w.endArray();
  w.field("probes", r.probes);
  w.field("seconds", r.seconds);
}

std::string faultListText() {
  std::ostringstream os;
  os << "Built-in faults (off unless --inject-fault NAME; for teaching and for testing "
        "--bisect):\n";
  for (const FaultInfo& f : allFaults()) {
    os << "  " << f.name << "  [" << f.where << "]" << (faultEnabled(f.fault) ? "  (on)" : "")
       << "\n";
    os << wrap(f.description, 6, 96);
  }
  return os.str();
}

void writeFaultListJson(JsonWriter& w) {
  w.key("faults");
  w.beginArray();
  for (const FaultInfo& f : allFaults()) {
    w.beginObject();
    w.field("name", f.name);
    w.field("where", f.where);
    w.field("codegen", f.inCodegen());
    w.field("enabled", faultEnabled(f.fault));
    w.field("description", f.description);
    w.endObject();
  }
  w.endArray();
}

} // namespace fb::cli
