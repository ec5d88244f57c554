// PNG/SVG rendering of the scene and DOT text of the displayed graph.
#include "app/gui/graph/GraphExport.h"

#include <QFile>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>
#include <functional>

namespace fb::gui {

namespace {

QString quoted(const QString& s) {
  QString out = s;
  out.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
  out.replace(QLatin1Char('"'), QStringLiteral("\\\""));
  out.replace(QLatin1Char('\n'), QStringLiteral("\\n"));
  return QLatin1Char('"') + out + QLatin1Char('"');
}

} // namespace

QString exportScene(QGraphicsScene& scene, const QString& path) {
  const QRectF source = scene.itemsBoundingRect().adjusted(-20, -20, 20, 20);
  if (scene.items().isEmpty() || source.isEmpty())
    return QStringLiteral("nothing to export: the view is empty");
  const QString lower = path.toLower();
  if (lower.endsWith(QLatin1String(".png"))) {
    const double scale = std::min(2.0, 16000.0 / std::max(source.width(), source.height()));
    QImage image(std::max(1, int(source.width() * scale)), std::max(1, int(source.height() * scale)),
                 QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    {
      QPainter p(&image);
      p.setRenderHint(QPainter::Antialiasing);
      p.setRenderHint(QPainter::TextAntialiasing);
      scene.render(&p, QRectF(0, 0, image.width(), image.height()), source);
    }
    if (!image.save(path, "PNG"))
      return QStringLiteral("cannot write %1").arg(path);
    return QString();
  }
  if (lower.endsWith(QLatin1String(".svg"))) {
    QFile probe(path);
    if (!probe.open(QIODevice::WriteOnly))
      return QStringLiteral("cannot write %1: %2").arg(path, probe.errorString());
    probe.close();
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setTitle(QStringLiteral("Fusebox graph"));
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(), source.size()));
    QPainter p;
    if (!p.begin(&svg))
      return QStringLiteral("cannot write %1").arg(path);
    p.fillRect(QRectF(QPointF(), source.size()), Qt::white);
    scene.render(&p, QRectF(QPointF(), source.size()), source);
    p.end();
    return QString();
  }
  return QStringLiteral("unknown export format for %1 (use .png, .svg or .dot)").arg(path);
}

QString displayGraphToDot(const DisplayGraph& graph, const QString& name) {
  QString dot;
  dot += QStringLiteral("digraph %1 {\n").arg(quoted(name));
  dot += QStringLiteral("  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", "
                        "fontname=\"DejaVu Sans\", fontsize=11];\n"
                        "  edge [fontname=\"DejaVu Sans\", fontsize=9, color=\"#6b6b6b\"];\n");
  // Units grouped by cluster; clusters nest by parent.
  std::vector<std::vector<size_t>> unitsOf(graph.clusters.size());
  std::vector<std::vector<size_t>> childrenOf(graph.clusters.size());
  std::vector<size_t> topUnits, topClusters;
  for (size_t u = 0; u < graph.units.size(); ++u)
    (graph.units[u].cluster >= 0 ? unitsOf[size_t(graph.units[u].cluster)] : topUnits).push_back(u);
  for (size_t c = 0; c < graph.clusters.size(); ++c)
    (graph.clusters[c].parent >= 0 ? childrenOf[size_t(graph.clusters[c].parent)] : topClusters)
        .push_back(c);
  auto writeUnit = [&](size_t u, const QString& indent) {
    const DisplayUnit& unit = graph.units[u];
    QString label = unit.title;
    for (const QString& d : unit.details)
      label += QLatin1Char('\n') + d;
    dot += QStringLiteral("%1u%2 [label=%3, fillcolor=\"%4\"];\n")
               .arg(indent)
               .arg(u)
               .arg(quoted(label), unit.fill.name());
  };
  std::function<void(size_t, const QString&)> writeCluster = [&](size_t c, const QString& indent) {
    const DisplayCluster& cl = graph.clusters[c];
    dot += QStringLiteral("%1subgraph cluster_%2 {\n").arg(indent).arg(c);
    dot += QStringLiteral("%1  label=%2; style=\"rounded,dashed\";\n").arg(indent, quoted(cl.label));
    for (size_t u : unitsOf[c])
      writeUnit(u, indent + QStringLiteral("  "));
    for (size_t child : childrenOf[c])
      writeCluster(child, indent + QStringLiteral("  "));
    dot += indent + QStringLiteral("}\n");
  };
  for (size_t u : topUnits)
    writeUnit(u, QStringLiteral("  "));
  for (size_t c : topClusters)
    writeCluster(c, QStringLiteral("  "));
  for (const DisplayEdge& e : graph.edges) {
    dot += QStringLiteral("  u%1 -> u%2").arg(e.from).arg(e.to);
    if (!e.label.isEmpty())
      dot += QStringLiteral(" [label=%1]").arg(quoted(e.label));
    dot += QStringLiteral(";\n");
  }
  dot += QStringLiteral("}\n");
  return dot;
}

} // namespace fb::gui
