// Tests of the graph view: layout of every sample (edges follow the dataflow, boxes do not
// overlap), fused-group clusters, marks and heat, search, progress, mouse expansion and the
// minimap, keyboard navigation, export (SVG/PNG/DOT parse), position reuse across a pass step,
// stale and cancelled layouts, and generated 5,000-node models (scoped, unscoped, a random DAG)
// that open within 3 s without stalling the event loop. FUSEBOX_GRAPHVIEW_PNG_DIR=dir writes
// pictures of what the tests show, to look at.
#include "app/gui/graph/DisplayGraph.h"
#include "app/gui/graph/GraphExport.h"
#include "app/gui/graph/GraphItems.h"
#include "app/gui/graph/GraphView.h"
#include "app/gui/graph/Minimap.h"
#include "core/ModelIO.h"
#include "passes/PassManager.h"

#include <gvc.h>

#include <QElapsedTimer>
#include <QGraphicsScene>
#include <QImage>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest/QtTest>

#include <filesystem>

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

/// Runs a pipeline on a copy of `g` and returns the final graph (nullptr on error).
std::shared_ptr<const Graph> runPipeline(const Graph& g, const std::string& pipeline) {
  auto steps = parsePipeline(pipeline);
  if (!steps)
    return nullptr;
  PipelineResult r = PassManager().run(g.clone(), *steps);
  if (r.error) {
    qWarning("%s: %s", pipeline.c_str(), r.error->message().c_str());
    return nullptr;
  }
  return r.snapshots.back().graph;
}

/// A transformer-like stack of exactly `target` nodes with ONNX-style scoped names
/// ("/layers.7/attn/MatMul"), 44 nodes per layer; like torch exports, every weight is read
/// through an unscoped "Identity_N" node. Types are set directly (no inference needed).
/// With scoped=false the names are flat ("MatMul_123"), as some exporters write them.
std::shared_ptr<const Graph> makeStack(int target, bool scoped = true) {
  auto g = std::make_shared<Graph>("stack");
  const TensorType act = TensorType::of(DType::F32, {1, 128, 64});
  const Tensor weight(DType::F32, {64, 64});
  Value* x = g->addInput("x", act);
  int counter = 0;
  auto op = [&](OpKind kind, std::vector<Value*> in, const QString& name) {
    const QString flat = QStringLiteral("%1_%2").arg(QString::fromLatin1(opName(kind))).arg(counter);
    Node* n = g->addNode(kind, in, 1, {}, (scoped ? name : flat).toStdString());
    n->output(0)->setType(act);
    ++counter;
    return n->output(0);
  };
  auto w = [&](const QString& name) { return g->addConstant(name.toStdString(), weight); };
  auto norm = [&](Value* in, const QString& s) {
    Value* mean = op(OpKind::ReduceMean, {in}, s + "/ReduceMean");
    Value* centred = op(OpKind::Sub, {in, mean}, s + "/Sub");
    Value* sq = op(OpKind::Mul, {centred, centred}, s + "/Mul");
    Value* var = op(OpKind::ReduceMean, {sq}, s + "/ReduceMean_1");
    Value* eps = op(OpKind::Add, {var, var}, s + "/Add");
    Value* sd = op(OpKind::Sqrt, {eps}, s + "/Sqrt");
    Value* nrm = op(OpKind::Div, {centred, sd}, s + "/Div");
    Value* scaled = op(OpKind::Mul, {nrm, w(s + ".weight")}, s + "/Mul_1");
    return op(OpKind::Add, {scaled, w(s + ".bias")}, s + "/Add_1");
  };
  auto linear = [&](Value* in, const QString& s) {
    Value* weight = op(OpKind::Identity, {w(s + ".weight")}, QStringLiteral("Identity_%1").arg(counter));
    Value* mm = op(OpKind::MatMul, {in, weight}, s + "/MatMul");
    return op(OpKind::Add, {mm, w(s + ".bias")}, s + "/Add");
  };
  for (int layer = 0; counter + 44 <= target; ++layer) {
    const QString l = QStringLiteral("/layers.%1").arg(layer);
    Value* h = norm(x, l + "/ln1");
    Value* q = linear(h, l + "/attn/q_proj");
    Value* k = linear(h, l + "/attn/k_proj");
    Value* v = linear(h, l + "/attn/v_proj");
    Value* kt = op(OpKind::Transpose, {k}, l + "/attn/Transpose");
    Value* s = op(OpKind::MatMul, {q, kt}, l + "/attn/MatMul");
    Value* sc = op(OpKind::Div, {s, s}, l + "/attn/Div");
    Value* p = op(OpKind::Softmax, {sc}, l + "/attn/Softmax");
    Value* a = op(OpKind::MatMul, {p, v}, l + "/attn/MatMul_1");
    Value* o = linear(a, l + "/attn/out_proj");
    Value* r1 = op(OpKind::Add, {x, o}, l + "/Add");
    Value* h2 = norm(r1, l + "/ln2");
    Value* f1 = linear(h2, l + "/mlp/fc1");
    Value* act1 = op(OpKind::Relu, {f1}, l + "/mlp/Relu");
    Value* f2 = linear(act1, l + "/mlp/fc2");
    x = op(OpKind::Add, {r1, f2}, l + "/Add_1");
  }
  while (counter < target)
    x = op(OpKind::Relu, {x}, QStringLiteral("/head/Relu_%1").arg(counter));
  g->addOutput(x);
  return g;
}

