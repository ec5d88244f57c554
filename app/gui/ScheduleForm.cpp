// The schedule form and its two-way mapping to the override grammar.
#include "app/gui/ScheduleForm.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <set>

namespace fb::gui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

const char* kBlockingNames[] = {"mr", "nr", "mc", "kc", "nc"};

QSpinBox* makeSpin(int max, const QString& zeroText, const QString& tip) {
  auto* s = new QSpinBox;
  s->setRange(0, max);
  s->setSpecialValueText(zeroText);
  s->setToolTip(tip);
  return s;
}

bool isUnsigned(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 7;
}

} // namespace

ScheduleForm::ScheduleForm(QWidget* parent) : QWidget(parent) {
  m_start = new QComboBox;
  m_start->setObjectName("scheduleStart");
  m_start->addItem(tr("the default schedule"), QString());
  m_start->addItem(tr("the textbook nest (none)"), QStringLiteral("none"));
  m_start->setToolTip(tr("What the directives below transform: the default schedule the "
                         "compiler chose, or the plain nest as a student would write it"));
  m_tile = new QLineEdit;
  m_tile->setObjectName("scheduleTile");
  m_tile->setPlaceholderText(tr("e.g. 8x16: tile the outermost loops"));
  m_tile->setValidator(new QRegularExpressionValidator(QRegularExpression(R"(\d{0,6}(x\d{1,6})*x?)"), m_tile));
  m_reorder = new QLineEdit;
  m_reorder->setObjectName("scheduleReorder");
  m_reorder->setPlaceholderText(tr("e.g. oh/co/ow: outermost first"));
  m_reorder->setValidator(new QRegularExpressionValidator(QRegularExpression(R"([A-Za-z0-9_/]*)"), m_reorder));
  m_vectorize = makeSpin(64, tr("leave"), tr("Vectorize the innermost loop with this many lanes"));
  m_vectorize->setObjectName("scheduleVectorize");
  m_unroll = makeSpin(64, tr("leave"), tr("Split the innermost serial loop by this factor and unroll it"));
  m_unroll->setObjectName("scheduleUnroll");
  m_parallel = new QComboBox;
  m_parallel->setObjectName("scheduleParallel");

  auto* loops = new QFormLayout;
  loops->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  loops->addRow(tr("Start from"), m_start);
  loops->addRow(tr("Tile"), m_tile);
  loops->addRow(tr("Loop order"), m_reorder);
  loops->addRow(tr("Vectorize"), m_vectorize);
  loops->addRow(tr("Unroll"), m_unroll);
  loops->addRow(tr("Parallel"), m_parallel);

  m_gemmBox = new QGroupBox(tr("GEMM blocking"));
  m_gemmBox->setObjectName("scheduleGemm");
  auto* grid = new QGridLayout(m_gemmBox);
  const QString tips[] = {tr("register tile rows (mr)"), tr("register tile columns (nr)"),
                          tr("rows of A per cache block (mc)"), tr("depth of a cache block (kc)"),
                          tr("columns of B per cache block (nc)")};
  for (int i = 0; i < 5; ++i) {
    QSpinBox* s = makeSpin(8192, tr("auto"), tips[i]);
    s->setMinimumWidth(96); // room for "auto (144)"
    s->setObjectName(QStringLiteral("schedule.%1").arg(kBlockingNames[i]));
    m_blocking.emplace_back(QString::fromLatin1(kBlockingNames[i]), s);
    grid->addWidget(new QLabel(QString::fromLatin1(kBlockingNames[i])), i < 2 ? 0 : 1, (i < 2 ? i : i - 2) * 2);
    grid->addWidget(s, i < 2 ? 0 : 1, (i < 2 ? i : i - 2) * 2 + 1);
    connect(s, &QSpinBox::valueChanged, this, &ScheduleForm::formEdited);
  }
  m_gemmNote = new QLabel;
  m_gemmNote->setWordWrap(true);
  m_gemmNote->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
  grid->addWidget(m_gemmNote, 2, 0, 1, 6);

  // The GPU schedule (PTX, the GPU backend): threads per block and the register tile.
  m_gpuBox = new QGroupBox(tr("GPU (PTX)"));
  m_gpuBox->setObjectName("scheduleGpu");
  m_gpuBlock = new QComboBox;
  m_gpuBlock->setObjectName("schedule.block");
  m_gpuBlock->addItem(tr("auto"), 0);
  for (int b = 32; b <= 256; b += 32)
    m_gpuBlock->addItem(QString::number(b), b);
  m_gpuBlock->setToolTip(tr("Threads per block of the kernel's GPU launches (block=)"));
  m_gpuTile = makeSpin(8, tr("auto"),
                       tr("Outputs per thread along each tiled loop (regtile=): 1 "
                          "is one output per thread; a value also applies when "
                          "fewer threads remain than fill a GPU"));
  m_gpuTile->setObjectName("schedule.regtile");
  auto* gpuRow = new QFormLayout(m_gpuBox);
  gpuRow->addRow(tr("Threads per block"), m_gpuBlock);
  gpuRow->addRow(tr("Register tile"), m_gpuTile);
  auto* gpuNote = new QLabel(tr("Used when the model is compiled for a GPU: the PTX tab and the "
                                "GPU backend. A register tile turns off the block-level "
                                "schedules (shared-memory tiles, block reductions)."));
  gpuNote->setWordWrap(true);
  gpuNote->setStyleSheet(QStringLiteral("QLabel { color: #555; }"));
  gpuRow->addRow(gpuNote);
  connect(m_gpuBlock, &QComboBox::currentIndexChanged, this, &ScheduleForm::formEdited);
  connect(m_gpuTile, &QSpinBox::valueChanged, this, &ScheduleForm::formEdited);

  m_text = new QLineEdit;
  m_text->setObjectName("scheduleText");
  m_text->setToolTip(tr("The override as fusebox-opt --schedule takes it; edit it directly for "
                        "split, fuse and cache"));
  QFont mono(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::Monospace);
  m_text->setFont(mono);
  m_custom = new QLabel(tr("These directives go beyond the fields: the text is what applies."));
  m_custom->setWordWrap(true);
  m_custom->setStyleSheet(QStringLiteral("QLabel { color: #8A4B00; }"));
  m_custom->hide();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(loops);
  layout->addWidget(m_gemmBox);
  layout->addWidget(m_gpuBox);
  auto* textRow = new QFormLayout;
  textRow->addRow(tr("--schedule"), m_text);
  layout->addLayout(textRow);
  layout->addWidget(m_custom);

  connect(m_start, &QComboBox::currentIndexChanged, this, &ScheduleForm::formEdited);
  connect(m_tile, &QLineEdit::textEdited, this, &ScheduleForm::formEdited);
  connect(m_reorder, &QLineEdit::textEdited, this, &ScheduleForm::formEdited);
  connect(m_vectorize, &QSpinBox::valueChanged, this, &ScheduleForm::formEdited);
  connect(m_unroll, &QSpinBox::valueChanged, this, &ScheduleForm::formEdited);
  connect(m_parallel, &QComboBox::currentIndexChanged, this, &ScheduleForm::formEdited);
  connect(m_text, &QLineEdit::textEdited, this, [this](const QString& t) {
    const QString error = setOverrideText(t);
    Q_EMIT overrideChanged(error);
  });
  clearKernel();
}

