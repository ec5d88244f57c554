// Headless tests of the memory plan, run and profile docks on real samples: what each view
// shows equals the workbench's numbers (plan totals and buffers, comparison metrics, per-kernel
// times of the same profile), clicks and hovers select and explain, item models pass
// QAbstractItemModelTester, jobs are cancellable and stale results are dropped, and the event
// loop never stalls for more than a quarter second.
#include "app/gui/Coordinator.h"
#include "app/gui/DockManager.h"
#include "app/gui/MainWindow.h"
#include "app/gui/MemoryPlanner.h"
#include "app/gui/MemoryView.h"
#include "app/gui/ProfileController.h"
#include "app/gui/ProfileModels.h"
#include "app/gui/ProfileView.h"
#include "app/gui/RectChart.h"
#include "app/gui/RooflineChart.h"
#include "app/gui/RunController.h"
#include "app/gui/RunOutputsModel.h"
#include "app/gui/RunPanel.h"
#include "app/gui/RunProfileDocks.h"
#include "app/gui/graph/GraphView.h"
#include "app/workbench/Compare.h"
#include "app/workbench/Inputs.h"
#include "app/workbench/MemoryPlanReport.h"
#include "core/Format.h"
#include "core/Npy.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QtTest/QtTest>

#include <cmath>
#include <memory>

using namespace fb;
using namespace fb::gui;

namespace {

QString sample(const char* name) { return QStringLiteral(FUSEBOX_SAMPLES_DIR "/") + name; }

/// A window on `name` after `pipeline`, with the current snapshot the last one.
std::unique_ptr<MainWindow> windowAfter(const char* name, const char* pipeline) {
  auto w = std::make_unique<MainWindow>(/*persistent=*/false);
  if (!w->openFile(sample(name)) || !w->coordinator()->setPipeline(pipeline) ||
      !w->runPipelineBlocking())
    return nullptr;
  return w;
}

/// Floats dock `id` at a size where its charts have room, so clicks land where they are drawn.
void showDock(MainWindow& w, const char* id) {
  QDockWidget* dock = w.docks()->dock(QString::fromLatin1(id));
  dock->show();
  dock->setFloating(true);
  dock->resize(1300, 760);
  dock->raise();
  QApplication::processEvents();
}

/// Plans the current snapshot and waits for the view to show it.
bool planAndWait(RunProfileDocks* d) {
  QSignalSpy planned(d->planner(), &MemoryPlanner::planned);
  d->refreshMemory();
  return planned.wait(60000);
}

/// Profiles the current snapshot and waits.
bool profileAndWait(RunProfileDocks* d) {
  QSignalSpy done(d->profiles(), &ProfileController::finished);
  d->profile();
  return done.wait(300000);
}

bool runAndWait(RunProfileDocks* d) {
  QSignalSpy done(d->runs(), &RunController::finished);
  d->run();
  return done.wait(300000);
}

} // namespace

class TestRunProfile : public QObject {
  Q_OBJECT
  QTemporaryDir m_cache;

private Q_SLOTS:
  void initTestCase() {
    // The machine's peaks and compiled kernels are cached under here, not in the user's cache.
    qputenv("XDG_CACHE_HOME", m_cache.path().toLocal8Bit());
  }

