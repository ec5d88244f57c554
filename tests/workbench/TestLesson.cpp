// Tests of lessons (app/workbench/Lesson.h, LessonCheck.h): the format parses into steps with
// their settings and narratives; malformed lessons are refused with FILE:LINE and what is wrong;
// the check passes a lesson that matches the build and fails one whose claim, focus node or
// schedule does not, naming the step and the claim; every shipped lesson passes.
#include "app/workbench/Lesson.h"
#include "app/workbench/LessonCheck.h"
#include "core/Faults.h"

#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

using namespace fb;
using namespace fb::workbench;

namespace {

/// A lesson in the samples folder's lessons/ subfolder resolves "../small_cnn.onnx"; tests
/// write theirs next to a copy-free path: the samples folder itself, through "model: NAME".
std::string samplesDir() {
  return FUSEBOX_SAMPLES_DIR;
}

/// Parses `text` as if it were samples/test-lesson.md (so "model: small_cnn.onnx" resolves).
Expected<Lesson> parse(const std::string& text) {
  return parseLesson(text, samplesDir() + "/test-lesson.md");
}

bool mentions(const Error& e, const std::string& what) {
  return e.message().find(what) != std::string::npos;
}

const char* kGood = R"(# Folding BatchNorm

model: small_cnn.onnx
pipeline: fold-constants,fold-batchnorm,dce

An introduction in **Markdown**.

## The model
view: graph
focus: /bn1/BatchNormalization
expect: nodes == 11
expect: ops.BatchNormalization == 2

Narrative one.
Note: a capitalised word before a colon is prose, not a key.

## Folded
snapshot: fold-batchnorm
view: diff
compare: 0,2
expect: nodes <= 9
expect: numeric.ok == 1

```
## not a step: inside a code fence
```

## Still folded

The snapshot carries over from the step before.
)";

} // namespace

