// The inspector's document: HTML tables, histogram images and internal links.
#include "app/gui/InspectorView.h"

#include "core/Format.h"

#include <QPainter>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace fb::gui {

namespace {

/// HTML-escaped text; a very long string (a 2 MB node name) keeps its start and end, so the
/// inspector stays quick and readable.
QString esc(const std::string& s) {
  constexpr size_t kHead = 160, kTail = 80;
  if (s.size() <= kHead + kTail + 40)
    return QString::fromStdString(s).toHtmlEscaped();
  return (QString::fromStdString(s.substr(0, kHead)) +
          QStringLiteral("… (%1 characters) …").arg(s.size()) +
          QString::fromStdString(s.substr(s.size() - kTail)))
      .toHtmlEscaped();
}

QString nodeLink(NodeId id) {
  return QStringLiteral("<a href=\"node:%1\">#%1</a>").arg(id);
}

QString portRows(const std::vector<workbench::PortInfo>& ports, bool inputs) {
  QString html;
  for (size_t i = 0; i < ports.size(); ++i) {
    const workbench::PortInfo& p = ports[i];
    QString from;
    if (p.kind == "absent")
      from = QStringLiteral("<i>absent</i>");
    else if (p.producer != 0)
      from = QStringLiteral("<a href=\"node:%1\">%2</a>").arg(p.producer).arg(esc(p.producerText));
    else
      from = esc(p.producerText);
    QStringList users;
    for (NodeId c : p.consumers)
      users << nodeLink(c);
    if (p.graphOutput)
      users << QStringLiteral("<i>graph output</i>");
    html += QStringLiteral("<tr><td>%1</td><td><b>%2</b></td><td><code>%3</code></td><td>%4</td></tr>")
                .arg(i)
                .arg(esc(p.value.empty() ? "_" : p.value), esc(p.type),
                     inputs ? from : (users.isEmpty() ? QStringLiteral("<i>unused</i>") : users.join(", ")));
  }
  return html;
}

QString number(double v) { return QString::number(v, 'g', 5); }

} // namespace

InspectorView::InspectorView(QWidget* parent) : QWidget(parent) {
  m_browser = new QTextBrowser;
  m_browser->setObjectName("inspectorText");
  m_browser->setOpenLinks(false);
  m_browser->setOpenExternalLinks(false);
  m_browser->document()->setDefaultStyleSheet(
      "h2 { margin: 0; } h3 { margin-top: 10px; margin-bottom: 2px; color: #333; }"
      "table { border-collapse: collapse; } td, th { padding: 2px 6px; }"
      "th { background: #EEE; text-align: left; } a { color: #1F4EA8; text-decoration: none; }"
      "code { color: #006E6E; }");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_browser);
  connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    const QString s = url.toString();
    if (s.startsWith("node:")) {
      Q_EMIT nodeLinkActivated(NodeId(s.mid(5).toUInt()));
    } else if (s.startsWith("prov:")) {
      const QStringList parts = s.mid(5).split(':');
      if (parts.size() == 2)
        Q_EMIT provenanceActivated(NodeId(parts[0].toUInt()), parts[1].toInt());
    }
  });
  clear();
}

void InspectorView::clear(const QString& hint) {
  m_inspection.reset();
  m_browser->setHtml(QStringLiteral("<p style=\"color:#666\">%1</p>")
                         .arg(hint.isEmpty() ? tr("Select a node in the graph or the IR text to "
                                                  "inspect it.")
                                             : hint.toHtmlEscaped()));
}

QString InspectorView::plainText() const { return m_browser->toPlainText(); }

QImage InspectorView::histogramImage(const workbench::ConstantStats& stats, QSize size) {
  QImage img(size, QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::white);
  QPainter p(&img);
  p.setRenderHint(QPainter::Antialiasing);
  const int margin = 4, axis = 16;
  QRect plot(margin, margin, size.width() - 2 * margin, size.height() - margin - axis);
  p.setPen(QColor(0xBB, 0xBB, 0xBB));
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  if (!stats.histogram.empty()) {
    const int64_t peak = *std::max_element(stats.histogram.begin(), stats.histogram.end());
    const double w = double(plot.width()) / double(stats.histogram.size());
    for (size_t i = 0; i < stats.histogram.size(); ++i) {
      double h = peak > 0 ? double(stats.histogram[i]) / double(peak) * plot.height() : 0;
      QRectF bar(plot.left() + w * double(i) + 1, plot.bottom() - h, std::max(1.0, w - 2), h);
      p.fillRect(bar, QColor(0x4C, 0x72, 0xB0));
    }
  }
  QFont f = p.font();
  f.setPointSize(8);
  p.setFont(f);
  p.setPen(QColor(0x44, 0x44, 0x44));
  QRect labels(plot.left(), plot.bottom() + 2, plot.width(), axis - 2);
  p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, number(stats.min));
  p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, number(stats.max));
  p.drawText(labels, Qt::AlignHCenter | Qt::AlignVCenter, QStringLiteral("%1 values").arg(stats.elements));
  return img;
}

