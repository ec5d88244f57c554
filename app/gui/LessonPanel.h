// The Lessons panel: the course's lessons, the step being presented with its narrative in
// large type, and Previous / Next. A page in the hotspot manner: it shows what it is given and
// emits what the user wants; the lesson controller does the work.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QTextBrowser;

namespace fb::gui {

class LessonPanel : public QWidget {
  Q_OBJECT
public:
  explicit LessonPanel(QWidget* parent = nullptr);

  /// Lists the lessons of a course (file paths) in the chooser, `current` selected (-1: none).
  void setCourse(const QStringList& lessons, int current);
  /// Shows step `index` (0-based) of `count` of the lesson titled `lesson`.
  void showStep(const QString& lesson, int index, int count, const QString& stepTitle,
                const QString& narrativeMarkdown);
  /// Shows a message in place of the narrative (a lesson that failed to open or to play).
  void showMessage(const QString& text);
  /// The student left the step to explore: offers to go back to step `index`.
  void setAway(bool away, int index);
  /// Disables the step buttons while a step is being computed.
  void setBusy(bool busy);
  void setPresenting(bool on);
  /// The narrative's text size in points (large: it is read from the back of a room).
  void setNarrativePointSize(int points);

  QTextBrowser* narrative() const { return m_narrative; }
  QPushButton* nextButton() const { return m_next; }
  QPushButton* previousButton() const { return m_previous; }
  QPushButton* returnButton() const { return m_return; }
  QLabel* stepLabel() const { return m_step; }

Q_SIGNALS:
  void openRequested(const QString& path);
  void openFileRequested();
  void nextRequested();
  void previousRequested();
  void returnRequested();
  void presentationToggled(bool on);

private:
  void updateButtons();

  QComboBox* m_course;
  QPushButton* m_open;
  QLabel* m_lesson;
  QLabel* m_step;
  QTextBrowser* m_narrative;
  QPushButton* m_previous;
  QPushButton* m_next;
  QPushButton* m_return;
  QCheckBox* m_present;
  int m_index = -1, m_count = 0;
  bool m_busy = false;
};

} // namespace fb::gui
