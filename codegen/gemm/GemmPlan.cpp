// GemmPlan: resolving a GemmSpec's blocking and operand strides (see GemmPlan.h).
#include "codegen/gemm/GemmPlan.h"

#include "codegen/kernel/Kernel.h"

#include <algorithm>
#include <numeric>
#include <span>
#include <thread>
#include <tuple>
#include <utility>

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

namespace fb::cg {

namespace {

int64_t roundUp(int64_t a, int64_t b) {
  return ceilDiv(a, b) * b;
}

/// Default cache blocks (BLIS's Zen values, rounded): A block mc×kc ≈ 144 KiB in L2, a B
/// micro-panel kc×nr = 16 KiB in L1, the B block kc×nc = 256 KiB in L2.
constexpr int64_t kDefaultKc = 256;
constexpr int64_t kDefaultMc = 144;
constexpr int64_t kDefaultNc = 256;
/// The K block of a single row tile streaming a constant B (see planGemm).
constexpr int64_t kMaxStreamKc = 4096;
/// The K block of a run-time A times a constant B (a linear layer's weights): up to this, so
/// that C, often larger than L2 (ViT-B's MLP: 197 × 3072), is written once instead of read
/// and written again per K block. The A block shrinks to keep mc × kc on the stack's budget.
constexpr int64_t kMaxWeightsKc = 1536;
/// Below this many flops a kernel runs on the calling thread: waking the pool costs more.
constexpr double kMinParallelFlops = 256.0 * 1024;
/// The largest B packed once and shared by all threads (GemmPlan::sharedB).
constexpr int64_t kMaxSharedBBytes = 16 << 20;
/// Work items per thread: enough for dynamic balancing, few enough to keep blocks large.
constexpr int64_t kItemsPerThread = 4;

/// Splits `extent` into blocks of at most `maxBlock` of nearly equal size, each a multiple of
/// `quantum`, and returns the block size.
int64_t balancedBlock(int64_t extent, int64_t maxBlock, int64_t quantum) {
  maxBlock = std::max(quantum, maxBlock / quantum * quantum);
  int64_t blocks = ceilDiv(extent, maxBlock);
  return roundUp(ceilDiv(extent, blocks), quantum);
}

/// The column tile's K block: the whole K up to this, so C is stored once (by scatters) rather
/// than gathered and scattered once per K block; its B micro-panel (8 columns) stays in L2.
constexpr int64_t kMVectorKc = 4096;
/// The most floats of an operand block a work item packs on its stack with a column tile.
constexpr int64_t kMaxStackPackFloats = 64 * 1024;

/// Panels per part when `panels` register-tile panels of each of `outer` slices are split into
/// parts for `threads`: the fewest panels on the busiest thread (ceil(items / threads) rounds
/// of `per` panels), then the part count nearest `want` (a few items per thread keep the
/// dynamic claiming balanced when a core is shared). 10 panels on 2 threads: 10 parts of 1,
/// not 5 of 2 (3 rounds on one thread, 2 on the other).
int64_t balancedPanelsPerPart(int64_t panels, int64_t outer, int64_t threads, int64_t want) {
  int64_t best = 1, bestSpan = 0, bestDistance = 0;
  for (int64_t per = 1; per <= panels; ++per) {
    int64_t parts = ceilDiv(panels, per);
    int64_t span = ceilDiv(outer * parts, threads) * per;
    int64_t distance = parts > want ? parts - want : want - parts;
    if (per == 1 || span < bestSpan || (span == bestSpan && distance < bestDistance)) {
      best = per;
      bestSpan = span;
      bestDistance = distance;
    }
  }
  return best;
}

/// Useful fraction of the FMA lanes of the row tile over N columns (see chooseRegisterTile):
/// whole nr-column panels, then the remainder's edge tile of 8-column vectors (paired into
/// zmm), or for at most kColumnEdge columns the column kernel's mr-row vectors.
double rowTileUtilization(int64_t n, int registers) {
  const int lanes = vectorLanes(registers);
  const int64_t nr = registers >= 32 ? 48 : 16, mr = registers >= 32 ? 8 : 6;
  const int64_t rem = n % nr;
  double opsPerRow = double(n / nr) * double(nr / lanes);
  if (rem > 0 && rem <= kColumnEdge)
    opsPerRow += double(rem) / double(mr);
  else if (rem > 0)
    opsPerRow += lanes == 16 ? double((ceilDiv(rem, 8) + 1) / 2) : double(ceilDiv(rem, 8));
  return double(n) / (opsPerRow * lanes);
}

} // namespace

bool chooseMVectorTile(int64_t m, int64_t n, int registers, int64_t& mr) {
  // Candidates and their loop efficiency next to the row tile's: a 16-row tile does one A load
  // and 8 broadcasts per 8 FMAs, a 48-row one 3 loads per 24 FMAs; the scatters of the store
  // cost a few percent. AVX2's 16 registers hold only the 8-row tile.
  struct Candidate {
    int64_t mr;
    double efficiency;
  };
  static const Candidate wide[] = {{48, 0.97}, {32, 0.95}, {16, 0.85}};
  static const Candidate narrow[] = {{8, 0.85}};
  double best = 0;
  for (const Candidate& c :
       registers >= 32 ? std::span<const Candidate>(wide) : std::span<const Candidate>(narrow)) {
    double util = double(m) / double(roundUp(m, c.mr)) * c.efficiency;
    if (util > best) {
      best = util;
      mr = c.mr;
    }
  }
  return best > rowTileUtilization(n, registers) + 0.05;
}

int hostVectorRegisters() {
  // AVX-512 (VL) lets 8-wide code use ymm16-31 through the EVEX encoding.
  static const int registers = [] {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    return features.lookup("avx512f") && features.lookup("avx512vl") ? 32 : 16;
  }();
  return registers;
}

void chooseRegisterTile(int64_t m, int registers, int64_t& mr, int64_t& nr) {
  // mr*nr/lanes accumulators + nr/lanes B vectors + one broadcast of A must fit the registers.
  // With AVX-512's 32 of them the k loop runs on 16-float vectors: 8×48 (24 accumulators)
  // issues one FMA per 16 outputs — CPUs with 512-bit FMA units (Zen 5, Intel's) do twice the
  // work per FMA of the 8×24 tile in ymm, which on Zen 4 costs the same. Skinny M (GEMV-like,
  // bound by streaming B) takes M rows of 48 on AVX-512, the flatter tiles below on AVX2.
  if (registers >= 32 && m >= 8) {
    // 8 rows, or 7 where that leaves no ragged edge tile (49 tokens of a Swin window: 7 full
    // tiles instead of 6 and a 1-row one); a tile costs its rows' FMAs plus about 1.5 rows'
    // worth of B loads and stores.
    mr = 8;
    nr = 48;
    if (ceilDiv(m, 7) * (2 * 7 + 3) < ceilDiv(m, 8) * (2 * 8 + 3))
      mr = 7;
    return;
  }
  if (registers >= 32 && m >= 2) {
    // Skinny M streams B: three whole zmm of it per k step for every row (ConvNeXt's last
    // stage, 4 tokens × 3072 × 768: 4×48 is 1.3× faster than the 4×24 of AVX2's table).
    mr = m;
    nr = 48;
    return;
  }
  switch (m) {
  case 1:
    mr = 1;
    nr = 64;
    break;
  case 2:
    mr = 2;
    nr = 48;
    break;
  case 3:
    mr = 3;
    nr = 32;
    break;
  case 4:
    mr = 4;
    nr = 24;
    break;
  case 5:
    mr = 5;
    nr = 16;
    break;
  default:
    mr = 6;
    nr = 16;
    break;
  }
}

Expected<GemmPlan> planGemm(const Kernel& kernel, int threads) {
  if (threads <= 0)
    threads = int(std::max(1u, std::thread::hardware_concurrency()));
  if (!kernel.gemm)
    return makeError("kernel ", kernel.name, ": not a GEMM-class kernel");
  const GemmSpec& s = *kernel.gemm;
  auto where = [&](const std::string& what) {
    return makeError("kernel ", kernel.name, " (", kernel.opSummary, "): ", what);
  };
  auto validArg = [&](int arg) { return arg >= 0 && size_t(arg) < kernel.args.size(); };
  GemmPlan p;
  p.parallel = s.parallel;
  p.cArg = s.cArg;
  if (!validArg(s.cArg))
    return where("GEMM output argument index " + std::to_string(s.cArg) + " is out of range");

  if (s.conv) {
    const ConvGeometry& c = *s.conv;
    if (c.groups < 1 || c.inChannels % c.groups || c.outChannels % c.groups)
      return where("channels are not divisible by groups");
    if (c.outH < 1 || c.outW < 1 || c.inH < 1 || c.inW < 1 || c.kernelH < 1 || c.kernelW < 1 ||
        c.strideH < 1 || c.strideW < 1 || c.dilationH < 1 || c.dilationW < 1)
      return where("invalid convolution geometry");
    int64_t cinG = c.inChannels / c.groups;
    int64_t hw = c.outH * c.outW, inHw = c.inH * c.inW;
    p.batch = c.batch;
    p.groups = c.groups;
    p.M = c.outChannels / c.groups;
    p.N = hw;
    p.K = cinG * c.kernelH * c.kernelW;
    // A: weights OIHW, rows of K contiguous elements, one group after the other.
    p.a = {OperandSource::Strided, s.aArg, 0, p.M * p.K, p.K, 1};
    bool pointwise = c.kernelH == 1 && c.kernelW == 1 && c.strideH == 1 && c.strideW == 1 &&
                     c.padTop == 0 && c.padLeft == 0 && c.outH == c.inH && c.outW == c.inW;
    if (pointwise)
      p.b = {OperandSource::Strided, s.bArg, c.inChannels * inHw, cinG * inHw, inHw, 1};
    else
      p.b = {OperandSource::Im2col, s.bArg, c.inChannels * inHw, cinG * inHw, 0, 0};
    p.cBatchStride = c.outChannels * hw;
    p.cGroupStride = p.M * hw;
    p.cRowStride = hw;
  } else {
    p.batch = s.batch;
    p.M = s.M;
    p.N = s.N;
    p.K = s.K;
    p.a = {OperandSource::Strided, s.aArg, s.aBatchStride, 0, s.aRowStride, s.aColStride};
    p.b = {OperandSource::Strided, s.bArg, s.bBatchStride, 0, s.bRowStride, s.bColStride};
    p.cBatchStride = s.cBatchStride;
    p.cRowStride = s.cRowStride;
  }
  if (p.batch < 1 || p.M < 1 || p.N < 1 || p.K < 0)
    return where("empty or negative GEMM extents M=" + std::to_string(p.M) +
                 " N=" + std::to_string(p.N) + " K=" + std::to_string(p.K));

  // Register tile and cache blocks.
  const int registers = s.vectorRegisters > 0 ? s.vectorRegisters : hostVectorRegisters();
  p.registers = registers;
  chooseRegisterTile(p.M, registers, p.mr, p.nr);
  // The column tile (vectors along M) for a convolution over few pixels: asked for by a
  // schedule, or chosen when the row tile would leave many lanes idle. Only GEMMs whose A
  // panels the generator packs itself (not Winograd's, whose input transform writes them).
  using TileVectors = GemmSpec::TileVectors;
  int64_t columnMr = 0;
  if (s.tileVectors == TileVectors::AlongM) {
    chooseMVectorTile(p.M, p.N, registers, columnMr); // for its mr; the schedule chose the tile
    p.mVectors = true;
  } else if (s.tileVectors == TileVectors::Auto && s.conv && s.mr == 0 && s.nr == 0 &&
             !isDepthwise(s)) {
    p.mVectors = chooseMVectorTile(p.M, p.N, registers, columnMr);
  }
  if (p.mVectors) {
    p.mr = columnMr;
    p.nr = 8;
  }
  if (s.mr > 0)
    p.mr = s.mr;
  if (s.nr > 0)
    p.nr = s.nr;
  const int64_t maxAccumulators = registers >= 32 ? 28 : 14;
  if (p.mVectors) {
    const int64_t columnWidth = p.columnWidth();
    if (p.mr % 8 || p.mr < 8 || p.mr > 64 || p.nr % 8 || p.nr < 8 || p.nr > 16 ||
        p.mr / columnWidth * p.nr > maxAccumulators)
      return where("column register tile " + std::to_string(p.mr) + "x" + std::to_string(p.nr) +
                   " does not fit: mr must be a multiple of 8 up to 64, nr 8 or 16, and (mr/" +
                   std::to_string(columnWidth) + ")*nr at most " + std::to_string(maxAccumulators) +
                   " (" + std::to_string(registers) + " vector registers)");
  } else if (p.nr % 8 || p.mr < 1 || tileAccumulators(p.mr, p.nr, p.lanes()) > maxAccumulators ||
             p.nr > 64) {
    return where("register tile " + std::to_string(p.mr) + "x" + std::to_string(p.nr) +
                 " does not fit: nr must be a multiple of 8 and mr*ceil(nr/" +
                 std::to_string(p.lanes()) + ") at most " + std::to_string(maxAccumulators) + " (" +
                 std::to_string(registers) + " vector registers)");
  }
  // One row tile over a constant B reads each B panel once: no block to keep in cache, so K
  // is not cut (the panels, [panel][K][nr], stream contiguously, and C is stored once).
  const bool streamB = s.constantB && !p.mVectors && ceilDiv(p.M, p.mr) == 1;
  // A run-time A times constant weights, one slice: K is cut in blocks of up to 1536 rather
  // than 256 (ViT-B/16's MLP and QKV GEMMs, M 197, 2 threads, 3 alternating rounds: 10-15%
  // faster in isolation, 197×768×3072 2.77 → 2.48 ms; ViT-B/16 126 → 120 ms; GEMM 256 even).
  const bool weightsKc =
      s.constantB && !s.constantA && !p.mVectors && !streamB && p.batch * p.groups == 1;
  p.kc = std::max<int64_t>(1, balancedBlock(std::max<int64_t>(p.K, 1),
                                            s.kc > 0     ? s.kc
                                            : p.mVectors ? kMVectorKc
                                            : streamB    ? kMaxStreamKc
                                            : weightsKc  ? kMaxWeightsKc
                                                         : kDefaultKc,
                                            1));

  // Constant operands read from pre-packed panels.
  bool aConst = s.constantA.has_value(), bConst = s.constantB.has_value();

  // Parallel split into parts of M and N.
  int64_t outer = p.batch * p.groups;
  // Items are claimed dynamically by the threads (see emitGemmKernel), so a few per thread
  // keep all busy even when one core is slower or shared; each costs one more pass over the
  // constant operand's panels, which is cheap next to the block's FMAs.
  int64_t want = 1;
  int64_t target = int64_t(threads) * kItemsPerThread;
  if (p.parallel && threads > 1 && p.flops() >= kMinParallelFlops && outer < target)
    want = ceilDiv(target, outer);
  int64_t mPanels = ceilDiv(p.M, p.mr), nPanels = ceilDiv(p.N, p.nr);
  int64_t ncMax = s.nc > 0 ? roundUp(s.nc, p.nr) : kDefaultNc;
  // Splitting M re-packs B once per M part, splitting N re-packs A once per N part beyond the
  // N blocks an item walks anyway: prefer the split that packs nothing twice.
  // A constant A at least as large as B is better shared than streamed once per N part.
  int64_t sharedBBytes = 4 * outer * nPanels * std::max<int64_t>(p.K, 1) * p.nr;
  p.sharedB = aConst && !bConst && s.sharedBArg >= 0 && want > 1 && p.M >= p.N &&
              sharedBBytes <= kMaxSharedBBytes;
  p.sharedBArg = p.sharedB ? s.sharedBArg : -1;
  // The parts (M, N) of splitting one dimension first.
  auto split = [&](bool mFirst) {
    int64_t panels = mFirst ? mPanels : nPanels;
    int64_t first = std::min(want, panels);
    int64_t second = std::min(ceilDiv(want, first), mFirst ? nPanels : mPanels);
    if (first > 1 && second == 1)
      first = ceilDiv(panels, balancedPanelsPerPart(panels, outer, threads, want));
    return mFirst ? std::make_pair(first, second) : std::make_pair(second, first);
  };
  const std::pair<int64_t, int64_t> mFirst = split(true), nFirst = split(false);
  bool splitMFirst = p.sharedB || (bConst && aConst) ||
                     (!bConst && !aConst && ceilDiv(p.N, ncMax) < want && mPanels >= want);
  if (bConst && !aConst) {
    // A constant B is read from its packed panels once per M part; a run-time A is packed
    // once per N part, which costs several times a streamed read (weight 4). With few rows
    // and wide weights (a Swin MLP over 49 tokens: M 49, N 3072, K 768, 7 M parts) splitting
    // M would stream the 9 MB of weights once per part, so N is split instead.
    auto floatsRead = [&](const std::pair<int64_t, int64_t>& parts) {
      return double(parts.first) * double(p.N) * double(p.K) +
             double(parts.second) * 4 * double(p.M) * double(p.K);
    };
    splitMFirst = floatsRead(mFirst) <= floatsRead(nFirst);
  }
  std::tie(p.mParts, p.nParts) = splitMFirst ? mFirst : nFirst;
  p.mPart = roundUp(ceilDiv(p.M, p.mParts), p.mr);
  p.mParts = ceilDiv(p.M, p.mPart);
  p.nPart = roundUp(ceilDiv(p.N, p.nParts), p.nr);
  p.nParts = ceilDiv(p.N, p.nPart);
  p.parallel = p.parallel && p.items() > 1;
  const int64_t mcMax = weightsKc ? std::min(kDefaultMc, kMaxStackPackFloats / p.kc) : kDefaultMc;
  p.mc = balancedBlock(p.mPart, s.mc > 0 ? roundUp(s.mc, p.mr) : mcMax, p.mr);
  // A pre-packed B needs no buffer, so its block is the whole N part.
  p.nc = (bConst || p.sharedB) && s.nc == 0 ? p.nPart : balancedBlock(p.nPart, ncMax, p.nr);

  // A column tile's whole-K block, where A or B is packed on the stack of a work item, is cut
  // so that the buffers stay small.
  if (p.mVectors && s.kc == 0) {
    int64_t widest = std::max(bConst || p.sharedB ? 0 : p.nc, aConst ? 0 : p.mc);
    if (widest > 0)
      p.kc = balancedBlock(std::max<int64_t>(p.K, 1),
                           std::max(kDefaultKc, kMaxStackPackFloats / widest), 1);
  }
  p.aPanels = ceilDiv(p.M, p.mr);
  p.bPanels = ceilDiv(p.N, p.nr);
  if (s.constantA) {
    p.a.source = OperandSource::Packed;
    p.a.arg = s.packedAArg;
    p.aSlices = (p.a.batchStride != 0 ? p.batch : 1) * p.groups;
  }
  if (s.constantB) {
    if (s.conv)
      return where("a constant convolution input is not supported");
    p.b.source = OperandSource::Packed;
    p.b.arg = s.packedBArg;
    p.bSlices = p.b.batchStride != 0 ? p.batch : 1;
  }
  for (const OperandAccess* op : {&p.a, &p.b}) {
    if (!validArg(op->arg))
      return where(
          op->source == OperandSource::Packed
              ? std::string("constant operand is not packed: run packConstantOperands first")
              : "GEMM operand argument index " + std::to_string(op->arg) + " is out of range");
  }
  if (p.sharedB && !validArg(p.sharedBArg))
    return where("shared B argument index " + std::to_string(p.sharedBArg) + " is out of range");
  if (s.bias != GemmSpec::Bias::None && !validArg(s.biasArg))
    return where("bias argument index " + std::to_string(s.biasArg) + " is out of range");
  for (const EpilogueOp& e : s.epilogue) {
    bool tensor = e.kind == EpilogueOp::Kind::AddTensor || e.kind == EpilogueOp::Kind::MulTensor;
    if (tensor && !validArg(e.arg))
      return where("epilogue tensor argument index " + std::to_string(e.arg) + " is out of range");
    // A batch-repeating operand is addressed from C's offset: C's batch steps must be whole
    // M×N matrices, as a batched MatMul's are.
    if (tensor && e.batchMod > 0 &&
        (s.conv || e.perRow || e.batchDiv < 1 || s.batch < 2 || p.cBatchStride != s.M * s.N ||
         p.cRowStride != s.N || p.groups != 1))
      return where("an epilogue operand repeating over the batch needs a batched MatMul's "
                   "contiguous output");
  }
  return p;
}

} // namespace fb::cg
