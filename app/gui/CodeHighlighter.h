// Syntax highlighting of generated code: the loop-nest pseudo-code, LLVM IR, x86 assembly and
// PTX, each a QSyntaxHighlighter subclass over one shared rule engine. The engine also gives a
// line's formats directly, so an editor can colour a large text lazily (CodeTextEdit).
#pragma once

#include "app/workbench/Emit.h"

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <QTextLayout>

#include <vector>

namespace fb::gui {

/// Colours a document by regular-expression rules (later rules win where they overlap) and a
/// comment rule (from the marker to the end of the line).
class CodeHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
public:
  /// The formats of one line, as highlightBlock applies them (for colouring without
  /// attaching the highlighter to a document).
  QList<QTextLayout::FormatRange> formatsFor(const QString& text) const;

protected:
  explicit CodeHighlighter(QTextDocument* document);
  void addRule(const QString& pattern, const QTextCharFormat& format, int group = 0);
  /// Text from the first match of `marker` to the end of the line is a comment.
  void setCommentMarker(const QString& marker, const QTextCharFormat& format);
  void highlightBlock(const QString& text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
    int group = 0;
  };
  std::vector<Rule> m_rules;
  QRegularExpression m_comment;
  QTextCharFormat m_commentFormat;
};

/// `kernel k3(...)`, `for i, j in grid(4, 16):`, `parallel(64)`, buffers, `# comments`.
class LoopsHighlighter : public CodeHighlighter {
  Q_OBJECT
public:
  explicit LoopsHighlighter(QTextDocument* document);
};

/// LLVM IR: `define`, instructions, types, %locals, @globals, !metadata, attributes, `; comments`.
class LlvmHighlighter : public CodeHighlighter {
  Q_OBJECT
public:
  explicit LlvmHighlighter(QTextDocument* document);
};

/// AT&T x86-64 assembly: labels, directives, mnemonics, %registers, $immediates, `# comments`.
class AsmHighlighter : public CodeHighlighter {
  Q_OBJECT
public:
  explicit AsmHighlighter(QTextDocument* document);
};

/// PTX: directives (.entry, .reg, .param), instructions with their type suffixes, %registers,
/// predicates, `// comments`.
class PtxHighlighter : public CodeHighlighter {
  Q_OBJECT
public:
  explicit PtxHighlighter(QTextDocument* document);
};

/// The highlighter for `kind`'s text, attached to `document` (nullptr for Object).
CodeHighlighter* makeCodeHighlighter(workbench::CodeKind kind, QTextDocument* document);

} // namespace fb::gui
