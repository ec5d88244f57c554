// Headless tests of the quantize & prune dialogs and report: the dialog is built from the pass's
// declared options and writes exactly the pipeline step the CLI would parse; applying it runs
// the step after the current snapshot; the report shown equals the workbench's numbers, its
// models pass QAbstractItemModelTester, a click selects the layer, the graph is coloured by the
// report's heat (exclusive with the profile's colouring), and a refused step changes nothing.
#include "app/gui/CompressionDocks.h"
#include "app/gui/CompressionModels.h"
#include "app/gui/CompressionView.h"
#include "app/gui/Coordinator.h"
#include "app/gui/MainWindow.h"
#include "app/gui/PassOptionsDialog.h"
#include "app/gui/PipelinePanel.h"
#include "app/gui/ProfileView.h"
#include "app/gui/RunProfileDocks.h"
#include "app/gui/graph/GraphView.h"
#include "app/workbench/CompressionReport.h"
#include "passes/PassRegistry.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QtTest/QtTest>

#include <memory>

using namespace fb;
using namespace fb::gui;

namespace {

QString sample(const char* name) {
  return QStringLiteral(FUSEBOX_SAMPLES_DIR "/") + name;
}

const workbench::PassDescription& passNamed(const char* name) {
  static const std::vector<workbench::PassDescription> passes = workbench::passDescriptions();
  for (const auto& p : passes)
    if (p.name == name)
      return p;
  qFatal("no pass %s", name);
}

/// Applies `step` through the coordinator and waits for the step and then the report.
bool applyAndWait(MainWindow& w, const QString& step) {
  QSignalSpy stepped(w.coordinator(), &Coordinator::stepFinished);
  QSignalSpy shown(w.compression(), &CompressionDocks::reportShown);
  if (!w.coordinator()->applyStep(step))
    return false;
  if (!stepped.wait(60000) || !stepped.first().first().toBool())
    return false;
  while (w.compression()->isComputing())
    if (!shown.wait(60000))
      return false;
  QApplication::processEvents();
  return true;
}

} // namespace

class TestCompression : public QObject {
  Q_OBJECT
private Q_SLOTS:
  void dialogIsBuiltFromTheDeclaredOptions() {
    const workbench::PassDescription& q = passNamed("quantize");
    PassOptionsDialog d(q);
    for (const PassOptionSpec& o : q.options) {
      QWidget* f = d.field(QString::fromStdString(o.name));
      QVERIFY2(f, o.name.c_str());
      switch (o.type) {
      case PassOptionType::Int:
        QVERIFY(qobject_cast<QSpinBox*>(f));
        break;
      case PassOptionType::Number:
        QVERIFY(qobject_cast<QDoubleSpinBox*>(f));
        break;
      case PassOptionType::Bool:
        QVERIFY(qobject_cast<QCheckBox*>(f));
        break;
      case PassOptionType::Enum: {
        auto* combo = qobject_cast<QComboBox*>(f);
        QVERIFY(combo);
        QCOMPARE(combo->count(), int(o.choices.size()));
        QCOMPARE(combo->currentText().toStdString(), o.defaultValue);
        break;
      }
      case PassOptionType::String:
        QVERIFY(qobject_cast<QLineEdit*>(f));
        break;
      }
      QVERIFY(f->toolTip().contains(QString::fromStdString(o.help)));
    }
    // Every field at its default: the bare pass.
    QCOMPARE(d.stepText(), QStringLiteral("quantize"));
    qobject_cast<QComboBox*>(d.field("calibration"))->setCurrentText("entropy");
    qobject_cast<QSpinBox*>(d.field("samples"))->setValue(8);
    qobject_cast<QCheckBox*>(d.field("per_channel"))->setChecked(false);
    QCOMPARE(d.stepText(),
             QStringLiteral("quantize{calibration=entropy,samples=8,per_channel=false}"));
    QVERIFY(d.validationError().isEmpty());
    // What the dialog writes is what the CLI's parser accepts, with the same values.
    auto steps = parsePipeline(d.stepText().toStdString());
    QVERIFY(steps.ok());
    auto direct = parsePipeline("quantize{calibration=entropy,samples=8,per_channel=false}");
    QVERIFY(direct.ok());
    QCOMPARE(steps.value().front().str(), direct.value().front().str());
    // Round trip through a step's options, and back to the defaults.
    PassOptionsDialog again(q);
    again.setOptions("calibration=entropy,samples=8,per_channel=false");
    QCOMPARE(again.stepText(), d.stepText());
    again.restoreDefaults();
    QCOMPARE(again.stepText(), QStringLiteral("quantize"));
  }

