// Builds the display graph: visible units, merged edges and clusters, with large graphs reduced
// to collapsed blocks (name scopes, then chunks in execution order) that expand on demand.
//
// Algorithm:
//  1. When the graph has at most `collapseThreshold` top-level nodes, every node is a unit.
//     Otherwise the nodes are grouped by the first component of their name scope
//     ("/layers.3/attn/MatMul" -> "layers.3"); a level that still has more than the threshold
//     entries is cut into chunks of consecutive entries. Expanding a block groups its members
//     by the next scope component, the same way.
//  2. Fused nodes are one unit unless expanded; then their body nodes are units in a cluster.
//  3. Every value read by a visible unit is resolved to the unit that produces it (through
//     fused-group bodies and collapsed blocks), and edges between the same pair are merged.
#include "app/gui/graph/DisplayGraph.h"

#include "app/gui/graph/OpColors.h"
#include "core/ControlFlow.h"

#include <QFontMetricsF>

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_set>

namespace fb::gui {

QFont titleFont() {
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setPixelSize(13);
  f.setBold(true);
  return f;
}

QFont detailFont() {
  QFont f(QStringLiteral("DejaVu Sans"));
  f.setPixelSize(11);
  return f;
}

QString typeLabel(const TensorType& type) {
  QString s = QString::fromLatin1(dtypeName(type.dtype)) + QStringLiteral(" [");
  for (size_t i = 0; i < type.dims.size(); ++i) {
    if (i)
      s += QStringLiteral(",");
    s += QString::fromStdString(type.dims[i].str());
  }
  return s + QStringLiteral("]");
}

namespace {

QString elide(const QString& s, int max) {
  return s.size() <= max ? s : s.left(max - 1) + QChar(0x2026);
}

QString intsText(const std::vector<int64_t>& v, const QString& sep) {
  QStringList parts;
  for (int64_t x : v)
    parts << QString::number(x);
  return parts.join(sep);
}

bool allEqual(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t y) { return y == x; });
}

