// Winograd convolution F(m×m, 3×3) on the CPU: choosing it per layer, transforming and packing
// the weights (WinogradPacking.cpp), and the kernel's three phases (WinogradEmitter.cpp).
//
// For output tiles of m×m pixels and alpha = m + 2: each tile's alpha×alpha input patch d
// becomes V = Bᵀ d B, each 3×3 filter g becomes U = G g Gᵀ, the alpha² element positions ξ are
// independent GEMMs M_ξ[tile, co] = Σ_ci V_ξ[tile, ci] · U_ξ[ci, co], and Y = Aᵀ M A gives the
// tile's outputs. F(4×4, 3×3) does 36 multiplies per 16 outputs where the direct convolution
// does 144. The GEMMs are the generator's own blocked micro-kernel GEMMs (U packed at compile
// time as B panels, V written by the input transform directly as A panels).
#pragma once

#include "codegen/gemm/GemmPlan.h"
#include "codegen/kernel/Kernel.h"
#include "core/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace fb::cg {

/// The transform matrices of F(m×m, 3×3), row-major: Bᵀ (alpha × alpha), G (alpha × 3) and
/// Aᵀ (m × alpha), on the points 0, ±1, ±2 (and ∞).
struct WinogradMatrices {
  int m = 0, alpha = 0;
  std::vector<double> bt, g, at;
};

/// The matrices for m = 2 or 4 (anything else gets m = 4's).
const WinogradMatrices& winogradMatrices(int m);

/// Chooses the algorithm of a convolution kernel — the spec's request (ConvAlgorithm), or for
/// Auto the one the cost rule expects faster — and for Winograd transforms and packs the
/// weights and adds the Weight and Scratch arguments it reads (spec.winograd). Returns whether
/// the kernel now runs as Winograd. `chunkBytes` bounds the scratch of one chunk of tiles (0:
/// 4 MiB; tests make it small to get many chunks). Call before packConstantOperands, which a
/// Winograd kernel does not need.
Expected<bool> prepareWinograd(Kernel& kernel, int64_t chunkBytes = 0);

/// The alpha² GEMMs of a Winograd kernel as a kernel of their own, "<kernel>.wg" (its spec: M
/// = tiles of a chunk, N = output channels, K = input channels, batch = alpha²; A read
/// pre-packed from the V scratch), with the plan the emitter follows.
struct WinogradGemm {
  Kernel kernel;
  GemmPlan plan;
};
Expected<WinogradGemm> winogradGemm(const Kernel& kernel);

/// Emits a Winograd kernel (spec.winograd set) with the FbKernelFn ABI: per chunk of tiles, the
/// input transform (parallel over input channels), the GEMMs (parallel over ξ and parts) and
/// the output transform with bias and epilogue (parallel over tiles).
Expected<llvm::Function*> emitWinogradKernel(llvm::Module& module, const Kernel& kernel);

/// "winograd F(4x4,3x3): 36 GEMMs of 200 tiles x 64 <- 64 ..." for `--emit loops`.
Expected<std::string> describeWinograd(const Kernel& kernel);

} // namespace fb::cg
