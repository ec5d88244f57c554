// Lesson files: the Markdown format and its strict parser.
#include "app/workbench/Lesson.h"

#include "app/workbench/Reproducer.h"
#include "codegen/loops/ScheduleOverride.h"
#include "core/FileRead.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>

namespace fb::workbench {

namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool isBlank(const std::string& line) {
  return trim(line).empty();
}

/// A `key: value` settings line: a lowercase key of letters, digits, '.', '-' or '_', a colon.
/// Narrative prose ("Note: ...", "In short: ...") starts with a capital and never matches.
bool splitKeyLine(const std::string& line, std::string& key, std::string& value) {
  const size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0 || line[0] < 'a' || line[0] > 'z')
    return false;
  for (size_t i = 0; i < colon; ++i) {
    const char c = line[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
      return false;
  }
  key = line.substr(0, colon);
  value = trim(line.substr(colon + 1));
  return true;
}

Expected<int64_t> parseIndex(const std::string& value) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < 0)
    return makeError("expected a snapshot number (0 or more) or a pass name, got '", value, "'");
  return v;
}

constexpr const char* kViewNames[] = {"graph",    "diff",   "overlay", "code",
                                      "schedule", "memory", "profile", "findbug"};

struct Parser {
  explicit Parser(const std::string& file) : path(file) {}

  const std::string& path;
  Lesson lesson;
  bool sawModel = false, sawPipeline = false;
  std::vector<Fault> lessonFaults;

  Error at(int line, const std::string& what) const {
    return makeError(path, ":", line, ": ", what);
  }

  /// A snapshot given as a number or as the name of a pass that runs exactly once.
  Expected<size_t> snapshotIndex(const std::string& value) const {
    const size_t steps = lesson.pipeline.size();
    if (!value.empty() && value[0] >= '0' && value[0] <= '9') {
      FB_ASSIGN_OR_RETURN(int64_t v, parseIndex(value));
      if (size_t(v) > steps)
        return makeError("snapshot ", v, " does not exist: the pipeline has ", steps,
                         " step(s), so snapshots run from 0 (the imported model) to ", steps);
      return size_t(v);
    }
    std::vector<size_t> at;
    for (size_t i = 0; i < steps; ++i)
      if (lesson.pipeline[i].passName == value)
        at.push_back(i + 1);
    if (at.empty())
      return makeError("'", value, "' is not a step of the pipeline '",
                       pipelineText(lesson.pipeline), "'");
    if (at.size() > 1) {
      std::string list;
      for (size_t i : at)
        list += (list.empty() ? "" : ", ") + std::to_string(i);
      return makeError("'", value, "' runs more than once (snapshots ", list,
                       "); give the snapshot number");
    }
    return at.front();
  }

  Expected<std::vector<Fault>> faults(const std::string& value) const {
    if (value == "none")
      return std::vector<Fault>{};
    return parseFaultList({value});
  }

