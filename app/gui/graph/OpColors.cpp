// The graph view's palette: category, mark and heat colours (Okabe-Ito based, colour-blind safe).
#include "app/gui/graph/OpColors.h"

#include <algorithm>

namespace fb::gui {

QColor categoryColor(OpCategory category) {
  switch (category) {
  case OpCategory::Elementwise: return QColor(0xCD, 0xEB, 0xC5);       // green
  case OpCategory::Broadcast: return QColor(0xC4, 0xE6, 0xEE);         // teal
  case OpCategory::Injective: return QColor(0xE3, 0xE3, 0xEA);         // grey-blue
  case OpCategory::Reduction: return QColor(0xFB, 0xD9, 0xB4);         // orange
  case OpCategory::ComplexOutFusable: return QColor(0xB9, 0xD3, 0xF2); // blue
  case OpCategory::Opaque: return QColor(0xE2, 0xCF, 0xEA);            // purple
  }
  __builtin_unreachable();
}

QColor opColor(OpKind op) {
  if (op == OpKind::Fused)
    return fusedColor();
  if (op == OpKind::Constant)
    return constantColor();
  return categoryColor(opInfo(op).category);
}

QColor fusedColor() { return QColor(0xFF, 0xE9, 0x9E); }
QColor groupColor() { return QColor(0xF3, 0xF0, 0xE6); }
QColor ioColor() { return QColor(0xFF, 0xFF, 0xFF); }
QColor constantColor() { return QColor(0xF1, 0xF1, 0xF1); }

QColor markColor(NodeMark mark) {
  switch (mark) {
  case NodeMark::None: return QColor();
  case NodeMark::Added: return QColor(0x00, 0x9E, 0x73);   // bluish green
  case NodeMark::Removed: return QColor(0xD5, 0x2B, 0x1E); // vermillion
  case NodeMark::Changed: return QColor(0xE6, 0x9F, 0x00); // orange
  }
  __builtin_unreachable();
}

QString markName(NodeMark mark) {
  switch (mark) {
  case NodeMark::None: return QString();
  case NodeMark::Added: return QStringLiteral("added");
  case NodeMark::Removed: return QStringLiteral("removed");
  case NodeMark::Changed: return QStringLiteral("changed");
  }
  __builtin_unreachable();
}

QColor heatColor(double heat) {
  heat = std::clamp(heat, 0.0, 1.0);
  // Pale yellow (255, 247, 188) -> orange (254, 153, 41) -> red (204, 20, 20).
  auto mix = [](const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                            float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
  };
  const QColor low(255, 247, 188), mid(254, 153, 41), high(204, 20, 20);
  return heat < 0.5 ? mix(low, mid, heat * 2) : mix(mid, high, (heat - 0.5) * 2);
}

std::vector<LegendEntry> categoryLegend() {
  return {
      {categoryColor(OpCategory::ComplexOutFusable), QStringLiteral("conv / matmul / pool")},
      {categoryColor(OpCategory::Elementwise), QStringLiteral("elementwise")},
      {categoryColor(OpCategory::Broadcast), QStringLiteral("broadcast")},
      {categoryColor(OpCategory::Injective), QStringLiteral("data movement")},
      {categoryColor(OpCategory::Reduction), QStringLiteral("reduction")},
      {categoryColor(OpCategory::Opaque), QStringLiteral("opaque")},
      {fusedColor(), QStringLiteral("fused group")},
      {groupColor(), QStringLiteral("collapsed block")},
      {constantColor(), QStringLiteral("weight / constant")},
  };
}

} // namespace fb::gui
