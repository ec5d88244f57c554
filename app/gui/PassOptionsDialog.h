// A dialog built from a pass's declared options (PassOptionSpec): a spin box per number, a
// check box per flag, a combo box per choice, a line edit (with Browse for files and folders)
// per text; it produces the pipeline step ("quantize{calibration=entropy,samples=8}").
#pragma once

#include "app/workbench/Session.h"

#include <QDialog>
#include <QString>

#include <vector>

class QDialogButtonBox;
class QLabel;
class QWidget;

namespace fb::gui {

class PassOptionsDialog : public QDialog {
  Q_OBJECT
public:
  /// A dialog for `pass`, every option at its declared default.
  explicit PassOptionsDialog(const workbench::PassDescription& pass, QWidget* parent = nullptr);

  /// Fills the fields from "k=v,k2=v2" (a step's options); unknown names are ignored.
  void setOptions(const QString& options);
  /// The options that differ from their defaults, "k=v,k2=v2" in declaration order.
  QString optionsText() const;
  /// The pipeline step: "name" or "name{k=v,...}".
  QString stepText() const;
  /// The first field whose value its option does not accept, as a message; empty when all do.
  QString validationError() const;
  /// The editor of option `name` (tests), or null.
  QWidget* field(const QString& name) const;
  /// Puts every field back on its default.
  void restoreDefaults();

  void accept() override;

private:
  /// The text a field holds, as a pipeline option value.
  QString valueOf(size_t option) const;
  void setValue(size_t option, const QString& value);

  workbench::PassDescription m_pass;
  std::vector<QWidget*> m_fields; ///< one per option, in declaration order
  QLabel* m_error;
  QLabel* m_preview;
  QDialogButtonBox* m_buttons;
};

} // namespace fb::gui
