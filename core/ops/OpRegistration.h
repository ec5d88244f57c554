// Registration functions, one per file in core/ops, that fill the op table with each op's shape
// inference, interpreter kernel and cost.
#pragma once

#include "core/OpTable.h"

namespace fb {

void registerElementwiseOps(OpRegistry& r);    // ops/Elementwise.cpp: unary, Clip, Cast, Identity, Dropout
void registerBinaryOps(OpRegistry& r);         // ops/Binary.cpp: arithmetic, compare, logic, Where
void registerReductionOps(OpRegistry& r);      // ops/Reduction.cpp: Reduce*, ArgMax/Min, Softmax
void registerNormalizationOps(OpRegistry& r);  // ops/Normalization.cpp
void registerConvolutionOps(OpRegistry& r);    // ops/Convolution.cpp: Conv, ConvTranspose
void registerPoolingOps(OpRegistry& r);        // ops/Pooling.cpp
void registerMatMulOps(OpRegistry& r);         // ops/MatMul.cpp: MatMul, Gemm
void registerQuantizedOps(OpRegistry& r);      // ops/Quantized.cpp
void registerDataMovementOps(OpRegistry& r);   // ops/DataMovement.cpp: reshape, transpose, ...
void registerResizeOps(OpRegistry& r);         // ops/Resize.cpp
void registerShapeOps(OpRegistry& r);          // ops/ShapeOps.cpp: Shape, Size, Constant, Range
void registerFusedOps(OpRegistry& r);          // ops/Fused.cpp: fused groups
void registerControlFlowOps(OpRegistry& r);    // ops/ControlFlow.cpp: If, Loop, Scan
void registerLayoutOps(OpRegistry& r);         // ops/Layout.cpp: ReorderLayout, Layout* ops
void registerIndexingOps(OpRegistry& r);       // ops/Indexing.cpp: GatherElements/ND, OneHot, NonZero
void registerScatterOps(OpRegistry& r);        // ops/Scatter.cpp: ScatterElements, ScatterND
void registerSelectionOps(OpRegistry& r);      // ops/Selection.cpp: TopK, Hardmax
void registerScanOps(OpRegistry& r);           // ops/Scan.cpp: CumSum, Trilu
void registerLossOps(OpRegistry& r);           // ops/Loss.cpp: NegativeLogLikelihoodLoss, SCE
void registerGeneratorOps(OpRegistry& r);      // ops/Generators.cpp: EyeLike, window functions
void registerCompressOps(OpRegistry& r);       // ops/Compress.cpp
void registerReverseSequenceOps(OpRegistry& r);    // ops/ReverseSequence.cpp
void registerLocalNormalizationOps(OpRegistry& r); // ops/LocalNormalization.cpp: LRN, MVN
void registerDynamicQuantizeOps(OpRegistry& r);    // ops/DynamicQuantize.cpp
void registerLinearAlgebraOps(OpRegistry& r);      // ops/LinearAlgebra.cpp: Det, Einsum
void registerGridSampleOps(OpRegistry& r);         // ops/GridSample.cpp
void registerNonMaxSuppressionOps(OpRegistry& r);  // ops/NonMaxSuppression.cpp
void registerUniqueOps(OpRegistry& r);             // ops/Unique.cpp
void registerMaxUnpoolOps(OpRegistry& r);          // ops/MaxUnpool.cpp
void registerRoiAlignOps(OpRegistry& r);           // ops/RoiAlign.cpp
void registerRecurrentOps(OpRegistry& r);      // ops/Recurrent.cpp: RNN, GRU, LSTM

/// Calls every registration function above.
inline void registerAllOps(OpRegistry& r) {
  registerElementwiseOps(r);
  registerBinaryOps(r);
  registerReductionOps(r);
  registerNormalizationOps(r);
  registerConvolutionOps(r);
  registerPoolingOps(r);
  registerMatMulOps(r);
  registerQuantizedOps(r);
  registerDataMovementOps(r);
  registerResizeOps(r);
  registerShapeOps(r);
  registerFusedOps(r);
  registerControlFlowOps(r);
  registerLayoutOps(r);
  registerIndexingOps(r);
  registerScatterOps(r);
  registerSelectionOps(r);
  registerScanOps(r);
  registerLossOps(r);
  registerGeneratorOps(r);
  registerCompressOps(r);
  registerReverseSequenceOps(r);
  registerLocalNormalizationOps(r);
  registerDynamicQuantizeOps(r);
  registerLinearAlgebraOps(r);
  registerGridSampleOps(r);
  registerNonMaxSuppressionOps(r);
  registerUniqueOps(r);
  registerMaxUnpoolOps(r);
  registerRoiAlignOps(r);
  registerRecurrentOps(r);
}

} // namespace fb
