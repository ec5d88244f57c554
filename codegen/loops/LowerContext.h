// Internal to lowering: the per-kernel builder that maps graph values to loop-IR reads,
// creates kernel arguments and scratch buffers, and the per-op lowering entry points.
#pragma once

#include "codegen/kernel/Kernel.h"
#include "codegen/loops/LoopIR.h"
#include "codegen/loops/Lower.h"
#include "core/ops/ConvGeometry.h"

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>

namespace fb::cg::lower {

using Indices = std::vector<ExprPtr>;
/// Computes element `idx` of a value as an expression.
using ExprFn = std::function<ExprPtr(const Indices&)>;
/// Turns the final value of an output element into what is stored (a fused epilogue).
using Epilogue = std::function<ExprPtr(const Indices&, ExprPtr)>;

/// Builds one kernel. Values are read through ExprFns looked up at call time, so a value can be
/// redefined (inline expression → materialized buffer) after its consumers were defined.
class KernelBuilder {
public:
  KernelBuilder(std::string name, const LowerOptions& options);

  const std::string& name() const { return m_name; }
  const LowerOptions& options() const { return m_options; }

  /// `inner` (a body value of a fused group, or the value itself) is read from the kernel
  /// argument that holds `outer` (the value in the top-level graph); the argument is created on
  /// first read: Weight with data for constants, Input otherwise.
  void bindInput(const Value* inner, const Value* outer);
  /// `inner` is written to an Output argument named after `outer`; returns its buffer.
  BufferPtr bindOutput(const Value* inner, const Value* outer);
  /// A fresh Scratch argument for an intermediate value of a fused group.
  BufferPtr scratchFor(const Value* v);
  /// A fresh Scratch argument of a given type for a nest's own working storage (a recurrent
  /// op's states and gate products); `shortName` names its buffer in the loop view.
  BufferPtr scratchBuffer(const std::string& shortName, DType dtype, std::vector<int64_t> sizes);

  /// Defines how to read v (replacing any earlier definition).
  void define(const Value* v, ExprFn fn) { m_fns[v] = std::move(fn); }
  /// Defines v as a load from `buffer`.
  void defineLoad(const Value* v, BufferPtr buffer);
  bool isDefined(const Value* v) const;
  /// Element idx of v. An undefined value yields a poison load that finish() reports.
  ExprPtr read(const Value* v, const Indices& idx);
  /// The buffer v is read from when it is read straight from a kernel argument (creating the
  /// argument if needed), else null. Used by GEMM specs, which need real operands.
  BufferPtr directBuffer(const Value* v);
  /// Provisional argument index of a buffer made by this builder (patched by finish()).
  int argIndexOf(const BufferPtr& b) const { return b ? b->arg : -1; }

  /// A Weight argument holding compile-time data (an index table, a folded constant).
  BufferPtr constantBuffer(const std::string& name, Tensor data);
  /// Defines v as the compile-time tensor `data` (read from a new Weight argument).
  void defineConstant(const Value* v, Tensor data);
  /// v's data when it is known at compile time (a constant operand or a folded value).
  const Tensor* constantOf(const Value* v) const;

  /// Static sizes of a value.
  static std::vector<int64_t> sizesOf(const Value* v) { return v->type().staticSizes(); }

  /// A placeholder read that must not survive into the kernel (see finish()).
  ExprPtr poison(const std::string& what, const Indices& idx);

  /// Asks the executor to range-check `indices` (an index operand of node n) before the kernel
  /// runs: column c of the last dim must lie in [-sizes[c], sizes[c]), naming data axis axes[c].
  /// Unsupported when the indices are computed inside the kernel rather than read from an
  /// argument, since then there is nothing to check before the kernel starts.
  /// With `nonNegative` the range is [0, size); `exempt` is a value always allowed.
  Status addIndexCheck(const Node& n, const Value* indices, std::vector<int64_t> sizes,
                       std::vector<int64_t> axes, bool nonNegative = false,
                       std::optional<int64_t> exempt = std::nullopt);
  /// The general form: `check` as filled in by the caller (sizes, bounds, message); the
  /// argument and the node's description are filled in here.
  Status addRangeCheck(const Node& n, const Value* values, IndexCheck check);

