// Computes the code view's texts off the GUI thread through the workbench (emitModelCode), one
// job at a time, cancellable, with stale results dropped and results cached per snapshot.
#pragma once

#include "app/workbench/Job.h"
#include "app/workbench/ModelCode.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QTextDocument>

#include <map>
#include <memory>
#include <optional>
#include <tuple>

namespace fb::gui {

class CodeView;
class Coordinator;

/// A finished code job, as values.
struct CodeOutcome {
  std::shared_ptr<const workbench::ModelCode> code;
  /// The whole text as a document, built in the worker too: setting megabytes of text
  /// would hold the GUI thread for a good part of a second.
  std::shared_ptr<QTextDocument> document;
  QString error;
  bool unsupported = false; ///< this build cannot make that kind (PTX without a GPU backend)
  bool cancelled = false;
};

/// What a code text depends on: the snapshot's graph, the kind, the session's schedule
/// overrides for that snapshot and the GPU architecture (PTX).
struct CodeKey {
  std::shared_ptr<const Graph> graph;
  workbench::CodeKind kind = workbench::CodeKind::Loops;
  std::string schedule;
  std::string arch;
  auto tie() const { return std::tie(graph, kind, schedule, arch); }
  bool operator==(const CodeKey& o) const { return tie() == o.tie(); }
};

class CodeController : public QObject {
  Q_OBJECT
public:
  CodeController(Coordinator* coordinator, CodeView* view, QObject* parent = nullptr);
  ~CodeController() override;

  /// Shows `kind`'s code of the current snapshot: from the cache, or computed in a worker (a
  /// job for another text is cancelled first; the newest request wins).
  void request(workbench::CodeKind kind);
  /// The snapshot, selection or schedule changed: shows what is cached, marks the rest as not
  /// generated, and requests the visible tab.
  void refresh();
  /// Stops the running job at its next check.
  void cancel();
  bool isBusy() const { return m_running.has_value(); }
  /// The key `kind` has for the current snapshot now.
  CodeKey keyFor(workbench::CodeKind kind) const;
  /// The cached outcome for `key`, or nullptr.
  const CodeOutcome* cached(const CodeKey& key) const;
  /// Requests `kind` and processes events until its outcome for the current snapshot is shown;
  /// false on timeout (screenshots, tests).
  bool waitForCode(workbench::CodeKind kind, int timeoutMs = 180000);
  /// How many jobs have been started (tests check that the cache spares work).
  int jobsStarted() const { return m_jobsStarted; }

Q_SIGNALS:
  /// A job ended; `ok` when it produced code (false: an error, a cancel, or stale).
  void finished(workbench::CodeKind kind, bool ok);

private:
  void start(const CodeKey& key);
  void onDone();
  void show(const CodeKey& key, const CodeOutcome& outcome);

  Coordinator* m_coordinator;
  CodeView* m_view;
  QFutureWatcher<CodeOutcome> m_watcher;
  std::shared_ptr<workbench::JobControl> m_job;
  std::optional<CodeKey> m_running;
  std::optional<CodeKey> m_pending;
  uint64_t m_request = 0, m_runningRequest = 0; ///< a progress report of an older job is dropped
  int m_jobsStarted = 0;
  /// Outcomes by key; each holds its graph through the key, so an address is never reused
  /// while it is a key. Bounded: a long session must not keep every module.
  struct KeyLess {
    bool operator()(const CodeKey& a, const CodeKey& b) const {
      const Graph* ga = a.graph.get();
      const Graph* gb = b.graph.get();
      return std::tie(ga, a.kind, a.schedule, a.arch) < std::tie(gb, b.kind, b.schedule, b.arch);
    }
  };
  std::map<CodeKey, CodeOutcome, KeyLess> m_cache;
};

} // namespace fb::gui
