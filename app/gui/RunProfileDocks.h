// The back half of the compiler in the window: the memory plan, run and profile docks, wired to
// the coordinator's session and selection, their background jobs, and their screenshots.
#pragma once

#include "core/Graph.h"

#include <QObject>
#include <QStringList>

class QDockWidget;
class QMainWindow;

namespace fb::gui {

class Coordinator;
class DockManager;
class GraphView;
class MemoryPlanner;
class MemoryView;
class ProfileController;
class ProfileView;
class RunController;
class RunPanel;
struct PlanOutcome;
struct ProfileOutcome;

/// Makes the three docks (ids "memory", "run", "profile", tabbed with `tabWith`) and plays
/// coordinator for them, in the manner of the main coordinator: views say what the user wants,
/// this object starts the work off the GUI thread and shows the results that are still current.
class RunProfileDocks : public QObject {
  Q_OBJECT
public:
  RunProfileDocks(QMainWindow* window, DockManager& docks, Coordinator* coordinator,
                  GraphView* graph, QDockWidget* tabWith);
  ~RunProfileDocks() override;

  MemoryView* memoryView() const { return m_memory; }
  RunPanel* runPanel() const { return m_runPanel; }
  ProfileView* profileView() const { return m_profile; }
  RunController* runs() const { return m_runs; }
  ProfileController* profiles() const { return m_profiles; }
  MemoryPlanner* planner() const { return m_planner; }

  /// Plans the current snapshot (and the compared one) now, whether or not the dock shows.
  void refreshMemory();
  /// Runs the current snapshot with the run panel's settings.
  void run();
  /// Profiles the current snapshot (and the compared one) with the profile view's settings.
  void profile();
  /// Stops the running jobs (their results are dropped).
  void cancel();

  /// Screenshot mode: plans, runs and profiles the current snapshot (against snapshot 0),
  /// waits for each, and writes memory.png, run.png, profile.png and roofline.png to `dir`.
  /// Returns the files written, or an empty list and sets `error`.
  QStringList saveScreenshots(const QString& dir, QString* error);

private:
  void onModelOrSnapshotChanged();
  void onSelectionChanged(NodeId id);
  void onPlanned(const PlanOutcome& outcome);
  void onProfiled(const ProfileOutcome& outcome);
  void updateHeat();
  /// "0 · imported", "1 · canonicalize", ... for the compare boxes.
  QStringList snapshotLabels() const;

  QMainWindow* m_window;
  Coordinator* m_coordinator;
  GraphView* m_graph;
  MemoryView* m_memory = nullptr;
  RunPanel* m_runPanel = nullptr;
  ProfileView* m_profile = nullptr;
  QDockWidget* m_memoryDock = nullptr;
  QDockWidget* m_runDock = nullptr;
  QDockWidget* m_profileDock = nullptr;
  MemoryPlanner* m_planner = nullptr;
  RunController* m_runs = nullptr;
  ProfileController* m_profiles = nullptr;
  bool m_memoryStale = true; ///< the plan shown is not the current snapshot's
  bool m_heatShown = false;
};

} // namespace fb::gui