  /// The GEMM spec, with provisional argument indices (patched by finish()).
  std::optional<GemmSpec>& gemm() { return m_gemm; }

  /// Orders the arguments (inputs, outputs, weights, scratch), patches buffer and GEMM
  /// argument indices and returns the kernel. Fails when a poison read survived.
  Expected<Kernel> finish(StmtPtr body, std::vector<NodeId> nodes, std::string opSummary,
                          double flops, double bytes);

private:
  int addArg(KernelArg arg);
  BufferPtr makeBuffer(const std::string& name, int arg, DType dtype,
                       std::vector<int64_t> sizes);

  std::string m_name;
  const LowerOptions& m_options;
  std::vector<KernelArg> m_args;                       // provisional order
  std::vector<std::shared_ptr<Buffer>> m_buffers;      // every arg buffer, patched by finish()
  std::unordered_map<const Value*, const Value*> m_outerOf;
  std::unordered_map<const Value*, BufferPtr> m_argBuffer; // value → its argument's buffer
  std::unordered_map<const Value*, ExprFn> m_fns;
  std::unordered_map<const Value*, Tensor> m_folded;   // values computed at compile time
  std::map<std::string, int> m_bufferNames;            // for short unique buffer names
  std::optional<GemmSpec> m_gemm;
  std::vector<IndexCheck> m_indexChecks;               // provisional argument indices
  int m_scratchCount = 0;
  std::string m_poisonReason;
};

/// True for ops lowered as expressions inlined into their consumers (elementwise, broadcast,
/// injective, shape ops); false for ops that need their own loop nest.
bool isInlineOp(OpKind op);

/// Defines every output of an inline node in terms of reads of its inputs.
Status defineInline(KernelBuilder& b, const Node& node);

/// True for the ops defineElementwiseMath lowers: trigonometric and hyperbolic functions, Sign,
/// Round, IsNaN, IsInf, the ELU family and other activations, Mod, LessOrEqual, GreaterOrEqual,
/// Xor and BitShift (codegen/loops/LowerElementwiseMath.cpp).
bool isElementwiseMathOp(OpKind op);
/// Defines the output of an elementwise math op (see isElementwiseMathOp) inline.
Status defineElementwiseMath(KernelBuilder& b, const Node& node);

/// Defines the outputs of the inline indexing and rearranging ops (GatherElements, GatherND,
/// OneHot, Trilu, EyeLike, DepthToSpace, SpaceToDepth, ReverseSequence, Compress;
/// codegen/loops/LowerIndexing.cpp). Returns
/// std::nullopt when `node` is none of them.
std::optional<Status> defineIndexingInline(KernelBuilder& b, const Node& node);

/// Nests of ops that walk one axis in order (codegen/loops/LowerSequential.cpp): CumSum,
/// ScatterElements, ScatterND, TopK (`extras[0]`: its indices output), Hardmax, MaxUnpool, and
/// RoiAlign (codegen/loops/LowerRoiAlign.cpp). Returns
/// std::nullopt when `node` is none of them.
std::optional<Expected<StmtPtr>> lowerSequentialOp(KernelBuilder& b, const Node& node,
                                                   const BufferPtr& out, const Epilogue& epilogue,
                                                   const std::vector<BufferPtr>& extras);

/// Defines the output of a GridSample inline (codegen/loops/LowerGridSample.cpp).
Status defineGridSample(KernelBuilder& b, const Node& node);

/// Defines the output of a Resize (nearest, linear, cubic) inline (codegen/loops/LowerResize.cpp).
Status defineResize(KernelBuilder& b, const Node& node);

/// The nest of RoiAlign (codegen/loops/LowerRoiAlign.cpp).
Expected<StmtPtr> lowerRoiAlign(KernelBuilder& b, const Node& node, const BufferPtr& out,
                                const Epilogue& epilogue);

/// Nests of the losses (codegen/loops/LowerLoss.cpp): NegativeLogLikelihoodLoss and
/// SoftmaxCrossEntropyLoss (`extras[0]`: its log-probabilities output). Returns std::nullopt when
/// `node` is neither.
std::optional<Expected<StmtPtr>> lowerLossOp(KernelBuilder& b, const Node& node,
                                             const BufferPtr& out, const Epilogue& epilogue,
                                             const std::vector<BufferPtr>& extras);

/// Nests of LRN, MeanVarianceNormalization and DynamicQuantizeLinear (`extras`: its scale and
/// zero point; codegen/loops/LowerStatistics.cpp). Returns std::nullopt for other ops.
std::optional<Expected<StmtPtr>> lowerStatisticsOp(KernelBuilder& b, const Node& node,
                                                   const BufferPtr& out, const Epilogue& epilogue,
                                                   const std::vector<BufferPtr>& extras);

/// Nests of Det and Einsum (codegen/loops/LowerLinearAlgebra.cpp). Returns std::nullopt for
/// other ops.
std::optional<Expected<StmtPtr>> lowerLinearAlgebraOp(KernelBuilder& b, const Node& node,
                                                      const BufferPtr& out,
                                                      const Epilogue& epilogue);

/// Nests of the recurrent ops RNN, GRU and LSTM (codegen/loops/LowerRecurrent.cpp): `out` is Y,
/// `extras` Y_h and Y_c (null when unused). Returns std::nullopt when `node` is none of them.
std::optional<Expected<StmtPtr>> lowerRecurrentOp(KernelBuilder& b, const Node& node,
                                                  const BufferPtr& out,
                                                  const std::vector<BufferPtr>& extras);

/// Builds the loop nest of a nest op writing `out` (the node's output 0 or a buffer it is fused
/// into), applying `epilogue` to each element's final value.
Expected<StmtPtr> lowerNestOp(KernelBuilder& b, const Node& node, const BufferPtr& out,
                              const Epilogue& epilogue,
                              const std::vector<BufferPtr>& extraOutputs = {});
/// True when `op` can also write its outputs after the first (given as extraOutputs).
bool nestWritesExtraOutputs(OpKind op);

/// `for idx in grid(sizes): out[idx] = epilogue(idx, fn(idx))`, loop variables named i, j, ...
StmtPtr elementwiseNest(const BufferPtr& out, const ExprFn& fn, const std::string& comment);

/// Loop variable names for a rank-n nest: i, j, k (n <= 3) else i0, i1, ...
std::vector<std::string> indexNames(size_t rank, const std::string& prefix = "");
/// Vars for names.
Indices varsOf(const std::vector<std::string>& names);
/// Wraps body in serial loops over names/sizes (first name outermost).
StmtPtr wrapLoops(const std::vector<std::string>& names, const std::vector<int64_t>& sizes,
                  StmtPtr body);

/// Reads a scalar operand (rank 0 or a one-element tensor) of a node.
ExprPtr readScalar(KernelBuilder& b, const Value* v);
/// Element idx (indices of the broadcast output shape) of v broadcast to `outSizes`.
ExprPtr readBroadcast(KernelBuilder& b, const Value* v, const Indices& idx,
                      const std::vector<int64_t>& outSizes);

/// A constant of dtype d (FloatImm for float types, IntImm otherwise).
ExprPtr fimm(DType d, double v);
/// "n12 Conv": the comment that ties a statement to its node.
std::string tag(const Node& n);

/// How a reduction-style nest starts and ends each output element: `init` is the accumulator's
/// first value (a bias when the epilogue adds one), `finish` (null: nothing to do) what the
/// accumulator becomes at the end, in terms of the Var `__acc`.
struct AccumulatorPlan {
  ExprPtr init;
  ExprPtr finish;
};
/// Splits post(idx, acc) into a bias initialisation (when allowed and the identity is 0) and
/// the rest.
AccumulatorPlan planAccumulator(const Epilogue& post, const Indices& idx, DType dtype,
                                double identity, bool allowBiasInit);
/// The finishing store `out[idx] = finish(out[idx])`, or null when there is nothing to finish.
StmtPtr finishStore(const BufferPtr& out, const Indices& idx, const ExprPtr& finish,
                    const std::string& comment);
/// outer ∘ inner (inner when outer is null).
Epilogue compose(const Epilogue& outer, const Epilogue& inner);
/// e(idx, v), or v when e is null.
ExprPtr applyEpi(const Epilogue& e, const Indices& idx, ExprPtr v);

/// The resolved window of a Conv, ConvTranspose or pool (spatial axes only).
struct Window {
  size_t s = 0; ///< spatial rank
  std::vector<int64_t> in, out, kernel, stride, dilation, padBegin, padEnd;
};

/// The taps of output position `o` along axis `d` that an AveragePool counts: those inside the
/// input, or with count_include_pad also those in the padding (not past it in ceil mode).
int64_t countedTaps(const Window& w, size_t d, int64_t o, bool includePad);
/// Reads the window attributes of a forward window op for X's sizes xs and Y's sizes ys.
Expected<Window> windowOf(const Node& n, WindowKind kind, const std::vector<int64_t>& xs,
                          const std::vector<int64_t>& ys, const std::vector<Dim>& wKernel);

/// Nests of the window ops (codegen/loops/LowerWindow.cpp).
Expected<StmtPtr> lowerConv(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi);
Expected<StmtPtr> lowerConvTranspose(KernelBuilder& b, const Node& n, const BufferPtr& out,
                                     const Epilogue& epi);
/// `indicesOut` (MaxPool's optional second output) may be null.
Expected<StmtPtr> lowerPool(KernelBuilder& b, const Node& n, const BufferPtr& out,
                            const Epilogue& epi, const BufferPtr& indicesOut = nullptr);

/// The implicit-GEMM geometry of a 2-D convolution `n` with input sizes xs, OIHW weight sizes
/// ws, output sizes ys and `groups`, or none when its window attributes do not resolve.
std::optional<ConvGeometry> convGeometryOf(const Node& n, const std::vector<int64_t>& xs,
                                           const std::vector<int64_t>& ws,
                                           const std::vector<int64_t>& ys, int64_t groups);

/// Builds the GEMM spec of a MatMul/Gemm/Conv node, or the pooling spec of a MaxPool or
/// AveragePool (or nothing when its operands or geometry do not fit the spec). `out` is the
/// buffer the result is written to.
std::optional<GemmSpec> gemmSpecFor(KernelBuilder& b, const Node& node, const BufferPtr& out);

/// gemmSpecFor(anchor) with the elementwise chain from `from` (the anchor's output) to the
/// kernel output `to` mapped onto the spec's bias and EpilogueOps (Relu, Clip, SiLU as
/// Mul(x, Sigmoid(x)), residual Add/Mul, ...); none when any step of the chain does not map.
std::optional<GemmSpec> gemmSpecWithEpilogue(KernelBuilder& b, const Node& anchor,
                                             const Value* from, const Value* to,
                                             const BufferPtr& out);

/// The int8 spec of a QLinearConv or QLinearMatMul node (codegen/loops/LowerQLinear.cpp), or
/// none with the reason in `why` when the node keeps its interpreted kernel. Argument indices
/// follow the interpreted kernel's order: the present operands, then the results.
std::optional<Int8GemmSpec> int8SpecFor(const Node& node, std::string& why);

/// When `node` (an elementwise op or a fused group of them) is a function of one u8/i8 tensor
/// of the result's shape, every other operand a constant scalar: replaces the value stored by
/// its lowered, unscheduled kernel `k` with a lookup in a 256-entry table the interpreter
/// computes at compile time (the Weight `<kernel>.table`) and returns true. A quantized
/// activation between int8 layers (DequantizeLinear, Sigmoid, Mul, QuantizeLinear) becomes one
/// load per element, bit for bit the interpreter's result. Else false, `k` unchanged, and the
/// reason in `why`.
bool tabulateByteFunction(const Node& node, Kernel& k, std::string& why);

} // namespace fb::cg::lower
