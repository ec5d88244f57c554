// Text IR highlighting rules.
#include "app/gui/IrHighlighter.h"
#include "app/gui/TextFormat.h"

namespace fb::gui {

IrHighlighter::IrHighlighter(QTextDocument* document, bool diffMode)
    : QSyntaxHighlighter(document), m_diffMode(diffMode) {
  // Later rules win where they overlap.
  m_rules.push_back({QRegularExpression(R"(\b-?\d+(\.\d+)?(e[-+]?\d+)?\b)"), charFormat(QColor(0x8A, 0x4B, 0x00))});
  m_rules.push_back({QRegularExpression(R"(\b(graph|input|const|output|opset|dense|resource|from)\b)"),
                     charFormat(QColor(0x6F, 0x2D, 0xA8), /*bold=*/true)});
  m_rules.push_back({QRegularExpression(R"(\b(f32|f16|bf16|i8|u8|i32|i64|bool)\[[^\]]*\])"),
                     charFormat(QColor(0x00, 0x6E, 0x6E))});
  m_rules.push_back({QRegularExpression(R"(%(\"[^\"]*\"|[A-Za-z0-9_.:/\-]+))"), charFormat(QColor(0x1F, 0x4E, 0xA8))});
  m_rules.push_back({QRegularExpression(R"(= ([A-Za-z_][A-Za-z0-9_]*)\()"),
                     charFormat(QColor(0xB0, 0x30, 0x00), /*bold=*/true), 1});
  m_rules.push_back({QRegularExpression(R"(@[A-Za-z0-9_.\-]+)"), charFormat(QColor(0x6F, 0x2D, 0xA8))});
  m_rules.push_back({QRegularExpression(R"(\"[^\"]*\"(?=\s*(from|@|\{|$)))"),
                     charFormat(QColor(0x2E, 0x7D, 0x32), false, /*italic=*/true)});
  m_rules.push_back({QRegularExpression(R"(#\d+)"), charFormat(QColor(0x75, 0x75, 0x75))});
  m_added.setBackground(QColor(0xDF, 0xF5, 0xDF));
  m_removed.setBackground(QColor(0xFB, 0xE0, 0xE0));
  m_hunk = charFormat(QColor(0x55, 0x55, 0xAA), /*bold=*/true);
  m_hunk.setBackground(QColor(0xEE, 0xEE, 0xF8));
}

void IrHighlighter::highlightBlock(const QString& text) {
  if (m_diffMode) {
    if (text.startsWith("@@") || text.startsWith("+++") || text.startsWith("---")) {
      setFormat(0, int(text.size()), m_hunk);
      return;
    }
    if (text.startsWith('+'))
      setFormat(0, int(text.size()), m_added);
    else if (text.startsWith('-'))
      setFormat(0, int(text.size()), m_removed);
  }
  for (const Rule& rule : m_rules) {
    auto it = rule.pattern.globalMatch(text);
    while (it.hasNext()) {
      auto m = it.next();
      int start = int(m.capturedStart(rule.group));
      int length = int(m.capturedLength(rule.group));
      // Keep a diff line's background: merge the rule's foreground into the current format.
      for (int i = start; i < start + length; ++i) {
        QTextCharFormat f = QSyntaxHighlighter::format(i);
        f.merge(rule.format);
        setFormat(i, 1, f);
      }
    }
  }
}

} // namespace fb::gui