QSpinBox* ScheduleForm::blockingSpin(const QString& name) const {
  for (const auto& [n, s] : m_blocking)
    if (n == name)
      return s;
  return nullptr;
}

void ScheduleForm::clearKernel() {
  m_kernel.clear();
  m_updating = true;
  m_parallel->clear();
  setDirectives({});
  m_text->clear();
  m_updating = false;
  setEnabled(false);
}

void ScheduleForm::setKernel(const workbench::KernelSchedule& kernel) {
  m_updating = true;
  m_kernel = qs(kernel.kernel);
  setEnabled(!kernel.interpreted);
  // Parallel: leave, outermost, none, or one of the nest's loops.
  m_parallel->clear();
  m_parallel->addItem(tr("leave as scheduled"), QString());
  m_parallel->addItem(tr("outermost loops (1)"), QStringLiteral("1"));
  m_parallel->addItem(tr("no parallel loop (0)"), QStringLiteral("0"));
  std::set<std::string> seen;
  for (const workbench::LoopDescription& l : kernel.loops)
    if (seen.insert(l.var).second)
      m_parallel->addItem(tr("loop %1").arg(qs(l.var)), qs(l.var));
  const bool blocking = kernel.gemm;
  m_gemmBox->setEnabled(blocking);
  if (blocking && kernel.convAlgorithm == "direct")
    m_gemmNote->setText(tr("The direct convolution generator compiles this kernel: mr (16, 32, 48 "
                           "or 64) sets the output channels of its register tile (now %1); the "
                           "other blocking fields do not apply.")
                            .arg(kernel.mr));
  else if (blocking)
    m_gemmNote->setText(tr("Compiled with mr=%1 nr=%2 mc=%3 kc=%4 nc=%5. The GEMM generator "
                           "compiles this kernel: these change its code; loop directives "
                           "change only the nest that documents it.")
                            .arg(kernel.mr).arg(kernel.nr).arg(kernel.mc).arg(kernel.kc).arg(kernel.nc));
  else if (kernel.depthwise)
    m_gemmNote->setText(tr("The direct depthwise generator compiles this kernel: no blocking applies."));
  else
    m_gemmNote->setText(tr("A loop kernel: the loop directives above change its code."));
  const int64_t compiled[] = {kernel.mr, kernel.nr, kernel.mc, kernel.kc, kernel.nc};
  for (size_t i = 0; i < m_blocking.size(); ++i)
    m_blocking[i].second->setSpecialValueText(blocking ? tr("auto (%1)").arg(compiled[i]) : tr("auto"));
  m_updating = false;
  auto parsed = cg::parseScheduleOverrides(m_kernel.toStdString() + ":" + kernel.override);
  const std::vector<cg::ScheduleDirective> directives =
      parsed.ok() && !parsed->empty() ? parsed->front().directives : std::vector<cg::ScheduleDirective>{};
  setOverrideText(m_kernel + ":" + qs(kernel.override));
  if (directives.empty())
    formEdited(); // the text of an empty form
}