  /// One rectangle per planned buffer at its steps and offsets, the plan's totals in words, a
  /// tooltip naming value, size, producer and consumers; a click selects the producer.
  void memoryViewShowsThePlan() {
    auto w = windowAfter("transformer_block.onnx", "O3");
    QVERIFY(w);
    w->show();
    showDock(*w, "memory");
    RunProfileDocks* d = w->runProfile();
    QVERIFY(planAndWait(d));
    const auto& session = w->coordinator()->session();
    const workbench::MemoryPlanReport r = workbench::describeMemoryPlan(session.current());
    QVERIFY(r.error.empty());
    MemoryView* v = d->memoryView();
    RectChart* chart = v->chart();
    QCOMPARE(chart->rects().size(), r.buffers.size());
    QVERIFY(!v->compareChart()->isVisible());
    // Geometry: x = steps [first, last + 1), y = [offset, offset + size) in one unit; an
    // in-place pair splits the step they share.
    const double unit = double(r.buffers.front().buffer.size) / chart->rects().front().rect.height();
    int handovers = 0;
    for (size_t i = 0; i < r.buffers.size(); ++i) {
      const BufferAssignment& b = r.buffers[i].buffer;
      const QRectF& rect = chart->rects()[i].rect;
      bool overwritten = false;
      for (const auto& other : r.buffers)
        overwritten = overwritten || other.buffer.reuses == b.value;
      handovers += overwritten;
      QCOMPARE(rect.left(), b.first + (b.reuses.empty() ? 0.0 : 0.5));
      QCOMPARE(rect.right(), b.last + (overwritten ? 0.5 : 1.0));
      QVERIFY(std::abs(rect.y() * unit - double(b.offset)) < 1e-6 * double(r.plan.arenaBytes));
      QVERIFY(std::abs(rect.height() * unit - double(b.size)) < 1e-6 * double(r.plan.arenaBytes));
      QCOMPARE(chart->rects()[i].key, quint64(r.buffers[i].producer.id));
    }
    // Totals: the plan's, formatted.
    const QString totals = v->totalsText();
    auto bytes = [](int64_t b) {
      return QString::fromStdString(formatBytes(double(b), Digits::significantDigits(3)));
    };
    QVERIFY2(totals.contains(QStringLiteral("arena ") + bytes(r.plan.arenaBytes)), qPrintable(totals));
    QVERIFY(totals.contains(QStringLiteral("naive ") + bytes(r.plan.naiveBytes)));
    QVERIFY(totals.contains(QStringLiteral("lower bound ") + bytes(r.plan.lowerBoundBytes)));
    QVERIFY(totals.contains(QStringLiteral("efficiency %1 %").arg(100 * r.plan.efficiency(), 0, 'f', 1)));
    QVERIFY(totals.contains(QStringLiteral("%1 buffer").arg(r.plan.buffers.size())));
    QCOMPARE(handovers, r.plan.inPlaceReuses);

    // Hover the largest buffer: its tooltip names value, producer and readers.
    size_t big = 0;
    for (size_t i = 0; i < r.buffers.size(); ++i)
      if (r.buffers[i].buffer.size > r.buffers[big].buffer.size)
        big = i;
    QApplication::processEvents();
    const QPoint at = chart->widgetPosOf(int(big));
    QCOMPARE(chart->rectAt(at), int(big));
    QTest::mouseMove(chart->viewport(), at);
    QTRY_VERIFY(chart->lastTooltip().contains(QString::fromStdString(r.buffers[big].buffer.value)));
    QVERIFY(chart->lastTooltip().contains(QStringLiteral("produced by #%1").arg(r.buffers[big].producer.id)));
    if (!r.buffers[big].consumers.empty())
      QVERIFY(chart->lastTooltip().contains(QStringLiteral("read by #%1").arg(r.buffers[big].consumers.front().id)));
    // Click it: its producer is selected everywhere, and its buffers are outlined.
    QSignalSpy selected(w->coordinator(), &Coordinator::selectionChanged);
    QTest::mouseClick(chart->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(w->coordinator()->selectedNode(), r.buffers[big].producer.id);
    QVERIFY(!selected.isEmpty());
    QVERIFY(chart->highlighted().count(int(big)));
    for (int i : chart->highlighted()) {
      const auto& b = r.buffers[size_t(i)];
      bool touches = b.producer.id == r.buffers[big].producer.id;
      for (const auto& c : b.consumers)
        touches = touches || c.id == r.buffers[big].producer.id;
      QVERIFY(touches);
    }
  }

  /// Comparing with the imported model shows both plans on one offset scale, says how the arena
  /// changed, and outlines what the selected node was made from in the other plan.
  void memoryViewComparesTwoSnapshots() {
    auto w = windowAfter("resnet_block.onnx", "O3");
    QVERIFY(w);
    w->show();
    showDock(*w, "memory");
    RunProfileDocks* d = w->runProfile();
    MemoryView* v = d->memoryView();
    QSignalSpy planned(d->planner(), &MemoryPlanner::planned);
    v->setCompareIndex(0); // asks for a new plan
    QVERIFY(planned.wait(60000));
    QVERIFY(v->compareChart()->isVisibleTo(v));
    const auto& s = w->coordinator()->session();
    const auto before = workbench::describeMemoryPlan(s.snapshot(0));
    const auto after = workbench::describeMemoryPlan(s.current());
    QCOMPARE(v->compareChart()->rects().size(), before.buffers.size());
    QCOMPARE(v->chart()->rects().size(), after.buffers.size());
    QCOMPARE(v->compareChart()->axisY()->max(), v->chart()->axisY()->max());
    int halfSteps = 0; // in-place results start half a step late
    for (const ChartRect& c : v->compareChart()->rects())
      halfSteps += c.rect.left() != std::floor(c.rect.left());
    QVERIFY(before.plan.inPlaceReuses > 0);
    QCOMPARE(halfSteps, before.plan.inPlaceReuses);
    QVERIFY(v->totalsText().contains(QStringLiteral("Snapshot 0: ")));
    QVERIFY(v->totalsText().contains(after.plan.arenaBytes < before.plan.arenaBytes    ? "smaller"
                                     : after.plan.arenaBytes == before.plan.arenaBytes ? "same size"
                                                                                       : "larger"));
    // Select a fused group of the current snapshot: the buffers of its former ops light up in
    // the imported model's plan.
    NodeId group = 0;
    for (const auto& n : s.current().graph->nodes())
      if (n->body() && !n->outputs().front()->isGraphOutput()) {
        group = n->id();
        break;
      }
    QVERIFY(group);
    w->coordinator()->selectNode(group);
    QVERIFY(!v->chart()->highlighted().empty());
    QVERIFY(!v->compareChart()->highlighted().empty());
    // A click in the imported model's plan selects what its producer became.
    const int first = *v->compareChart()->highlighted().begin();
    const NodeId producer = NodeId(v->compareChart()->rects()[size_t(first)].key);
    const auto mapped = workbench::correspondingNodes(*s.graph(0), producer, *s.current().graph);
    QVERIFY(!mapped.empty());
    w->coordinator()->selectNode(0);
    QApplication::processEvents();
    QTest::mouseClick(v->compareChart()->viewport(), Qt::LeftButton, {},
                      v->compareChart()->widgetPosOf(first));
    QCOMPARE(w->coordinator()->selectedNode(), mapped.front());
  }

  /// A model without a plan (symbolic shapes) says why instead of drawing.
  void memoryViewSaysWhyThereIsNoPlan() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("dynamic_batch.onnx")));
    QVERIFY(planAndWait(w.runProfile()));
    QVERIFY(w.runProfile()->memoryView()->chart()->rects().empty());
    QVERIFY2(w.runProfile()->memoryView()->totalsText().contains("no plan"),
             qPrintable(w.runProfile()->memoryView()->totalsText()));
  }

  /// Axes follow each plan's scale: every plan gets about ten ticks, never the old interval over
  /// the new range (Qt Charts would lay out billions of labels and run out of memory).
  void memoryViewAxesFollowEachPlan() {
    MainWindow w(/*persistent=*/false);
    w.show();
    showDock(w, "memory");
    RectChart* chart = w.runProfile()->memoryView()->chart();
    // dynamic_batch has no plan (symbolic shapes): its empty chart must not leave a tiny
    // interval behind for the next model.
    for (const char* name : {"mlp.onnx", "mobilenet_v2_block.onnx", "dynamic_batch.onnx", "small_cnn.onnx"}) {
      QVERIFY(w.openFile(sample(name)));
      QVERIFY(planAndWait(w.runProfile()));
      QCOMPARE(chart->rects().empty(), QByteArray(name) == "dynamic_batch.onnx");
      for (QValueAxis* axis : {chart->axisX(), chart->axisY()}) {
        const double ticks = (axis->max() - axis->min()) / axis->tickInterval();
        QVERIFY2(ticks >= 1 && ticks <= 20, qPrintable(QStringLiteral("%1: %2 ticks").arg(name).arg(ticks)));
      }
    }
  }

  /// The GPU is offered disabled with the facade's reason; a run shows every output with its
  /// shape and first values and the comparison the workbench computes; files replace random
  /// inputs; a bad file or tolerance is an error in words.
  void runPanelRunsAndCompares() {
    auto w = windowAfter("resnet_block.onnx", "O3");
    QVERIFY(w);
    RunProfileDocks* d = w->runProfile();
    RunPanel* p = d->runPanel();
    QAbstractItemModelTester tester(p->outputsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    Status gpu = workbench::backendAvailable(workbench::Backend::Gpu);
    auto* items = qobject_cast<QStandardItemModel*>(p->backendBox()->model());
    const int gpuRow = p->backendBox()->findData(QStringLiteral("gpu"));
    QVERIFY(gpuRow >= 0);
    QCOMPARE(items->item(gpuRow)->isEnabled(), gpu.ok());
    if (!gpu.ok()) {
      QCOMPARE(items->item(gpuRow)->toolTip(), QString::fromStdString(gpu.error().message()));
      QVERIFY(p->backendNote()->text().contains(QString::fromStdString(gpu.error().message())));
      QVERIFY(!p->setBackend(QStringLiteral("gpu")));
    }

    // The interpreter is deterministic: the panel's metrics equal the facade's exactly.
    const auto& s = w->coordinator()->session();
    const Graph& g = *s.current().graph;
    QVERIFY(p->setBackend(QStringLiteral("interp")));
    QVERIFY(runAndWait(d));
    const RunOutcome& out = d->runs()->lastOutcome();
    QVERIFY2(out.run && out.comparison, qPrintable(out.error));
    auto inputs = workbench::gatherInputs(g, {}, 1, {});
    QVERIFY(inputs.ok());
    workbench::RunSettings interp;
    auto ran = workbench::runGraph(g, *inputs, interp);
    QVERIFY(ran.ok());
    auto cmp = workbench::compareWithReference(*s.graph(0), g, *inputs, ran->outputs, std::nullopt);
    QVERIFY(cmp.ok());
    RunOutputsModel* m = p->outputsModel();
    QCOMPARE(m->rowCount(), int(g.outputs().size()));
    for (int row = 0; row < m->rowCount(); ++row) {
      const TensorComparison& c = cmp->outputs[size_t(row)].result;
      QCOMPARE(m->index(row, RunOutputsModel::MaxAbs).data(Qt::UserRole).toDouble(), c.maxAbs);
      QCOMPARE(m->index(row, RunOutputsModel::MaxRel).data(Qt::UserRole).toDouble(), c.maxRel);
      QCOMPARE(m->index(row, RunOutputsModel::Cosine).data(Qt::UserRole).toDouble(), c.cosine);
      QCOMPARE(m->index(row, RunOutputsModel::Result).data().toString(), c.ok ? QString("pass") : QString("FAIL"));
      QCOMPARE(m->index(row, RunOutputsModel::Name).data().toString(), QString::fromStdString(g.outputs()[size_t(row)]->name()));
      QCOMPARE(m->index(row, RunOutputsModel::Type).data().toString(),
               QString::fromStdString(ran->outputs[size_t(row)].type().str()));
      QVERIFY(m->index(row, RunOutputsModel::Values).data().toString().startsWith(
          QStringLiteral("[%1").arg(ran->outputs[size_t(row)].getAsDouble(0), 0, 'g', 4)));
    }
    QVERIFY(p->summaryText().contains("agree"));

    // The CPU: compiled, compared, passing at the default tolerance.
    QVERIFY(p->setBackend(QStringLiteral("cpu")));
    QVERIFY(runAndWait(d));
    const RunOutcome& cpu = d->runs()->lastOutcome();
    QVERIFY2(cpu.run && cpu.comparison && cpu.comparison->ok, qPrintable(p->summaryText()));
    QVERIFY(cpu.run->compileStats.has_value());
    for (int row = 0; row < m->rowCount(); ++row)
      QCOMPARE(m->index(row, RunOutputsModel::MaxAbs).data(Qt::UserRole).toDouble(),
               cpu.comparison->outputs[size_t(row)].result.maxAbs);
    QVERIFY(p->summaryText().contains("compiled"));

    // A file with seed 1's tensor gives the same outputs as seed 1 itself.
    QTemporaryDir dir;
    const QString file = dir.filePath("input0.npy");
    QVERIFY(writeNpy(file.toStdString(), (*inputs)[0]).ok());
    QVERIFY(p->setBackend(QStringLiteral("interp")));
    p->setInputFile(0, file);
    QVERIFY(runAndWait(d));
    QVERIFY(d->runs()->lastOutcome().comparison);
    QCOMPARE(m->index(0, RunOutputsModel::MaxAbs).data(Qt::UserRole).toDouble(),
             cmp->outputs[0].result.maxAbs);
    // A file of the wrong shape fails in words, naming it.
    const QString wrong = dir.filePath("wrong.npy");
    QVERIFY(writeNpy(wrong.toStdString(), Tensor::fromVector<float>({3}, {1, 2, 3})).ok());
    p->setInputFile(0, wrong);
    QVERIFY(runAndWait(d));
    QVERIFY(!d->runs()->lastOutcome().run);
    QVERIFY2(p->summaryText().contains("wrong.npy"), qPrintable(p->summaryText()));
    p->setInputFile(0, {});
    // A tolerance that does not parse is refused before anything runs.
    p->findChild<QLineEdit*>("runTolerance")->setText("1e-4,abc");
    QSignalSpy started(d->runs(), &RunController::started);
    d->run();
    QVERIFY(started.isEmpty());
    QVERIFY2(p->summaryText().contains("tolerance"), qPrintable(p->summaryText()));
    // A tolerance of zero fails the CPU's rounding.
    p->findChild<QLineEdit*>("runTolerance")->setText("0,0");
    QVERIFY(p->setBackend(QStringLiteral("cpu")));
    QVERIFY(runAndWait(d));
    const RunOutcome& strict = d->runs()->lastOutcome();
    QVERIFY(strict.comparison && strict.tolerance && strict.tolerance->atol == 0);
    if (strict.comparison->outputs[0].result.maxAbs > 0) {
      QVERIFY(!strict.comparison->ok);
      QCOMPARE(m->index(0, RunOutputsModel::Result).data().toString(), QString("FAIL"));
    }
  }

  /// The table is the profile's numbers (the same profile result), sortable and filterable;
  /// the timeline has one box per kernel of one run; the roofline places each kernel under the
  /// measured roofs and says where they come from; the savings rows account for both profiles;
  /// the Chrome trace exports; the graph colours by time share; selection goes both ways.
  void profileViewShowsTheProfile() {
    auto w = windowAfter("resnet_block.onnx", "O3");
    QVERIFY(w);
    w->show();
    RunProfileDocks* d = w->runProfile();
    ProfileView* v = d->profileView();
    QAbstractItemModelTester t1(v->kernelModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(v->kernelProxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(v->compareModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    v->setCompareIndex(0);
    QVERIFY(profileAndWait(d));
    const ProfileOutcome& o = v->outcome();
    QVERIFY2(o.main && o.before && o.comparison, qPrintable(o.error));
    const workbench::ProfileSummary s = workbench::summarizeProfile(*o.main->profile);
    KernelProfileModel* m = v->kernelModel();
    QCOMPARE(m->rowCount(), int(s.kernels.size()));
    double percent = 0;
    for (int k = 0; k < m->rowCount(); ++k) {
      QCOMPARE(m->index(k, KernelProfileModel::TimeMs).data(Qt::UserRole).toDouble(), s.kernels[size_t(k)].medianUs / 1000.0);
      QCOMPARE(m->index(k, KernelProfileModel::TimeMs).data().toString(),
               QString::number(s.kernels[size_t(k)].medianUs / 1000.0, 'f', 4));
      // The mean is the profiler's own, as fusebox-opt --profile prints it.
      QCOMPARE(m->index(k, KernelProfileModel::MeanMs).data(Qt::UserRole).toDouble(), o.main->profile->meanUs(k) / 1000.0);
      QCOMPARE(m->index(k, KernelProfileModel::GFlops).data(Qt::UserRole).toDouble(), s.kernels[size_t(k)].gflops);
      QCOMPARE(m->index(k, KernelProfileModel::GBps).data(Qt::UserRole).toDouble(), s.kernels[size_t(k)].gbps);
      QCOMPARE(m->index(k, KernelProfileModel::Kernel).data().toString(), QString::fromStdString(s.kernels[size_t(k)].name));
      QCOMPARE(m->index(k, KernelProfileModel::Nodes).data(Qt::UserRole).toInt(), int(s.kernels[size_t(k)].nodes.size()));
      percent += m->index(k, KernelProfileModel::Percent).data(Qt::UserRole).toDouble();
    }
    QVERIFY(std::abs(percent - 100) < 1e-6);
    QCOMPARE(s.runs, v->runs());
    // Sorted by time, slowest first; the filter keeps matching kernels only.
    QSortFilterProxyModel* proxy = v->kernelProxy();
    for (int row = 1; row < proxy->rowCount(); ++row)
      QVERIFY(proxy->index(row - 1, KernelProfileModel::TimeMs).data(Qt::UserRole).toDouble() >=
              proxy->index(row, KernelProfileModel::TimeMs).data(Qt::UserRole).toDouble());
    QVERIFY(m->rowCount() > 1);
    proxy->setFilterFixedString(QString::fromStdString(s.kernels.back().name));
    QCOMPARE(proxy->rowCount(), 1);
    QCOMPARE(proxy->index(0, KernelProfileModel::Kernel).data().toString(),
             QString::fromStdString(s.kernels.back().name));
    proxy->setFilterFixedString({});

    // Timeline: one box per kernel in the median run.
    QCOMPARE(v->timeline()->rects().size(), s.kernels.size());
    // Roofline: every kernel with FLOPs and bytes is placed; the roofs are the measured peaks.
    RooflineChart* roof = v->roofline();
    QVERIFY2(o.peaks, qPrintable(o.peaksError));
    QCOMPARE(int(roof->plottedKernels().size()) + roof->omittedKernels(), int(s.kernels.size()));
    QVERIFY(roof->plottedKernels().size() >= s.kernels.size() / 2);
    const double ridge = o.peaks->gflops / o.peaks->gbps;
    QCOMPARE(roof->roofAt(ridge * 10), o.peaks->gflops);
    QVERIFY(std::abs(roof->roofAt(ridge / 10) - o.peaks->gbps * ridge / 10) < 1e-9 * o.peaks->gflops);
    QVERIFY2(roof->roofNote().contains("measured") && roof->roofNote().contains("machine-peaks.txt"),
             qPrintable(roof->roofNote()));
    QCOMPARE(o.peaks->threads, s.threads);
    {
      // Measuring again replaces the roofs and keeps the profile.
      QSignalSpy again(d->profiles(), &ProfileController::finished);
      const auto kernels = o.main->profile;
      Q_EMIT v->remeasureRequested();
      QVERIFY(again.wait(60000));
      QVERIFY(v->outcome().peaks && !v->outcome().peaks->fromCache);
      QCOMPARE(v->outcome().main->profile, kernels);
      QVERIFY(v->roofline()->roofNote().contains("cached in"));
    }

    // Savings: every kernel of both profiles is in one row; totals add up.
    ProfileCompareModel* c = v->compareModel();
    double before = 0, after = 0;
    for (int row = 0; row < c->rowCount(); ++row) {
      before += c->index(row, ProfileCompareModel::BeforeMs).data(Qt::UserRole).toDouble();
      after += c->index(row, ProfileCompareModel::AfterMs).data(Qt::UserRole).toDouble();
    }
    QVERIFY(std::abs(before - o.before->summary.totalUs / 1000.0) < 1e-9);
    QVERIFY(std::abs(after - s.totalUs / 1000.0) < 1e-9);
    QVERIFY(o.comparison->afterKernels < o.comparison->beforeKernels);
    QVERIFY2(v->savingsText().contains("Snapshot 0"), qPrintable(v->savingsText()));

    // Chrome trace: valid JSON with one event per kernel execution and per run.
    QTemporaryDir dir;
    const QString trace = dir.filePath("trace.json");
    QCOMPARE(v->exportChromeTrace(trace), QString());
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    QVERIFY(doc.isObject());
    const QJsonArray events = doc.object()["traceEvents"].toArray();
    QCOMPARE(events.size(), qsizetype(o.main->profile->events.size() + o.main->profile->runs.size() + 1));

    // Colour by time: the graph's heat is the share, scaled so the hottest node is 1.
    GraphView* graph = w->graphView();
    QVERIFY(graph->heat().empty());
    v->setColourGraph(true);
    const auto shares = workbench::timeShareByNode(s, *o.main->graph, *w->coordinator()->session().current().graph);
    QCOMPARE(graph->heat().size(), shares.size());
    double top = 0;
    for (const auto& [id, share] : shares)
      top = std::max(top, share);
    for (const auto& [id, share] : shares)
      QVERIFY(std::abs(graph->heat().at(id) - std::sqrt(share / top)) < 1e-12);
    // On the imported model, through provenance: every op is coloured.
    w->coordinator()->selectSnapshot(0);
    const Graph& orig = *w->coordinator()->session().graph(0);
    for (const auto& n : orig.nodes())
      QVERIFY2(graph->heat().count(n->id()), n->describe().c_str());
    w->coordinator()->selectSnapshot(int(w->coordinator()->session().snapshotCount()) - 1);
    v->setColourGraph(false);
    QVERIFY(graph->heat().empty());

    // Selecting a node selects its kernel; activating a kernel selects its node.
    const workbench::KernelTiming& slow = *std::max_element(
        s.kernels.begin(), s.kernels.end(), [](const auto& a, const auto& b) { return a.medianUs < b.medianUs; });
    const Graph& cur = *w->coordinator()->session().current().graph;
    const auto nodes = workbench::correspondingNodes(*o.main->graph, slow.nodes.front(), cur);
    QCOMPARE(nodes.size(), size_t(1));
    w->coordinator()->selectNode(nodes.front());
    const QModelIndexList rows = v->kernelTable()->selectionModel()->selectedRows();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(proxy->mapToSource(rows.front()).row(), slow.kernel);
    QCOMPARE(v->timeline()->highlighted().size(), size_t(1));
    w->coordinator()->selectNode(0);
    QCOMPARE(w->coordinator()->selectedNode(), NodeId(0));
    v->kernelTable()->setCurrentIndex(proxy->mapFromSource(m->index(slow.kernel, 0)));
    QCOMPARE(w->coordinator()->selectedNode(), nodes.front());
  }

  /// Cancelling stops a profile and says so; a newer request drops the older one's result.
  void profileCancelsAndDropsStaleResults() {
    auto w = windowAfter("resnet_block.onnx", "O3");
    QVERIFY(w);
    RunProfileDocks* d = w->runProfile();
    QSignalSpy done(d->profiles(), &ProfileController::finished);
    d->profile();
    d->profiles()->cancel();
    QVERIFY(done.wait(120000));
    QCOMPARE(done.size(), 1);
    const ProfileOutcome& cancelled = d->profileView()->outcome();
    QVERIFY(cancelled.cancelled && !cancelled.main);
    QVERIFY(d->profileView()->summaryText().contains("cancelled"));
    // Two requests: only the second is shown.
    done.clear();
    d->profileView()->setCompareIndex(-1);
    d->profile();
    d->profileView()->setCompareIndex(0);
    d->profile();
    QVERIFY(done.wait(300000));
    QTest::qWait(100);
    QCOMPARE(done.size(), 1);
    QVERIFY(d->profileView()->outcome().before.has_value());
    // Plans: a request made while one runs replaces it; only the latest is shown.
    QSignalSpy planned(d->planner(), &MemoryPlanner::planned);
    w->coordinator()->selectSnapshot(0);
    d->refreshMemory();
    w->coordinator()->selectSnapshot(int(w->coordinator()->session().snapshotCount()) - 1);
    d->refreshMemory();
    QTRY_VERIFY_WITH_TIMEOUT(!planned.isEmpty() && !d->planner()->isRunning(), 60000);
    QTest::qWait(50);
    const PlanOutcome last = planned.last().first().value<PlanOutcome>();
    QCOMPARE(last.main.index, int(w->coordinator()->session().currentIndex()));
  }

  /// Planning, running and profiling keep the event loop responsive: no stall over 250 ms.
  void eventLoopStaysResponsive() {
    constexpr qint64 kStallBudgetMs = 250;
    auto w = windowAfter("resnet_block.onnx", "O3");
    QVERIFY(w);
    w->show();
    RunProfileDocks* d = w->runProfile();
    QElapsedTimer clock;
    clock.start();
    qint64 last = clock.elapsed(), worst = 0;
    QTimer ping;
    ping.setInterval(5);
    connect(&ping, &QTimer::timeout, [&] {
      const qint64 now = clock.elapsed();
      worst = std::max(worst, now - last);
      last = now;
    });
    ping.start();
    QTest::qWait(20);
    last = clock.elapsed();
    d->memoryView()->setCompareIndex(0);
    QVERIFY(planAndWait(d));
    QVERIFY(runAndWait(d));
    d->profileView()->setCompareIndex(0);
    QVERIFY(profileAndWait(d));
    d->profileView()->setColourGraph(true);
    QTest::qWait(20);
    ping.stop();
    qInfo("plan + run + profile: longest event-loop stall %lld ms", worst);
    QVERIFY2(worst < kStallBudgetMs, qPrintable(QString::number(worst)));
  }
};

QTEST_MAIN(TestRunProfile)
#include "TestRunProfile.moc"
