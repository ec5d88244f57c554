// fusebox-opt's --fuzz report.
#include "app/cli/FuzzReports.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace fb::cli {

namespace {

using workbench::FindingKind;

double graphsPerMinute(const workbench::FuzzReport& r) {
  return r.seconds > 0 ? double(r.graphs) * 60.0 / r.seconds : 0.0;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

} // namespace

std::string fuzzSummaryText(const workbench::FuzzReport& r, uint64_t firstSeed) {
  std::ostringstream os;
  os << "fuzz: " << r.graphs << " graphs (seeds " << firstSeed << ".."
     << firstSeed + uint64_t(std::max<int64_t>(r.graphs, 1)) - 1 << "), " << fixed(r.seconds, 1)
     << " s, " << fixed(graphsPerMinute(r), 1) << " graphs/min\n";
  os << "  discarded draws: " << r.discards << (r.discards ? " (generator bugs)" : "") << "\n";
  for (const std::string& why : r.discardReasons)
    os << "    " << why << "\n";
  os << "  ops covered: " << r.opCounts.size() << "\n   ";
  int col = 3;
  for (const auto& [op, n] : r.opCounts) {
    std::string item = " " + op + " " + std::to_string(n);
    if (col + int(item.size()) > 96) {
      os << "\n   ";
      col = 3;
    }
    os << item;
    col += int(item.size());
  }
  os << "\n  runs per level/backend (compared, refused as unsupported, findings):\n";
  for (const auto& [config, s] : r.configs)
    os << "    " << config << ": " << s.runs << " compared, " << s.refused << " refused, "
       << s.findings << " findings\n";
  if (!r.refusals.empty()) {
    std::vector<std::pair<int64_t, std::string>> byCount;
    for (const auto& [why, n] : r.refusals)
      byCount.push_back({n, why});
    std::sort(byCount.rbegin(), byCount.rend());
    os << "  refusals (Unsupported, not findings), most frequent first:\n";
    for (size_t i = 0; i < byCount.size() && i < 8; ++i)
      os << "    " << byCount[i].first << " x " << byCount[i].second << "\n";
  }
  os << "  findings: " << r.findings.size() << " (" << r.count(FindingKind::Mismatch)
     << " mismatches, " << r.count(FindingKind::Error) << " errors)\n";
  return os.str();
}

void writeFuzzJson(JsonWriter& w, const workbench::FuzzReport& r, uint64_t firstSeed) {
  w.field("graphs", r.graphs);
  w.field("mismatches", r.count(FindingKind::Mismatch));
  w.field("crashes", r.count(FindingKind::Error));
  w.key("reproducers");
  w.beginArray();
  for (const auto& f : r.findings)
    if (!f.files.empty())
      w.value(f.files.front());
  w.endArray();
  w.field("seed", firstSeed);
  w.field("seconds", r.seconds);
  w.field("graphs_per_minute", graphsPerMinute(r));
  w.field("discards", r.discards);
  w.key("discard_reasons");
  w.beginArray();
  for (const auto& why : r.discardReasons)
    w.value(why);
  w.endArray();
  w.key("ops");
  w.beginObject();
  for (const auto& [op, n] : r.opCounts)
    w.field(op, n);
  w.endObject();
  w.key("configs");
  w.beginObject();
  for (const auto& [config, s] : r.configs) {
    w.key(config);
    w.beginObject();
    w.field("runs", s.runs);
    w.field("refused", s.refused);
    w.field("findings", s.findings);
    w.endObject();
  }
  w.endObject();
  w.key("refusals");
  w.beginObject();
  for (const auto& [why, n] : r.refusals)
    w.field(why, n);
  w.endObject();
  w.key("findings");
  w.beginArray();
  for (const auto& f : r.findings) {
    w.beginObject();
    w.field("seed", f.seed);
    w.field("level", f.level);
    w.field("backend", f.backend);
    w.field("kind", f.kind == FindingKind::Mismatch ? "mismatch" : "error");
    w.field("message", f.message);
    w.key("files");
    w.beginArray();
    for (const auto& file : f.files)
      w.value(file);
    w.endArray();
    w.endObject();
  }
  w.endArray();
}

} // namespace fb::cli