/// The attributes a reader wants to see at a glance, on one line.
QString keyAttributes(const Node& n) {
  const AttrMap& a = n.attrs();
  auto ints = [&](const char* name) -> std::vector<int64_t> {
    if (const auto* v = a.find(name))
      if (const auto* p = std::get_if<std::vector<int64_t>>(v))
        return *p;
    return {};
  };
  auto integer = [&](const char* name, int64_t dflt) -> int64_t {
    if (const auto* v = a.find(name))
      if (const auto* p = std::get_if<int64_t>(v))
        return *p;
    return dflt;
  };
  QStringList parts;
  switch (n.op()) {
  case OpKind::Conv:
  case OpKind::ConvTranspose:
  case OpKind::QLinearConv:
  case OpKind::ConvInteger:
  case OpKind::MaxPool:
  case OpKind::AveragePool: {
    std::vector<int64_t> k = ints("kernel_shape");
    if (k.empty() && n.numInputs() > 1 && n.input(1))
      if (n.input(1)->type().isStatic() && n.input(1)->type().rank() > 2) {
        std::vector<int64_t> w = n.input(1)->type().staticSizes();
        k.assign(w.begin() + 2, w.end());
      }
    if (!k.empty())
      parts << intsText(k, QStringLiteral("\u00d7"));
    std::vector<int64_t> s = ints("strides");
    if (!s.empty() && !allEqual(s, 1))
      parts << QStringLiteral("/") + (allEqual(s, s.front()) ? QString::number(s.front())
                                                            : intsText(s, QStringLiteral(",")));
    if (int64_t g = integer("group", 1); g != 1)
      parts << QStringLiteral("g%1").arg(g);
    break;
  }
  case OpKind::Gemm:
    if (integer("transA", 0))
      parts << QStringLiteral("transA");
    if (integer("transB", 0))
      parts << QStringLiteral("transB");
    break;
  case OpKind::BatchNormalization:
  case OpKind::LayerNormalization:
  case OpKind::InstanceNormalization:
  case OpKind::GroupNormalization:
    if (n.op() == OpKind::GroupNormalization)
      parts << QStringLiteral("G %1").arg(integer("num_groups", 1));
    if (const auto* v = a.find("epsilon"))
      if (const auto* f = std::get_if<float>(v))
        parts << QStringLiteral("\u03b5 %1").arg(double(*f), 0, 'g', 3);
    if (n.op() == OpKind::LayerNormalization)
      parts << QStringLiteral("axis %1").arg(integer("axis", -1));
    break;
  case OpKind::RNN:
  case OpKind::GRU:
  case OpKind::LSTM: {
    // "H 24 · bidirectional": the hidden size (from R when the attribute is absent).
    int64_t h = integer("hidden_size", -1);
    if (h < 0 && n.numInputs() > 2 && n.input(2) && n.input(2)->type().rank() == 3 &&
        n.input(2)->type().dims[2].isStatic())
      h = n.input(2)->type().dims[2].size();
    if (h >= 0)
      parts << QStringLiteral("H %1").arg(h);
    if (const auto* v = a.find("direction"))
      if (const auto* d = std::get_if<std::string>(v); d && *d != "forward")
        parts << QString::fromStdString(*d);
    break;
  }
  case OpKind::Transpose:
    if (!ints("perm").empty())
      parts << QStringLiteral("perm ") + intsText(ints("perm"), QStringLiteral(","));
    break;
  case OpKind::Cast:
    if (const auto* v = a.find("to"))
      if (const auto* p = std::get_if<int64_t>(v))
        parts << QStringLiteral("to %1").arg(*p);
    break;
  default:
    for (const auto& [name, value] : a) {
      if (parts.size() == 2)
        break;
      if (const auto* p = std::get_if<int64_t>(&value))
        parts << QStringLiteral("%1 %2").arg(QString::fromStdString(name)).arg(*p);
      else if (const auto* f = std::get_if<float>(&value))
        parts << QStringLiteral("%1 %2").arg(QString::fromStdString(name)).arg(double(*f), 0, 'g', 3);
      else if (const auto* l = std::get_if<std::vector<int64_t>>(&value); l && l->size() <= 4)
        parts << QStringLiteral("%1 [%2]").arg(QString::fromStdString(name),
                                                intsText(*l, QStringLiteral(",")));
    }
    break;
  }
  return parts.join(QStringLiteral("  "));
}

/// The model name a node stands for: its own, or for a fused group (named by the fuse pass
/// "fused:/conv1/Conv+/relu1/Relu") the name of its anchor op, so it stays in its scope.
QString modelName(const Node& n) {
  QString name = QString::fromStdString(n.name());
  if (n.body() && name.startsWith(QLatin1String("fused:"))) {
    name = name.mid(6);
    name = name.left(name.indexOf(QLatin1Char('+')));
  }
  return name;
}

/// Scope components of an ONNX-style node name, without the last (op) component.
QStringList scopeOf(const Node& n) {
  QStringList parts = modelName(n).split(QLatin1Char('/'), Qt::SkipEmptyParts);
  if (!parts.isEmpty())
    parts.removeLast();
  return parts;
}

/// "layer1.0/conv1" from "/layer1/layer1.0/conv1/Conv": the last two scope components.
QString shortName(const Node& n) {
  QStringList scope = scopeOf(n);
  if (scope.isEmpty())
    return elide(modelName(n), 28);
  while (scope.size() > 2)
    scope.removeFirst();
  return elide(scope.join(QLatin1Char('/')), 28);
}

/// "Conv+Add+Relu" for a fused node's body.
QString bodySummary(const Graph& body) {
  QStringList ops;
  for (const auto& n : body.nodes()) {
    if (ops.size() == 4) {
      ops << QStringLiteral("\u2026");
      break;
    }
    ops << QString::fromLatin1(opName(n->op()));
  }
  return ops.join(QLatin1Char('+'));
}

