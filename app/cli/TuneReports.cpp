// Printing what the auto-tuner measured.
#include "app/cli/TuneReports.h"

#include <cstdio>
#include <sstream>

namespace fb::cli {

namespace {

double speedup(double defaultUs, double tunedUs) {
  return tunedUs > 0 ? defaultUs / tunedUs : 1;
}

} // namespace

std::string tuneText(const workbench::TuneReport& r) {
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "tune (cpu %s/%s): %d candidates in %.1f s of a %.1f s budget\n",
                r.cpu.c_str(), r.isa.c_str(), r.candidates, r.seconds, r.budgetSeconds);
  os << line;
  std::snprintf(line, sizeof line, "%-28s %-22s %12s %12s %8s  %s\n", "kernel", "op", "default us",
                "tuned us", "speedup", "directives");
  os << line;
  int kept = 0, searched = 0;
  for (const workbench::KernelTuning& k : r.kernels) {
    kept += !k.directives.empty();
    searched += k.tuned;
    std::string what = k.directives.empty() ? (k.tuned ? "default" : "-") : k.directives;
    if (!k.note.empty())
      what += " (" + k.note + ")";
    std::snprintf(line, sizeof line, "%-28s %-22s %12.1f %12.1f %7.2fx  %s\n",
                  k.kernel.substr(0, 28).c_str(), k.op.substr(0, 22).c_str(), k.defaultUs,
                  k.tunedUs, speedup(k.defaultUs, k.tunedUs), what.c_str());
    os << line;
  }
  std::snprintf(line, sizeof line,
                "%-28s %-22s %12.1f %12.1f %7.2fx  %d of %zu kernels tuned, %d searched\n", "total",
                "", r.defaultUs, r.tunedUs, speedup(r.defaultUs, r.tunedUs), kept, r.kernels.size(),
                searched);
  os << line;
  if (!r.logPath.empty())
    os << "tuning log: " << r.logPath << "\n";
  return os.str();
}

void writeTuneJson(JsonWriter& w, const workbench::TuneReport& r) {
  w.field("tuning_log", r.logPath);
  w.field("cpu", r.cpu);
  w.field("isa", r.isa);
  w.field("budget_s", r.budgetSeconds);
  w.field("seconds", r.seconds);
  w.field("candidates", r.candidates);
  w.field("default_us", r.defaultUs);
  w.field("tuned_us", r.tunedUs);
  w.field("speedup", speedup(r.defaultUs, r.tunedUs));
  w.key("kernels");
  w.beginArray();
  for (const workbench::KernelTuning& k : r.kernels) {
    w.beginObject();
    w.field("kernel", k.kernel);
    w.field("op", k.op);
    w.field("signature", k.signature);
    w.field("default_us", k.defaultUs);
    w.field("tuned_us", k.tunedUs);
    w.field("speedup", speedup(k.defaultUs, k.tunedUs));
    w.field("directives", k.directives);
    w.field("candidates", k.candidates);
    w.field("rejected", k.rejected);
    w.field("tuned", k.tuned);
    w.field("note", k.note);
    w.endObject();
  }
  w.endArray();
}

} // namespace fb::cli
