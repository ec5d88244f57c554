// The `fusebox` GUI: `fusebox [MODEL] [--passes LIST] [--screenshot DIR]`, and lessons:
// `fusebox --lesson FILE [--screenshot DIR | --check]`.
#include "app/gui/Coordinator.h"
#include "app/gui/GuardedApplication.h"
#include "app/gui/LessonController.h"
#include "app/gui/MainWindow.h"
#include "app/workbench/LessonCheck.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QFont>
#include <QTimer>

#include <cstdio>

namespace {

/// --screenshot: opens `model`, runs the pipeline when one was given, and writes every view to
/// PNG files in `dir`; returns the exit status.
int takeScreenshots(fb::gui::MainWindow& window, const QString& model, bool runPipeline,
                    const QString& dir) {
  const bool opened = window.openFile(model);
  if (!opened) {
    const QString why = window.bannerText();
    std::fprintf(stderr, "error: %s\n",
                 qPrintable(why.isEmpty() ? QStringLiteral("could not open %1").arg(model) : why));
    return 1;
  }
  if (runPipeline && !window.runPipelineBlocking()) {
    const QString why = window.bannerText();
    std::fprintf(stderr, "error: the pipeline did not run to its end%s%s\n",
                 why.isEmpty() ? "" : ": ", qPrintable(why));
    return 1;
  }
  QString error;
  const QStringList files = window.saveScreenshots(dir, &error);
  if (files.isEmpty()) {
    std::fprintf(stderr, "error: %s\n", qPrintable(error));
    return 1;
  }
  for (const QString& f : files)
    std::printf("%s\n", qPrintable(f));
  return 0;
}

/// --lesson FILE --check: walks every step of the lesson on a fresh session; 0 when every
/// pass runs, every focus node exists and every claim holds, else 1 and the reason.
int checkLesson(const QString& path) {
  auto lesson = fb::workbench::readLesson(path.toStdString());
  if (!lesson.ok()) {
    std::fprintf(stderr, "error: %s\n", lesson.error().message().c_str());
    return 1;
  }
  auto report = fb::workbench::checkLesson(*lesson);
  if (!report.ok()) {
    std::fprintf(stderr, "error: %s\n", report.error().message().c_str());
    return 1;
  }
  std::printf("%s: ok (%zu steps, %zu claims hold)\n", qPrintable(path), report->steps,
              report->claims);
  return 0;
}

/// --lesson FILE --screenshot DIR: every step of the lesson to DIR/step-NN.png.
int takeLessonScreenshots(fb::gui::MainWindow& window, const QString& lesson, const QString& dir) {
  const QString error = window.lessons()->openLesson(lesson);
  if (!error.isEmpty()) {
    std::fprintf(stderr, "error: %s\n", qPrintable(error));
    return 1;
  }
  QString why;
  const QStringList files = window.lessons()->saveStepScreenshots(dir, &why);
  if (files.isEmpty()) {
    const QString banner = window.bannerText();
    std::fprintf(stderr, "error: %s%s%s\n", qPrintable(why), banner.isEmpty() ? "" : ": ",
                 qPrintable(banner));
    return 1;
  }
  for (const QString& f : files)
    std::printf("%s\n", qPrintable(f));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  // Screenshots need no display: pick the offscreen platform before QApplication starts.
  for (int i = 1; i < argc; ++i)
    if ((QByteArray(argv[i]) == "--screenshot" || QByteArray(argv[i]) == "--check") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
      qputenv("QT_QPA_PLATFORM", "offscreen");

  fb::gui::GuardedApplication app(argc, argv);
  QApplication::setOrganizationName("Fusebox");
  QApplication::setApplicationName("fusebox");
  QApplication::setApplicationVersion("0.1");
  QApplication::setStyle("Fusion");
  QFont font("DejaVu Sans", 10);
  QApplication::setFont(font);

  QCommandLineParser parser;
  parser.setApplicationDescription("Fusebox: a workbench for machine-learning graph compilers.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("model", "A model to open (.onnx or .fbir); a sample when omitted.");
  QCommandLineOption passes({"p", "passes"}, "Pipeline to set up (comma-separated pass names).",
                            "list");
  QCommandLineOption screenshot(
      "screenshot", "Render the window and each view to PNG files in DIR, then exit.", "dir");
  QCommandLineOption presentation("presentation", "Larger text everywhere, for a projector.");
  QCommandLineOption lesson("lesson",
                            "Open a lesson (.md): its model, its pipeline, its first step. With "
                            "--screenshot, render every step to DIR/step-NN.png.",
                            "file");
  QCommandLineOption check("check", "With --lesson: verify the lesson against this build (its "
                                    "passes run, its nodes exist, its claims hold), then exit.");
  parser.addOption(passes);
  parser.addOption(presentation);
  parser.addOption(screenshot);
  parser.addOption(lesson);
  parser.addOption(check);
  parser.process(app);
  if (parser.isSet(check)) {
    if (!parser.isSet(lesson)) {
      std::fprintf(stderr, "error: --check needs --lesson FILE\n");
      return 2;
    }
    return checkLesson(parser.value(lesson));
  }

  const bool shots = parser.isSet(screenshot);
  fb::gui::MainWindow window(/*persistent=*/!shots);
  app.setFailureHandler([&window](const QString& text) { window.reportFailure(text); });
  if (parser.isSet(presentation))
    window.setPresentationMode(true);
  QString model = parser.positionalArguments().value(0);
  if (model.isEmpty())
    model = QStringLiteral(FUSEBOX_SAMPLES_DIR "/resnet_block.onnx");
  if (parser.isSet(passes) && !window.coordinator()->setPipeline(parser.value(passes))) {
    std::fprintf(stderr, "error: bad pipeline: %s\n", qPrintable(parser.value(passes)));
    if (shots)
      return 2;
  }

  if (parser.isSet(lesson)) {
    if (shots)
      return takeLessonScreenshots(window, parser.value(lesson), parser.value(screenshot));
    window.show();
    if (const QString error = window.lessons()->openLesson(parser.value(lesson)); !error.isEmpty())
      window.reportFailure(error);
    return app.exec();
  }
  if (shots) {
    // Screenshot mode runs outside the event loop's guard: what escapes ends here, in words.
    try {
      return takeScreenshots(window, model, parser.isSet(passes), parser.value(screenshot));
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "error: out of memory while rendering %s\n", qPrintable(model));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s: %s\n", qPrintable(model), e.what());
    }
    return 1;
  }
  window.show();
  window.openFileAsync(model); // the window is up at once, even for a large model
  return app.exec();
}