/// One entry of a level in large-graph mode: a node, a scope block or a chunk of entries.
struct Entry {
  const Node* node = nullptr;        ///< set for a single node
  QString key;                       ///< block key
  QString label;
  bool chunk = false;
  std::vector<const Node*> members;  ///< top-level nodes inside, in execution order
  std::vector<Entry> children;       ///< chunk: its entries
};

class Builder {
public:
  Builder(const Graph& g, const GraphViewOptions& o, const ExpansionState& e, bool forceCollapse)
      : m_graph(g), m_options(o), m_expansion(e), m_forceCollapse(forceCollapse),
        m_title(titleFont()), m_detail(detailFont()) {}

  DisplayGraph build() {
    m_out.graphNodes = int(m_graph.numNodes());
    for (Value* v : m_graph.inputs())
      addIo(UnitKind::Input, v);
    std::vector<const Node*> all;
    for (const auto& n : m_graph.nodes())
      all.push_back(n.get());
    m_out.collapsed = m_forceCollapse || (m_options.collapseThreshold > 0 &&
                                          int(all.size()) > m_options.collapseThreshold);
    if (m_out.collapsed) {
      assignScopes(all);
      emitEntries(level(all, 0, QStringLiteral("b:")), -1, /*hiddenIn=*/-1, {});
    } else {
      for (const Node* n : all)
        emitNode(*n, -1, /*hiddenIn=*/-1, {});
    }
    for (size_t u = 0; u < m_consumers.size(); ++u)
      for (const Node* n : m_consumers[u])
        for (Value* v : n->inputs())
          if (v)
            addEdge(resolve(v, int(u)), int(u), v);
    // A box per graph output reads well for a handful; for thousands (a model that exports
    // every intermediate) it doubles the graph and dot's layout time, so the producing box
    // says "graph output" instead.
    constexpr size_t kMaxOutputBoxes = 64;
    if (m_graph.outputs().size() <= kMaxOutputBoxes) {
      for (Value* v : m_graph.outputs()) {
        int out = addIo(UnitKind::Output, v);
        addEdge(resolve(v, out), out, v);
      }
    } else {
      std::unordered_set<int> marked;
      for (Value* v : m_graph.outputs()) {
        if (v->kind() == ValueKind::Constant)
          continue; // resolve() places constants next to a consumer; an output has none here
        const int producer = resolve(v, -1);
        if (producer >= 0 && marked.insert(producer).second)
          m_out.units[size_t(producer)].details << QStringLiteral("\u2192 graph output");
      }
    }
    for (DisplayEdge& e : m_out.edges)
      if (e.values > 1)
        e.label += QStringLiteral(" (+%1)").arg(e.values - 1);
    return std::move(m_out);
  }

private:
  /// The scope of every top-level node. A node without a scope that reads only constants (the
  /// Identity or Constant nodes exporters emit for weights) joins the scope of its first
  /// consumer, so weights stay with their layer instead of crowding the top level.
  void assignScopes(const std::vector<const Node*>& nodes) {
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const Node* n = *it;
      QStringList scope = scopeOf(*n);
      const bool constantLike = std::all_of(n->inputs().begin(), n->inputs().end(), [](Value* v) {
        return !v || v->isConstant();
      });
      if (scope.isEmpty() && constantLike && n->numOutputs() > 0)
        for (const Use& u : n->output(0)->uses())
          if (auto found = m_scope.find(u.user); found != m_scope.end() && !found->second.isEmpty()) {
            scope = found->second;
            break;
          }
      m_scope[n] = std::move(scope);
    }
  }

  /// Groups `nodes` by scope component `depth`; chunks the level when it is still too wide.
  std::vector<Entry> level(const std::vector<const Node*>& nodes, int depth, const QString& prefix) {
    std::vector<Entry> entries;
    std::map<QString, size_t> byScope;
    for (const Node* n : nodes) {
      const QStringList& scope = m_scope[n];
      if (scope.size() <= depth) {
        Entry e;
        e.node = n;
        entries.push_back(std::move(e));
        continue;
      }
      QString comp = scope[depth];
      auto [it, inserted] = byScope.emplace(comp, entries.size());
      if (inserted) {
        Entry e;
        e.key = prefix + QLatin1Char('/') + comp;
        e.label = comp;
        entries.push_back(std::move(e));
      }
      entries[it->second].members.push_back(n);
    }
    for (Entry& e : entries)
      if (!e.node && e.members.size() == 1) {
        e.node = e.members.front();
        e.members.clear();
      }
    const size_t limit = size_t(std::max(8, m_options.collapseThreshold));
    if (entries.size() <= limit)
      return entries;
    // Too wide: consecutive runs of entries become chunks (execution order keeps edges forward).
    // Few, large chunks: with many small ones a branchy graph links every chunk to many others
    // and dot slows down with the edges (a 5,000-node random DAG: 200 chunks took 3 s, 48 take
    // a fraction of a second). A chunk opens on demand anyway.
    constexpr size_t kChunks = 48;
    const size_t per = (entries.size() + kChunks - 1) / kChunks;
    std::vector<Entry> chunks;
    for (size_t i = 0; i < entries.size(); i += per) {
      Entry c;
      c.chunk = true;
      for (size_t j = i; j < std::min(entries.size(), i + per); ++j) {
        Entry& e = entries[j];
        if (e.node)
          c.members.push_back(e.node);
        else
          c.members.insert(c.members.end(), e.members.begin(), e.members.end());
        c.children.push_back(std::move(e));
      }
      const NodeId first = c.members.front()->id();
      c.key = prefix + QStringLiteral("#%1").arg(first);
      c.label = QStringLiteral("nodes #%1\u2013#%2").arg(first).arg(c.members.back()->id());
      chunks.push_back(std::move(c));
    }
    return chunks;
  }

  /// Emits a level's entries; hiddenIn >= 0 means they are inside that collapsed unit.
  void emitEntries(const std::vector<Entry>& entries, int cluster, int hiddenIn,
                   const QStringList& path) {
    // Blocks with the same op sequence are repeated structure ("one of 12 alike").
    std::map<QString, int> alike;
    std::vector<QString> signatures(entries.size());
    for (size_t i = 0; i < entries.size(); ++i)
      if (!entries[i].node) {
        QString sig;
        for (const Node* n : entries[i].members)
          sig += QString::fromLatin1(opName(n->op())) + QLatin1Char(',');
        signatures[i] = sig;
        ++alike[sig];
      }
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      if (e.node) {
        emitNode(*e.node, cluster, hiddenIn, path);
        continue;
      }
      const bool expanded = hiddenIn < 0 && m_expansion.isExpanded(e.key, /*byDefault=*/false);
      int inner = cluster;
      int innerHidden = hiddenIn;
      if (expanded) {
        DisplayCluster c;
        c.key = e.key;
        c.label = QStringLiteral("%1  (%2 nodes)").arg(e.label).arg(e.members.size());
        c.node = e.members.front()->id();
        c.parent = cluster;
        m_out.clusters.push_back(c);
        inner = int(m_out.clusters.size()) - 1;
      } else if (hiddenIn < 0) {
        innerHidden = emitBlock(e, cluster, alike[signatures[i]]);
      }
      QStringList innerPath = path;
      innerPath << e.key;
      if (e.chunk) {
        emitEntries(e.children, inner, innerHidden, innerPath);
      } else {
        const int depth = int(e.key.count(QLatin1Char('/')));
        emitEntries(level(e.members, depth, e.key), inner, innerHidden, innerPath);
      }
    }
  }

  int emitBlock(const Entry& e, int cluster, int alike) {
    DisplayUnit u;
    u.kind = UnitKind::Block;
    u.key = e.key;
    u.node = e.members.front()->id();
    u.title = elide(e.label, 32);
    u.fill = groupColor();
    u.cluster = cluster;
    u.expandable = true;
    std::map<QString, int> ops;
    for (const Node* n : e.members)
      ++ops[QString::fromLatin1(opName(n->op()))];
    std::vector<std::pair<int, QString>> counts;
    for (const auto& [op, count] : ops)
      counts.emplace_back(-count, op);
    std::sort(counts.begin(), counts.end());
    QStringList top;
    for (size_t i = 0; i < counts.size() && i < 3; ++i)
      top << QStringLiteral("%1\u00d7%2").arg(counts[i].second).arg(-counts[i].first);
    u.details << QStringLiteral("%1 nodes").arg(e.members.size()) +
                     (alike > 1 ? QStringLiteral(" \u00b7 1 of %1 alike").arg(alike) : QString());
    u.details << top.join(QStringLiteral(" "));
    u.tooltip = QStringLiteral("%1: %2 nodes (double-click to expand)").arg(e.label).arg(e.members.size());
    const int index = addUnit(std::move(u));
    m_consumers[size_t(index)] = e.members;
    return index;
  }

  /// Emits one node as a unit, or (hiddenIn >= 0) records that unit `hiddenIn` shows it.
  void emitNode(const Node& n, int cluster, int hiddenIn, const QStringList& path) {
    if (hiddenIn >= 0) {
      collectHidden(n, hiddenIn, path);
      return;
    }
    m_out.topoOrder.push_back(n.id());
    m_out.enclosing.insert(n.id(), path);
    const QString fusedKey = QStringLiteral("f%1").arg(n.id());
    for (const NodeBody& b : n.bodies())
      m_bodyOwner[b.graph.get()] = &n;
    if (isControlFlowOp(n.op()) && n.hasBodies()) {
      emitControlFlow(n, cluster, path);
      return;
    }
    const bool expandFused =
        n.body() && m_expansion.isExpanded(fusedKey, m_options.expandFusedGroups);
    if (expandFused) {
      DisplayCluster c;
      c.key = fusedKey;
      c.label = QStringLiteral("fused #%1: %2").arg(n.id()).arg(bodySummary(*n.body()));
      c.node = n.id();
      c.parent = cluster;
      c.fused = true;
      m_out.clusters.push_back(c);
      m_expandedFused.insert(n.id());
      QStringList inner = path;
      inner << fusedKey;
      for (const auto& b : n.body()->nodes())
        emitNode(*b, int(m_out.clusters.size()) - 1, /*hiddenIn=*/-1, inner);
      return;
    }
    DisplayUnit u;
    u.kind = UnitKind::Op;
    u.key = QStringLiteral("n%1").arg(n.id());
    u.node = n.id();
    u.op = n.op();
    u.cluster = cluster;
    u.fill = opColor(n.op());
    if (n.body()) {
      u.title = QStringLiteral("fused");
      u.details << elide(bodySummary(*n.body()), 34);
      u.expandable = true;
    } else {
      u.title = QString::fromLatin1(opName(n.op()));
      if (QString attrs = keyAttributes(n); !attrs.isEmpty())
        u.details << elide(attrs, 34);
    }
    QString name = shortName(n);
    u.details << (name.isEmpty() ? QStringLiteral("#%1").arg(n.id())
                                 : QStringLiteral("#%1 %2").arg(n.id()).arg(name));
    u.tooltip = elide(QString::fromStdString(n.describe()), 300);
    u.provenance = n.provenance();
    for (Value* v : n.outputs())
      u.tooltip += QStringLiteral("\n\u2192 %%1 : %2")
                       .arg(elide(QString::fromStdString(v->name()), 120), typeLabel(v->type()));
    const int index = addUnit(std::move(u));
    m_consumers[size_t(index)] = {&n};
    if (n.body()) {
      QStringList inner = path;
      inner << fusedKey;
      for (const auto& b : n.body()->nodes())
        collectHidden(*b, index, inner);
    }
  }

  /// An If, Loop or Scan: its own box (operands in, results out) and, when expanded (key
  /// "f<id>", like a fused group), one cluster per body beside it. Captured operands feed body
  /// nodes from their producers outside; a Loop's iteration number, condition and carried
  /// values (and a Scan's slices) come from the node's box. Collapsed, the box stands for
  /// every body node (search and selection still find them).
  void emitControlFlow(const Node& n, int cluster, const QStringList& path) {
    const QString key = QStringLiteral("f%1").arg(n.id());
    DisplayUnit u;
    u.kind = UnitKind::Op;
    u.key = QStringLiteral("n%1").arg(n.id());
    u.node = n.id();
    u.op = n.op();
    u.cluster = cluster;
    u.fill = opColor(n.op());
    u.title = QString::fromLatin1(opName(n.op()));
    QStringList roles;
    size_t inner = 0;
    for (const NodeBody& b : n.bodies()) {
      roles << QString::fromStdString(b.role);
      inner += b.graph->numNodes();
    }
    u.details << elide(roles.join(QStringLiteral(", ")) +
                           QStringLiteral(" \u00b7 %1 nodes").arg(inner), 34);
    QString name = shortName(n);
    u.details << (name.isEmpty() ? QStringLiteral("#%1").arg(n.id())
                                 : QStringLiteral("#%1 %2").arg(n.id()).arg(name));
    u.tooltip = QString::fromStdString(n.describe()) +
                QStringLiteral(" (double-click to show its bodies)");
    u.provenance = n.provenance();
    u.expandable = true;
    const int index = addUnit(std::move(u));
    m_consumers[size_t(index)] = {&n};
    QStringList innerPath = path;
    innerPath << key;
    if (!m_expansion.isExpanded(key, m_options.expandFusedGroups)) {
      for (const NodeBody& b : n.bodies())
        for (const auto& bn : b.graph->nodes())
          collectHidden(*bn, index, innerPath);
      return;
    }
    for (const NodeBody& b : n.bodies()) {
      DisplayCluster c;
      c.key = key; // double-clicking any body folds them all back into the node
      c.label = QStringLiteral("%1 of %2 #%3").arg(QString::fromStdString(b.role),
                                                   QString::fromLatin1(opName(n.op())))
                    .arg(n.id());
      c.node = n.id();
      c.parent = cluster;
      m_out.clusters.push_back(c);
      const int bodyCluster = int(m_out.clusters.size()) - 1;
      for (const auto& bn : b.graph->nodes())
        emitNode(*bn, bodyCluster, /*hiddenIn=*/-1, innerPath);
    }
  }

  /// Body nodes of a collapsed fused node (or control-flow node): shown by that node's unit.
  void collectHidden(const Node& n, int unit, const QStringList& path) {
    m_out.topoOrder.push_back(n.id());
    m_out.enclosing.insert(n.id(), path);
    m_out.unitOfNode.insert(n.id(), unit);
    m_out.units[size_t(unit)].members.push_back(n.id());
    if (n.hasBodies()) {
      QStringList inner = path;
      inner << QStringLiteral("f%1").arg(n.id());
      for (const NodeBody& b : n.bodies()) {
        m_bodyOwner[b.graph.get()] = &n;
        for (const auto& bn : b.graph->nodes())
          collectHidden(*bn, unit, inner);
      }
    }
  }

  int addIo(UnitKind kind, Value* v) {
    DisplayUnit u;
    u.kind = kind;
    const QString name = QString::fromStdString(v->name());
    u.key = (kind == UnitKind::Input ? QStringLiteral("i:") : kind == UnitKind::Output
                                                                  ? QStringLiteral("o:")
                                                                  : QStringLiteral("c:")) +
            name;
    u.title = elide(name, 24);
    u.details << (kind == UnitKind::Input ? QStringLiteral("input ")
                  : kind == UnitKind::Output ? QStringLiteral("output ")
                                             : QStringLiteral("const ")) +
                     typeLabel(v->type());
    u.tooltip = name + QStringLiteral(" : ") + typeLabel(v->type());
    u.fill = kind == UnitKind::Constant ? constantColor() : ioColor();
    const int index = addUnit(std::move(u));
    if (kind != UnitKind::Output)
      m_valueUnit.insert(v, index);
    return index;
  }

  int addUnit(DisplayUnit u) {
    const QFontMetricsF title(m_title), detail(m_detail);
    double w = title.horizontalAdvance(u.title);
    for (const QString& d : u.details)
      w = std::max(w, detail.horizontalAdvance(d));
    u.width = std::max(64.0, std::ceil(w) + 20);
    u.height = std::ceil(title.height() + detail.height() * double(u.details.size()) + 12);
    for (NodeId id : u.members)
      m_out.unitOfNode.insert(id, int(m_out.units.size()));
    // A block's members are added as its hidden nodes are collected (collectHidden).
    if (u.kind == UnitKind::Op) {
      u.members.push_back(u.node);
      m_out.unitOfNode.insert(u.node, int(m_out.units.size()));
    }
    m_out.units.push_back(std::move(u));
    m_consumers.emplace_back();
    return int(m_out.units.size()) - 1;
  }

  /// The unit that produces `v` as seen by consumer unit `consumer`, or -1 (hidden constant).
  int resolve(const Value* v, int consumer) {
    switch (v->kind()) {
    case ValueKind::Input: {
      if (auto it = m_valueUnit.find(v); it != m_valueUnit.end())
        return it.value();
      auto owner = m_bodyOwner.find(v->graph());
      if (owner == m_bodyOwner.end())
        return -1;
      const auto& params = v->graph()->inputs();
      const auto pos = std::find(params.begin(), params.end(), v);
      if (pos == params.end())
        return -1;
      size_t operand = size_t(pos - params.begin());
      if (isControlFlowOp(owner->second->op())) {
        // Captures come from their producers outside; the other body inputs (iteration,
        // condition, carried values, scan slices) from the node's own box.
        auto layout = controlFlowLayout(*owner->second);
        if (!layout.ok() || operand < layout->bodyInputsBeforeCaptures)
          return m_out.unitOfNode.value(owner->second->id(), -1);
        operand = layout->firstCapture + (operand - layout->bodyInputsBeforeCaptures);
      }
      if (!owner->second->input(operand))
        return -1;
      return resolve(owner->second->input(operand), consumer);
    }
    case ValueKind::Constant: {
      if (auto it = m_valueUnit.find(v); it != m_valueUnit.end())
        return it.value();
      if (!m_options.showConstants || m_out.units[size_t(consumer)].kind != UnitKind::Op)
        return -1;
      const int cluster = m_out.units[size_t(consumer)].cluster;
      const int index = addIo(UnitKind::Constant, const_cast<Value*>(v));
      m_out.units[size_t(index)].cluster = cluster;
      return index;
    }
    case ValueKind::NodeOutput: {
      const Node* p = v->producer();
      if (p->body() && m_expandedFused.contains(p->id()) &&
          v->resultIndex() < p->body()->outputs().size())
        return resolve(p->body()->outputs()[v->resultIndex()], consumer);
      return m_out.unitOfNode.value(p->id(), -1);
    }
    }
    __builtin_unreachable();
  }

  static QString valueText(const Value* v) {
    return QStringLiteral("%%1 : %2")
        .arg(elide(QString::fromStdString(v->name()), 120), typeLabel(v->type()));
  }

  void addEdge(int from, int to, const Value* v) {
    if (from < 0 || to < 0 || from == to)
      return;
    const quint64 key = (quint64(quint32(from)) << 32) | quint32(to);
    if (auto it = m_edgeIndex.find(key); it != m_edgeIndex.end()) {
      // The same value read twice by one unit is one arrow; distinct values add to the count.
      DisplayEdge& e = m_out.edges[size_t(it.value())];
      if (!m_edgeValues[size_t(it.value())].contains(v)) {
        m_edgeValues[size_t(it.value())].insert(v);
        if (++e.values <= 12)
          e.tooltip += QLatin1Char('\n') + valueText(v);
        else if (e.values == 13)
          e.tooltip += QStringLiteral("\n\u2026");
      }
      return;
    }
    DisplayEdge e;
    e.from = from;
    e.to = to;
    e.label = m_options.edgeLabels ? typeLabel(v->type()) : QString();
    e.tooltip = valueText(v);
    m_edgeIndex.insert(key, int(m_out.edges.size()));
    m_out.edges.push_back(std::move(e));
    m_edgeValues.push_back({v});
  }

  const Graph& m_graph;
  const GraphViewOptions& m_options;
  const ExpansionState& m_expansion;
  bool m_forceCollapse;
  QFont m_title, m_detail;
  DisplayGraph m_out;
  std::vector<std::vector<const Node*>> m_consumers; // per unit: the nodes whose inputs it reads
  QHash<const Value*, int> m_valueUnit;              // inputs and constants with their own unit
  std::map<const Graph*, const Node*> m_bodyOwner;   // body -> the node that owns it
  std::map<const Node*, QStringList> m_scope;        // large-graph mode: scope of each node
  QSet<NodeId> m_expandedFused;
  QHash<quint64, int> m_edgeIndex;
  std::vector<QSet<const Value*>> m_edgeValues;
};

} // namespace

