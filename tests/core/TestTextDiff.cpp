// Tests of the line diff: exact unified output (checked against GNU diff -u), minimality against
// a dynamic-programming LCS, and speed on large texts.
#include "core/TextDiff.h"

#include <QtTest/QtTest>

#include <chrono>
#include <random>

using namespace fb;

namespace {

std::vector<std::string> numberedLines(int from, int to) {
  std::vector<std::string> lines;
  for (int i = from; i <= to; ++i)
    lines.push_back(std::to_string(i));
  return lines;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines)
    s += l + "\n";
  return s;
}

size_t lcsLength(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::vector<std::vector<size_t>> t(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

} // namespace

class TestTextDiff : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void identicalIsEmpty() {
    QCOMPARE(unifiedDiff("", ""), std::string());
    QCOMPARE(unifiedDiff("a\nb\n", "a\nb\n"), std::string());
    std::string big = joinLines(numberedLines(1, 5000));
    QCOMPARE(unifiedDiff(big, big), std::string());
  }

  void oneLineChanged() {
    QCOMPARE(unifiedDiff("a\nb\nc\n", "a\nB\nc\n"), std::string("--- a\n+++ b\n"
                                                                "@@ -1,3 +1,3 @@\n"
                                                                " a\n"
                                                                "-b\n"
                                                                "+B\n"
                                                                " c\n"));
  }

  void deletionAndLabels() {
    UnifiedDiffOptions o;
    o.labelA = "before.fbir";
    o.labelB = "after.fbir";
    QCOMPARE(unifiedDiff("a\nb\nc\nd\n", "a\nd\n", o),
             std::string("--- before.fbir\n+++ after.fbir\n"
                         "@@ -1,4 +1,2 @@\n"
                         " a\n"
                         "-b\n"
                         "-c\n"
                         " d\n"));
  }

  void emptySides() {
    QCOMPARE(unifiedDiff("", "x\n"), std::string("--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"));
    QCOMPARE(unifiedDiff("x\ny\n", ""), std::string("--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n"));
  }

  void missingFinalNewline() {
    QCOMPARE(unifiedDiff("a\nb", "a\nb\n"), std::string("--- a\n+++ b\n"
                                                        "@@ -1,2 +1,2 @@\n"
                                                        " a\n"
                                                        "-b\n"
                                                        "\\ No newline at end of file\n"
                                                        "+b\n"));
  }

  void separateHunks() {
    // Changes 16 lines apart: two hunks of three context lines each.
    std::vector<std::string> lines = numberedLines(1, 20);
    std::string a = joinLines(lines);
    lines[1] = "two";
    lines[17] = "eighteen";
    QCOMPARE(unifiedDiff(a, joinLines(lines)),
             std::string("--- a\n+++ b\n"
                         "@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n"
                         "@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+eighteen\n 19\n 20\n"));
  }

  void nearbyChangesShareAHunk() {
    // Six unchanged lines between the changes (2 x context): one hunk, as diff -u prints it.
    std::vector<std::string> lines = numberedLines(1, 20);
    std::string a = joinLines(lines);
    lines[1] = "two";
    lines[8] = "nine";
    std::string b = joinLines(lines);
    QCOMPARE(unifiedDiff(a, b),
             std::string("--- a\n+++ b\n"
                         "@@ -1,12 +1,12 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n"
                         " 10\n 11\n 12\n"));
    UnifiedDiffOptions noContext;
    noContext.context = 0;
    QCOMPARE(unifiedDiff(a, b, noContext),
             std::string("--- a\n+++ b\n@@ -2 +2 @@\n-2\n+two\n@@ -9 +9 @@\n-9\n+nine\n"));
  }

  void editScriptIsShortest() {
    // Small alphabets make many equally long alignments: the script must rebuild b from a and
    // keep exactly as many lines as the longest common subsequence.
    std::mt19937 rng(12345);
    static const std::string_view words[] = {"x\n", "y\n", "z\n", "w\n"};
    for (int round = 0; round < 300; ++round) {
      size_t alphabet = 2 + round % 3;
      std::vector<std::string_view> a(rng() % 25), b(rng() % 25);
      for (auto& l : a)
        l = words[rng() % alphabet];
      for (auto& l : b)
        l = words[rng() % alphabet];
      std::vector<LineEdit> edits = diffLines(a, b);
      std::vector<std::string_view> rebuilt;
      size_t kept = 0, ai = 0;
      for (const LineEdit& e : edits) {
        switch (e.kind) {
        case LineEdit::Kind::Equal:
          QCOMPARE(a[e.aLine], b[e.bLine]);
          QCOMPARE(e.aLine, ai++);
          rebuilt.push_back(a[e.aLine]);
          ++kept;
          break;
        case LineEdit::Kind::Delete:
          QCOMPARE(e.aLine, ai++);
          break;
        case LineEdit::Kind::Insert:
          rebuilt.push_back(b[e.bLine]);
          break;
        default:
          QFAIL("unknown edit kind");
        }
      }
      QCOMPARE(ai, a.size());
      QVERIFY(rebuilt == b);
      QCOMPARE(kept, lcsLength(a, b));
    }
  }

  void largeTextsAreFast() {
    std::vector<std::string> lines = numberedLines(1, 5000);
    std::string a = joinLines(lines);
    lines[99] = "changed";
    lines.insert(lines.begin() + 2499, "inserted"); // before line 2500
    lines.erase(lines.begin() + 4000);              // line 4000, one further down now
    std::string b = joinLines(lines);
    auto start = std::chrono::steady_clock::now();
    std::string d = unifiedDiff(a, b);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(seconds < 0.2, qPrintable(QString("took %1 s").arg(seconds)));
    QVERIFY(d.find("@@ -97,7 +97,7 @@\n 97\n 98\n 99\n-100\n+changed\n 101\n") !=
            std::string::npos);
    QVERIFY(d.find("@@ -2497,6 +2497,7 @@\n 2497\n 2498\n 2499\n+inserted\n 2500\n") !=
            std::string::npos);
    QVERIFY(d.find("@@ -3997,7 +3998,6 @@\n 3997\n 3998\n 3999\n-4000\n 4001\n") !=
            std::string::npos);
    size_t hunks = 0;
    for (size_t p = d.find("\n@@ "); p != std::string::npos; p = d.find("\n@@ ", p + 1))
      ++hunks;
    QCOMPARE(hunks, size_t(3));

    // Nothing in common: the worst case for the search still finishes quickly.
    std::string c = joinLines(numberedLines(5001, 10000));
    start = std::chrono::steady_clock::now();
    d = unifiedDiff(a, c);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(seconds < 2.0, qPrintable(QString("took %1 s").arg(seconds)));
    QVERIFY(d.rfind("--- a\n+++ b\n@@ -1,5000 +1,5000 @@\n-1\n", 0) == 0);
  }
};

QTEST_GUILESS_MAIN(TestTextDiff)
#include "TestTextDiff.moc"
