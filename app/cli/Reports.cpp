// Formatting of fusebox-opt's reports.
#include "app/cli/Reports.h"
#include "core/Format.h"
#include "core/Json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace fb::cli {

std::string humanCount(double v) { return formatCount(v, Digits::fixed(2), " "); }

std::string humanBytes(double v) { return formatBytes(v, Digits::fixed(2)); }

std::string statsText(const std::string& modelName, const ModelStats& s) {
  std::ostringstream os;
  os << "model:            " << modelName << "\n";
  os << "nodes:            " << s.nodes << "\n";
  os << "parameters:       " << s.params << " (" << humanBytes(double(s.weightBytes)) << ")\n";
  os << "FLOPs:            " << humanCount(s.flops) << "\n";
  os << "bytes moved:      " << humanBytes(s.bytesMoved) << "\n";
  os << "peak activations: " << humanBytes(double(s.peakActivationBytes)) << "\n";
  os << "ops:\n";
  std::vector<std::pair<std::string, size_t>> ops(s.ops.begin(), s.ops.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, count] : ops) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-24s %zu\n", op.c_str(), count);
    os << buf;
  }
  return os.str();
}

void writeStatsJson(JsonWriter& w, const ModelStats& s) {
  w.field("nodes", uint64_t(s.nodes));
  w.key("ops");
  w.beginObject();
  for (const auto& [op, count] : s.ops)
    w.field(op, uint64_t(count));
  w.endObject();
  w.field("params", s.params);
  w.field("flops", s.flops);
  w.field("weight_bytes", s.weightBytes);
  w.field("bytes_moved", s.bytesMoved);
  w.field("peak_activation_bytes", s.peakActivationBytes);
}

namespace {
struct Summary {
  double min = 0, max = 0, mean = 0;
};
Summary summarize(const Tensor& t) {
  Summary s;
  if (t.numElements() == 0)
    return s;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  double sum = 0;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getAsDouble(i);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    sum += v;
  }
  s.mean = sum / double(t.numElements());
  return s;
}
std::string shapeStr(const Tensor& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.rank(); ++i)
    s += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  return s + "]";
}
} // namespace

std::string runText(const std::string& backend, const std::vector<RunOutput>& outputs,
                    double elapsedMs) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "ran on %s in %.3f ms\n", backend.c_str(), elapsedMs);
  os << buf;
  for (const RunOutput& o : outputs) {
    Summary s = summarize(o.tensor);
    os << "output " << o.name << " : " << dtypeName(o.tensor.dtype()) << shapeStr(o.tensor);
    std::snprintf(buf, sizeof buf, "  min %.6g  max %.6g  mean %.6g", s.min, s.max, s.mean);
    os << buf;
    if (!o.file.empty())
      os << "  -> " << o.file;
    os << "\n  [";
    int64_t n = std::min<int64_t>(o.tensor.numElements(), 8);
    for (int64_t i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", o.tensor.getAsDouble(i));
      os << buf;
    }
    if (o.tensor.numElements() > n)
      os << ", ...";
    os << "]\n";
  }
  return os.str();
}

void writeRunJson(JsonWriter& w, const std::string& backend, const std::vector<RunOutput>& outputs,
                  double elapsedMs) {
  w.field("backend", backend);
  w.field("elapsed_ms", elapsedMs);
  w.key("outputs");
  w.beginArray();
  for (const RunOutput& o : outputs) {
    Summary s = summarize(o.tensor);
    w.beginObject();
    w.field("name", o.name);
    w.field("dtype", dtypeName(o.tensor.dtype()));
    w.key("shape");
    w.beginArray();
    for (int64_t d : o.tensor.sizes())
      w.value(d);
    w.endArray();
    w.field("min", s.min);
    w.field("max", s.max);
    w.field("mean", s.mean);
    if (!o.file.empty())
      w.field("file", o.file);
    w.endObject();
  }
  w.endArray();
}

std::string benchText(const std::string& backend, const workbench::BenchStats& s) {
  char line[256];
  std::snprintf(line, sizeof line,
                "bench (%s, %d runs, %d thread(s)): median %.4f ms, min %.4f ms, max %.4f ms, "
                "mean %.4f ms; compile %.1f ms\n",
                backend.c_str(), s.runs, s.threads, s.medianMs, s.minMs, s.maxMs, s.meanMs,
                s.compileMs);
  return line;
}

void writeBenchJson(JsonWriter& w, const std::string& backend, const workbench::BenchStats& s,
                    bool writeBackend) {
  if (writeBackend)
    w.field("backend", backend);
  w.field("runs", s.runs);
  w.field("median_ms", s.medianMs);
  w.field("min_ms", s.minMs);
  w.field("max_ms", s.maxMs);
  w.field("mean_ms", s.meanMs);
  w.field("compile_ms", s.compileMs);
  w.field("threads", s.threads);
}

void writeProfileJson(JsonWriter& w, const std::string& file, const cg::Profile& profile) {
  w.key("profile");
  w.beginObject();
  w.field("file", file);
  w.key("kernels");
  w.beginArray();
  for (size_t k = 0; k < profile.kernels.size(); ++k) {
    const cg::KernelProfileInfo& info = profile.kernels[k];
    double us = profile.meanUs(int(k));
    w.beginObject();
    w.field("kernel", info.name);
    w.field("op", info.op);
    w.field("generator", info.generator);
    w.field("ms", us / 1000.0);
    w.field("gflops_per_s", us > 0 ? info.flops / us * 1e-3 : 0.0);
    w.field("gb_per_s", us > 0 ? info.bytes / us * 1e-3 : 0.0);
    w.endObject();
  }
  w.endArray();
  w.endObject();
}

} // namespace fb::cli
