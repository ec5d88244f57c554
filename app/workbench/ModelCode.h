// A snapshot's whole-model code of one kind with each kernel's place in it, so a code view can
// scroll to the kernel of a selected node and select the node of a clicked line.
#pragma once

#include "app/workbench/Emit.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// Where one kernel's code is in a whole-model text: lines [firstLine, firstLine + lineCount).
/// A kernel with no code in that text (an interpreted kernel's LLVM IR) has lineCount 0.
struct CodeSection {
  size_t firstLine = 0;
  size_t lineCount = 0;
};

/// The whole-model code of one kind and, per kernel of code.kernelList, its section.
struct ModelCode {
  EmittedCode code;
  std::vector<CodeSection> sections; ///< one per kernel, in code.kernelList's order
  /// The kernel whose section holds 0-based `line`, or -1 (headers, declarations, metadata).
  int kernelAtLine(size_t line) const;
  /// The kernel that computes node `id` (a snapshot's node, or a node inside a fused group's
  /// body), or -1.
  int kernelOfNode(NodeId id) const;
  /// The lines of kernel `k`'s section, as the whole text has them.
  std::string sectionText(size_t k) const;
};

/// Finds each kernel's section in `text`, the whole-model code of `kind` that emitCode made
/// for `kernels`:
/// - Loops: a kernel runs from its `kernel NAME(` line to the line before the blank line that
///   separates it from the next.
/// - LLVM IR: from the `define` of the kernel's first function (NAME or a helper NAME.xxx),
///   with the comment lines right above it, to the closing `}` of its last function.
/// - Assembly (and PTX): from the line after the previous function's end (so the constant pools
///   the function reads are its own) to the `.size NAME` line of its last function.
std::vector<CodeSection> locateKernelSections(CodeKind kind, const std::string& text,
                                              const std::vector<EmittedKernel>& kernels);

/// emitCode, then locateKernelSections for a text kind (Object has no text and is refused).
Expected<ModelCode> emitModelCode(const Graph& graph, const EmitRequest& request,
                                  const JobControl* job = nullptr);

} // namespace fb::workbench
