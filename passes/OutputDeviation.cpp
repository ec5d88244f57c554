// Output deviation of a transformed model: both graphs on the interpreter, outputs compared.
#include "passes/OutputDeviation.h"

#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/TensorCompare.h"

#include <algorithm>
#include <cstdio>

namespace fb {

Expected<OutputDeviation> measureOutputDeviation(const Graph& original,
                                                 const Graph& transformed,
                                                 int64_t count, uint64_t seed) {
  OutputDeviation r;
  double cosSum = 0;
  int64_t cosCount = 0;
  for (int64_t i = 0; i < count; ++i) {
    FB_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, makeRandomInputs(original, seed + uint64_t(i)));
    FB_ASSIGN_OR_RETURN(InterpretResult ref, interpret(original, inputs));
    FB_ASSIGN_OR_RETURN(InterpretResult got, interpret(transformed, inputs));
    for (size_t o = 0; o < ref.outputs.size() && o < got.outputs.size(); ++o) {
      const Tensor& a = ref.outputs[o];
      const Tensor& b = got.outputs[o];
      if (a.dtype() != DType::F32 || b.dtype() != DType::F32)
        continue;
      TensorComparison cmp = compareTensors(a, b, Tolerance{});
      cosSum += cmp.cosine;
      ++cosCount;
      r.cosineMin = std::min(r.cosineMin, cmp.cosine);
      r.maxAbs = std::max(r.maxAbs, cmp.maxAbs);
      if (a.rank() == 2 && a.sizes().back() > 1 && a.sizes() == b.sizes()) {
        const int64_t classes = a.sizes().back();
        auto da = a.data<float>(), db = b.data<float>();
        for (int64_t row = 0; row < a.numElements() / classes; ++row) {
          auto ra = da.subspan(size_t(row * classes), size_t(classes));
          auto rb = db.subspan(size_t(row * classes), size_t(classes));
          r.top1Agree += std::max_element(ra.begin(), ra.end()) - ra.begin() ==
                         std::max_element(rb.begin(), rb.end()) - rb.begin();
          ++r.top1Total;
        }
      }
    }
    ++r.inputs;
  }
  if (cosCount)
    r.cosineMean = cosSum / double(cosCount);
  return r;
}

std::string recordOutputDeviation(const OutputDeviation& e, PassContext& ctx) {
  ctx.addStatistic("eval inputs", double(e.inputs));
  ctx.addStatistic("eval cosine mean", e.cosineMean);
  ctx.addStatistic("eval cosine min", e.cosineMin);
  ctx.addStatistic("eval max abs", e.maxAbs);
  char buf[160];
  std::snprintf(buf, sizeof buf, "; eval on %lld inputs: cosine %.4f (min %.4f), max abs %.4g",
                (long long)e.inputs, e.cosineMean, e.cosineMin, e.maxAbs);
  std::string tail = buf;
  if (e.top1Total > 0) {
    const double pct = 100.0 * double(e.top1Agree) / double(e.top1Total);
    ctx.addStatistic("eval top-1 agreement %", pct);
    std::snprintf(buf, sizeof buf, ", top-1 agreement %.1f%%", pct);
    tail += buf;
  }
  return tail;
}

} // namespace fb
