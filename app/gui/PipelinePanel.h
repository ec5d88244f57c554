// The pipeline panel: every registered pass with its description, the pipeline being built, and
// the Step / Run to end / Back / Forward / Reset controls.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QLineEdit;
class QListView;
class QPushButton;
class QStringListModel;

namespace fb::gui {

class PassListModel;
class PipelineModel;

/// Emits what the user wants; the coordinator changes the session and calls setState back.
class PipelinePanel : public QWidget {
  Q_OBJECT
public:
  explicit PipelinePanel(QWidget* parent = nullptr);

  /// Shows the pipeline, how many steps have snapshots, the current snapshot, each applied
  /// step's summary, and the one-line summary of what the current step did.
  void setState(const QStringList& steps, int applied, int current, const QStringList& summaries,
                const QString& currentSummary, bool canStep, bool canBack, bool canForward);
  /// Disables the controls while a pass runs.
  void setBusy(bool busy);

  PassListModel* passModel() const { return m_passModel; }
  PipelineModel* pipelineModel() const { return m_pipelineModel; }
  QString summaryText() const;
  /// What the options field of the selected step offers to complete ("max-group-size=16"),
  /// from the pass's declared options.
  QStringList optionCompletions() const;

Q_SIGNALS:
  void addStepRequested(const QString& pass, int index);
  void removeStepRequested(int index);
  void moveStepRequested(int from, int to);
  void stepOptionsRequested(int index, const QString& options);
  void pipelineTextRequested(const QString& text);
  void stepRequested();
  void runToEndRequested();
  void backRequested();
  void forwardRequested();
  void resetRequested();

private:
  int selectedStep() const;
  void showPassDescription();
  /// Refills the options field's completions (and placeholder) for the selected step's pass.
  void updateOptionCompletions();
  /// Shows the description of pass `name` ("fuse", options stripped) below the pass list.
  void showDescriptionOf(const QString& step);
  void updateButtons();

  PassListModel* m_passModel;
  PipelineModel* m_pipelineModel;
  QListView* m_passList;
  QListView* m_pipelineList;
  QLabel* m_description;
  QLabel* m_summary;
  QLineEdit* m_pipelineText;
  QLineEdit* m_options;
  QStringListModel* m_optionCompletions;
  QPushButton* m_add;
  QPushButton* m_remove;
  QPushButton* m_up;
  QPushButton* m_down;
  QPushButton* m_applyOptions;
  QPushButton* m_optionsDialog;
  QPushButton* m_reset;
  QPushButton* m_back;
  QPushButton* m_step;
  QPushButton* m_run;
  QPushButton* m_forward;
  bool m_busy = false;
  bool m_canStep = false, m_canBack = false, m_canForward = false;
};

} // namespace fb::gui
