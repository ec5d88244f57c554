// A workbench JobControl for work started from the GUI: its progress reports, made on the
// worker thread, are queued to the GUI object that started the work and dropped once that
// object is gone.
#pragma once

#include "app/workbench/Job.h"

#include <QMetaObject>
#include <QPointer>
#include <QString>

#include <memory>

namespace fb::gui {

/// A JobControl whose reports call `onProgress(fraction, what)` on `receiver`'s thread, only
/// while `receiver` exists (so `onProgress` may use it freely; it checks staleness itself).
template <typename Receiver, typename OnProgress>
std::shared_ptr<workbench::JobControl> jobReportingTo(Receiver* receiver, OnProgress onProgress) {
  QPointer<Receiver> self(receiver);
  return std::make_shared<workbench::JobControl>(
      [self, onProgress](double fraction, const std::string& what) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, onProgress, fraction, text = QString::fromStdString(what)] {
              if (self)
                onProgress(fraction, text);
            },
            Qt::QueuedConnection);
      });
}

} // namespace fb::gui