  void dialogRefusesWhatThePassWouldRefuse() {
    PassOptionsDialog d(passNamed("quantize"));
    auto* ok = d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    qobject_cast<QLineEdit*>(d.field("inputs"))->setText("a.npy,b.npy");
    QVERIFY(d.validationError().contains("inputs"));
    QVERIFY(!ok->isEnabled());
    d.accept();
    QCOMPARE(d.result(), int(QDialog::Rejected)); // not accepted while invalid
    qobject_cast<QLineEdit*>(d.field("inputs"))->setText("a.npy:b.npy");
    QVERIFY(d.validationError().isEmpty());
    QVERIFY(ok->isEnabled());
    QCOMPARE(d.stepText(), QStringLiteral("quantize{inputs=a.npy:b.npy}"));

    PassOptionsDialog p(passNamed("prune"));
    auto* sparsity = qobject_cast<QDoubleSpinBox*>(p.field("sparsity"));
    QVERIFY(sparsity);
    QCOMPARE(sparsity->maximum(), 1.0); // the declared range
    sparsity->setValue(0.3);
    qobject_cast<QCheckBox*>(p.field("structured"))->setChecked(true);
    QCOMPARE(p.stepText(), QStringLiteral("prune{sparsity=0.3,structured=true}"));
  }

  void quantizeReportEqualsTheWorkbenchAndColoursTheGraph() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline("canonicalize,fold-batchnorm,fuse"));
    // Step twice, then quantize: inserted after the current snapshot, the later steps stay.
    for (int i = 0; i < 2; ++i) {
      QSignalSpy stepped(w.coordinator(), &Coordinator::stepFinished);
      w.coordinator()->step();
      QVERIFY(stepped.wait(60000));
    }
    QVERIFY(applyAndWait(w, "quantize{samples=4,eval=2}"));
    const auto& s = w.coordinator()->session();
    QCOMPARE(s.currentIndex(), size_t(3));
    QCOMPARE(QString::fromStdString(s.pipelineString()),
             QStringLiteral("canonicalize,fold-batchnorm,quantize{eval=2,samples=4},fuse"));

    CompressionView* v = w.compression()->view();
    QCOMPARE(v->reportSnapshot(), 3);
    auto expected = workbench::compressionReport(*s.graph(2), *s.graph(3), *s.snapshot(3).record);
    QVERIFY(expected.ok());
    LayerCompressionModel* layers = v->layerModel();
    QAbstractItemModelTester t1(layers, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(v->factsModel(),
                                QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(layers->rowCount(), int(expected->layers.size()));
    QVERIFY(layers->rowCount() >= 3);
    for (int r = 0; r < layers->rowCount(); ++r) {
      const auto& l = expected->layers[size_t(r)];
      QCOMPARE(
          layers->data(layers->index(r, LayerCompressionModel::QError), Qt::UserRole).toDouble(),
          l.value);
      QCOMPARE(layers->data(layers->index(r, LayerCompressionModel::QCosine)).toString(),
               QString::number(l.cosine, 'f', 6));
    }
    QCOMPARE(v->factsModel()->rowCount(), int(expected->facts.size()));
    QVERIFY(v->headline().contains("quantize{eval=2,samples=4}"));

    // The graph shows the report's heat, with the report's legend.
    QVERIFY(v->colourGraph());
    QCOMPARE(w.graphView()->heat(), expected->heat);
    // Turning the profile's colouring on replaces ours; turning ours on again takes it back.
    ProfileView* profile = w.runProfile()->profileView();
    profile->setColourGraph(true);
    QVERIFY(!v->colourGraph());
    v->setColourGraph(true);
    QVERIFY(!profile->colourGraph());
    QCOMPARE(w.graphView()->heat(), expected->heat);
    v->setColourGraph(false);
    QVERIFY(w.graphView()->heat().empty());
    v->setColourGraph(true);

    // A click on a layer selects its node everywhere, and a selection selects its row.
    const QModelIndex second = v->layerTable()->model()->index(1, 0);
    QTest::mouseClick(v->layerTable()->viewport(), Qt::LeftButton, {},
                      v->layerTable()->visualRect(second).center());
    QCOMPARE(w.coordinator()->selectedNode(), expected->layers[1].node);
    w.coordinator()->selectNode(expected->layers[0].node);
    QCOMPARE(v->layerTable()->selectionModel()->selectedRows().value(0).row(), 0);
  }

  void pruneThenBackShowsEachStepsReport() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(applyAndWait(w, "prune{sparsity=0.5}"));
    CompressionView* v = w.compression()->view();
    QCOMPARE(v->reportSnapshot(), 1);
    QCOMPARE(v->layerModel()->columnCount(), int(LayerCompressionModel::PColumnCount));
    const auto& s = w.coordinator()->session();
    auto expected = workbench::compressionReport(*s.graph(0), *s.graph(1), *s.snapshot(1).record);
    QVERIFY(expected.ok());
    QCOMPARE(v->layerModel()->rowCount(), int(expected->layers.size()));
    for (int r = 0; r < v->layerModel()->rowCount(); ++r)
      QCOMPARE(v->layerModel()
                   ->data(v->layerModel()->index(r, LayerCompressionModel::PAfter), Qt::UserRole)
                   .toLongLong(),
               qlonglong(expected->layers[size_t(r)].weightsAfter));
    QCOMPARE(w.graphView()->heat(), expected->heat);

    // A canonicalize after it: the prune report stays (the latest lossy step so far).
    QVERIFY(applyAndWait(w, "canonicalize"));
    QCOMPARE(v->reportSnapshot(), 1);
    // Back to the imported model: no report, the graph uncoloured.
    QSignalSpy shown(w.compression(), &CompressionDocks::reportShown);
    w.coordinator()->selectSnapshot(0);
    QCOMPARE(v->reportSnapshot(), -1);
    QVERIFY(!v->messageText().isEmpty());
    QVERIFY(w.graphView()->heat().empty());
  }

  void aRefusedStepChangesNothing() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QSignalSpy messages(w.coordinator(), &Coordinator::message);
    QVERIFY(!w.coordinator()->applyStep("quantize{samples=0}"));
    QVERIFY(!messages.isEmpty());
    QVERIFY(messages.last().at(1).toBool()); // an error
    QVERIFY(messages.last().at(0).toString().contains("samples"));
    QCOMPARE(w.coordinator()->session().pipeline().size(), size_t(0));
    QCOMPARE(w.coordinator()->session().snapshotCount(), size_t(1));
    QVERIFY(!w.coordinator()->applyStep("canonicalize,fuse"));
    QCOMPARE(w.coordinator()->session().pipeline().size(), size_t(0));
  }

  void pipelinePanelEditsAStepInTheDialog() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline("canonicalize,prune{sparsity=0.2}"));
    auto* list = w.pipelinePanel()->findChild<QListView*>("pipelineList");
    QVERIFY(list);
    list->setCurrentIndex(list->model()->index(1, 0));
    auto* button = w.pipelinePanel()->findChild<QPushButton*>("optionsDialogButton");
    QVERIFY(button && button->isEnabled());
    bool seen = false;
    QTimer::singleShot(0, [&] {
      auto* d = qobject_cast<PassOptionsDialog*>(QApplication::activeModalWidget());
      if (!d)
        return;
      seen = true;
      // It opens on the step's options; change one and apply.
      QCOMPARE(qobject_cast<QDoubleSpinBox*>(d->field("sparsity"))->value(), 0.2);
      qobject_cast<QCheckBox*>(d->field("structured"))->setChecked(true);
      d->accept();
    });
    button->click();
    QVERIFY(seen);
    QCOMPARE(w.coordinator()->session().pipelineString(),
             std::string("canonicalize,prune{sparsity=0.2,structured=true}"));
  }

  void dialogStartsFromThePipelinesStep() {
    MainWindow w(/*persistent=*/false);
    QVERIFY(w.openFile(sample("small_cnn.onnx")));
    QVERIFY(w.coordinator()->setPipeline("quantize{calibration=minmax,samples=3}"));
    auto d = w.compression()->makeDialog("quantize");
    QVERIFY(d);
    QCOMPARE(d->stepText(), QStringLiteral("quantize{calibration=minmax,samples=3}"));
    QVERIFY(!w.compression()->makeDialog("no-such-pass"));
  }
};

QTEST_MAIN(TestCompression)
#include "TestCompression.moc"
