// Loop metadata (llvm.loop) for the loop emitter and the generators: the loop-id node LLVM's loop passes read.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>

#include <vector>

namespace fb::cg {

/// A distinct llvm.loop node holding `properties` (each an MDNode such as
/// !{!"llvm.loop.unroll.disable"}); its first operand refers to itself, as LLVM requires.
inline llvm::MDNode* loopId(llvm::LLVMContext& ctx, llvm::ArrayRef<llvm::Metadata*> properties) {
  std::vector<llvm::Metadata*> ops{nullptr};
  ops.insert(ops.end(), properties.begin(), properties.end());
  llvm::MDNode* id = llvm::MDNode::getDistinct(ctx, ops);
  id->replaceOperandWith(0, id);
  return id;
}

} // namespace fb::cg
