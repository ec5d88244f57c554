// Tests of how the graph view shows control flow: an If or Loop is one box whose bodies hide in
// it; expanded, each body is a cluster labelled with its role, and captured values reach body
// nodes from their producers outside. FUSEBOX_GRAPHVIEW_PNG_DIR=dir writes a picture.
#include "app/gui/graph/DisplayGraph.h"
#include "app/gui/graph/GraphItems.h"
#include "app/gui/graph/GraphView.h"
#include "core/ModelIO.h"

#include <QGraphicsScene>
#include <QSignalSpy>
#include <QtTest/QtTest>

#include <set>

using namespace fb;
using namespace fb::gui;

namespace {

std::shared_ptr<const Graph> loadSample(const std::string& name) {
  auto g = loadModel(std::string(FUSEBOX_SAMPLES_DIR) + "/" + name);
  if (!g) {
    qWarning("%s: %s", name.c_str(), g.error().message().c_str());
    return nullptr;
  }
  return std::shared_ptr<const Graph>(std::move(*g));
}

/// Waits for layoutFinished and returns its `ok`.
bool waitLayout(GraphView& view, int ms = 20000) {
  QSignalSpy spy(&view, &GraphView::layoutFinished);
  if (!view.isLayoutRunning() || !spy.wait(ms))
    return false;
  return spy.at(0).at(0).toBool();
}

std::vector<const Node*> topNodes(const Graph& g) {
  std::vector<const Node*> out;
  for (const auto& n : g.nodes())
    out.push_back(n.get());
  return out;
}

/// With FUSEBOX_GRAPHVIEW_PNG_DIR set, writes the view there as NAME.png (to look at by eye).
void maybeSnapshot(const GraphView& view, const QString& name) {
  const QString dir = qEnvironmentVariable("FUSEBOX_GRAPHVIEW_PNG_DIR");
  if (!dir.isEmpty())
    QCOMPARE(view.exportTo(dir + "/" + name + ".png"), QString());
}

} // namespace

class TestControlFlowView : public QObject {
  Q_OBJECT
private Q_SLOTS:
  /// An If is one box whose bodies are hidden in it; expanded, each branch is a cluster of its
  /// own beside the If box, labelled with its role, and captured values reach body nodes from
  /// their producers outside.
  void controlFlowBodiesExpandAsClusters() {
    auto g = loadSample("control_flow.fbir");
    QVERIFY(g);
    const Node* ifNode = nullptr;
    for (const Node* n : topNodes(*g))
      if (n->op() == OpKind::If)
        ifNode = n;
    QVERIFY(ifNode);
    GraphView view;
    view.resize(900, 700);
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    const QRectF ifBox = view.nodeSceneRect(ifNode->id());
    QVERIFY(!ifBox.isEmpty());
    const Graph* thenBody = ifNode->bodyNamed("then_branch");
    QCOMPARE(view.nodeSceneRect(thenBody->nodes()[0]->id()), ifBox);

    view.setExpanded(ifNode->id(), true);
    QVERIFY(waitLayout(view));
    int clusters = 0;
    for (QGraphicsItem* item : view.scene()->items())
      clusters += item->type() == ClusterItemType;
    QCOMPARE(clusters, 2);
    QVERIFY(!view.nodeSceneRect(ifNode->id()).isEmpty()); // the If keeps its own box
    std::set<std::pair<qreal, qreal>> distinct;
    for (const NodeBody& b : ifNode->bodies())
      for (const auto& n : b.graph->nodes()) {
        const QRectF r = view.nodeSceneRect(n->id());
        QVERIFY(!r.isEmpty());
        distinct.insert({r.x(), r.y()});
      }
    QCOMPARE(distinct.size(), size_t(4));
    ExpansionState expanded;
    expanded.toggled.insert(QStringLiteral("f%1").arg(ifNode->id()));
    const DisplayGraph d = buildDisplayGraph(*g, GraphViewOptions(), expanded);
    QStringList labels;
    for (const DisplayCluster& c : d.clusters)
      labels << c.label;
    QVERIFY2(labels.contains(QStringLiteral("then_branch of If #%1").arg(ifNode->id())),
             qPrintable(labels.join(", ")));
    // The Relu result the then branch reads (a capture) is an edge from the Relu box.
    const int relu = d.unitOfNode.value(ifNode->input(1)->producer()->id());
    const int mul = d.unitOfNode.value(thenBody->nodes()[0]->id());
    bool captured = false;
    for (const DisplayEdge& e : d.edges)
      captured = captured || (e.from == relu && e.to == mul);
    QVERIFY(captured);
    maybeSnapshot(view, "control_flow_expanded");
    view.setExpanded(ifNode->id(), false);
    QVERIFY(waitLayout(view));
    QCOMPARE(view.nodeSceneRect(thenBody->nodes()[0]->id()), view.nodeSceneRect(ifNode->id()));
  }

};

QTEST_MAIN(TestControlFlowView)
#include "TestControlFlowView.moc"
