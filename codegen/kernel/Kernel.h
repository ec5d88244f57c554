// A kernel: what one graph node or fused group lowers to — its arguments (the ABI), its loop
// nest, and, for GEMM-class kernels, the spec the micro-kernel generator compiles.
#pragma once

#include "codegen/kernel/GemmSpec.h"
#include "codegen/kernel/Int8GemmSpec.h"
#include "core/Graph.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fb::cg {

struct Stmt; // codegen/loops/LoopIR.h

/// One argument of a kernel: a buffer the executor passes by pointer.
struct KernelArg {
  enum class Role { Input, Output, Weight, Scratch } role = Role::Input;
  std::string name;             ///< the graph value's name (or "<kernel>.packed0", "<kernel>.scratch")
  DType dtype = DType::F32;
  std::vector<int64_t> sizes;   ///< static sizes (the executor binds symbolic dims before lowering)
  int64_t bytes = 0;
  /// Set on an interpreted kernel's argument whose sizes are known only at run time (`sizes`
  /// holds -1 there and `bytes` is 0): the executor passes it as a tensor, not a buffer.
  bool dynamicShape = false;
  /// For Weight arguments: the data bound once at load time (constants, packed panels).
  std::optional<Tensor> data;
};

/// A range check the executor runs on an index argument before the kernel: every element i of
/// args[arg] (an i32 or i64 tensor) must lie in [-size, size) where size is sizes[e % sizes.size()]
/// for element e (one size for GatherElements' axis, one per column for GatherND's tuples). The
/// kernel itself clamps, so it never reads or writes outside a buffer; this check turns such an
/// index into the interpreter's error instead of a silently clamped result. The same check
/// covers other values that select positions: sequence lengths (`inclusive`, in [0, size]) and
/// MaxUnpool's flat indices, each with the interpreter's words (`message`).
struct IndexCheck {
  int arg = -1;                ///< the kernel argument holding the indices
  std::vector<int64_t> sizes;  ///< the bound of each column (cycled over the elements)
  std::vector<int64_t> axes;   ///< the data axis each column indexes, for the message
  std::string where;           ///< the node's description, the interpreter's error prefix
  bool nonNegative = false;    ///< the range is [0, size) (a loss's class target)
  bool inclusive = false;      ///< the range is [0, size] (a sequence length)
  std::optional<int64_t> exempt; ///< a value that is always allowed (a loss's ignore_index)
  /// What follows "where: " for value v of element e out of range; when empty, "index v is out
  /// of range for axis A of size S".
  std::function<std::string(int64_t e, int64_t v, int64_t size)> message;
};

/// A lowered kernel. The generated function has the FbKernelFn signature (runtime/RuntimeAbi.h):
/// `void name(void* const* args)` with args in this order.
struct Kernel {
  std::string name;                 ///< a C identifier, e.g. "k3_conv_relu"
  std::vector<NodeId> nodes;        ///< the graph nodes it computes (fused groups: the body's
                                    ///< original ids), for the profiler and the GUI
  std::string opSummary;            ///< "Conv+Add+Relu"
  std::vector<KernelArg> args;
  std::shared_ptr<const Stmt> body; ///< the scheduled loop nest (always present; printed by
                                    ///< --emit loops)
  /// Set when the kernel is GEMM-class and the micro-kernel generator compiles it instead of
  /// the generic loop-IR emitter (the loop nest then documents the same computation).
  std::optional<GemmSpec> gemm;
  /// Set for QLinearConv / QLinearMatMul kernels the int8 generator compiles
  /// (codegen/gemm/Int8GemmEmitter.h); their loop nest is only a comment saying so.
  std::optional<Int8GemmSpec> int8;
  /// The schedule override applied on top of the default schedule, in the override grammar
  /// ("tile=32x64,vectorize=8"); empty when the kernel has its default schedule.
  std::string schedule;
  std::vector<IndexCheck> indexChecks; ///< run by the executor before the kernel
  double flops = 0;                 ///< from core/Cost.h
  double bytes = 0;                 ///< bytes read + written
  /// Set for a control-flow node (If, Loop, Scan): the kernel has no code; the executor runs the
  /// node with the reference interpreter, bodies included. Its arguments are the node's present
  /// operands in order, then its results; its loop nest is only a comment saying so.
  bool interpreted = false;
};

} // namespace fb::cg