  Expected<LessonClaim> claim(const std::string& value, int line) const {
    LessonClaim c;
    c.line = line;
    c.text = value;
    static const std::pair<const char*, ClaimOp> ops[] = {{"==", ClaimOp::Eq}, {"!=", ClaimOp::Ne},
                                                          {"<=", ClaimOp::Le}, {">=", ClaimOp::Ge},
                                                          {"<", ClaimOp::Lt},  {">", ClaimOp::Gt}};
    size_t pos = std::string::npos, len = 0;
    for (const auto& [text, op] : ops)
      if (size_t p = value.find(text); p != std::string::npos) {
        pos = p;
        len = std::string(text).size();
        c.op = op;
        break;
      }
    if (pos == std::string::npos)
      return makeError("expected 'METRIC OP NUMBER' (OP one of == != < <= > >=), got '", value,
                       "'");
    c.metric = trim(value.substr(0, pos));
    const std::string number = trim(value.substr(pos + len));
    const auto& names = lessonMetricNames();
    if (c.metric.rfind("ops.", 0) != 0 &&
        std::find(names.begin(), names.end(), c.metric) == names.end()) {
      std::string list;
      for (const std::string& n : names)
        list += n + ", ";
      return makeError("unknown metric '", c.metric, "'; known: ", list, "ops.OPNAME");
    }
    char* end = nullptr;
    c.value = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size())
      return makeError("expected a number after the comparison, got '", number, "'");
    return c;
  }

  Status headerKey(const std::string& key, const std::string& value, int line) {
    if (key == "model") {
      const fs::path model = fs::path(path).parent_path() / value;
      std::error_code ec;
      if (value.empty() || !fs::is_regular_file(model, ec))
        return at(line, "model: no such file '" + model.string() + "'");
      lesson.modelPath = model.lexically_normal().string();
      sawModel = true;
    } else if (key == "pipeline") {
      if (!value.empty()) {
        auto steps = parsePipeline(value);
        if (!steps.ok())
          return at(line, "pipeline: " + steps.error().message());
        lesson.pipeline = std::move(steps).value();
      }
      sawPipeline = true;
    } else if (key == "fault") {
      auto f = faults(value);
      if (!f.ok())
        return at(line, "fault: " + f.error().message());
      lessonFaults = std::move(f).value();
    } else {
      return at(line, "unknown lesson key '" + key + "' (known: model, pipeline, fault)");
    }
    return Status::success();
  }

  /// Applies one key line of a step. Keys that depend on the snapshot (compare) are kept in
  /// `compareText` and resolved when the step's block ends.
  Status stepKey(LessonStep& step, const std::string& key, const std::string& value, int line,
                 std::string& compareText, int& compareLine) {
    auto fail = [&](const Error& e) { return at(line, key + ": " + e.message()); };
    if (key == "snapshot") {
      auto index = snapshotIndex(value);
      if (!index.ok())
        return fail(index.error());
      step.snapshot = *index;
    } else if (key == "view") {
      auto view = lessonViewFromName(value);
      if (!view.ok())
        return fail(view.error());
      step.view = *view;
    } else if (key == "focus") {
      if (value.empty())
        return at(line, "focus: expected a node name or #ID");
      step.focus = value;
      step.focusLine = line;
    } else if (key == "compare") {
      compareText = value;
      compareLine = line;
    } else if (key == "schedule") {
      if (auto parsed = cg::parseScheduleOverrides(value); !parsed.ok())
        return fail(parsed.error());
      step.schedule = value;
    } else if (key == "fault") {
      auto f = faults(value);
      if (!f.ok())
        return fail(f.error());
      step.faults = std::move(f).value();
    } else if (key == "expect") {
      auto c = claim(value, line);
      if (!c.ok())
        return fail(c.error());
      step.claims.push_back(std::move(c).value());
    } else {
      return at(line, "unknown step key '" + key +
                          "' (known: snapshot, view, focus, compare, schedule, fault, expect)");
    }
    return Status::success();
  }

  Status finishStep(LessonStep& step, const std::string& compareText, int compareLine) {
    step.compare = {step.snapshot > 0 ? step.snapshot - 1 : 0, step.snapshot};
    if (compareText.empty())
      return Status::success();
    const size_t comma = compareText.find(',');
    if (comma == std::string::npos)
      return at(compareLine, "compare: expected two snapshots 'A,B', got '" + compareText + "'");
    auto a = snapshotIndex(trim(compareText.substr(0, comma)));
    if (!a.ok())
      return at(compareLine, "compare: " + a.error().message());
    auto b = snapshotIndex(trim(compareText.substr(comma + 1)));
    if (!b.ok())
      return at(compareLine, "compare: " + b.error().message());
    step.compare = {*a, *b};
    return Status::success();
  }

  Status parse(const std::string& text) {
    std::vector<std::string> lines;
    {
      std::istringstream in(text);
      std::string l;
      while (std::getline(in, l))
        lines.push_back(l.size() && l.back() == '\r' ? l.substr(0, l.size() - 1) : l);
    }
    size_t i = 0;
    while (i < lines.size() && isBlank(lines[i]))
      ++i;
    if (i == lines.size() || lines[i].rfind("# ", 0) != 0)
      return at(int(i + 1), "a lesson starts with its title as a '# Title' line");
    lesson.title = trim(lines[i].substr(2));
    const int titleLine = int(++i);
    while (i < lines.size() && isBlank(lines[i]))
      ++i;
    std::string key, value;
    for (; i < lines.size() && splitKeyLine(lines[i], key, value); ++i)
      FB_TRY(headerKey(key, value, int(i + 1)));
    if (!sawModel)
      return at(titleLine, "the lesson names no model (a 'model: FILE' line after the title)");
    if (!sawPipeline)
      return at(titleLine, "the lesson names no pipeline (a 'pipeline: PASSES' line after the "
                           "title)");

    bool inFence = false;
    std::string* narrative = &lesson.introduction;
    LessonStep* step = nullptr;
    std::string compareText;
    int compareLine = 0;
    while (i < lines.size()) {
      const std::string& line = lines[i];
      if (trim(line).rfind("```", 0) == 0)
        inFence = !inFence;
      if (!inFence && line.rfind("## ", 0) == 0) {
        if (step)
          FB_TRY(finishStep(*step, compareText, compareLine));
        LessonStep next;
        next.line = int(i + 1);
        next.title = trim(line.substr(3));
        next.snapshot = step ? step->snapshot : 0;
        next.faults = lessonFaults;
        lesson.steps.push_back(std::move(next));
        step = &lesson.steps.back();
        compareText.clear();
        narrative = &step->narrative;
        ++i;
        while (i < lines.size() && isBlank(lines[i]))
          ++i;
        for (; i < lines.size() && splitKeyLine(lines[i], key, value); ++i)
          FB_TRY(stepKey(*step, key, value, int(i + 1), compareText, compareLine));
        continue;
      }
      *narrative += line + "\n";
      ++i;
    }
    if (step)
      FB_TRY(finishStep(*step, compareText, compareLine));
    if (lesson.steps.empty())
      return at(titleLine, "the lesson has no steps (each starts with a '## Step title' line)");
    for (LessonStep& s : lesson.steps)
      s.narrative = trim(s.narrative);
    lesson.introduction = trim(lesson.introduction);
    return Status::success();
  }
};

} // namespace

