// Internal to the GPU schedule files: the dependence tests and the schedules of one nest that
// use a whole block of threads (GpuSchedule.cpp picks among them).
#pragma once

#include "codegen/gpu/GpuSchedule.h"
#include "codegen/loops/LoopIR.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fb::cg::gpu_detail {

bool isVarNamed(const ExprPtr& e, const std::string& name);
/// Calls fn on every Load in e.
void forEachLoad(const ExprPtr& e, const std::function<void(const Expr&)>& fn);
/// True when the iterations of `loop` may run on different GPU threads in any order.
bool threadsIndependent(const Stmt& loop);
/// True when every store to an argument buffer inside `body` has, for each of `vars`, an index
/// that is an injective function of that variable alone: iterations with different values of
/// the variables then write disjoint elements, whatever the other indices are.
bool writesThroughPlainIndices(const StmtPtr& body, const std::vector<std::string>& vars);

/// A GPU block program: the launch's body (a GpuBlocks loop) and its block size.
struct BlockProgram {
  StmtPtr body;
  int blockSize = 0;
};

/// Block-level reductions (GpuBlockReduce.cpp): when the independent loops `chain` give too few
/// rows to fill a GPU and each row reduces many elements (a Softmax, LayerNorm or pooling row,
/// a matrix-vector product), one block per row: its threads split the row's loops, combine
/// partial results through shared memory in a tree, and run the row's scalar steps on thread
/// 0. `body` is the chain's body after cacheReductions. nullopt when the body is not a sequence
/// of such steps or the rows would fill a GPU anyway.
std::optional<BlockProgram> blockReduceRows(const std::vector<const Stmt*>& chain,
                                            const StmtPtr& body, const GpuScheduleOptions& options);

/// Shared-memory tiling (GpuSharedTiling.cpp): a matrix product or convolution (a reduction
/// whose value multiplies one load that does not depend on the output's columns by one that
/// does not depend on its rows) computed by blocks of 64x64 outputs, each thread a 4x4
/// register tile, the operands staged through shared memory 16 reduction steps at a time
/// between barriers. nullopt when the nest has another shape or is too small.
std::optional<BlockProgram> tileThroughSharedMemory(const std::vector<const Stmt*>& chain,
                                                    const StmtPtr& body,
                                                    const GpuScheduleOptions& options);

/// The variables of a perfect nest of constant-bound loops rebuilt from one flat index `flat`
/// (row-major, the last loop fastest): substitutes them in `body`.
StmtPtr unflatten(const std::vector<const Stmt*>& loops, const ExprPtr& flat, StmtPtr body);

} // namespace fb::cg::gpu_detail
