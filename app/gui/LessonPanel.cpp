// The Lessons panel's widgets.
#include "app/gui/LessonPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace fb::gui {

LessonPanel::LessonPanel(QWidget* parent) : QWidget(parent) {
  m_course = new QComboBox;
  m_course->setObjectName("lessonCourse");
  m_course->setToolTip(tr("The lessons of the course"));
  m_open = new QPushButton(tr("Open\u2026"));
  m_open->setObjectName("lessonOpen");
  m_open->setToolTip(tr("Open a lesson file (.md)"));
  m_lesson = new QLabel;
  m_lesson->setObjectName("lessonTitle");
  m_lesson->setWordWrap(true);
  m_lesson->setTextFormat(Qt::PlainText);
  m_step = new QLabel;
  m_step->setObjectName("lessonStep");
  m_step->setWordWrap(true);
  m_step->setTextFormat(Qt::PlainText);
  m_narrative = new QTextBrowser;
  m_narrative->setObjectName("lessonNarrative");
  m_narrative->setOpenExternalLinks(true);
  m_narrative->setFrameShape(QFrame::NoFrame);
  m_previous = new QPushButton(tr("\u25C0 Previous"));
  m_previous->setObjectName("lessonPrevious");
  m_previous->setToolTip(tr("The previous step (Page Up)"));
  m_next = new QPushButton(tr("Next \u25B6"));
  m_next->setObjectName("lessonNext");
  m_next->setToolTip(tr("The next step (Page Down)"));
  m_next->setDefault(true);
  m_return = new QPushButton;
  m_return->setObjectName("lessonReturn");
  m_return->setToolTip(tr("You explored on your own; this puts the lesson's view back"));
  m_return->hide();
  m_present = new QCheckBox(tr("Present"));
  m_present->setObjectName("lessonPresent");
  m_present->setToolTip(tr("Presentation mode: larger text everywhere, for a projector"));

  auto* top = new QHBoxLayout;
  top->addWidget(m_course, 1);
  top->addWidget(m_open);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_previous);
  buttons->addWidget(m_next, 1);
  buttons->addWidget(m_present);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_lesson);
  layout->addWidget(m_step);
  layout->addWidget(m_narrative, 1);
  layout->addWidget(m_return);
  layout->addLayout(buttons);
  setNarrativePointSize(15);
  m_lesson->setStyleSheet("QLabel { color: #5f6368; }");
  m_return->setStyleSheet(
      "QPushButton { background: #FEF7E0; border: 1px solid #F9AB00; padding: 6px; }");

  connect(m_course, &QComboBox::activated, this,
          [this](int i) { Q_EMIT openRequested(m_course->itemData(i).toString()); });
  connect(m_open, &QPushButton::clicked, this, &LessonPanel::openFileRequested);
  connect(m_previous, &QPushButton::clicked, this, &LessonPanel::previousRequested);
  connect(m_next, &QPushButton::clicked, this, &LessonPanel::nextRequested);
  connect(m_return, &QPushButton::clicked, this, &LessonPanel::returnRequested);
  connect(m_present, &QCheckBox::toggled, this, &LessonPanel::presentationToggled);
  updateButtons();
  showMessage(tr("Choose a lesson above, or open one with Help \u2192 Lessons."));
}

void LessonPanel::setCourse(const QStringList& lessons, int current) {
  QSignalBlocker block(m_course);
  m_course->clear();
  for (const QString& path : lessons)
    m_course->addItem(QFileInfo(path).completeBaseName().replace('-', ' '), path);
  m_course->setCurrentIndex(current);
}

void LessonPanel::showStep(const QString& lesson, int index, int count, const QString& stepTitle,
                           const QString& narrativeMarkdown) {
  m_index = index;
  m_count = count;
  m_lesson->setText(lesson);
  m_step->setText(tr("Step %1 of %2 \u2014 %3").arg(index + 1).arg(count).arg(stepTitle));
  m_narrative->setMarkdown(narrativeMarkdown);
  updateButtons();
}

void LessonPanel::showMessage(const QString& text) {
  m_index = -1;
  m_count = 0;
  m_step->clear();
  m_narrative->setPlainText(text);
  updateButtons();
}

void LessonPanel::setAway(bool away, int index) {
  m_return->setText(tr("\u21A9 Back to the lesson (step %1)").arg(index + 1));
  m_return->setVisible(away);
}

void LessonPanel::setBusy(bool busy) {
  m_busy = busy;
  updateButtons();
}

void LessonPanel::setPresenting(bool on) {
  QSignalBlocker block(m_present);
  m_present->setChecked(on);
}

void LessonPanel::setNarrativePointSize(int points) {
  // Style sheets, not fonts: presentation mode sets an application-wide font-size rule, and a
  // widget's own rule wins over it, so the narrative stays the largest text on screen.
  m_narrative->setStyleSheet(QStringLiteral("QTextBrowser { font-size: %1pt; }").arg(points));
  m_step->setStyleSheet(
      QStringLiteral("QLabel { font-weight: bold; color: #1A3E7A; font-size: %1pt; }").arg(points));
}

void LessonPanel::updateButtons() {
  m_previous->setEnabled(!m_busy && m_index > 0);
  m_next->setEnabled(!m_busy && m_index >= 0 && m_index + 1 < m_count);
}

} // namespace fb::gui
