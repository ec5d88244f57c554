// Pipeline reports for fusebox-opt.
#include "app/cli/PipelineReports.h"
#include "core/TextDiff.h"
#include "core/text/IrPrinter.h"
#include "passes/PassRegistry.h"

#include <cstdio>
#include <sstream>

namespace fb::cli {

namespace {
const char* const kLevels[] = {"O0", "O1", "O2", "O3"};

std::string nodeLabel(const Graph& g, NodeId id) {
  if (const Node* n = g.findNode(id))
    return n->describe();
  return "#" + std::to_string(id);
}

void writeIds(JsonWriter& w, const std::vector<NodeId>& ids) {
  w.beginArray();
  for (NodeId id : ids)
    w.value(int64_t(id));
  w.endArray();
}
} // namespace

std::string passListText() {
  std::ostringstream os;
  os << "Passes:\n";
  for (const PassEntry& e : allPasses()) {
    auto p = e.create();
    char buf[512];
    std::snprintf(buf, sizeof buf, "  %-20s %s\n", e.name.c_str(), p->summary().c_str());
    os << buf;
    for (const PassOptionSpec& o : p->options()) {
      std::string head = o.name + (o.defaultValue.empty() ? "" : "=" + o.defaultValue);
      std::snprintf(buf, sizeof buf, "      %-24s %s; %s\n", head.c_str(), o.accepts().c_str(),
                    o.help.c_str());
      os << buf;
    }
  }
  os << "\nPipelines:\n";
  for (const char* level : kLevels) {
    std::string s = namedPipelineString(level);
    os << "  -" << level << "  " << (s.empty() ? "(no passes)" : s) << "\n";
  }
  return os.str();
}

void writePassListJson(JsonWriter& w) {
  w.key("passes");
  w.beginArray();
  for (const PassEntry& e : allPasses()) {
    auto p = e.create();
    w.beginObject();
    w.field("name", e.name);
    w.field("summary", p->summary());
    w.field("description", p->description());
    w.field("analysis", p->isAnalysis());
    w.key("options");
    w.beginArray();
    for (const PassOptionSpec& o : p->options()) {
      w.beginObject();
      w.field("name", o.name);
      w.field("type", passOptionTypeName(o.type));
      w.field("default", o.defaultValue);
      w.field("help", o.help);
      w.field("accepts", o.accepts());
      if (!o.choices.empty()) {
        w.key("choices");
        w.beginArray();
        for (const std::string& c : o.choices)
          w.value(c);
        w.endArray();
      }
      if (o.min)
        w.field("min", *o.min);
      if (o.max)
        w.field("max", *o.max);
      w.endObject();
    }
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.key("pipelines");
  w.beginObject();
  for (const char* level : kLevels)
    w.field(level, namedPipelineString(level));
  w.endObject();
}

std::string timingText(const std::vector<Snapshot>& snapshots) {
  std::ostringstream os;
  double total = 0;
  os << "===-------------------------------------------------------------------------===\n";
  os << "  Pass execution timing report\n";
  os << "===-------------------------------------------------------------------------===\n";
  for (size_t i = 1; i < snapshots.size(); ++i) {
    const PassRecord& r = *snapshots[i].record;
    total += r.milliseconds;
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %3zu  %9.3f ms  %-7s ", i, r.milliseconds,
                  r.changed ? "changed" : "-");
    os << buf << describeRecord(r);
    if (r.numericMaxAbs)
      os << "  [max abs vs before: " << *r.numericMaxAbs << "]";
    os << "\n";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "       %9.3f ms  total\n", total);
  os << buf;
  return os.str();
}

void writeTimingJson(JsonWriter& w, const std::vector<Snapshot>& snapshots) {
  double total = 0;
  w.key("passes");
  w.beginArray();
  for (size_t i = 1; i < snapshots.size(); ++i) {
    const PassRecord& r = *snapshots[i].record;
    total += r.milliseconds;
    w.beginObject();
    w.field("pass", r.pass);
    w.field("step", r.step);
    w.field("ms", r.milliseconds);
    w.field("changed", r.changed);
    w.field("iterations", int64_t(r.iterations));
    w.field("nodes_before", r.nodesBefore);
    w.field("nodes_after", r.nodesAfter);
    // The rewrite debug counter: how many rewrites the pass made (what --rewrite-limit counts).
    w.field("rewrites", r.rewrites);
    if (r.rewriteLimit)
      w.field("rewrite_limit", *r.rewriteLimit);
    w.field("summary", describeRecord(r));
    if (r.numericMaxAbs)
      w.field("numeric_max_abs", *r.numericMaxAbs);
    w.key("statistics");
    w.beginObject();
    for (const auto& [k, v] : r.statistics)
      w.field(k, v);
    w.endObject();
    // The provenance log: which nodes the pass created, deleted or replaced, and from what.
    w.key("provenance");
    w.beginArray();
    for (const ProvenanceEvent& e : r.events) {
      w.beginObject();
      const char* kind = e.kind == ProvenanceEvent::Kind::Created   ? "created"
                         : e.kind == ProvenanceEvent::Kind::Deleted ? "deleted"
                                                                    : "replaced";
      w.field("kind", kind);
      w.field("node", int64_t(e.node));
      w.key("with");
      writeIds(w, e.from);
      if (!e.note.empty())
        w.field("note", e.note);
      if (e.rewrite > 0)
        w.field("rewrite", e.rewrite);
      w.endObject();
    }
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.field("total_ms", total);
}

std::string diffText(const Graph& a, const Graph& b, const GraphDiff& d, size_t i, size_t j) {
  std::ostringstream os;
  os << "diff of snapshots " << i << " and " << j << ": " << d.added.size() << " added, "
     << d.removed.size() << " removed, " << d.changed.size() << " changed, "
     << d.unchanged.size() << " unchanged\n";
  for (NodeId id : d.removed) {
    os << "- " << nodeLabel(a, id);
    auto it = d.removedInto.find(id);
    if (it != d.removedInto.end()) {
      os << "  -> into";
      for (NodeId k : it->second)
        os << " #" << k;
    }
    os << "\n";
  }
  for (NodeId id : d.added) {
    os << "+ " << nodeLabel(b, id);
    auto it = d.addedFrom.find(id);
    if (it != d.addedFrom.end()) {
      os << "  <- from";
      for (NodeId k : it->second)
        os << " #" << k;
    }
    os << "\n";
  }
  for (const NodeChange& c : d.changed) {
    os << "~ " << nodeLabel(b, c.id) << "\n";
    for (const std::string& detail : c.details)
      os << "    " << detail << "\n";
  }
  std::string text = unifiedDiff(printGraph(a), printGraph(b));
  if (!text.empty())
    os << "\nIR text diff:\n" << text;
  return os.str();
}

std::string numericDiffText(const Graph& b, const NumericDiff& d, size_t i, size_t j) {
  std::ostringstream os;
  os << "numeric diff of snapshots " << i << " and " << j << ": " << d.values.size()
     << " values compared, " << d.unmatched.size() << " without a counterpart\n";
  for (const ValueComparison& v : d.values) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "  %-40s max_abs %.3e  max_rel %.3e  cosine %.6f  %s  (%s)\n",
                  v.value.c_str(), v.maxAbs, v.maxRel, v.cosine, v.ok ? "ok" : "DIVERGES",
                  valueMatchName(v.match));
    os << buf;
  }
  if (d.firstDivergent)
    os << "first divergent node: " << nodeLabel(b, *d.firstDivergent) << "\n";
  else
    os << "no divergence\n";
  return os.str();
}

