// GemmPlan: a GemmSpec resolved into the concrete loop structure the micro-kernel generator
// emits — register tile, cache blocks, parallel work items and every operand's strides.
#pragma once

#include "codegen/kernel/GemmSpec.h"
#include "core/Error.h"

#include <algorithm>
#include <cstdint>

namespace fb::cg {

struct Kernel;

/// How an operand of the GEMM is read.
enum class OperandSource {
  Strided, ///< element (r, c) at base + b*batch + g*group + r*row + c*col of a Kernel arg
  Packed,  ///< pre-packed panels in a Weight arg (packConstantOperands)
  Im2col,  ///< B of a convolution: gathered from the NCHW input with padding
};

/// One operand's resolved access: strides in elements of the argument it reads.
struct OperandAccess {
  OperandSource source = OperandSource::Strided;
  int arg = -1;
  int64_t batchStride = 0, groupStride = 0, rowStride = 0, colStride = 1;
};

/// The resolved kernel: C[b, g*M + m, n] over batch × groups × M × N × K in BLIS blocking.
///
/// Work is split into `items()` independent work items (batch, group, M part, N part), run by
/// fb_parallel_for. Each item walks its N part in blocks of nc and K in blocks of kc, packs the
/// B block (kc × nc) unless B is pre-packed, then for each mc block of its M part packs A
/// (mc × kc) unless pre-packed, and runs the mr × nr micro-kernel over the block, B
/// micro-panel outer so it stays in L1. The parts are chosen so that no operand is packed
/// twice when one is constant: M is split when B is pre-packed, N when A is.
///
/// When A is constant and larger than B (deep layers of a CNN: many output channels, few
/// pixels), splitting N would stream all of A once per N part. Then the plan shares B
/// instead: a first parallel phase packs the whole B (im2col included) into a Scratch
/// argument in the pre-packed layout, and the work items split M, each reading A once.
struct GemmPlan {
  int64_t batch = 1, groups = 1, M = 0, N = 0, K = 0;
  int64_t mr = 6, nr = 16, mc = 0, kc = 0, nc = 0;
  /// The register tile's vectors run along M: mr rows (whole vectors, 16/32/48 in zmm) by nr =
  /// 8 columns, each k broadcasting B's columns (gemmir::emitColumnMicroKernel). Chosen when
  /// N is too narrow for the row tile (a 6×6 or 3×3 image: 36 of 48 or 9 of 16 lanes useful)
  /// and M fills the vectors; the packed layouts are the usual ones.
  bool mVectors = false;
  /// Vector registers of the target planned for (16: AVX2, which also has no scatter; 32).
  int registers = 16;
  /// Floats per accumulator vector of the micro-kernel's k loop (vectorLanes below).
  int lanes() const;
  /// Rows per vector of the column micro-kernel's k loop: the target's width (16 in zmm) when
  /// whole vectors tile mr, else 8.
  int columnWidth() const { return mr % lanes() == 0 ? lanes() : 8; }
  int64_t mParts = 1, mPart = 0; ///< M split for parallelism (mPart is a multiple of mr)
  int64_t nParts = 1, nPart = 0; ///< N split for parallelism (nPart is a multiple of nr)
  OperandAccess a, b;
  int cArg = -1;
  int64_t cBatchStride = 0, cGroupStride = 0, cRowStride = 0;
  bool parallel = true;
  /// Packed panel counts of constant operands (per batch·group slice).
  int64_t aPanels = 0, bPanels = 0;
  /// How many distinct A / B slices a packed operand holds (1 when shared by all batches).
  int64_t aSlices = 1, bSlices = 1;
  /// B is packed once per call into the Scratch argument `sharedBArg` (see above); `b` still
  /// describes where B is read from. Slices of the shared buffer are per batch·group.
  bool sharedB = false;
  int sharedBArg = -1;
  /// K block of the shared-B phase's pack items: the kc block, or less, so that a column tile's
  /// whole-K block still packs on every thread.
  int64_t packKc() const { return std::min<int64_t>(kc, 256); }
  /// Pack items of the shared-B phase: slices × N blocks (nc) × K blocks (packKc).
  int64_t packItems() const {
    return batch * groups * ((N + nc - 1) / nc) *
           std::max<int64_t>(1, (K + packKc() - 1) / packKc());
  }
  /// Floats of the shared-B buffer.
  int64_t sharedBFloats() const { return batch * groups * bPanels * bPanelFloats(); }
  /// Floats from one pre-packed B panel to the next.
  int64_t bPanelFloats() const { return K * nr; }

  int64_t items() const { return batch * groups * mParts * nParts; }
  double flops() const { return 2.0 * double(batch * groups) * double(M) * double(N) * double(K); }
};

/// Resolves the blocking (defaults for the host, or the spec's overrides) and the operand
/// access of a GEMM-class kernel, or an error naming what is inconsistent in the spec.
/// `threads` is the parallelism to plan work items for (0: the host's hardware threads).
Expected<GemmPlan> planGemm(const Kernel& kernel, int threads = 0);

/// Vector registers the micro-kernel may use on the host: 16 (AVX2), or 32 with AVX-512VL.
int hostVectorRegisters();

/// The register tile the generator uses for an M of `m` rows: 6×16 with 16 vector registers
/// (AVX2), 8×48 (in 16-float vectors) with AVX-512's 32; a wider and flatter tile for skinny
/// products (GEMV-like M < 6, or < 8 with 32 registers).
void chooseRegisterTile(int64_t m, int registers, int64_t& mr, int64_t& nr);

/// The widest N remainder of a row-tile plan computed by the column micro-kernel (vectors along
/// M) rather than by an edge tile of whole 8-column vectors.
constexpr int64_t kColumnEdge = 4;

/// Whether the plan of an M × N product turns its register tile (vectors along M, see
/// GemmPlan::mVectors) and with which mr: the fraction of FMA lanes doing useful work in the
/// row tile (8×48 or 6×16, with its edge and column kernels) against the column tile's.
bool chooseMVectorTile(int64_t m, int64_t n, int registers, int64_t& mr);

/// a / b rounded up, for positive b and non-negative a.
inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Floats per accumulator vector of the micro-kernel's k loop for a target with `registers`
/// vector registers: 16 (zmm) with AVX-512's 32, else 8. Packing, masks and the fused store
/// stay in 8-float vectors either way.
inline int vectorLanes(int registers) {
  return registers >= 32 ? 16 : 8;
}

inline int GemmPlan::lanes() const {
  return vectorLanes(registers);
}

/// Accumulator vectors of an mr × nr tile whose rows are held in `lanes`-float vectors (a
/// remainder of 8 columns in one 8-float vector).
inline int64_t tileAccumulators(int64_t mr, int64_t nr, int lanes) {
  return mr * (nr / lanes + (nr % lanes != 0 ? 1 : 0));
}

} // namespace fb::cg
