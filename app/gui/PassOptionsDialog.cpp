// The options dialog of a pass, one field per declared option.
#include "app/gui/PassOptionsDialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <cmath>

namespace fb::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

/// A number as a pipeline value: "99.99", "0.5", "1e-05".
QString numberText(double v) {
  return QString::number(v, 'g', 10);
}

int clampInt(double v) {
  return int(std::clamp(v, double(INT_MIN), double(INT_MAX)));
}

/// How a text option is browsed for: a folder, a list of files, or not at all.
enum class Browse { None, Folder, Files };

Browse browseKind(const PassOptionSpec& o) {
  const std::string help = o.help;
  if (o.name == "dir" || help.find("folder") != std::string::npos)
    return Browse::Folder;
  if (help.find(".npy") != std::string::npos || help.find("file") != std::string::npos)
    return Browse::Files;
  return Browse::None;
}

/// The default as its field writes it back ("true" for "1", "0.5" for "0.50").
QString valueOfDefault(const PassOptionSpec& o) {
  const QString d = qs(o.defaultValue);
  switch (o.type) {
  case PassOptionType::Int:
    return QString::number(d.toLongLong());
  case PassOptionType::Number:
    return numberText(d.toDouble());
  case PassOptionType::Bool:
    return d == "true" || d == "1" ? QStringLiteral("true") : QStringLiteral("false");
  case PassOptionType::Enum:
  case PassOptionType::String:
    return d;
  }
  return d;
}

} // namespace

PassOptionsDialog::PassOptionsDialog(const workbench::PassDescription& pass, QWidget* parent)
    : QDialog(parent), m_pass(pass) {
  setObjectName("passOptionsDialog");
  setWindowTitle(tr("%1 \u2014 options").arg(qs(pass.name)));
  auto* layout = new QVBoxLayout(this);
  auto* about = new QLabel(qs(pass.description));
  about->setWordWrap(true);
  about->setObjectName("passDescription");
  about->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(about);

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  for (const PassOptionSpec& o : pass.options) {
    QWidget* field = nullptr;
    QWidget* row = nullptr;
    switch (o.type) {
    case PassOptionType::Int: {
      auto* spin = new QSpinBox;
      spin->setRange(o.min ? clampInt(*o.min) : INT_MIN, o.max ? clampInt(*o.max) : INT_MAX);
      field = spin;
      connect(spin, &QSpinBox::valueChanged, this, [this] { validationError(); });
      break;
    }
    case PassOptionType::Number: {
      auto* spin = new QDoubleSpinBox;
      spin->setDecimals(4);
      spin->setRange(o.min ? *o.min : -1e12, o.max ? *o.max : 1e12);
      const double span = spin->maximum() - spin->minimum();
      spin->setSingleStep(span <= 1.0 ? 0.05 : span <= 100.0 ? 0.5 : 1.0);
      field = spin;
      connect(spin, &QDoubleSpinBox::valueChanged, this, [this] { validationError(); });
      break;
    }
    case PassOptionType::Bool: {
      auto* box = new QCheckBox;
      field = box;
      connect(box, &QCheckBox::toggled, this, [this] { validationError(); });
      break;
    }
    case PassOptionType::Enum: {
      auto* combo = new QComboBox;
      for (const std::string& c : o.choices)
        combo->addItem(qs(c));
      field = combo;
      connect(combo, &QComboBox::currentIndexChanged, this, [this] { validationError(); });
      break;
    }
    case PassOptionType::String: {
      auto* edit = new QLineEdit;
      edit->setClearButtonEnabled(true);
      field = edit;
      connect(edit, &QLineEdit::textChanged, this, [this] { validationError(); });
      const Browse kind = browseKind(o);
      if (kind != Browse::None) {
        row = new QWidget;
        auto* h = new QHBoxLayout(row);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(edit, 1);
        auto* browse = new QToolButton;
        browse->setText(tr("Browse\u2026"));
        h->addWidget(browse);
        connect(browse, &QToolButton::clicked, this, [this, edit, kind] {
          if (kind == Browse::Folder) {
            const QString dir = QFileDialog::getExistingDirectory(this, tr("Choose a folder"));
            if (!dir.isEmpty())
              edit->setText(dir);
          } else {
            const QStringList files = QFileDialog::getOpenFileNames(
                this, tr("Choose inputs"), {}, tr("NumPy arrays (*.npy);;All files (*)"));
            if (!files.isEmpty())
              edit->setText(files.join(':'));
          }
        });
      }
      break;
    }
    }
    field->setObjectName(qs(o.name));
    const QString tip = qs(o.help) + "\n" +
                        tr("Accepts %1; default %2.")
                            .arg(qs(o.accepts()))
                            .arg(o.defaultValue.empty() ? tr("none") : qs(o.defaultValue));
    field->setToolTip(tip);
    auto* cell = new QWidget;
    auto* v = new QVBoxLayout(cell);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(row ? row : field);
    auto* help = new QLabel(qs(o.help));
    help->setWordWrap(true);
    help->setStyleSheet("color: palette(mid);");
    v->addWidget(help);
    form->addRow(qs(o.name) + ":", cell);
    m_fields.push_back(field);
  }
  layout->addLayout(form);

  m_preview = new QLabel;
  m_preview->setObjectName("stepPreview");
  m_preview->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_preview->setWordWrap(true);
  layout->addWidget(m_preview);
  m_error = new QLabel;
  m_error->setObjectName("optionError");
  m_error->setStyleSheet("color: #b00020;");
  m_error->setWordWrap(true);
  layout->addWidget(m_error);

  m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                   QDialogButtonBox::RestoreDefaults);
  m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Apply %1").arg(qs(pass.name)));
  connect(m_buttons, &QDialogButtonBox::accepted, this, &PassOptionsDialog::accept);
  connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
          &PassOptionsDialog::restoreDefaults);
  layout->addWidget(m_buttons);
  restoreDefaults();
}