void writeNumericDiffJson(JsonWriter& w, const Graph& b, const NumericDiff& d) {
  (void)b;
  w.key("values");
  w.beginArray();
  for (const ValueComparison& v : d.values) {
    w.beginObject();
    w.field("value", v.value);
    w.field("reference", v.reference);
    w.field("producer", int64_t(v.producer));
    w.field("match", valueMatchName(v.match));
    w.field("max_abs", v.maxAbs);
    w.field("max_rel", v.maxRel);
    w.field("cosine", v.cosine);
    w.field("ok", v.ok);
    w.endObject();
  }
  w.endArray();
  w.key("first_divergent_node");
  if (d.firstDivergent)
    w.value(int64_t(*d.firstDivergent));
  else
    w.null();
  w.field("ok", d.ok());
}

void writeDiffJson(JsonWriter& w, const Graph& a, const Graph& b, const GraphDiff& d) {
  w.key("added");
  writeIds(w, d.added);
  w.key("removed");
  writeIds(w, d.removed);
  std::vector<NodeId> changed;
  for (const NodeChange& c : d.changed)
    changed.push_back(c.id);
  w.key("changed");
  writeIds(w, changed);
  w.key("unchanged");
  writeIds(w, d.unchanged);
  w.key("details");
  w.beginArray();
  for (const NodeChange& c : d.changed) {
    const Node* n = b.findNode(c.id);
    w.beginObject();
    w.field("id", int64_t(c.id));
    w.field("name", n ? n->name() : std::string());
    w.field("op", n ? opName(n->op()) : "");
    w.key("changes");
    w.beginArray();
    for (const std::string& s : c.details)
      w.value(s);
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.key("added_from");
  w.beginObject();
  for (const auto& [id, from] : d.addedFrom) {
    w.key(std::to_string(id));
    writeIds(w, from);
  }
  w.endObject();
  w.field("ir_diff", unifiedDiff(printGraph(a), printGraph(b)));
}

std::string compareText(const std::string& backend, const std::vector<workbench::OutputComparison>& outputs,
                        bool ok) {
  std::ostringstream os;
  os << "compare: imported model on interp vs result on " << backend << "\n";
  for (const workbench::OutputComparison& o : outputs) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %-24s max_abs %.3e  max_rel %.3e  cosine %.6f  %s\n",
                  o.name.c_str(), o.result.maxAbs, o.result.maxRel, o.result.cosine,
                  o.result.ok ? "ok" : "MISMATCH");
    os << buf;
    if (!o.result.ok)
      os << "    " << o.result.reason << "\n";
  }
  os << (ok ? "ok\n" : "MISMATCH\n");
  return os.str();
}

void writeCompareJson(JsonWriter& w, const std::string& backend,
                      const std::vector<workbench::OutputComparison>& outputs, bool ok) {
  w.field("backend", backend);
  w.key("outputs");
  w.beginArray();
  for (const workbench::OutputComparison& o : outputs) {
    w.beginObject();
    w.field("name", o.name);
    w.field("max_abs", o.result.maxAbs);
    w.field("max_rel", o.result.maxRel);
    w.field("cosine", o.result.cosine);
    w.field("ok", o.result.ok);
    w.endObject();
  }
  w.endArray();
  w.field("ok", ok);
}

} // namespace fb::cli
