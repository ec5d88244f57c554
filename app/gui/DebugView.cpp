// The find-the-bug view.
#include "app/gui/DebugView.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace fb::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}
QString esc(const std::string& s) {
  return qs(s).toHtmlEscaped();
}

/// The report as HTML: what is guilty, where values diverge, the reproducer.
QString reportHtml(const workbench::FindBugReport& r, const QString& backend) {
  const workbench::BisectReport& b = r.bisect;
  QString html = QStringLiteral("<p>%1</p>").arg(esc(r.summary));
  if (!b.mismatch)
    return html;
  QStringList rows;
  auto row = [&rows](const QString& k, const QString& v) {
    rows << QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k, v);
  };
  row(QObject::tr("Backend"), backend.toHtmlEscaped());
  if (b.index > 0)
    row(QObject::tr("Guilty pass"), QStringLiteral("%1 (application %2 of %3)")
                                        .arg(esc(b.step))
                                        .arg(b.index)
                                        .arg(b.snapshots - 1));
  else
    row(QObject::tr("Guilty pass"), QObject::tr("none: the imported model already disagrees"));
  if (b.rewrite)
    row(QObject::tr("Guilty rewrite"), QStringLiteral("%1 of %2").arg(*b.rewrite).arg(b.rewrites));
  if (!b.nodes.empty()) {
    QStringList names;
    for (const workbench::TouchedNode& n : b.nodes)
      names << esc(n.name);
    row(QObject::tr("It touched"),
        names.join(QStringLiteral(", ")) + QStringLiteral(" <i>(%1)</i>").arg(esc(b.nodesFrom)));
  }
  if (!b.firstDivergentName.empty())
    row(QObject::tr("First divergent node"), esc(b.firstDivergentName));
  if (b.kernel) {
    row(QObject::tr("Guilty kernel"),
        QStringLiteral("%1 %2 (%3, %4)")
            .arg(b.kernel->index)
            .arg(esc(b.kernel->name), esc(b.kernel->opSummary), esc(b.kernel->generator)));
    if (!b.kernel->schedule.empty())
      row(QObject::tr("Its schedule"), esc(b.kernel->schedule));
    if (!b.kernel->nodeNames.empty())
      row(QObject::tr("It computes"), esc(b.kernel->nodeNames));
  }
  row(QObject::tr("Largest output error"), QString::number(b.maxAbs, 'g', 4));
  if (r.reduce) {
    row(QObject::tr("Reproducer"),
        QStringLiteral("<code>%1</code>: %2 \u2192 %3 nodes, %4 checks, %5 s")
            .arg(esc(r.reproducerPath))
            .arg(r.reduce->nodesBefore)
            .arg(r.reduce->nodesAfter)
            .arg(r.reduce->probes)
            .arg(r.reduce->seconds, 0, 'f', 1));
    row(QObject::tr("Replay it"),
        QStringLiteral("<code>fusebox-opt --replay %1</code>").arg(esc(r.reproducerPath)));
  } else if (!r.reduceError.empty()) {
    row(QObject::tr("Reproducer"), QObject::tr("none: %1").arg(esc(r.reduceError)));
  }
  row(QObject::tr("Search"),
      QObject::tr("%1 runs compared in %2 s").arg(b.probes).arg(b.seconds, 0, 'f', 1));
  return html + QStringLiteral("<table cellspacing=4>%1</table>").arg(rows.join(QString()));
}

} // namespace

