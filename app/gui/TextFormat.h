// The character format the syntax highlighters (IR text, generated code) build their rules from.
#pragma once

#include <QColor>
#include <QFont>
#include <QTextCharFormat>

namespace fb::gui {

inline QTextCharFormat charFormat(const QColor& color, bool bold = false, bool italic = false) {
  QTextCharFormat f;
  f.setForeground(color);
  if (bold)
    f.setFontWeight(QFont::Bold);
  f.setFontItalic(italic);
  return f;
}

} // namespace fb::gui
