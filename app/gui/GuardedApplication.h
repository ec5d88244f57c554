// The application object of `fusebox`: an exception that escapes an event handler on the GUI
// thread (a synchronous refresh that runs out of memory on a hostile model) would end the
// program; here it is caught in notify() and reported in words, and the event loop goes on with
// the model the user had loaded.
#pragma once

#include <QApplication>
#include <QString>

#include <cstdio>
#include <exception>
#include <functional>
#include <new>

namespace fb::gui {

class GuardedApplication : public QApplication {
public:
  using QApplication::QApplication;

  /// Where caught failures go (the main window's reportFailure); stderr until set.
  void setFailureHandler(std::function<void(const QString&)> handler) {
    m_handler = std::move(handler);
  }

  bool notify(QObject* receiver, QEvent* event) override {
    try {
      return QApplication::notify(receiver, event);
    } catch (const std::bad_alloc&) {
      report(QStringLiteral("Out of memory while updating the window; the loaded model is kept."));
    } catch (const std::exception& e) {
      report(QStringLiteral("Internal error: %1 (the loaded model is kept)")
                 .arg(QString::fromLocal8Bit(e.what())));
    } catch (...) {
      report(QStringLiteral("Internal error of an unknown kind (the loaded model is kept)"));
    }
    return false;
  }

private:
  void report(const QString& text) {
    if (m_handler)
      m_handler(text);
    else
      std::fprintf(stderr, "error: %s\n", qPrintable(text));
  }

  std::function<void(const QString&)> m_handler;
};

} // namespace fb::gui
