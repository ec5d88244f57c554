// The snapshot timeline view.
#include "app/gui/TimelineView.h"

#include "app/gui/TimelineModel.h"

#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

namespace fb::gui {

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), m_model(new TimelineModel(this)) {
  m_table = new QTableView;
  m_table->setObjectName("timelineTable");
  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_table->setAlternatingRowColors(true);
  m_table->setWordWrap(false);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(TimelineModel::Summary, QHeaderView::Stretch);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_table);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!m_updating && current.isValid())
              Q_EMIT snapshotSelected(current.row());
          });
}

void TimelineView::setSnapshots(std::vector<workbench::SnapshotSummary> rows, int current) {
  m_updating = true;
  m_model->setSnapshots(std::move(rows), current);
  if (current >= 0 && current < m_model->rowCount()) {
    m_table->setCurrentIndex(m_model->index(current, 0));
    m_table->scrollTo(m_model->index(current, 0));
  }
  m_updating = false;
}

} // namespace fb::gui