QWidget* PassOptionsDialog::field(const QString& name) const {
  for (size_t i = 0; i < m_pass.options.size(); ++i)
    if (qs(m_pass.options[i].name) == name)
      return m_fields[i];
  return nullptr;
}

QString PassOptionsDialog::valueOf(size_t i) const {
  QWidget* f = m_fields[i];
  switch (m_pass.options[i].type) {
  case PassOptionType::Int:
    return QString::number(static_cast<QSpinBox*>(f)->value());
  case PassOptionType::Number:
    return numberText(static_cast<QDoubleSpinBox*>(f)->value());
  case PassOptionType::Bool:
    return static_cast<QCheckBox*>(f)->isChecked() ? QStringLiteral("true")
                                                   : QStringLiteral("false");
  case PassOptionType::Enum:
    return static_cast<QComboBox*>(f)->currentText();
  case PassOptionType::String:
    return static_cast<QLineEdit*>(f)->text().trimmed();
  }
  return {};
}

void PassOptionsDialog::setValue(size_t i, const QString& value) {
  QWidget* f = m_fields[i];
  switch (m_pass.options[i].type) {
  case PassOptionType::Int:
    static_cast<QSpinBox*>(f)->setValue(value.toInt());
    break;
  case PassOptionType::Number:
    static_cast<QDoubleSpinBox*>(f)->setValue(value.toDouble());
    break;
  case PassOptionType::Bool:
    static_cast<QCheckBox*>(f)->setChecked(value == "true" || value == "1");
    break;
  case PassOptionType::Enum: {
    auto* combo = static_cast<QComboBox*>(f);
    const int at = combo->findText(value);
    if (at >= 0)
      combo->setCurrentIndex(at);
    break;
  }
  case PassOptionType::String:
    static_cast<QLineEdit*>(f)->setText(value);
    break;
  }
}

void PassOptionsDialog::restoreDefaults() {
  for (size_t i = 0; i < m_fields.size(); ++i)
    setValue(i, qs(m_pass.options[i].defaultValue));
  validationError();
}

void PassOptionsDialog::setOptions(const QString& options) {
  for (const QString& pair : options.split(',', Qt::SkipEmptyParts)) {
    const int eq = pair.indexOf('=');
    if (eq <= 0)
      continue;
    const QString name = pair.left(eq).trimmed();
    for (size_t i = 0; i < m_pass.options.size(); ++i)
      if (qs(m_pass.options[i].name) == name)
        setValue(i, pair.mid(eq + 1).trimmed());
  }
  validationError();
}

QString PassOptionsDialog::optionsText() const {
  QStringList parts;
  for (size_t i = 0; i < m_fields.size(); ++i) {
    const PassOptionSpec& o = m_pass.options[i];
    const QString v = valueOf(i);
    if (o.type == PassOptionType::String ? v.isEmpty() : v == valueOfDefault(o))
      continue;
    parts << qs(o.name) + "=" + v;
  }
  return parts.join(',');
}

QString PassOptionsDialog::stepText() const {
  const QString options = optionsText();
  return options.isEmpty() ? qs(m_pass.name) : qs(m_pass.name) + "{" + options + "}";
}

QString PassOptionsDialog::validationError() const {
  QString error;
  for (size_t i = 0; i < m_fields.size() && error.isEmpty(); ++i) {
    const QString v = valueOf(i);
    if (m_pass.options[i].type == PassOptionType::String && v.isEmpty())
      continue;
    if (v.contains(',') || v.contains('{') || v.contains('}'))
      error = tr("option '%1': a value cannot hold ',', '{' or '}' (separate files with ':')")
                  .arg(qs(m_pass.options[i].name));
    else if (Status st = m_pass.options[i].validate(v.toStdString()); !st.ok())
      error = qs(st.error().message());
  }
  m_error->setText(error);
  m_error->setVisible(!error.isEmpty());
  m_preview->setText(tr("Pipeline step: <code>%1</code>").arg(stepText().toHtmlEscaped()));
  m_buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
  return error;
}

void PassOptionsDialog::accept() {
  if (validationError().isEmpty())
    QDialog::accept();
}

} // namespace fb::gui
