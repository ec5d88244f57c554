// The generated code of a snapshot as text or bytes: loop nests, LLVM IR, assembly, and object
// files with their header and weights (the CLI's --emit and the GUI's whole-model code view).
#pragma once

#include "app/workbench/Compile.h"

#include <string>
#include <vector>

namespace fb::workbench {

/// Which view of the generated code.
enum class CodeKind {
  Loops,    ///< the scheduled loop nests, with GEMM blocking
  Llvm,     ///< LLVM IR after the optimization pipeline
  LlvmRaw,  ///< LLVM IR as emitted, before optimization
  Assembly, ///< the target's assembly
  Object,   ///< an ELF object, a C header and a weights blob for ahead-of-time use
  Ptx,      ///< PTX for an NVIDIA GPU (settings.gpu, or this machine's)
};

/// "loops", "llvm", "llvm-raw", "asm", "obj", "ptx": the names --emit takes.
const char* codeKindName(CodeKind kind);
/// The kind a name stands for, or nullopt.
std::optional<CodeKind> codeKindFromName(const std::string& name);

/// What to emit and for which target.
struct EmitRequest {
  CodeKind kind = CodeKind::Loops;
  CompileSettings settings;               ///< cpu, schedules, dims, GEMM on/off, LLVM level
  std::string moduleName = "model";       ///< the LLVM module's name
  std::string headerGuard = "FUSEBOX_MODEL_H"; ///< Object: include guard and symbol prefix
  std::string weightsFileName = "model.weights"; ///< Object: the blob the header names
};

/// One kernel of an emitted module, in the module's order (kernel i is the snapshot's node i).
struct EmittedKernel {
  std::string name;          ///< "k3_conv_relu"
  std::string opSummary;     ///< "Conv+Relu"
  NodeId node = 0;           ///< the snapshot's node it was lowered from (a fused group's id)
  std::vector<NodeId> nodes; ///< the nodes it computes (a fused group: its body's ids)
  bool interpreted = false;  ///< no code: the executor runs it through the interpreter
};

/// The emitted code: `text` for the text kinds; `object`, `header` and `weights` for Object.
struct EmittedCode {
  CodeKind kind = CodeKind::Loops;
  std::string text;
  std::string object, header, weights;
  size_t kernels = 0;
  std::string cpu; ///< the CPU the code is for
  /// Every kernel with the nodes it covers, so a view can map code to the graph and back.
  std::vector<EmittedKernel> kernelList;
};

/// Lowers `graph` (symbolic dims bound from settings.dims) and emits every kernel in one
/// module of the requested kind. With settings.forGpu (always for Ptx) the kernels are scheduled
/// for the GPU: loops, NVPTX LLVM IR and PTX (assembly and objects are CPU-only).
Expected<EmittedCode> emitCode(const Graph& graph, const EmitRequest& request,
                               const JobControl* job = nullptr);

} // namespace fb::workbench
