// Lessons: a teacher's walk through a real model being compiled, one plain Markdown file.
// Format (docs/lessons.md): a `# Title`, then `key: value` lines (model, pipeline, fault),
// an introduction, then one `## Step title` section per step whose leading `key: value` lines
// say what to show (snapshot, view, focus, compare, schedule, fault, expect) and whose remaining
// text is the narrative. Parsing is strict: an unknown key, a bad value or a missing model is an
// error naming FILE:LINE, so a lesson never half-loads.
#pragma once

#include "core/Error.h"
#include "core/Faults.h"
#include "passes/PassRegistry.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fb::workbench {

/// What a lesson step puts in front of the class.
/// The views a step can show; FindBug runs Debug > Find the Bug on the step's snapshots.
enum class LessonView : uint8_t { Graph, Diff, Overlay, Code, Schedule, Memory, Profile, FindBug };

/// "graph", "diff", ... as a lesson file spells it.
const char* lessonViewName(LessonView view);
/// The view named `name`, or an error listing the names.
Expected<LessonView> lessonViewFromName(const std::string& name);

/// A comparison of a claim: `==`, `!=`, `<`, `<=`, `>`, `>=`.
enum class ClaimOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

/// One `expect: METRIC OP NUMBER` line: a fact about the step's snapshot that --check verifies
/// ("nodes == 7", "ops.BatchNormalization == 0", "arena_bytes < 600000").
struct LessonClaim {
  int line = 0;       ///< 1-based line in the lesson file
  std::string text;   ///< as written, for messages
  std::string metric; ///< nodes, ops.Conv, flops, ... (lessonMetricNames())
  ClaimOp op = ClaimOp::Eq;
  double value = 0;
};

/// The metrics a claim may name (ops.OPNAME besides these).
const std::vector<std::string>& lessonMetricNames();

/// One step of a lesson.
struct LessonStep {
  int line = 0; ///< the line of its `## ` heading
  std::string title;
  size_t snapshot = 0; ///< 0 = the imported model, k = after pipeline step k
  LessonView view = LessonView::Graph;
  std::string focus; ///< a node's name, "#ID", or empty
  int focusLine = 0;
  /// The snapshots a diff or overlay compares (default: the one before and this one).
  std::pair<size_t, size_t> compare{0, 0};
  std::string schedule;      ///< schedule overrides for this snapshot (--schedule text), or empty
  std::vector<Fault> faults; ///< the faults on while this step's snapshots are computed
  std::vector<LessonClaim> claims;
  std::string narrative; ///< Markdown
};

/// A parsed lesson.
struct Lesson {
  std::string path; ///< the lesson file
  std::string title;
  std::string modelPath; ///< resolved against the lesson file's folder
  std::vector<PipelineStep> pipeline;
  std::string introduction; ///< Markdown before the first step
  std::vector<LessonStep> steps;
};

/// Parses lesson text; `path` names the file in errors and resolves the model path. Checks
/// everything that needs no model: keys, views, snapshot indices and pass names against the
/// pipeline, schedules, faults and claims. The model must exist as a file.
Expected<Lesson> parseLesson(const std::string& text, const std::string& path);
/// Reads and parses a lesson file.
Expected<Lesson> readLesson(const std::string& path);

/// The lesson files of a course folder (*.md but README.md), sorted by name.
std::vector<std::string> courseLessons(const std::string& folder);

} // namespace fb::workbench
