// Names and text as the views show them (ShownText): a hostile 2 MB node name reaches no cell,
// header or text line whole, UTF-8 is never cut inside a character, and line numbers of IR text
// still map to nodes. And the window itself: a model whose node name is 2 MB opens with every
// view holding at most a few thousand characters of it.
#include "app/gui/Coordinator.h"
#include "app/gui/IrTextView.h"
#include "app/gui/MainWindow.h"
#include "app/gui/ShownText.h"
#include "core/Graph.h"

#include <QAbstractItemModel>
#include <QAbstractItemView>
#include <QPlainTextEdit>
#include <QTextBlock>
#include <QtTest/QtTest>

using namespace fb;
using namespace fb::gui;

namespace {

/// The longest line of a plain-text document.
int longestBlock(const QTextDocument* doc) {
  int longest = 0;
  for (QTextBlock b = doc->begin(); b.isValid(); b = b.next())
    longest = std::max(longest, int(b.length()));
  return longest;
}

/// The longest display text of any cell or header of any item view in `w`.
int longestCell(QWidget* w, QString* where) {
  int longest = 0;
  auto consider = [&](const QString& s, const QString& what) {
    if (s.size() > longest) {
      longest = int(s.size());
      *where = what;
    }
  };
  for (QAbstractItemView* view : w->findChildren<QAbstractItemView*>()) {
    QAbstractItemModel* m = view->model();
    if (!m)
      continue;
    for (int c = 0; c < m->columnCount(); ++c)
      consider(m->headerData(c, Qt::Horizontal).toString(), view->objectName() + " header");
    for (int r = 0; r < std::min(m->rowCount(), 200); ++r) {
      consider(m->headerData(r, Qt::Vertical).toString(), view->objectName() + " row header");
      for (int c = 0; c < m->columnCount(); ++c)
        consider(m->index(r, c).data().toString(), view->objectName() + " cell");
    }
  }
  return longest;
}

} // namespace

class TestShownText : public QObject {
  Q_OBJECT

private Q_SLOTS:
  void shortNamesAreShownWhole() {
    QCOMPARE(shownName(std::string("conv1/weight")), QStringLiteral("conv1/weight"));
    const std::string exact(kShownNameChars, 'a');
    QCOMPARE(shownName(exact), QString(kShownNameChars, QLatin1Char('a')));
    // Multi-byte characters count as characters: 96 of "é" are 192 bytes and still whole.
    std::string accents;
    for (int i = 0; i < kShownNameChars; ++i)
      accents += "\xC3\xA9";
    QCOMPARE(shownName(accents), QString(kShownNameChars, QChar(0xE9)));
  }

  void longNamesKeepHeadAndTail() {
    const std::string name = "head" + std::string(2 << 20, 'n') + "tail";
    const QString shown = shownName(name);
    QVERIFY(shown.size() <= kShownNameChars);
    QVERIFY(shown.startsWith(QStringLiteral("headnnn")));
    QVERIFY(shown.endsWith(QStringLiteral("nnntail")));
    QVERIFY(shown.contains(QChar(0x2026)));
    QCOMPARE(shownName(QString::fromStdString(name)), shown);
    QCOMPARE(shownName(name, 11), QStringLiteral("headn\u2026ntail"));
  }

  void utf8IsNeverCutInsideACharacter() {
    // 3-byte (€) and 4-byte (𝔽) characters around the cut points, at every offset.
    for (int pad = 0; pad < 4; ++pad) {
      std::string name(size_t(pad), 'x');
      for (int i = 0; i < 500; ++i)
        name += (i % 2) ? "\xE2\x82\xAC" : "\xF0\x9D\x94\xBD";
      const QString shown = shownName(name);
      QVERIFY(shown.size() <= kShownNameChars);
      QVERIFY2(!shown.contains(QChar(QChar::ReplacementCharacter)), qPrintable(shown));
      const QString text = shownText(name + "\n" + name, 100);
      QVERIFY2(!text.contains(QChar(QChar::ReplacementCharacter)), qPrintable(text));
    }
  }

  void textKeepsItsLines() {
    const std::string plain = "graph @g {\n  %y = Relu(%x)\n}\n";
    QCOMPARE(shownText(plain), QString::fromStdString(plain));
    const std::string line = "  %y = Relu(%x)  #1 \"" + std::string(2 << 20, 'n') + "\"";
    const std::string ir = "graph @g {\n  input %x\n" + line + "\n  output %y\n}\n";
    const QString shown = shownText(ir);
    const QStringList lines = shown.split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 6);
    QCOMPARE(lines[0], QStringLiteral("graph @g {"));
    QCOMPARE(lines[3], QStringLiteral("  output %y"));
    QVERIFY(lines[2].size() <= kShownLineChars);
    QVERIFY(lines[2].startsWith(QStringLiteral("  %y = Relu(%x)  #1 \"nnn")));
    QVERIFY(lines[2].endsWith(QStringLiteral("nnn\"")));
    QVERIFY(lines[2].contains(QString::number(line.size())));
    // The QString form elides the same lines and keeps the others exactly.
    const QStringList qlines = shownText(QString::fromStdString(ir)).split(QLatin1Char('\n'));
    QCOMPARE(qlines.size(), 6);
    QCOMPARE(qlines[1], QStringLiteral("  input %x"));
    QVERIFY(qlines[2].size() <= kShownLineChars);
    QVERIFY(qlines[2].startsWith(QStringLiteral("  %y = Relu(%x)")));
    QCOMPARE(shownText(QStringLiteral("a\nb\n")), QStringLiteral("a\nb\n"));
  }

  void windowShowsAHostileNameInPieces() {
    auto g = std::make_unique<Graph>("long_node_name");
    const TensorType t = TensorType::of(DType::F32, {3});
    // The input's name is long too: the run panel's inputs table shows it.
    Value* x = g->addInput(std::string(1 << 20, 'x'), t);
    Node* relu = g->addNode(OpKind::Relu, {x}, 1, {"y"}, std::string(2 << 20, 'n'));
    relu->output(0)->setType(t);
    g->addOutput(relu->output(0));
    const NodeId reluId = relu->id();
    MainWindow w(/*persistent=*/false);
    w.show();
    w.coordinator()->openGraph(std::move(g), QStringLiteral("long_node_name"));
    QVERIFY(w.coordinator()->setPipeline("canonicalize,fuse"));
    QVERIFY(w.runPipelineBlocking());
    w.coordinator()->selectNode(reluId);
    QApplication::processEvents();
    QVERIFY(longestBlock(w.irView()->editor()->document()) <= kShownLineChars + 1);
    for (QPlainTextEdit* edit : w.findChildren<QPlainTextEdit*>())
      QVERIFY2(longestBlock(edit->document()) <= kShownLineChars + 1,
               qPrintable(edit->objectName()));
    QString where;
    const int cell = longestCell(&w, &where);
    QVERIFY2(cell <= 2 * kShownNameChars,
             qPrintable(QStringLiteral("%1: %2").arg(where).arg(cell)));
  }
};

QTEST_MAIN(TestShownText)
#include "TestShownText.moc"