/// A DenseNet-like graph: `blocks` blocks of 12 layers, each layer a Concat of every earlier
/// output of its block and a Relu, scoped "/blockB/layerL/...".
std::shared_ptr<const Graph> makeDense(int blocks) {
  auto g = std::make_shared<Graph>("dense");
  const TensorType t = TensorType::of(DType::F32, {1, 8, 4, 4});
  Value* x = g->addInput("x", t);
  for (int b = 0; b < blocks; ++b) {
    std::vector<Value*> features{x};
    for (int l = 0; l < 12; ++l) {
      const std::string s = "/block" + std::to_string(b) + "/layer" + std::to_string(l);
      Node* cat = g->addNode(OpKind::Concat, features, 1, {}, s + "/Concat");
      Node* relu = g->addNode(OpKind::Relu, {cat->output(0)}, 1, {}, s + "/Relu");
      for (Node* n : {cat, relu})
        n->output(0)->setType(t);
      features.push_back(relu->output(0));
    }
    x = features.back();
  }
  g->addOutput(x);
  return g;
}

/// With FUSEBOX_GRAPHVIEW_PNG_DIR set, writes the view there as NAME.png (to look at by eye).
void maybeSnapshot(const GraphView& view, const QString& name) {
  const QString dir = qEnvironmentVariable("FUSEBOX_GRAPHVIEW_PNG_DIR");
  if (dir.isEmpty())
    return;
  QCOMPARE(view.exportTo(dir + "/" + name + ".png"), QString());
  QVERIFY(const_cast<GraphView&>(view).grab().save(dir + "/" + name + ".view.png"));
}

/// Waits for layoutFinished and returns its `ok`.
bool waitLayout(GraphView& view, int ms = 20000) {
  QSignalSpy spy(&view, &GraphView::layoutFinished);
  if (!view.isLayoutRunning())
    return false;
  if (!spy.wait(ms))
    return false;
  if (!spy.at(0).at(0).toBool())
    qWarning("layout failed: %s", qPrintable(spy.at(0).at(1).toString()));
  return spy.at(0).at(0).toBool();
}

NodeItem* itemFor(GraphView& view, NodeId id) {
  const QRectF rect = view.nodeSceneRect(id);
  for (QGraphicsItem* item : view.scene()->items())
    if (item->type() == NodeItemType) {
      auto* n = static_cast<NodeItem*>(item);
      if (n->box().translated(n->pos()) == rect)
        return n;
    }
  return nullptr;
}

std::vector<const Node*> topNodes(const Graph& g) {
  std::vector<const Node*> out;
  for (const auto& n : g.nodes())
    out.push_back(n.get());
  return out;
}

} // namespace

