// Names and text as the views show them: long ones keep their head and tail.
#include "app/gui/ShownText.h"

#include <QStringList>

#include <algorithm>

namespace fb::gui {

namespace {

bool isContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

/// The first `bytes` bytes of `s`, shortened so that no UTF-8 sequence is cut.
std::string_view headOf(std::string_view s, size_t bytes) {
  bytes = std::min(bytes, s.size());
  while (bytes > 0 && bytes < s.size() && isContinuationByte(s[bytes]))
    --bytes;
  return s.substr(0, bytes);
}

/// The last `bytes` bytes of `s`, shortened so that no UTF-8 sequence is cut.
std::string_view tailOf(std::string_view s, size_t bytes) {
  size_t start = s.size() - std::min(bytes, s.size());
  while (start < s.size() && isContinuationByte(s[start]))
    ++start;
  return s.substr(start);
}

QString fromUtf8(std::string_view s) {
  return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

/// `s` with its middle replaced by `gap`, keeping about `keep` characters in all. A UTF-8
/// character takes up to 4 bytes, so head and tail are cut in bytes first (cheap) and then in
/// characters.
QString elideMiddle(std::string_view s, int keep, const QString& gap) {
  const int half = std::max(1, keep / 2);
  QString head = fromUtf8(headOf(s, size_t(half) * 4)).left(half);
  QString tail = fromUtf8(tailOf(s, size_t(half) * 4)).right(half);
  return head + gap + tail;
}

/// Whether some line of `text` has more than `maxBytes` bytes.
bool hasLongLine(std::string_view text, size_t maxBytes) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    if (end - pos > maxBytes)
      return true;
    pos = end + 1;
  }
  return false;
}

} // namespace

QString shownName(std::string_view name, int maxChars) {
  if (name.size() <= size_t(maxChars))
    return fromUtf8(name);
  const QString whole = name.size() <= size_t(maxChars) * 4 ? fromUtf8(name) : QString();
  if (!whole.isNull() && whole.size() <= maxChars)
    return whole;
  return elideMiddle(name, maxChars - 1, QStringLiteral("\u2026"));
}

QString shownName(const QString& name, int maxChars) {
  if (name.size() <= maxChars)
    return name;
  const int half = std::max(1, (maxChars - 1) / 2);
  return name.left(half) + QStringLiteral("\u2026") + name.right(half);
}

QString shownText(std::string_view text, int maxLineChars) {
  if (!hasLongLine(text, size_t(maxLineChars)))
    return fromUtf8(text);
  QString out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    const bool last = end == std::string_view::npos;
    if (last)
      end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    if (line.size() <= size_t(maxLineChars)) {
      out += fromUtf8(line);
    } else {
      const QString whole = line.size() <= size_t(maxLineChars) * 4 ? fromUtf8(line) : QString();
      if (!whole.isNull() && whole.size() <= maxLineChars)
        out += whole;
      else {
        const QString gap =
            QStringLiteral(" \u2026 [a line of %1 bytes; its middle is not shown] \u2026 ")
                .arg(line.size());
        out += elideMiddle(line, std::max(2, maxLineChars - int(gap.size())), gap);
      }
    }
    if (last)
      break;
    out += QLatin1Char('\n');
    pos = end + 1;
  }
  return out;
}

QString shownText(const QString& text, int maxLineChars) {
  QStringList lines;
  bool elided = false;
  qsizetype pos = 0;
  while (pos <= text.size()) {
    qsizetype end = text.indexOf(QLatin1Char('\n'), pos);
    if (end < 0)
      end = text.size();
    if (end - pos > maxLineChars) {
      if (!elided) {
        lines = text.left(pos).split(QLatin1Char('\n'));
        lines.removeLast(); // the empty piece after the last newline before `pos`
        elided = true;
      }
      const QString gap =
          QStringLiteral(" \u2026 [a line of %1 characters; its middle is not shown] \u2026 ")
              .arg(end - pos);
      const qsizetype half = std::max<qsizetype>(1, (maxLineChars - gap.size()) / 2);
      lines << text.mid(pos, half) + gap + text.mid(end - half, half);
    } else if (elided) {
      lines << text.mid(pos, end - pos);
    }
    pos = end + 1;
  }
  return elided ? lines.join(QLatin1Char('\n')) : text;
}

} // namespace fb::gui