DebugView::DebugView(QWidget* parent) : QWidget(parent) {
  m_backend = new QComboBox;
  m_backend->setObjectName("debugBackend");
  for (workbench::Backend b :
       {workbench::Backend::Interpreter, workbench::Backend::Cpu, workbench::Backend::Gpu}) {
    m_backend->addItem(QString::fromLatin1(workbench::backendName(b)), int(b));
    Status available = workbench::backendAvailable(b);
    if (!available.ok()) {
      auto* model = m_backend->model();
      const QModelIndex at = model->index(m_backend->count() - 1, 0);
      model->setData(at, qs(available.error().message()), Qt::ToolTipRole);
      model->setData(at, 0, Qt::UserRole - 1); // disabled: the reason is the tooltip
    }
  }
  m_backend->setToolTip(tr("The backend whose outputs are compared with the imported model on "
                           "the interpreter: the interpreter finds pass bugs, a compiled "
                           "backend kernel bugs too"));
  m_reduce = new QCheckBox(tr("Reduce to a reproducer"));
  m_reduce->setChecked(true);
  m_find = new QPushButton(tr("Find the bug"));
  m_find->setObjectName("findBugButton");
  m_find->setToolTip(tr("Bisect the pipeline (pass, rewrite, kernel), colour the nodes by "
                        "their error and reduce the model to a minimal reproducer"));
  m_cancel = new QPushButton(tr("Cancel"));
  m_cancel->setEnabled(false);
  m_progress = new QProgressBar;
  m_progress->setRange(0, 100);
  m_progress->setTextVisible(true);
  m_progress->hide();
  m_faults = new QLabel;
  m_faults->setObjectName("faultsLabel");
  m_faults->setWordWrap(true);

  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Backend:")));
  top->addWidget(m_backend);
  top->addWidget(m_reduce);
  top->addWidget(m_find);
  top->addWidget(m_cancel);
  top->addWidget(m_progress, 1);

  m_text = new QTextBrowser;
  m_text->setObjectName("findBugReport");
  m_text->setOpenLinks(false);

  m_showSnapshot = new QPushButton(tr("Show the guilty snapshot"));
  m_showNode = new QPushButton(tr("Select where it diverges"));
  m_openRepro = new QPushButton(tr("Open the reproducer in a new window"));
  m_openRepro->setObjectName("openReproducerButton");
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(m_showSnapshot);
  bottom->addWidget(m_showNode);
  bottom->addWidget(m_openRepro);
  bottom->addStretch(1);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_faults);
  layout->addWidget(m_text, 1);
  layout->addLayout(bottom);

  connect(m_find, &QPushButton::clicked, this, &DebugView::findRequested);
  connect(m_cancel, &QPushButton::clicked, this, &DebugView::cancelRequested);
  connect(m_showSnapshot, &QPushButton::clicked, this, &DebugView::showSnapshotRequested);
  connect(m_showNode, &QPushButton::clicked, this, &DebugView::showNodeRequested);
  connect(m_openRepro, &QPushButton::clicked, this, &DebugView::openReproducerRequested);
  showMessage(tr("When a model gives wrong answers after the passes, <b>Find the bug</b> names "
                 "the pass and the rewrite (or the compiled kernel) that broke it, colours the "
                 "graph by each node's error and shrinks the model to a reproducer of a few "
                 "nodes. Turn on a built-in fault (<i>Debug &gt; Inject fault</i>) to try it."));
}

workbench::Backend DebugView::backend() const {
  return workbench::Backend(m_backend->currentData().toInt());
}

void DebugView::setBackend(workbench::Backend backend) {
  const int at = m_backend->findData(int(backend));
  if (at >= 0)
    m_backend->setCurrentIndex(at);
}

bool DebugView::reduce() const {
  return m_reduce->isChecked();
}

void DebugView::setFaultsText(const QString& text) {
  m_faults->setText(text);
}

void DebugView::setRunning(bool running) {
  m_find->setEnabled(!running);
  m_cancel->setEnabled(running);
  m_progress->setVisible(running);
  if (running) {
    m_progress->setValue(0);
    for (QPushButton* b : {m_showSnapshot, m_showNode, m_openRepro})
      b->setEnabled(false);
  }
}

void DebugView::setProgress(int percent, const QString& what) {
  m_progress->setValue(percent);
  m_progress->setFormat(QStringLiteral("%p% \u00b7 ") + what);
}

void DebugView::showReport(const workbench::FindBugReport& report, const QString& backend,
                           bool stale) {
  QString html = reportHtml(report, backend);
  if (stale)
    html = tr("<p><i>The session changed while the search ran; the report is about the "
              "snapshots it started from.</i></p>") +
           html;
  m_text->setHtml(html);
  const bool found = report.bisect.mismatch;
  m_showSnapshot->setEnabled(found && !stale);
  m_showNode->setEnabled(found && !stale && (report.bisect.firstDivergent || report.bisect.kernel));
  m_openRepro->setEnabled(report.reduce.has_value());
}

void DebugView::showMessage(const QString& text) {
  m_text->setHtml(QStringLiteral("<p>%1</p>").arg(text));
  for (QPushButton* b : {m_showSnapshot, m_showNode, m_openRepro})
    b->setEnabled(false);
}

QString DebugView::reportText() const {
  return m_text->toPlainText();
}

} // namespace fb::gui
