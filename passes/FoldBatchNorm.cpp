// Stub: the fold-batchnorm pass is not implemented yet.
#include "passes/Passes.h"

namespace fb {

namespace {
class StubPass : public Pass {
public:
  std::string name() const override { return "fold-batchnorm"; }
  std::string summary() const override { return "(not implemented yet)"; }
  std::string description() const override { return "Not implemented yet."; }
  Expected<bool> run(Graph&, PassContext&) override {
    return makeUnsupported("pass fold-batchnorm is not implemented yet");
  }
};
} // namespace

std::unique_ptr<Pass> createFoldBatchNormPass() { return std::make_unique<StubPass>(); }

} // namespace fb
