// Output summaries of a run.
#include "app/workbench/OutputSummary.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fb::workbench {

std::vector<OutputSummary> summarizeOutputs(const Graph& graph, const std::vector<Tensor>& outputs,
                                            int previewCount) {
  std::vector<OutputSummary> result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    OutputSummary s;
    s.name = i < graph.outputs().size() ? graph.outputs()[i]->name() : "output " + std::to_string(i);
    if (!t.valid()) {
      s.type = "(none)";
      result.push_back(std::move(s));
      continue;
    }
    s.type = t.type().str();
    s.elements = t.numElements();
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    int64_t finite = 0;
    for (int64_t e = 0; e < s.elements; ++e) {
      const double v = t.getAsDouble(e);
      if (!std::isfinite(v)) {
        ++s.nonFinite;
        continue;
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      ++finite;
    }
    if (finite > 0) {
      s.min = lo;
      s.max = hi;
      s.mean = sum / double(finite);
    }
    for (int64_t e = 0; e < std::min<int64_t>(s.elements, previewCount); ++e)
      s.preview.push_back(t.getAsDouble(e));
    result.push_back(std::move(s));
  }
  return result;
}

} // namespace fb::workbench
