// The one palette of the graph view: fill colours by op category, mark and heat colours.
#pragma once

#include "app/gui/graph/GraphView.h"
#include "core/OpTable.h"

#include <QColor>
#include <QString>

#include <vector>

namespace fb::gui {

/// Fill colour of a node of this fusion category (soft, readable under black text).
QColor categoryColor(OpCategory category);
/// Fill colour of an op: its category's colour (fused groups and constants have their own).
QColor opColor(OpKind op);
/// Fill of a collapsed fused group.
QColor fusedColor();
/// Fill of a collapsed block of nodes (a name scope or a chunk of a large graph).
QColor groupColor();
/// Fill of graph inputs and outputs.
QColor ioColor();
/// Fill of a constant (weight) node.
QColor constantColor();
/// Outline colour of a mark (added green, removed red, changed orange); invalid for None.
QColor markColor(NodeMark mark);
/// "added", "removed", "changed" or "".
QString markName(NodeMark mark);
/// A heat colour for an error in [0, 1]: pale yellow through orange to red.
QColor heatColor(double heat);

/// One legend entry: a colour and what it means.
struct LegendEntry {
  QColor color;
  QString text;
};
/// The legend of the category palette, for views that draw one.
std::vector<LegendEntry> categoryLegend();

} // namespace fb::gui
