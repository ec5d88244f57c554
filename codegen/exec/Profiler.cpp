// Chrome trace JSON and the per-kernel table of a Profile.
#include "codegen/exec/Profiler.h"
#include "core/Json.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace fb::cg {

double Profile::meanUs(int k) const {
  double total = 0;
  for (const KernelEvent& e : events)
    if (e.kernel == k)
      total += e.durationUs;
  return runs.empty() ? 0 : total / double(runs.size());
}

std::string Profile::chromeTraceJson() const {
  JsonWriter w;
  w.beginObject();
  w.key("traceEvents");
  w.beginArray();
  auto common = [&](const std::string& name, const char* cat, double ts, double dur, int tid) {
    w.field("name", name);
    w.field("cat", cat);
    w.field("ph", "X");
    w.field("ts", ts);
    w.field("dur", dur);
    w.field("pid", 1);
    w.field("tid", tid);
  };
  // Name the process and thread for the viewer.
  w.beginObject();
  w.field("name", "process_name");
  w.field("ph", "M");
  w.field("pid", 1);
  w.key("args");
  w.beginObject();
  w.field("name", "fusebox cpu");
  w.endObject();
  w.endObject();
  for (size_t r = 0; r < runs.size(); ++r) {
    w.beginObject();
    common("model_run", "Session", runs[r].first, runs[r].second, 1);
    w.key("args");
    w.beginObject();
    w.field("run", int64_t(r));
    w.field("threads", threads);
    w.endObject();
    w.endObject();
  }
  for (const KernelEvent& e : events) {
    const KernelProfileInfo& k = kernels[size_t(e.kernel)];
    w.beginObject();
    common(k.name, "Kernel", e.startUs, e.durationUs, 1);
    w.key("args");
    w.beginObject();
    w.field("op_name", k.op);
    std::string nodes;
    for (NodeId id : k.nodes)
      nodes += (nodes.empty() ? "#" : ",#") + std::to_string(id);
    w.field("nodes", nodes);
    w.field("node_names", k.nodeNames);
    w.field("input_shapes", k.inputShapes);
    w.field("output_shapes", k.outputShapes);
    w.field("generator", k.generator);
    w.field("flops", k.flops);
    w.field("bytes", k.bytes);
    double s = e.durationUs * 1e-6;
    w.field("gflops_per_s", s > 0 ? k.flops / s * 1e-9 : 0.0);
    w.field("gb_per_s", s > 0 ? k.bytes / s * 1e-9 : 0.0);
    w.field("run", int64_t(e.run));
    if (e.serial)
      w.field("threads", int64_t(1));
    w.endObject();
    w.endObject();
  }
  w.endArray();
  w.field("displayTimeUnit", "ms");
  w.endObject();
  return w.str();
}

namespace {

struct Row {
  int kernel;
  double us;
  bool serial; ///< ran on the calling thread alone in most of its runs
};

std::vector<Row> sortedRows(const Profile& p, double& total) {
  std::vector<Row> rows;
  total = 0;
  std::vector<int> serialRuns(p.kernels.size()), allRuns(p.kernels.size());
  for (const KernelEvent& e : p.events)
    if (e.kernel >= 0 && size_t(e.kernel) < p.kernels.size()) {
      ++allRuns[size_t(e.kernel)];
      serialRuns[size_t(e.kernel)] += e.serial ? 1 : 0;
    }
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    rows.push_back({int(k), p.meanUs(int(k)), 2 * serialRuns[k] > allRuns[k]});
    total += rows.back().us;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.us > b.us; });
  return rows;
}

} // namespace

std::string Profile::tableText() const {
  double total = 0;
  std::vector<Row> rows = sortedRows(*this, total);
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-36s %-22s %-11s %10s %6s %9s %8s\n", "kernel", "op", "gen",
                "time(ms)", "%", "GFLOP/s", "GB/s");
  os << line;
  bool anySerial = false;
  for (const Row& r : rows) {
    const KernelProfileInfo& k = kernels[size_t(r.kernel)];
    double s = r.us * 1e-6;
    anySerial = anySerial || r.serial;
    const std::string gen = k.generator + (r.serial ? " 1t" : "");
    std::snprintf(line, sizeof line, "%-36s %-22s %-11s %10.4f %6.1f %9.2f %8.2f\n",
                  k.name.substr(0, 36).c_str(), k.op.substr(0, 22).c_str(), gen.c_str(),
                  r.us / 1000.0, total > 0 ? 100.0 * r.us / total : 0.0,
                  s > 0 ? k.flops / s * 1e-9 : 0.0, s > 0 ? k.bytes / s * 1e-9 : 0.0);
    os << line;
  }
  double flops = 0, bytes = 0;
  for (const KernelProfileInfo& k : kernels) {
    flops += k.flops;
    bytes += k.bytes;
  }
  double s = total * 1e-6;
  std::snprintf(line, sizeof line, "%-36s %-22s %-11s %10.4f %6.1f %9.2f %8.2f\n", "total",
                (std::to_string(kernels.size()) + " kernels").c_str(), "", total / 1000.0, 100.0,
                s > 0 ? flops / s * 1e-9 : 0.0, s > 0 ? bytes / s * 1e-9 : 0.0);
  os << line;
  std::snprintf(line, sizeof line, "(mean over %zu run(s), %d thread(s); kernel time only)\n",
                runs.size(), threads);
  os << line;
  if (anySerial)
    os << "(gen \"1t\": ran on the calling thread alone, measured faster than on the pool)\n";
  return os.str();
}

std::string Profile::tableJson() const {
  double total = 0;
  std::vector<Row> rows = sortedRows(*this, total);
  JsonWriter w;
  w.beginArray();
  for (const Row& r : rows) {
    const KernelProfileInfo& k = kernels[size_t(r.kernel)];
    double s = r.us * 1e-6;
    w.beginObject();
    w.field("kernel", k.name);
    w.field("op", k.op);
    w.field("generator", k.generator);
    w.field("ms", r.us / 1000.0);
    w.field("percent", total > 0 ? 100.0 * r.us / total : 0.0);
    w.field("gflops_per_s", s > 0 ? k.flops / s * 1e-9 : 0.0);
    w.field("gb_per_s", s > 0 ? k.bytes / s * 1e-9 : 0.0);
    w.field("serial", r.serial);
    w.endObject();
  }
  w.endArray();
  return w.str();
}

} // namespace fb::cg
