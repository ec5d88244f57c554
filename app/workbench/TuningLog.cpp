// Reading, writing and applying tuning logs.
#include "app/workbench/TuningLog.h"
#include "app/workbench/CachePaths.h"
#include "app/workbench/JsonValue.h"
#include "app/workbench/KernelSignature.h"
#include "core/FileRead.h"
#include "core/Json.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

namespace fb::workbench {

namespace {

constexpr const char* kFormat = "fusebox-tuning-log";
constexpr int kVersion = 1;

Expected<std::string> stringMember(const JsonValue& entry, const char* key, size_t index,
                                   bool required) {
  const JsonValue* v = entry.find(key);
  if (!v) {
    if (required)
      return makeError("entry ", index, " has no \"", key, "\"");
    return std::string();
  }
  if (!v->isString())
    return makeError("entry ", index, ": \"", key, "\" is not a string");
  return v->string;
}

Expected<double> timeMember(const JsonValue& entry, const char* key, size_t index) {
  const JsonValue* v = entry.find(key);
  if (!v)
    return 0.0;
  if (!v->isNumber() || v->number < 0)
    return makeError("entry ", index, ": \"", key, "\" is not a non-negative number");
  return v->number;
}

/// Logs read before, by path, kept while the file's size and time are unchanged: every
/// compilation consults the log, and a tuning run compiles hundreds of times.
struct CachedLog {
  std::filesystem::file_time_type time;
  uintmax_t size = 0;
  Expected<TuningLog> log = TuningLog{};
};

Expected<TuningLog> readTuningLogCached(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, CachedLog> cache;
  std::error_code ec;
  auto time = std::filesystem::last_write_time(path, ec);
  if (ec)
    return readTuningLog(path); // missing: an empty log
  uintmax_t size = std::filesystem::file_size(path, ec);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it != cache.end() && it->second.time == time && it->second.size == size)
    return it->second.log;
  CachedLog entry{time, size, readTuningLog(path)};
  cache[path] = entry;
  return entry.log;
}

} // namespace

const TuningEntry* TuningLog::find(const std::string& signature, const std::string& cpu,
                                   const std::string& isa) const {
  for (const TuningEntry& e : entries)
    if (e.signature == signature && e.cpu == cpu && e.isa == isa)
      return &e;
  return nullptr;
}

void TuningLog::record(const TuningEntry& entry) {
  for (TuningEntry& e : entries)
    if (e.signature == entry.signature && e.cpu == entry.cpu && e.isa == entry.isa) {
      e = entry;
      return;
    }
  entries.push_back(entry);
}

std::string defaultTuningLogPath() {
  if (const char* env = std::getenv("FUSEBOX_TUNING_LOG"); env && *env)
    return std::string(env) == "off" ? std::string() : std::string(env);
  return fuseboxCacheFile("tuning-log.json");
}

std::string tuningLogPath(const std::string& setting) {
  if (setting == "off")
    return "";
  return setting.empty() ? defaultTuningLogPath() : setting;
}

Expected<TuningLog> parseTuningLog(const std::string& text) {
  FB_ASSIGN_OR_RETURN(JsonValue doc, parseJson(text));
  if (!doc.isObject())
    return makeError("not a JSON object");
  const JsonValue* format = doc.find("format");
  if (!format || !format->isString() || format->string != kFormat)
    return makeError("\"format\" is not \"", kFormat, "\"");
  const JsonValue* version = doc.find("version");
  if (!version || !version->isNumber() || version->number != kVersion)
    return makeError("\"version\" is not ", kVersion);
  const JsonValue* entries = doc.find("entries");
  if (!entries || !entries->isArray())
    return makeError("\"entries\" is not an array");
  TuningLog log;
  for (size_t i = 0; i < entries->array.size(); ++i) {
    const JsonValue& e = entries->array[i];
    if (!e.isObject())
      return makeError("entry ", i, " is not an object");
    TuningEntry entry;
    FB_ASSIGN_OR_RETURN(entry.signature, stringMember(e, "signature", i, /*required=*/true));
    FB_ASSIGN_OR_RETURN(entry.cpu, stringMember(e, "cpu", i, /*required=*/true));
    FB_ASSIGN_OR_RETURN(entry.isa, stringMember(e, "isa", i, /*required=*/true));
    FB_ASSIGN_OR_RETURN(entry.directives, stringMember(e, "directives", i, /*required=*/true));
    FB_ASSIGN_OR_RETURN(entry.op, stringMember(e, "op", i, /*required=*/false));
    FB_ASSIGN_OR_RETURN(entry.kernel, stringMember(e, "kernel", i, /*required=*/false));
    FB_ASSIGN_OR_RETURN(entry.model, stringMember(e, "model", i, /*required=*/false));
    FB_ASSIGN_OR_RETURN(entry.defaultUs, timeMember(e, "default_us", i));
    FB_ASSIGN_OR_RETURN(entry.tunedUs, timeMember(e, "tuned_us", i));
    if (!entry.directives.empty()) {
      auto parsed = cg::parseScheduleOverrides("k0:" + entry.directives);
      if (!parsed.ok())
        return makeError("entry ", i, ": \"directives\": ", parsed.error().message());
    }
    log.entries.push_back(std::move(entry));
  }
  return log;
}