class TestGraphView : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void layoutEachSample_data() {
    QTest::addColumn<QString>("file");
    for (const auto& entry : std::filesystem::directory_iterator(FUSEBOX_SAMPLES_DIR)) {
      const auto ext = entry.path().extension();
      if (ext == ".onnx" || ext == ".fbir")
        QTest::newRow(entry.path().filename().c_str())
            << QString::fromStdString(entry.path().filename().string());
    }
  }

  /// Every node gets its own box, boxes do not overlap, and every dataflow edge points down.
  void layoutEachSample() {
    QFETCH(QString, file);
    auto g = loadSample(file.toStdString());
    QVERIFY(g);
    GraphView view;
    view.resize(900, 700);
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    QVERIFY(!view.isCollapsedView());
    QCOMPARE(view.visibleBoxCount(),
             int(g->numNodes() + g->inputs().size() + g->outputs().size()));
    std::vector<QRectF> boxes;
    for (const Node* n : topNodes(*g)) {
      const QRectF r = view.nodeSceneRect(n->id());
      QVERIFY2(!r.isEmpty(), n->describe().c_str());
      for (const QRectF& other : boxes)
        QVERIFY2(!r.intersects(other), n->describe().c_str());
      boxes.push_back(r);
    }
    for (const Node* n : topNodes(*g))
      for (const Value* v : n->inputs())
        if (v && v->producer())
          QVERIFY2(view.nodeSceneRect(v->producer()->id()).bottom() <
                       view.nodeSceneRect(n->id()).top(),
                   n->describe().c_str());
    // The display graph has one edge per producer/consumer pair of units.
    const DisplayGraph d = buildDisplayGraph(*g, GraphViewOptions(), ExpansionState());
    std::set<std::pair<int, int>> edges;
    for (const DisplayEdge& e : d.edges)
      edges.insert({e.from, e.to});
    for (const Node* n : topNodes(*g))
      for (const Value* v : n->inputs())
        if (v && v->producer())
          QVERIFY(edges.count({d.unitOfNode.value(v->producer()->id()), d.unitOfNode.value(n->id())}));
    QVERIFY(view.lastLayoutMilliseconds() > 0);
    maybeSnapshot(view, file);
  }

  /// Edge labels carry dtype and shape; constants appear only when asked for.
  void edgeLabelsAndConstants() {
    auto g = loadSample("resnet_block.fbir");
    QVERIFY(g);
    const DisplayGraph d = buildDisplayGraph(*g, GraphViewOptions(), ExpansionState());
    bool found = false;
    for (const DisplayEdge& e : d.edges)
      found = found || e.label == QStringLiteral("f32 [1,64,28,28]");
    QVERIFY(found);
    bool named = false; // an edge's tooltip names the value it carries
    for (const DisplayEdge& e : d.edges)
      named = named || e.tooltip == QStringLiteral("%/conv1/Conv_output_0 : f32 [1,64,28,28]");
    QVERIFY(named);
    GraphViewOptions withConstants;
    withConstants.showConstants = true;
    const DisplayGraph c = buildDisplayGraph(*g, withConstants, ExpansionState());
    QCOMPARE(c.units.size(), d.units.size() + g->constants().size());
    GraphView view;
    view.resize(900, 900);
    view.setGraph(g, withConstants);
    QVERIFY(waitLayout(view));
    QCOMPARE(view.visibleBoxCount(), int(c.units.size()));
    maybeSnapshot(view, "resnet_constants");
    const NodeId conv = g->nodes()[0]->id();
    QCOMPARE(d.units[size_t(d.unitOfNode.value(conv))].title, QStringLiteral("Conv"));
    QVERIFY(d.units[size_t(d.unitOfNode.value(conv))].details.join(" ").contains("3\u00d73"));
  }

  /// A fused node is one box until expanded; expanded, its body nodes are boxes in a cluster.
  void fusedGroupExpandsAndCollapses() {
    auto g0 = loadSample("resnet_block.fbir");
    QVERIFY(g0);
    auto g = runPipeline(*g0, "fold-batchnorm,fuse");
    QVERIFY(g);
    const Node* fused = nullptr;
    for (const Node* n : topNodes(*g))
      if (n->body() && n->body()->numNodes() > 1)
        fused = n;
    QVERIFY(fused);
    GraphView view;
    view.resize(900, 700);
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    const QRectF groupBox = view.nodeSceneRect(fused->id());
    QVERIFY(!groupBox.isEmpty());
    for (const auto& b : fused->body()->nodes())
      QCOMPARE(view.nodeSceneRect(b->id()), groupBox);

    view.setExpanded(fused->id(), true);
    QVERIFY(waitLayout(view));
    QRectF cluster;
    for (QGraphicsItem* item : view.scene()->items())
      if (item->type() == ClusterItemType)
        cluster = item->boundingRect();
    QVERIFY(!cluster.isEmpty());
    std::set<std::pair<qreal, qreal>> distinct;
    for (const auto& b : fused->body()->nodes()) {
      const QRectF r = view.nodeSceneRect(b->id());
      QVERIFY(cluster.contains(r));
      distinct.insert({r.x(), r.y()});
    }
    QCOMPARE(distinct.size(), fused->body()->numNodes());

    maybeSnapshot(view, "resnet_fused_expanded");
    view.setExpanded(fused->id(), false);
    QVERIFY(waitLayout(view));
    QCOMPARE(view.nodeSceneRect(fused->body()->nodes()[0]->id()),
             view.nodeSceneRect(fused->id()));
  }

  void marksAndHeat() {
    auto g = loadSample("small_cnn.fbir");
    QVERIFY(g);
    GraphView view;
    const NodeId a = g->nodes()[0]->id(), b = g->nodes()[1]->id();
    // Marks set before the layout finishes are applied to the new scene.
    view.setGraph(g);
    view.setMarks({{a, NodeMark::Added}, {b, NodeMark::Changed}});
    QVERIFY(waitLayout(view));
    QCOMPARE(view.marks().size(), size_t(2));
    maybeSnapshot(view, "small_cnn_marks");
    QCOMPARE(itemFor(view, a)->mark(), NodeMark::Added);
    QCOMPARE(itemFor(view, b)->mark(), NodeMark::Changed);
    QCOMPARE(itemFor(view, g->nodes()[2]->id())->mark(), NodeMark::None);
    view.setHeat({{b, 0.75}});
    QCOMPARE(itemFor(view, b)->heat().value_or(-1), 0.75);
    QVERIFY(!itemFor(view, a)->heat());
    view.setMarks({});
    QCOMPARE(itemFor(view, a)->mark(), NodeMark::None);
  }

  /// Search by op, name and value name, in topological order, with next/previous.
  void search() {
    auto g = loadSample("resnet_block.fbir");
    QVERIFY(g);
    GraphView view;
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    QSignalSpy selected(&view, &GraphView::nodeSelected);
    const std::vector<NodeId> convs = view.find(QStringLiteral("conv"));
    QCOMPARE(convs.size(), size_t(2)); // /conv1/Conv, /conv2/Conv
    QCOMPARE(g->findNode(convs[0])->name(), std::string("/conv1/Conv"));
    QCOMPARE(g->findNode(convs[1])->name(), std::string("/conv2/Conv"));
    QCOMPARE(view.selectedNode(), convs[0]);
    QVERIFY(itemFor(view, convs[0])->isSelected());
    QVERIFY(itemFor(view, convs[1])->isSearchHit());
    view.findNext();
    QCOMPARE(view.selectedNode(), convs[1]);
    view.findNext();
    QCOMPARE(view.selectedNode(), convs[0]);
    view.findPrevious();
    QCOMPARE(view.selectedNode(), convs[1]);
    QCOMPARE(selected.size(), 4);
    QCOMPARE(selected.last().at(0).value<fb::NodeId>(), convs[1]);
    // By value name.
    const std::vector<NodeId> out = view.find(QStringLiteral("relu1/Relu_output"));
    QCOMPARE(out.size(), size_t(1));
    QCOMPARE(g->findNode(out[0])->name(), std::string("/relu1/Relu"));
    QVERIFY(view.find(QStringLiteral("no-such-node")).empty());
    // By id.
    const NodeId relu2 = g->nodes()[6]->id();
    QCOMPARE(view.find(QStringLiteral("#%1").arg(relu2)), std::vector<NodeId>{relu2});
  }

  /// Progress runs 0 -> 100 within one layout; an empty graph clears the scene.
  void progressAndEmptyGraph() {
    auto g = loadSample("mlp.fbir");
    QVERIFY(g);
    GraphView view;
    QSignalSpy started(&view, &GraphView::layoutStarted);
    QSignalSpy progress(&view, &GraphView::layoutProgress);
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    QCOMPARE(started.size(), 1);
    QVERIFY(progress.size() >= 2);
    QCOMPARE(progress.first().at(0).toInt(), 0);
    QCOMPARE(progress.last().at(0).toInt(), 100);
    for (qsizetype i = 1; i < progress.size(); ++i)
      QVERIFY(progress.at(i).at(0).toInt() >= progress.at(i - 1).at(0).toInt());
    QVERIFY(view.visibleBoxCount() > 0);
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(nullptr);
    QVERIFY(finished.size() == 1 || finished.wait(5000));
    QCOMPARE(view.visibleBoxCount(), 0);
    QVERIFY(!view.graph());
    QVERIFY(!view.exportTo(QDir::tempPath() + "/none.png").isEmpty());
  }

  /// Double-clicking a collapsed block expands it; the minimap moves the view.
  void mouseExpandAndMinimap() {
    auto g = makeStack(2000);
    GraphView view;
    view.resize(1000, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    const Node* first = g->nodes()[0].get(); // inside block "layers.0"
    const QRectF block = view.nodeSceneRect(first->id());
    QVERIFY(!block.isEmpty());
    view.centerOn(block.center());
    QSignalSpy activated(&view, &GraphView::nodeActivated);
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, view.mapFromScene(block.center()));
    const int boxes = view.visibleBoxCount();
    QCOMPARE(activated.size(), 1);
    QVERIFY(finished.wait(10000));
    // One level opened: layers.0 is a cluster whose scopes (ln1, attn, ...) are blocks.
    QVERIFY(view.nodeSceneRect(first->id()) != block);
    QCOMPARE(itemFor(view, first->id())->kind(), UnitKind::Block);
    QVERIFY(view.visibleBoxCount() > boxes);
    int clusters = 0;
    for (QGraphicsItem* item : view.scene()->items())
      clusters += item->type() == ClusterItemType;
    QCOMPARE(clusters, 1);

    auto* map = view.findChild<Minimap*>();
    QVERIFY(map);
    QVERIFY(map->isVisible());
    const QPointF before = view.mapToScene(view.viewport()->rect().center());
    QTest::mouseClick(map, Qt::LeftButton, {}, QPoint(map->width() / 2, map->height() - 6));
    const QPointF after = view.mapToScene(view.viewport()->rect().center());
    QVERIFY2(after.y() > before.y() + 100, qPrintable(QString("%1 -> %2").arg(before.y()).arg(after.y())));
  }

  /// Down follows an edge to a consumer, Up to a producer, Left/Right pick among several.
  void keyboardNavigation() {
    auto g = loadSample("resnet_block.fbir");
    QVERIFY(g);
    GraphView view;
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    const NodeId conv1 = g->nodes()[0]->id(), bn1 = g->nodes()[1]->id(), relu1 = g->nodes()[2]->id();
    QSignalSpy selected(&view, &GraphView::nodeSelected);
    view.selectNode(conv1);
    QCOMPARE(selected.size(), 0); // programmatic selection emits nothing
    QTest::keyClick(&view, Qt::Key_Down);
    QCOMPARE(view.selectedNode(), bn1);
    QTest::keyClick(&view, Qt::Key_Down);
    QCOMPARE(view.selectedNode(), relu1);
    QTest::keyClick(&view, Qt::Key_Up);
    QCOMPARE(view.selectedNode(), bn1);
    QCOMPARE(selected.size(), 3);
    // The residual Add has two producers: Up reaches one, Right the other.
    const NodeId add = g->nodes()[5]->id();
    view.selectNode(add);
    QTest::keyClick(&view, Qt::Key_Up);
    const NodeId first = view.selectedNode();
    QTest::keyClick(&view, Qt::Key_Right);
    const NodeId second = view.selectedNode();
    QVERIFY(first != second);
    QVERIFY((first == g->nodes()[4]->id()) != (second == g->nodes()[4]->id())); // bn2 and input
  }

  void exportFormats() {
    auto g = loadSample("resnet_block.fbir");
    QVERIFY(g);
    GraphView view;
    QVERIFY(!view.exportTo(QDir::tempPath() + "/empty.svg").isEmpty()); // nothing shown yet
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString svg = dir.filePath("g.svg"), png = dir.filePath("g.png"), dot = dir.filePath("g.dot");
    QCOMPARE(view.exportTo(svg), QString());
    QSvgRenderer renderer(svg);
    QVERIFY(renderer.isValid());
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QByteArray svgText = svgFile.readAll();
    QVERIFY(svgText.contains("BatchNormalization"));
    QVERIFY(svgText.contains("f32 [1,64,28,28]"));

    QCOMPARE(view.exportTo(png), QString());
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 200 && image.height() > 400);
    // The Conv boxes' blue fill is in the picture.
    bool blue = false;
    for (int y = 0; y < image.height() && !blue; y += 2)
      for (int x = 0; x < image.width() && !blue; x += 2)
        blue = image.pixelColor(x, y) == QColor(0xB9, 0xD3, 0xF2);
    QVERIFY(blue);

    QCOMPARE(view.exportTo(dot), QString());
    QFile dotFile(dot);
    QVERIFY(dotFile.open(QIODevice::ReadOnly));
    QByteArray dotText = dotFile.readAll();
    Agraph_t* parsed = agmemread(dotText.constData());
    QVERIFY(parsed);
    QCOMPARE(agnnodes(parsed), view.visibleBoxCount());
    QCOMPARE(agnedges(parsed), int(g->numNodes() + 2)); // chain + residual + output
    agclose(parsed);

    QVERIFY(view.exportTo(dir.filePath("g.bmpx")).contains("unknown export format"));
  }

  /// After a pass step, nodes that were laid out before keep their positions.
  void positionsReusedAcrossSnapshots() {
    auto g0 = loadSample("resnet_block.fbir");
    QVERIFY(g0);
    auto g1 = runPipeline(*g0, "fold-batchnorm");
    QVERIFY(g1);
    QVERIFY(g1->numNodes() < g0->numNodes());
    GraphView view;
    view.resize(800, 600);
    view.setGraph(g0);
    QVERIFY(waitLayout(view));
    std::map<NodeId, QRectF> before;
    for (const Node* n : topNodes(*g0))
      before[n->id()] = view.nodeSceneRect(n->id());
    view.setGraph(g1);
    QVERIFY(waitLayout(view));
    int kept = 0;
    for (const Node* n : topNodes(*g1)) {
      const QRectF r = view.nodeSceneRect(n->id());
      QVERIFY(!r.isEmpty());
      if (auto it = before.find(n->id()); it != before.end()) {
        QCOMPARE(r.center(), it->second.center());
        ++kept;
      }
    }
    QVERIFY(kept >= int(g1->numNodes()) - 1);
    // A different model is laid out afresh (nothing to reuse): its boxes do not overlap.
    auto other = loadSample("transformer_block.fbir");
    QVERIFY(other);
    view.setGraph(other);
    QVERIFY(waitLayout(view));
    std::vector<QRectF> boxes;
    for (const Node* n : topNodes(*other)) {
      const QRectF r = view.nodeSceneRect(n->id());
      for (const QRectF& b : boxes)
        QVERIFY(!r.intersects(b));
      boxes.push_back(r);
    }
  }

  /// A newer setGraph drops the older layout; cancel keeps the previous scene.
  void staleAndCancelledLayouts() {
    auto small = loadSample("mlp.fbir");
    auto big = makeStack(1500);
    QVERIFY(small && big);
    GraphView view;
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(big);
    view.setGraph(small);
    QVERIFY(finished.wait(20000));
    QTest::qWait(300); // the big layout, if it were delivered, would arrive by now
    QCOMPARE(finished.size(), 1);
    QCOMPARE(view.visibleBoxCount(), int(small->numNodes() + small->inputs().size() + 1));

    finished.clear();
    view.setGraph(big);
    QVERIFY(view.isLayoutRunning());
    view.cancelLayout();
    QVERIFY(!view.isLayoutRunning());
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.at(0).at(0).toBool(), false);
    QTest::qWait(1500);
    QCOMPARE(finished.size(), 1);
    QCOMPARE(view.visibleBoxCount(), int(small->numNodes() + small->inputs().size() + 1));
  }

  /// The 5,000-node model: usable within 3 s, the event loop never blocked for long, blocks
  /// expand on demand and search reveals a hidden node.
  void largeGraphOpensFast() {
    auto g = makeStack(5000);
    QCOMPARE(int(g->numNodes()), 5000);
    GraphView view;
    view.resize(1000, 800);
    view.show();
    QElapsedTimer ping;
    qint64 maxStall = 0, last = 0;
    QTimer timer;
    timer.setInterval(5);
    connect(&timer, &QTimer::timeout, [&] {
      const qint64 now = ping.elapsed();
      maxStall = std::max(maxStall, now - last);
      last = now;
    });
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    ping.start();
    timer.start();
    view.setGraph(g);
    QVERIFY(finished.wait(10000));
    const qint64 total = ping.elapsed();
    QTest::qWait(50);
    timer.stop();
    qInfo("5,000 nodes: usable view after %lld ms, longest event-loop stall %lld ms, %d boxes",
          total, maxStall, view.visibleBoxCount());
    QVERIFY(finished.at(0).at(0).toBool());
    QVERIFY(view.isCollapsedView());
    // One box per layer: the weights' unscoped Identity nodes joined their layers.
    QVERIFY2(view.visibleBoxCount() < 120, qPrintable(QString::number(view.visibleBoxCount())));
    QVERIFY2(total < 3000, qPrintable(QString::number(total)));
    QVERIFY2(maxStall < 250, qPrintable(QString::number(maxStall)));
    // It opens as an overview of the whole model, not a zoomed corner.
    const QRectF visible = view.mapToScene(view.viewport()->rect()).boundingRect();
    QVERIFY2(visible.adjusted(-2, -2, 2, 2).contains(view.scene()->sceneRect()),
             qPrintable(QStringLiteral("visible %1x%2 of %3x%4")
                            .arg(visible.width())
                            .arg(visible.height())
                            .arg(view.scene()->sceneRect().width())
                            .arg(view.scene()->sceneRect().height())));
    maybeSnapshot(view, "stack5000");

    // A node deep in layer 7 is inside the collapsed block "layers.7"; expanding reveals it.
    const Node* deep = nullptr;
    for (const Node* n : topNodes(*g))
      if (n->name() == "/layers.7/attn/Softmax")
        deep = n;
    QVERIFY(deep);
    const QRectF block = view.nodeSceneRect(deep->id());
    const Node* sibling = nullptr;
    for (const Node* n : topNodes(*g))
      if (n->name() == "/layers.7/mlp/Relu")
        sibling = n;
    QCOMPARE(view.nodeSceneRect(sibling->id()), block);
    const std::vector<NodeId> hits = view.find(QStringLiteral("layers.7/attn/Softmax"));
    QCOMPARE(hits.size(), size_t(1));
    QVERIFY(waitLayout(view));
    QCOMPARE(view.selectedNode(), deep->id());
    QVERIFY(itemFor(view, deep->id())->kind() == UnitKind::Op);
    QVERIFY(view.nodeSceneRect(deep->id()) != view.nodeSceneRect(sibling->id()));
    QVERIFY(view.visibleBoxCount() < 250);
    maybeSnapshot(view, "stack5000_layer7");
    // Collapsing the block of the selected node sticks, though a coordinator re-selects it.
    connect(&view, &GraphView::layoutFinished, &view, [&view, id = deep->id()] { view.selectNode(id); });
    view.setExpanded(deep->id(), false); // closes the innermost block: layers.7/attn
    QVERIFY(waitLayout(view));
    view.setExpanded(deep->id(), false); // and layers.7
    QVERIFY(waitLayout(view));
    QVERIFY(!view.isLayoutRunning());
    QCOMPARE(view.nodeSceneRect(deep->id()), view.nodeSceneRect(sibling->id()));
    QCOMPARE(view.selectedNode(), deep->id());
  }

  /// A manual check on a real model: FUSEBOX_GRAPHVIEW_MODEL=path.onnx lays it out, steps the
  /// teacher's pipeline one pass at a time (positions reused) and prints the timings; with
  /// FUSEBOX_GRAPHVIEW_PNG_DIR set it also writes a picture per step, and with
  /// FUSEBOX_GRAPHVIEW_DOT_DIR the DOT of each step's display graph (to time `dot` by hand).
  void modelFromEnvironment() {
    const QString path = qEnvironmentVariable("FUSEBOX_GRAPHVIEW_MODEL");
    if (path.isEmpty())
      QSKIP("set FUSEBOX_GRAPHVIEW_MODEL to a model file");
    auto loaded = loadModel(path.toStdString());
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message().c_str());
    std::shared_ptr<const Graph> g(std::move(*loaded));
    GraphView view;
    view.resize(1280, 900);
    view.show();
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    qInfo("%s: %zu nodes, %d boxes, %.0f ms", qPrintable(path), g->numNodes(),
          view.visibleBoxCount(), view.lastLayoutMilliseconds());
    maybeSnapshot(view, "model_0");
    int step = 0;
    for (const char* pass : {"canonicalize", "fold-constants", "fold-batchnorm", "fuse"}) {
      auto next = runPipeline(*g, pass);
      QVERIFY(next);
      g = next;
      const DisplayGraph d = buildDisplayGraph(*g, GraphViewOptions(), ExpansionState());
      qInfo("%s: %zu units, %zu edges", pass, d.units.size(), d.edges.size());
      if (const QString dump = qEnvironmentVariable("FUSEBOX_GRAPHVIEW_DOT_DIR"); !dump.isEmpty()) {
        QFile f(dump + "/" + pass + ".dot");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(displayGraphToDot(d, "g").toUtf8());
      }
      view.setGraph(g);
      QVERIFY(waitLayout(view, 120000));
      qInfo("after %s: %zu nodes, %d boxes, %.0f ms", pass, g->numNodes(), view.visibleBoxCount(),
            view.lastLayoutMilliseconds());
      maybeSnapshot(view, QStringLiteral("model_%1_%2").arg(++step).arg(pass));
    }
  }

  /// Without name scopes a large graph is cut into chunks in execution order, which still open
  /// fast and expand on demand.
  void largeGraphWithoutScopes() {
    auto g = makeStack(5000, /*scoped=*/false);
    GraphView view;
    view.resize(1000, 800);
    QElapsedTimer t;
    t.start();
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    qInfo("5,000 nodes without scopes: %d boxes, %lld ms", view.visibleBoxCount(), t.elapsed());
    QVERIFY(t.elapsed() < 3000);
    QVERIFY(view.isCollapsedView());
    QVERIFY(view.visibleBoxCount() <= GraphViewOptions().collapseThreshold);
    const NodeId middle = g->nodes()[2500]->id();
    const QRectF chunk = view.nodeSceneRect(middle);
    QCOMPARE(view.nodeSceneRect(g->nodes()[2501]->id()), chunk);
    view.setExpanded(middle, true);
    QVERIFY(waitLayout(view));
    QVERIFY(view.nodeSceneRect(middle) != view.nodeSceneRect(g->nodes()[2501]->id()));
    // Every node is still shown by exactly one box: the edges of the chain stay connected.
    const DisplayGraph d = buildDisplayGraph(*g, GraphViewOptions(), ExpansionState());
    QCOMPARE(d.unitOfNode.size(), qsizetype(g->numNodes()));
  }

  /// A branchy 5,000-node DAG without names (every node reads two earlier values from up to
  /// 200 nodes back) still opens within the budget: chunk-to-chunk edges stay few.
  void largeRandomDag() {
    auto g = std::make_shared<Graph>("dag");
    const TensorType t = TensorType::of(DType::F32, {1, 8});
    std::vector<Value*> values{g->addInput("x", t)};
    uint32_t state = 12345;
    auto next = [&state](size_t n) {
      state = state * 1664525u + 1013904223u;
      return size_t(state >> 8) % n;
    };
    for (int i = 0; i < 5000; ++i) {
      const size_t window = std::min<size_t>(values.size(), 200);
      Value* a = values[values.size() - 1 - next(window)];
      Value* b = values[values.size() - 1 - next(window)];
      Node* n = g->addNode(OpKind::Add, {a, b}, 1);
      n->output(0)->setType(t);
      values.push_back(n->output(0));
    }
    g->addOutput(values.back());
    GraphView view;
    view.resize(1000, 800);
    QElapsedTimer timer;
    timer.start();
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    qInfo("random 5,000-node DAG: %d boxes, %lld ms", view.visibleBoxCount(), timer.elapsed());
    QVERIFY(timer.elapsed() < 3000);
  }

  /// A DenseNet-like graph under the node threshold whose concatenations span many ranks is
  /// still shown as blocks: dot on it would take far too long (DenseNet-121 took minutes).
  void denseConnectivityCollapses() {
    auto g = makeDense(12);
    QVERIFY(int(g->numNodes()) < GraphViewOptions().collapseThreshold);
    const DisplayGraph full = buildDisplayGraph(*g, GraphViewOptions(), ExpansionState());
    QVERIFY(full.collapsed);
    GraphView view;
    QElapsedTimer timer;
    timer.start();
    view.setGraph(g);
    QVERIFY(waitLayout(view));
    QVERIFY(view.isCollapsedView());
    QVERIFY(timer.elapsed() < 3000);
    // One block opened (12 layers of 2 nodes): still fast.
    timer.restart();
    view.setExpanded(g->nodes()[0]->id(), true);
    QVERIFY(waitLayout(view));
    qInfo("dense graph: %zu nodes as blocks; one block expanded in %lld ms", g->numNodes(),
          timer.elapsed());
    QVERIFY(timer.elapsed() < 3000);

    // Fewer blocks: laid out in full, with dot's iterations limited (cost above the fast mark).
    auto smaller = makeDense(5);
    const DisplayGraph d = buildDisplayGraph(*smaller, GraphViewOptions(), ExpansionState());
    QVERIFY(!d.collapsed);
    QVERIFY(layoutCost(d) > kFastLayoutCost);
    timer.restart();
    view.setGraph(smaller);
    QVERIFY(waitLayout(view));
    qInfo("dense graph: %zu nodes laid out in full (fast mode) in %lld ms", smaller->numNodes(),
          timer.elapsed());
    QVERIFY(!view.isCollapsedView());
    QVERIFY(timer.elapsed() < 3000);
    maybeSnapshot(view, "dense_fast");
  }

  /// The README figures: time to a usable view for generated models of 500, 2,000 and 5,000
  /// nodes (set FUSEBOX_BENCH_FULL_DOT to also time plain dot on every node for comparison).
  void layoutTimings() {
    for (int n : {500, 2000, 5000}) {
      auto g = makeStack(n);
      GraphView view;
      view.resize(1000, 800);
      QElapsedTimer t;
      t.start();
      view.setGraph(g);
      QVERIFY(waitLayout(view));
      qInfo("layout timing: %d nodes -> %d boxes, %lld ms to a usable view", n,
            view.visibleBoxCount(), t.elapsed());
      // FUSEBOX_BENCH_FULL_DOT=1: up to 2,000 nodes; =2: 5,000 too (about half a minute).
      const int full = qEnvironmentVariableIntValue("FUSEBOX_BENCH_FULL_DOT");
      if (full >= 2 || (full == 1 && n <= 2000)) {
        GraphViewOptions all;
        all.collapseThreshold = 1 << 30;
        t.restart();
        view.setGraph(g, all);
        QVERIFY(waitLayout(view, 600000));
        qInfo("layout timing: %d nodes, every node laid out by dot: %lld ms", n, t.elapsed());
      }
    }
  }
};

QTEST_MAIN(TestGraphView)
#include "TestGraphView.moc"
