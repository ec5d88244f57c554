// Syntax highlighting of generated code: the loop-nest pseudo-code, LLVM IR, x86 assembly and
// PTX, each a QSyntaxHighlighter subclass over one shared rule engine. Large texts are coloured
// lazily, only the blocks a view shows, so a 30,000-line module does not freeze the window.
#pragma once

#include "app/workbench/Emit.h"

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include <vector>

namespace fb::gui {

/// Colours a document by regular-expression rules (later rules win where they overlap) and a
/// whole-line comment rule. In lazy mode only blocks passed to highlightBlocks() (and those
/// coloured before) are coloured; the rest stay plain until they are shown.
class CodeHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
public:
  /// Documents with more blocks than this are coloured lazily.
  static constexpr int kLazyBlockLimit = 2000;

  /// Colours blocks [first, last] of the document that are not coloured yet (lazy mode).
  void highlightBlocks(int first, int last);
  /// Whether the attached document is coloured lazily.
  bool isLazy() const { return m_lazy; }
  /// Call after the document's text was replaced: forgets which blocks were coloured and
  /// chooses lazy mode from the new block count.
  void resetForNewText();

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
  bool m_lazy = false;
  bool m_forcing = false;
  std::vector<bool> m_coloured; ///< per block, in lazy mode
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
