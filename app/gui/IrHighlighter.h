// Syntax highlighting of the text IR (.fbir), optionally as a unified diff of it.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace fb::gui {

/// Colours keywords, value names, op names, types, node ids and provenance, strings and
/// numbers. In diff mode, '+' and '-' lines get a green or red background as well.
class IrHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
public:
  explicit IrHighlighter(QTextDocument* document, bool diffMode = false);

protected:
  void highlightBlock(const QString& text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
    int group = 0;
  };
  std::vector<Rule> m_rules;
  bool m_diffMode;
  QTextCharFormat m_added, m_removed, m_hunk;
};

} // namespace fb::gui