bool ScheduleForm::setDirectives(const std::vector<cg::ScheduleDirective>& directives) {
  // Which directives the fields can hold: each once, none/default only first.
  std::set<std::string> names;
  for (size_t i = 0; i < directives.size(); ++i) {
    const cg::ScheduleDirective& d = directives[i];
    static const std::set<std::string> fields = {
        "none", "default", "tile", "reorder", "vectorize", "unroll", "parallel",
        "mr",   "nr",      "mc",   "kc",      "nc",        "block",  "regtile"};
    if (!fields.count(d.name) || !names.insert(d.name).second)
      return false;
    if ((d.name == "none" || d.name == "default") && i != 0)
      return false;
    if ((d.name == "vectorize" || d.name == "unroll" || d.name == "regtile" ||
         blockingSpin(qs(d.name))) &&
        !isUnsigned(d.value))
      return false;
    if (d.name == "block" && m_gpuBlock->findData(qs(d.value).toInt()) <= 0)
      return false;
    if (d.name == "regtile" && qs(d.value).toInt() > m_gpuTile->maximum())
      return false;
  }
  const bool was = m_updating;
  m_updating = true;
  m_start->setCurrentIndex(0);
  m_tile->clear();
  m_reorder->clear();
  m_vectorize->setValue(0);
  m_unroll->setValue(0);
  m_parallel->setCurrentIndex(m_parallel->count() ? 0 : -1);
  for (auto& [n, s] : m_blocking)
    s->setValue(0);
  m_gpuBlock->setCurrentIndex(0);
  m_gpuTile->setValue(0);
  for (const cg::ScheduleDirective& d : directives) {
    const QString v = qs(d.value);
    if (d.name == "none")
      m_start->setCurrentIndex(1);
    else if (d.name == "tile")
      m_tile->setText(v);
    else if (d.name == "reorder")
      m_reorder->setText(v);
    else if (d.name == "vectorize")
      m_vectorize->setValue(v.toInt());
    else if (d.name == "unroll")
      m_unroll->setValue(v.toInt());
    else if (d.name == "parallel") {
      int i = m_parallel->findData(v);
      if (i < 0) {
        m_parallel->addItem(tr("loop %1").arg(v), v);
        i = m_parallel->count() - 1;
      }
      m_parallel->setCurrentIndex(i);
    } else if (d.name == "block")
      m_gpuBlock->setCurrentIndex(m_gpuBlock->findData(v.toInt()));
    else if (d.name == "regtile")
      m_gpuTile->setValue(v.toInt());
    else if (QSpinBox* s = blockingSpin(qs(d.name)))
      s->setValue(v.toInt());
  }
  m_updating = was;
  return true;
}