const char* lessonViewName(LessonView view) {
  return kViewNames[size_t(view)];
}

Expected<LessonView> lessonViewFromName(const std::string& name) {
  for (size_t i = 0; i < std::size(kViewNames); ++i)
    if (name == kViewNames[i])
      return LessonView(i);
  return makeError("unknown view '", name,
                   "'; known: graph, diff, overlay, code, schedule, memory, profile, findbug");
}

const std::vector<std::string>& lessonMetricNames() {
  static const std::vector<std::string> names = {"nodes",
                                                 "params",
                                                 "flops",
                                                 "bytes_moved",
                                                 "weight_bytes",
                                                 "peak_activation_bytes",
                                                 "fused_groups",
                                                 "arena_bytes",
                                                 "naive_bytes",
                                                 "lower_bound_bytes",
                                                 "numeric.ok",
                                                 "numeric.max_abs",
                                                 "numeric.min_cosine",
                                                 "findbug.guilty_snapshot",
                                                 "findbug.reduced_nodes"};
  return names;
}

Expected<Lesson> parseLesson(const std::string& text, const std::string& path) {
  Parser p(path);
  p.lesson.path = path;
  FB_TRY(p.parse(text));
  return std::move(p.lesson);
}

Expected<Lesson> readLesson(const std::string& path) {
  FB_ASSIGN_OR_RETURN(std::string text, readRegularFile(path, "lesson"));
  return parseLesson(text, path);
}

std::vector<std::string> courseLessons(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".md" &&
        entry.path().filename() != "README.md")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace fb::workbench