class TestLesson : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void cleanup() { disableAllFaults(); }

  void parsesStepsSettingsAndNarrative() {
    auto lesson = parse(kGood);
    QVERIFY2(lesson.ok(), lesson.ok() ? "" : lesson.error().message().c_str());
    QCOMPARE(lesson->title, std::string("Folding BatchNorm"));
    QCOMPARE(lesson->pipeline.size(), size_t(3));
    QVERIFY(lesson->modelPath.find("small_cnn.onnx") != std::string::npos);
    QCOMPARE(lesson->introduction, std::string("An introduction in **Markdown**."));
    QCOMPARE(lesson->steps.size(), size_t(3));

    const LessonStep& first = lesson->steps[0];
    QCOMPARE(first.title, std::string("The model"));
    QCOMPARE(first.line, 8);
    QCOMPARE(first.snapshot, size_t(0));
    QCOMPARE(first.view, LessonView::Graph);
    QCOMPARE(first.focus, std::string("/bn1/BatchNormalization"));
    QCOMPARE(first.claims.size(), size_t(2));
    QCOMPARE(first.claims[1].metric, std::string("ops.BatchNormalization"));
    QCOMPARE(first.claims[1].line, 12);
    QVERIFY(first.narrative.find("Note: a capitalised") != std::string::npos);

    const LessonStep& second = lesson->steps[1];
    QCOMPARE(second.snapshot, size_t(2)); // the pass name resolved to its snapshot
    QCOMPARE(second.view, LessonView::Diff);
    QCOMPARE(second.compare, std::make_pair(size_t(0), size_t(2)));
    QCOMPARE(second.claims[0].op, ClaimOp::Le);
    QVERIFY(second.narrative.find("## not a step") != std::string::npos);

    const LessonStep& third = lesson->steps[2];
    QCOMPARE(third.snapshot, size_t(2));
    QCOMPARE(third.compare, std::make_pair(size_t(1), size_t(2))); // the one before and this
  }

  void refusesMalformedLessonsWithFileAndLine() {
    struct Case {
      const char* name;
      std::string text;
      std::string expected;
    };
    const std::string head = "# T\nmodel: small_cnn.onnx\npipeline: fuse,dce\n\n";
    const std::vector<Case> cases = {
        {"empty", "", "test-lesson.md:1: a lesson starts with its title"},
        {"no title", "model: small_cnn.onnx\n", "test-lesson.md:1: a lesson starts"},
        {"missing model file", "# T\nmodel: no_such_model.onnx\npipeline: dce\n## S\n",
         "test-lesson.md:2: model: no such file"},
        {"no model line", "# T\npipeline: dce\n## S\n",
         "test-lesson.md:1: the lesson names no model"},
        {"no pipeline line", "# T\nmodel: small_cnn.onnx\n## S\n", "names no pipeline"},
        {"bad pipeline", "# T\nmodel: small_cnn.onnx\npipeline: fold-everything\n## S\n",
         "test-lesson.md:3: pipeline: "},
        {"unknown header key", "# T\nmodel: small_cnn.onnx\npipeline: dce\ncolour: red\n## S\n",
         "test-lesson.md:4: unknown lesson key 'colour'"},
        {"no steps", head + "Only an introduction.\n", "the lesson has no steps"},
        {"bad view", head + "## S\nview: graphs\n",
         "test-lesson.md:6: view: unknown view 'graphs'"},
        {"snapshot out of range", head + "## S\nsnapshot: 3\n",
         "test-lesson.md:6: snapshot: snapshot 3 does not exist"},
        {"snapshot of no pass", head + "## S\nsnapshot: cse\n", "'cse' is not a step"},
        {"ambiguous pass",
         "# T\nmodel: small_cnn.onnx\npipeline: dce,fuse,dce\n## S\nsnapshot: dce\n",
         "test-lesson.md:5: snapshot: 'dce' runs more than once"},
        {"bad compare", head + "## S\ncompare: 1\n", "test-lesson.md:6: compare: expected two"},
        {"bad schedule", head + "## S\nschedule: k0:frobnicate=2\n", "test-lesson.md:6: schedule:"},
        {"unknown fault", head + "## S\nfault: gremlins\n", "test-lesson.md:6: fault:"},
        {"claim without comparison", head + "## S\nexpect: nodes are few\n",
         "test-lesson.md:6: expect: expected 'METRIC OP NUMBER'"},
        {"claim of unknown metric", head + "## S\nexpect: happiness == 1\n",
         "unknown metric 'happiness'"},
        {"claim with no number", head + "## S\nexpect: nodes == many\n", "expected a number"},
        {"unknown step key", head + "## S\nzoom: 2\n", "test-lesson.md:6: unknown step key 'zoom'"},
    };
    for (const Case& c : cases) {
      auto lesson = parse(c.text);
      QVERIFY2(!lesson.ok(), c.name);
      QVERIFY2(mentions(lesson.error(), c.expected),
               (std::string(c.name) + ": " + lesson.error().message()).c_str());
    }
    auto missing = readLesson(samplesDir() + "/no-such-lesson.md");
    QVERIFY(!missing.ok());
    QVERIFY(mentions(missing.error(), "no-such-lesson.md"));
  }

  void checkPassesAMatchingLesson() {
    auto lesson = parse(kGood);
    QVERIFY(lesson.ok());
    auto report = checkLesson(*lesson);
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().message().c_str());
    QCOMPARE(report->steps, size_t(3));
    QCOMPARE(report->claims, size_t(4));
  }

  void checkFailsAWrongClaimNamingStepAndLine() {
    std::string text = kGood;
    text.replace(text.find("expect: nodes == 11"), 19, "expect: nodes == 12");
    auto lesson = parse(text);
    QVERIFY(lesson.ok());
    auto report = checkLesson(*lesson);
    QVERIFY(!report.ok());
    QVERIFY2(mentions(report.error(),
                      "test-lesson.md:11: step 1 'The model': claim 'nodes == 12' does not hold: "
                      "nodes is 11"),
             report.error().message().c_str());
  }

  void checkFailsAMissingFocusNode() {
    std::string text = kGood;
    text.replace(text.find("/bn1/BatchNormalization"), 23, "/bn7/BatchNormalization");
    auto lesson = parse(text);
    QVERIFY(lesson.ok());
    auto report = checkLesson(*lesson);
    QVERIFY(!report.ok());
    QVERIFY2(mentions(report.error(), "test-lesson.md:10: step 1 'The model': focus: no node "
                                      "'/bn7/BatchNormalization'"),
             report.error().message().c_str());
  }

  void checkFailsAScheduleForAKernelThatIsNotThere() {
    auto lesson = parse("# T\nmodel: small_cnn.onnx\npipeline: fuse\n\n## S\nsnapshot: 1\n"
                        "schedule: k42_nothing:tile=8x8\n");
    QVERIFY(lesson.ok());
    auto report = checkLesson(*lesson);
    QVERIFY(!report.ok());
    QVERIFY2(mentions(report.error(), "step 1 'S'") && mentions(report.error(), "k42_nothing"),
             report.error().message().c_str());
  }

  void faultsRecomputeTheSnapshotsAndAreRestored() {
    setFaultEnabled(Fault::CseIgnoresAttributes, true);
    auto lesson = parse("# T\nmodel: resnet_block.onnx\npipeline: canonicalize,layout,fuse\n\n"
                        "## Right\nsnapshot: 2\ncompare: 1,2\nexpect: numeric.ok == 1\n\n"
                        "## Wrong\nfault: layout-constant-channels\nexpect: numeric.ok == 0\n\n"
                        "## Right again\nfault: none\nexpect: numeric.ok == 1\n");
    QVERIFY2(lesson.ok(), lesson.ok() ? "" : lesson.error().message().c_str());
    auto report = checkLesson(*lesson);
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().message().c_str());
    QCOMPARE(enabledFaults(), std::vector<Fault>{Fault::CseIgnoresAttributes});
  }

  void focusFindsNamesGroupsAndIds() {
    Session s;
    QVERIFY(s.load(std::string(FUSEBOX_SAMPLES_DIR) + "/small_cnn.onnx").ok());
    QVERIFY(s.setPipeline("fold-batchnorm,fuse").ok());
    QVERIFY(s.runPipeline().ok());
    const Graph& fused = *s.graph(2);
    auto group = resolveLessonFocus(fused, "/relu1/Relu"); // inside a fused group
    QVERIFY(group.ok());
    QVERIFY(fused.findNode(*group)->body() != nullptr);
    auto byId = resolveLessonFocus(*s.graph(0), "#3");
    QVERIFY(byId.ok());
    QCOMPARE(*byId, NodeId(3));
    QVERIFY(!resolveLessonFocus(fused, "#999").ok());
  }

  void everyShippedLessonPasses() {
    const auto lessons = courseLessons(samplesDir() + "/lessons");
    QVERIFY(lessons.size() >= 8);
    for (const std::string& path : lessons) {
      auto lesson = readLesson(path);
      QVERIFY2(lesson.ok(), lesson.ok() ? "" : lesson.error().message().c_str());
      QVERIFY2(!lesson->steps.empty() && !lesson->steps.front().narrative.empty(), path.c_str());
      auto report = checkLesson(*lesson);
      QVERIFY2(report.ok(), report.ok() ? "" : report.error().message().c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestLesson)
#include "TestLesson.moc"
