// Dense compute kernels of the reference interpreter: a blocked GEMM, im2col convolution and
// batched NumPy matmul, shared by the float ops and their integer (quantized) variants.
#pragma once

#include "core/Tensor.h"
#include "core/ops/ConvGeometry.h"

#include <cstdint>
#include <vector>

namespace fb {

/// C[m x n] += A[m x k] * B[k x n]; row-major with leading dimensions lda, ldb and ldc.
/// Instantiated for float, int32_t and int64_t.
template <typename T>
void gemmAccumulate(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
                    int64_t ldb, T* c, int64_t ldc);

/// Forward convolution without bias: x [N, C, in...], w [M, C/groups, kernel...], y [N, M, out...]
/// (overwritten). Padding reads as zero. Instantiated for float and int32_t.
template <typename T> void convForward(const ConvProblem& p, const T* x, const T* w, T* y);

/// Transposed convolution without bias: x [N, C, in...], w [C, M/groups, kernel...],
/// y [N, M, out...] (overwritten). Instantiated for float.
template <typename T> void convTransposed(const ConvProblem& p, const T* x, const T* w, T* y);

/// NumPy matmul: a and b with rank >= 1, batch dims broadcast, 1-D operands promoted and the
/// promoted axis dropped from y. ySizes must be what matmulOutputSizes returns.
/// Instantiated for float, int32_t and int64_t.
template <typename T>
void batchedMatMul(const std::vector<int64_t>& aSizes, const T* a,
                   const std::vector<int64_t>& bSizes, const T* b, T* y);

/// The output dims of NumPy matmul, with symbolic batch dims broadcast. Errors name A and B.
Expected<std::vector<Dim>> matmulOutputDims(const TensorType& a, const TensorType& b);
/// The output sizes of NumPy matmul for concrete operands.
Expected<std::vector<int64_t>> matmulOutputSizes(const std::vector<int64_t>& a,
                                                 const std::vector<int64_t>& b);

/// A float-family tensor (f32, f16, bf16) widened to f32 values.
std::vector<float> toFloatVector(const Tensor& t);
/// A tensor of a float-family dtype from f32 values, rounded to nearest even when narrowing.
Tensor fromFloatVector(DType dtype, std::vector<int64_t> sizes, const std::vector<float>& v);
/// True for the dtypes the float compute ops take: f32, f16 and bf16.
inline bool isComputeFloat(DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; }

} // namespace fb