void InspectorView::showNode(const workbench::NodeInspection& n, int snapshot) {
  m_inspection = n;
  QString html;
  html += QStringLiteral("<h2>%1 <span style=\"color:#777\">#%2</span></h2>").arg(esc(n.op)).arg(n.id);
  if (!n.name.empty())
    html += QStringLiteral("<div><b>%1</b></div>").arg(esc(n.name));
  html += QStringLiteral("<div style=\"color:#555\">category: %1 &middot; snapshot %2</div>")
              .arg(esc(n.category))
              .arg(snapshot);

  html += QStringLiteral("<h3>Cost</h3><table>"
                         "<tr><td>FLOPs</td><td><b>%1</b></td></tr>"
                         "<tr><td>Bytes moved</td><td><b>%2</b></td></tr>"
                         "<tr><td>Arithmetic intensity</td><td><b>%3 FLOP/byte</b></td></tr></table>")
              .arg(esc(formatFlops(n.flops)), esc(formatBytes(n.bytes)),
                   QString::number(n.intensity, 'f', 2));

  if (!n.explanation.empty()) {
    // Indented lines are equations, each optionally followed (after three spaces) by what it
    // means; the other lines are prose.
    QString body;
    for (const QString& line : QString::fromStdString(n.explanation).split('\n')) {
      if (!line.startsWith(QStringLiteral("  "))) {
        body += QStringLiteral("<div>%1</div>").arg(line.toHtmlEscaped());
        continue;
      }
      const QString text = line.trimmed();
      const qsizetype gap = text.indexOf(QStringLiteral("   "));
      const QString eq = gap < 0 ? text : text.left(gap);
      const QString note = gap < 0 ? QString() : text.mid(gap).trimmed();
      body += QStringLiteral("<div style=\"margin-left:12px\"><code>%1</code>%2</div>")
                  .arg(eq.toHtmlEscaped(),
                       note.isEmpty() ? QString()
                                      : QStringLiteral(" <span style=\"color:#555\">&mdash; %1</span>")
                                            .arg(note.toHtmlEscaped()));
    }
    html += QStringLiteral("<h3>How it works</h3>%1").arg(body);
  }
  if (!n.attributes.empty()) {
    html += QStringLiteral("<h3>Attributes</h3><table>");
    for (const auto& [k, v] : n.attributes)
      html += QStringLiteral("<tr><td>%1</td><td><code>%2</code></td></tr>").arg(esc(k), esc(v));
    html += QStringLiteral("</table>");
  }
  html += QStringLiteral("<h3>Inputs</h3><table><tr><th>#</th><th>value</th><th>type</th>"
                         "<th>producer</th></tr>%1</table>")
              .arg(portRows(n.inputs, /*inputs=*/true));
  html += QStringLiteral("<h3>Outputs</h3><table><tr><th>#</th><th>value</th><th>type</th>"
                         "<th>consumers</th></tr>%1</table>")
              .arg(portRows(n.outputs, /*inputs=*/false));
  if (n.bodyNodes > 0) {
    QStringList ops;
    for (const std::string& op : n.bodyOps)
      ops << esc(op);
    html += QStringLiteral("<h3>Fused group</h3><div>%1 ops: %2</div>").arg(n.bodyNodes).arg(ops.join(" &rarr; "));
  }
  for (const workbench::BodyInspection& b : n.bodies) {
    html += QStringLiteral("<h3>Body %1</h3><div>graph @%2, %3 nodes</div>")
                .arg(esc(b.role), esc(b.graph))
                .arg(b.nodes);
    html += QStringLiteral("<table><tr><th>input</th><th>from</th></tr>");
    for (const auto& [value, source] : b.inputs)
      html += QStringLiteral("<tr><td><code>%1</code></td><td>%2</td></tr>").arg(esc(value), esc(source));
    html += QStringLiteral("<tr><th>output</th><th>becomes</th></tr>");
    for (const auto& [value, dest] : b.outputs)
      html += QStringLiteral("<tr><td><code>%1</code></td><td>%2</td></tr>").arg(esc(value), esc(dest));
    html += QStringLiteral("</table>");
  }
  if (!n.provenance.empty()) {
    html += QStringLiteral("<h3>Made from</h3><ul style=\"margin-top:0\">");
    for (const workbench::ProvenanceLink& link : n.provenance) {
      if (link.snapshot)
        html += QStringLiteral("<li><a href=\"prov:%1:%2\">%3</a></li>")
                    .arg(link.id)
                    .arg(*link.snapshot)
                    .arg(esc(link.text));
      else
        html += QStringLiteral("<li>%1</li>").arg(esc(link.text));
    }
    html += QStringLiteral("</ul>");
  }
  for (size_t i = 0; i < n.constants.size(); ++i) {
    const workbench::ConstantStats& c = n.constants[i];
    // One URL per slot: addResource replaces the previous picture, so memory stays bounded.
    const QUrl url(QStringLiteral("hist://constant/%1").arg(i));
    m_browser->document()->addResource(QTextDocument::ImageResource, url,
                                       histogramImage(c, QSize(300, 90)));
    QStringList preview;
    for (double v : c.preview)
      preview << number(v);
    if (int64_t(c.preview.size()) < c.elements)
      preview << QStringLiteral("\u2026");
    html += QStringLiteral("<h3>Constant %1</h3><div><code>%2</code></div><table>"
                           "<tr><td>min</td><td>%3</td><td>max</td><td>%4</td></tr>"
                           "<tr><td>mean</td><td>%5</td><td>std</td><td>%6</td></tr>"
                           "<tr><td>sparsity</td><td>%7 %</td><td>elements</td><td>%8</td></tr></table>"
                           "<img src=\"%9\"><div style=\"color:#555\"><code>%10</code></div>")
                .arg(esc(c.name), esc(c.type), number(c.min), number(c.max), number(c.mean),
                     number(c.stddev), QString::number(c.sparsity * 100, 'f', 1))
                .arg(c.elements)
                .arg(url.toString(), preview.join(", "));
  }
  m_browser->setHtml(html);
}

} // namespace fb::gui
