// The profile view: a sortable per-kernel table, a timeline of one run's kernels, the roofline,
// what fusion saved against another snapshot, and the Chrome trace export.
#pragma once

#include "app/gui/ProfileController.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;

namespace fb::gui {

class KernelProfileModel;
class ProfileCompareModel;
class RectChart;
class RooflineChart;

/// Shows ProfileController outcomes and emits what the user wants; it profiles nothing itself.
class ProfileView : public QWidget {
  Q_OBJECT
public:
  explicit ProfileView(QWidget* parent = nullptr);

  /// The snapshots the compare box offers and which is current.
  void setSnapshots(const QStringList& labels, int current);
  /// The snapshot to profile too and compare with, or -1.
  int compareIndex() const;
  void setCompareIndex(int index);
  int runs() const;
  int threads() const;
  /// True when the graph should be coloured by time share.
  bool colourGraph() const;
  void setColourGraph(bool on);

  void setRunning(bool running);
  void setProgress(int percent, const QString& what);
  /// Shows a finished profile (or says why there is none).
  void showOutcome(const ProfileOutcome& outcome);
  /// Selects these kernels (those computing the selected node) in the table, timeline and
  /// roofline.
  void setSelectedKernels(const std::vector<int>& kernels);
  /// Writes the shown profile's Chrome trace JSON to `path`; returns an error message or "".
  QString exportChromeTrace(const QString& path) const;

  const ProfileOutcome& outcome() const { return m_outcome; }
  KernelProfileModel* kernelModel() const { return m_kernels; }
  QSortFilterProxyModel* kernelProxy() const { return m_proxy; }
  QTableView* kernelTable() const { return m_table; }
  ProfileCompareModel* compareModel() const { return m_compare; }
  RectChart* timeline() const { return m_timeline; }
  RooflineChart* roofline() const { return m_roofline; }
  QTabWidget* tabs() const { return m_tabs; }
  QWidget* kernelsPage() const { return m_kernelsPage; }
  QString summaryText() const;
  QString savingsText() const;

Q_SIGNALS:
  void profileRequested();
  void cancelRequested();
  /// The user picked a kernel (table, timeline or roofline): index into the summary's kernels.
  void kernelActivated(int kernel);
  void colourGraphToggled(bool on);
  /// The user asks to measure the machine's roofs again.
  void remeasureRequested();

private:
  void showTimeline(const ProfiledSnapshot& p);
  void exportDialog();

  QPushButton* m_profile = nullptr;
  QPushButton* m_cancel = nullptr;
  QPushButton* m_export = nullptr;
  QPushButton* m_remeasure = nullptr;
  QSpinBox* m_runs = nullptr;
  QSpinBox* m_threads = nullptr;
  QComboBox* m_compareBox = nullptr;
  QCheckBox* m_colour = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QLabel* m_summary = nullptr;
  QTabWidget* m_tabs = nullptr;
  QWidget* m_kernelsPage = nullptr;
  QLineEdit* m_filter = nullptr;
  KernelProfileModel* m_kernels = nullptr;
  QSortFilterProxyModel* m_proxy = nullptr;
  QTableView* m_table = nullptr;
  RectChart* m_timeline = nullptr;
  RooflineChart* m_roofline = nullptr;
  ProfileCompareModel* m_compare = nullptr;
  QTableView* m_compareTable = nullptr;
  QLabel* m_savings = nullptr;
  ProfileOutcome m_outcome;
  bool m_running = false;
  bool m_selecting = false;
};

} // namespace fb::gui
