// The pass interface: a named graph transformation with a student-facing description.
#pragma once

#include "core/Graph.h"
#include "passes/PassOption.h"

#include <cassert>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb {

/// Options given to one pass in a pipeline string: `quantize{calibration=percentile,samples=16}`.
class PassOptions {
public:
  void set(const std::string& key, const std::string& value) { m_values[key] = value; }
  bool has(const std::string& key) const { return m_values.count(key) != 0; }
  const std::map<std::string, std::string>& values() const { return m_values; }
  std::string getString(const std::string& key, const std::string& dflt) const;
  Expected<int64_t> getInt(const std::string& key, int64_t dflt) const;
  Expected<double> getDouble(const std::string& key, double dflt) const;
  Expected<bool> getBool(const std::string& key, bool dflt) const;
  /// The value of a declared option. The pass manager fills in every declared default before a
  /// pass runs, so a pass reads its options without repeating the defaults; an option that is
  /// neither given nor declared with a default is an error naming it.
  Expected<std::string> getString(const std::string& key) const;
  /// The text of a declared option with a default (an enum's word): the pass manager has
  /// filled it in and checked it against the declaration, so it is always there.
  const std::string& declared(const std::string& key) const {
    auto it = m_values.find(key);
    assert(it != m_values.end() && "declared() reads options the pass declares with a default");
    return it->second;
  }
  Expected<int64_t> getInt(const std::string& key) const;
  Expected<double> getDouble(const std::string& key) const;
  Expected<bool> getBool(const std::string& key) const;
  /// "{a=1,b=x}" or "" when empty.
  std::string str() const;

private:
  std::map<std::string, std::string> m_values;
};

/// What happened to a node during a pass, for the provenance log.
struct ProvenanceEvent {
  enum class Kind { Created, Deleted, Replaced } kind;
  NodeId node;                ///< the node created, deleted or replaced
  std::vector<NodeId> from;   ///< for Created/Replaced: the nodes it came from / replaced by
  std::string note;
  /// The rewrite (1-based, PassContext::mayRewrite) this event is part of; 0 when it belongs
  /// to none (clean-up after the rewrites, or a pass that does not count).
  int64_t rewrite = 0;
};

/// Per-run state a pass reports into: statistics ("folded 20 BatchNormalization into Conv"),
/// numeric counters for reports and the provenance log; and the rewrite debug counter.
class PassContext {
public:
  explicit PassContext(PassOptions options = {}) : m_options(std::move(options)) {}
  const PassOptions& options() const { return m_options; }

  // -- Rewrite debug counter (MLIR's debug counters; docs/decisions.md) --
  /// Asks before each individual rewrite whether the pass may commit it. A pass calls this
  /// once per rewrite, after deciding the rewrite applies and right before it changes the
  /// graph, so that a refusal leaves a valid graph. Rewrites are counted per pass application
  /// (all fixed-point iterations together); under a limit of N the first N are allowed and
  /// every later one refused, so the state after N rewrites is the same in every run. Events
  /// logged after an allowed rewrite belong to it. Without a limit this is always true.
  bool mayRewrite() {
    if (m_rewriteLimit >= 0 && m_rewrites >= m_rewriteLimit) {
      m_refused = true;
      return false;
    }
    m_currentRewrite = ++m_rewrites;
    return true;
  }
  /// Stops the pass after `limit` rewrites (nullopt: no limit).
  void setRewriteLimit(std::optional<int64_t> limit) { m_rewriteLimit = limit ? *limit : -1; }
  /// The rewrites allowed so far: with no limit, the number the pass made.
  int64_t rewrites() const { return m_rewrites; }
  /// True once the limit refused a rewrite.
  bool rewriteRefused() const { return m_refused; }
  /// For passes that decide every rewrite first and commit them later (fuse, layout): events
  /// logged from now on belong to rewrite `index` (0: to none).
  void attributeToRewrite(int64_t index) { m_currentRewrite = index; }
  int64_t currentRewrite() const { return m_currentRewrite; }

  /// Adds to a named counter ("nodes folded"); counters print as the pass's statistics.
  void addStatistic(const std::string& name, double amount = 1) { m_counters[name] += amount; }
  const std::map<std::string, double>& statistics() const { return m_counters; }
  /// A one-line human summary the pass sets (otherwise built from the counters).
  void setSummary(std::string s) { m_summary = std::move(s); }
  const std::string& summary() const { return m_summary; }

  void logCreated(NodeId id, std::vector<NodeId> from, std::string note = {}) {
    m_events.push_back(
        {ProvenanceEvent::Kind::Created, id, std::move(from), std::move(note), m_currentRewrite});
  }
  void logDeleted(NodeId id, std::string note = {}) {
    m_events.push_back({ProvenanceEvent::Kind::Deleted, id, {}, std::move(note), m_currentRewrite});
  }
  void logReplaced(NodeId id, std::vector<NodeId> by, std::string note = {}) {
    m_events.push_back(
        {ProvenanceEvent::Kind::Replaced, id, std::move(by), std::move(note), m_currentRewrite});
  }
  const std::vector<ProvenanceEvent>& events() const { return m_events; }

private:
  PassOptions m_options;
  std::map<std::string, double> m_counters;
  std::string m_summary;
  std::vector<ProvenanceEvent> m_events;
  int64_t m_rewriteLimit = -1; ///< -1: no limit
  int64_t m_rewrites = 0;
  int64_t m_currentRewrite = 0;
  bool m_refused = false;
};

/// A graph transformation or analysis. run() returns whether it changed the graph; on error the
/// pass manager discards whatever the pass did (it runs on a copy).
class Pass {
public:
  virtual ~Pass() = default;
  /// The kebab-case name used in pipelines.
  virtual std::string name() const = 0;
  /// One line for --list-passes.
  virtual std::string summary() const = 0;
  /// A paragraph for a student: what it does, why it helps, on what hardware.
  virtual std::string description() const = 0;
  /// Transforms the graph; returns true when it changed anything.
  virtual Expected<bool> run(Graph& graph, PassContext& ctx) = 0;
  /// Passes that want it are re-run until they report no change (bounded).
  virtual bool runToFixedPoint() const { return false; }
  /// Analyses annotate but never change the structure.
  virtual bool isAnalysis() const { return false; }
  /// The options the pass accepts, with types, defaults, ranges and help. The pipeline parser
  /// rejects any other option, or a value outside what is declared, before a pass runs.
  virtual std::vector<PassOptionSpec> options() const { return {}; }
};

} // namespace fb
