// The read-only report table.
#include "app/gui/ReportTable.h"

#include <QHeaderView>
#include <QTableView>

namespace fb::gui {

QTableView* makeReportTable(QAbstractItemModel* model, bool sortable) {
  auto* t = new QTableView;
  t->setModel(model);
  t->setSortingEnabled(sortable);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->verticalHeader()->hide();
  t->setWordWrap(false);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  return t;
}

} // namespace fb::gui
