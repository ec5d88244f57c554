// Output deviation of a transformed model: both graphs on the interpreter, outputs compared.
#include "passes/OutputDeviation.h"

#include "core/Interpreter.h"
#include "core/RandomInputs.h"
#include "core/TensorCompare.h"

#include <algorithm>

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

} // namespace fb
