// Worker bodies run on QtConcurrent's threads; an exception escaping one is rethrown by
// QFuture::result() on the GUI thread as QUnhandledException and aborts the program. Every
// worker runs through guardedWork, which turns an escaping exception into the outcome's error
// text, so a failure is shown in words and the loaded model stays.
#pragma once

#include <QString>

#include <exception>
#include <new>
#include <utility>

namespace fb::gui {

/// Runs `work` (returning an Outcome with a QString `error` member) and returns its outcome, or
/// a default Outcome whose error names what `what` was doing and why it failed.
template <typename Outcome, typename Work> Outcome guardedWork(const QString& what, Work&& work) {
  try {
    return std::forward<Work>(work)();
  } catch (const std::bad_alloc&) {
    Outcome out;
    out.error = QStringLiteral("%1 ran out of memory (the model needs more than this machine "
                               "can give; see FUSEBOX_MEMORY_LIMIT)")
                    .arg(what);
    return out;
  } catch (const std::exception& e) {
    Outcome out;
    out.error = QStringLiteral("%1 failed: %2").arg(what, QString::fromLocal8Bit(e.what()));
    return out;
  } catch (...) {
    Outcome out;
    out.error = QStringLiteral("%1 failed with an unknown exception").arg(what);
    return out;
  }
}

} // namespace fb::gui