std::vector<cg::ScheduleDirective> ScheduleForm::formDirectives() const {
  std::vector<cg::ScheduleDirective> d;
  if (m_start->currentData().toString() == QStringLiteral("none"))
    d.push_back({"none", ""});
  // A trailing 'x' while typing "8x" is not a factor yet.
  QString tile = m_tile->text();
  while (tile.endsWith('x'))
    tile.chop(1);
  if (!tile.isEmpty())
    d.push_back({"tile", tile.toStdString()});
  if (!m_reorder->text().isEmpty())
    d.push_back({"reorder", m_reorder->text().toStdString()});
  if (m_vectorize->value() > 0)
    d.push_back({"vectorize", std::to_string(m_vectorize->value())});
  if (m_unroll->value() > 0)
    d.push_back({"unroll", std::to_string(m_unroll->value())});
  if (const QString p = m_parallel->currentData().toString(); !p.isEmpty())
    d.push_back({"parallel", p.toStdString()});
  if (m_gemmBox->isEnabled())
    for (const auto& [n, s] : m_blocking)
      if (s->value() > 0)
        d.push_back({n.toStdString(), std::to_string(s->value())});
  if (const int b = m_gpuBlock->currentData().toInt(); b > 0)
    d.push_back({"block", std::to_string(b)});
  if (m_gpuTile->value() > 0)
    d.push_back({"regtile", std::to_string(m_gpuTile->value())});
  return d;
}

void ScheduleForm::formEdited() {
  if (m_updating || m_kernel.isEmpty())
    return;
  cg::ScheduleOverride o{m_kernel.toStdString(), formDirectives()};
  const std::string text = cg::printScheduleOverrides({o});
  m_text->setText(qs(text));
  m_custom->hide();
  Q_EMIT overrideChanged({});
}

QString ScheduleForm::overrideText() const { return m_text->text(); }

QString ScheduleForm::setOverrideText(const QString& text) {
  if (m_text->text() != text)
    m_text->setText(text);
  auto parsed = cg::parseScheduleOverrides(text.toStdString());
  if (!parsed.ok())
    return qs(parsed.error().message());
  if (parsed->size() != 1 || qs(parsed->front().kernel) != m_kernel)
    return tr("the text must be one override for %1: %1:DIRECTIVE,...").arg(m_kernel);
  const bool shown = setDirectives(parsed->front().directives);
  m_custom->setVisible(!shown);
  return {};
}

Expected<cg::ScheduleOverride> ScheduleForm::currentOverride() const {
  if (m_kernel.isEmpty())
    return makeError("no kernel is selected");
  auto parsed = cg::parseScheduleOverrides(m_text->text().toStdString());
  if (!parsed.ok())
    return parsed.error();
  if (parsed->size() != 1 || qs(parsed->front().kernel) != m_kernel)
    return makeError("the override must name kernel ", m_kernel.toStdString(), " once");
  return parsed->front();
}

} // namespace fb::gui
