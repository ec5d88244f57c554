// Names and text as the views show them. A model may carry a node name of megabytes (the hostile
// set has one of 2 MB); Qt shapes every character a cell, header or text line holds, so each view
// takes names and IR through these and shows the head and tail of anything too long to read.
#pragma once

#include <QString>

#include <string_view>

namespace fb::gui {

/// Longest name a table cell, label or graph caption shows whole.
inline constexpr int kShownNameChars = 96;
/// Longest line a text pane (IR, generated code, diff details) shows whole.
inline constexpr int kShownLineChars = 2000;

/// `name` (UTF-8) fit for a cell or label: over `maxChars`, its head and tail around an ellipsis.
/// Only the kept bytes are decoded, so a 2 MB name costs what a short one does.
QString shownName(std::string_view name, int maxChars = kShownNameChars);
QString shownName(const QString& name, int maxChars = kShownNameChars);

/// `text` (UTF-8) fit for a text pane: every line over `maxLineChars` keeps its head and tail
/// around "… N characters …". Lines keep their number, so line maps into the text still hold.
QString shownText(std::string_view text, int maxLineChars = kShownLineChars);
QString shownText(const QString& text, int maxLineChars = kShownLineChars);

} // namespace fb::gui
