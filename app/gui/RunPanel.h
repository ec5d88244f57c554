// The run panel: backend, threads, inputs (seeded random or a .npy/.pb file per input),
// tolerance; run and cancel with progress; the outputs with their comparison to the interpreter.
#pragma once

#include "app/gui/RunController.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class QTableWidget;

namespace fb::gui {

class RunOutputsModel;

/// Collects what the user wants to run and shows what came back. It runs nothing itself: Run
/// emits runRequested and the owner hands settings() and inputs() to a RunController.
class RunPanel : public QWidget {
  Q_OBJECT
public:
  explicit RunPanel(QWidget* parent = nullptr);

  /// Lists `graph`'s inputs (one row each, random by default; files of inputs with the same
  /// name and type stay chosen) and names the snapshot a run will use.
  void setModel(const Graph& graph, const QString& snapshotText);
  /// Clears the inputs and outputs (no model).
  void clearModel();

  /// The backend, threads and timed runs chosen.
  workbench::RunSettings settings() const;
  /// The inputs chosen; an error when the tolerance text does not parse.
  Expected<RunInputs> inputs() const;

  /// Chooses a file for input `input` ("" returns it to random).
  void setInputFile(int input, const QString& path);
  /// Chooses a backend by its --backend name ("interp", "cpu", "gpu"); false when unavailable.
  bool setBackend(const QString& name);

  void setRunning(bool running);
  void setProgress(int percent, const QString& what);
  /// Shows a finished run (or its failure) with the one-line summary.
  void showOutcome(const RunOutcome& outcome, const QString& summary, bool ok);

  RunOutputsModel* outputsModel() const { return m_outputs; }
  QTableView* outputsTable() const { return m_outputsView; }
  QComboBox* backendBox() const { return m_backend; }
  QLabel* backendNote() const { return m_backendNote; }
  QPushButton* runButton() const { return m_run; }
  QString summaryText() const;

Q_SIGNALS:
  void runRequested();
  void cancelRequested();

private:
  void chooseFile(int row);
  void updateEnabled();

  QComboBox* m_backend = nullptr;
  QLabel* m_backendNote = nullptr;
  QSpinBox* m_threads = nullptr;
  QSpinBox* m_seed = nullptr;
  QSpinBox* m_runs = nullptr;
  QLineEdit* m_tolerance = nullptr;
  QLabel* m_snapshot = nullptr;
  QTableWidget* m_inputs = nullptr;
  QPushButton* m_run = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_summary = nullptr;
  RunOutputsModel* m_outputs = nullptr;
  QTableView* m_outputsView = nullptr;
  std::vector<std::string> m_files; ///< per input, "" for random
  bool m_running = false;
  bool m_hasModel = false;
};

} // namespace fb::gui
