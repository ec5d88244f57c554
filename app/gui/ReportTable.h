// The one look of the read-only report tables (profile kernels, fusion savings, compression
// layers): whole-row selection, no row numbers, columns sized to their contents.
#pragma once

class QAbstractItemModel;
class QTableView;

namespace fb::gui {

/// A read-only table on `model`, sortable by clicking a header when `sortable`.
QTableView* makeReportTable(QAbstractItemModel* model, bool sortable);

} // namespace fb::gui