std::string tuningLogJson(const TuningLog& log) {
  // One entry a line, so that a person (or diff) reads the file entry by entry.
  std::string text = "{\"format\": " + jsonQuote(kFormat) +
                     ", \"version\": " + std::to_string(kVersion) + ", \"entries\": [";
  for (size_t i = 0; i < log.entries.size(); ++i) {
    const TuningEntry& e = log.entries[i];
    JsonWriter w;
    w.beginObject();
    w.field("signature", e.signature);
    w.field("cpu", e.cpu);
    w.field("isa", e.isa);
    w.field("op", e.op);
    w.field("kernel", e.kernel);
    w.field("model", e.model);
    w.field("directives", e.directives);
    w.field("default_us", e.defaultUs);
    w.field("tuned_us", e.tunedUs);
    w.endObject();
    text += (i ? ",\n  " : "\n  ") + w.str();
  }
  return text + (log.entries.empty() ? "]}\n" : "\n]}\n");
}

Expected<TuningLog> readTuningLog(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return TuningLog{};
  auto text = readRegularFile(path, "tuning log");
  if (!text.ok())
    return text.error();
  auto log = parseTuningLog(*text);
  if (!log.ok())
    return log.error().withContext(path + ": malformed tuning log");
  return log;
}

Status writeTuningLog(const std::string& path, const TuningLog& log) {
  std::error_code ec;
  std::filesystem::path file(path);
  if (file.has_parent_path())
    std::filesystem::create_directories(file.parent_path(), ec);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out)
      return makeError(path, ": cannot write the tuning log");
    out << tuningLogJson(log);
    if (!out)
      return makeError(path, ": cannot write the tuning log");
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec)
    return makeError(path, ": cannot write the tuning log: ", ec.message());
  return Status::success();
}

Expected<std::vector<std::string>> kernelSignatures(const Graph& graph,
                                                    const CompileSettings& settings,
                                                    const std::vector<Tensor>& inputs) {
  FB_ASSIGN_OR_RETURN(cg::CompileOptions options, compileOptionsFor(settings, inputs));
  FB_ASSIGN_OR_RETURN(
      std::unique_ptr<Graph> bound,
      cg::bindStaticShapes(graph, options.inputSizes, options.dims, options.specializeInputs));
  std::vector<std::string> signatures;
  for (const std::unique_ptr<Node>& node : bound->nodes())
    signatures.push_back(kernelSignature(*node));
  return signatures;
}

std::vector<cg::ScheduleOverride> scheduleWithTuningLog(const Graph& graph,
                                                        const CompileSettings& settings,
                                                        const std::vector<Tensor>& inputs,
                                                        std::string* warning) {
  const std::string path = tuningLogPath(settings.tuningLog);
  if (path.empty() || settings.forGpu)
    return settings.schedule;
  Expected<TuningLog> log = readTuningLogCached(path);
  if (!log.ok()) {
    if (warning)
      *warning = log.error().message() + " (ignored)";
    return settings.schedule;
  }
  auto target = targetFor(settings);
  if (!target.ok())
    return settings.schedule;
  const std::string isa = targetIsa(*target);
  bool any = false;
  for (const TuningEntry& e : log->entries)
    any = any || (e.cpu == target->cpu && e.isa == isa && !e.directives.empty());
  if (!any)
    return settings.schedule;
  auto signatures = kernelSignatures(graph, settings, inputs);
  if (!signatures.ok())
    return settings.schedule;
  std::vector<cg::ScheduleOverride> schedule;
  for (size_t i = 0; i < signatures->size(); ++i) {
    const TuningEntry* e = log->find((*signatures)[i], target->cpu, isa);
    if (!e || e->directives.empty())
      continue;
    auto parsed = cg::parseScheduleOverrides("k" + std::to_string(i) + ":" + e->directives);
    if (parsed.ok())
      schedule.insert(schedule.end(), parsed->begin(), parsed->end());
  }
  schedule.insert(schedule.end(), settings.schedule.begin(), settings.schedule.end());
  return schedule;
}

} // namespace fb::workbench