double layoutCost(const DisplayGraph& graph) {
  // Longest-path ranks (Kahn's order; units on a cycle keep what they had), then every edge
  // costs one virtual node per rank it spans, as in dot.
  const size_t n = graph.units.size();
  std::vector<std::vector<int>> out(n);
  std::vector<int> indegree(n, 0), rank(n, 0);
  for (const DisplayEdge& e : graph.edges) {
    out[size_t(e.from)].push_back(e.to);
    ++indegree[size_t(e.to)];
  }
  std::vector<int> ready;
  for (size_t u = 0; u < n; ++u)
    if (indegree[u] == 0)
      ready.push_back(int(u));
  while (!ready.empty()) {
    const int u = ready.back();
    ready.pop_back();
    for (int v : out[size_t(u)]) {
      rank[size_t(v)] = std::max(rank[size_t(v)], rank[size_t(u)] + 1);
      if (--indegree[size_t(v)] == 0)
        ready.push_back(v);
    }
  }
  // A source (a weight's Identity, a Constant) sits just above its first consumer, as dot's
  // network simplex puts it, not at the top.
  std::vector<int> inEdges(n, 0);
  for (const DisplayEdge& e : graph.edges)
    ++inEdges[size_t(e.to)];
  for (size_t u = 0; u < n; ++u)
    if (inEdges[u] == 0 && !out[u].empty() && graph.units[u].kind != UnitKind::Input) {
      int lowest = std::numeric_limits<int>::max();
      for (int v : out[u])
        lowest = std::min(lowest, rank[size_t(v)]);
      rank[u] = std::max(0, lowest - 1);
    }
  double cost = double(n);
  for (const DisplayEdge& e : graph.edges)
    cost += std::max(1, std::abs(rank[size_t(e.to)] - rank[size_t(e.from)]));
  return cost;
}

DisplayGraph buildDisplayGraph(const Graph& graph, const GraphViewOptions& options,
                               const ExpansionState& expansion) {
  DisplayGraph full = Builder(graph, options, expansion, /*forceCollapse=*/false).build();
  // A graph under the node threshold can still be too costly for dot (DenseNet's
  // concatenations span many ranks: 370 nodes took minutes); show it as blocks instead.
  if (!full.collapsed && options.collapseThreshold > 0 && layoutCost(full) > kMaxLayoutCost)
    return Builder(graph, options, expansion, /*forceCollapse=*/true).build();
  return full;
}

} // namespace fb::gui
