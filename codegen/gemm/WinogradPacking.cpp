// Winograd F(m×m, 3×3): the transform matrices, the per-layer choice, the weight transform and
// its packing as the GEMMs' B panels, and the GEMMs' kernel and plan (see Winograd.h).
#include "codegen/gemm/GemmEmitter.h"
#include "codegen/gemm/Winograd.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <thread>

namespace fb::cg {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
int64_t roundUp(int64_t a, int64_t b) {
  return ceilDiv(a, b) * b;
}

/// The transformed input and products of one chunk stay within this many bytes (they pass
/// through the last-level cache between the phases).
constexpr int64_t kChunkBytes = 4 << 20;
/// The most scratch that chunks running in parallel take together (planParallelChunks).
constexpr int64_t kParallelScratchBytes = int64_t(16) << 20;
/// Transformed weights up to this size stay in the caches when every chunk reads them.
constexpr int64_t kCachedWeightBytes = int64_t(4) << 20;
/// Cost rule, in multiply-add equivalents of the GEMM micro-kernel: one input transform value
/// (a masked gather lane, the transform's adds, a store) per tile, input channel and ξ; one
/// output value (a load, the transform, a scalar store of the result) per tile, output channel
/// and ξ; and one byte of weights streamed from memory (about 15 GB/s next to 100 G
/// multiply-adds/s per core): a layer costs the larger of its arithmetic and its weights.
constexpr double kInputCost = 24, kOutputCost = 16, kWeightByteCost = 6.4;
/// im2col's packing next to its FMAs.
constexpr double kIm2colOverhead = 1.2;
/// Winograd is chosen when its estimate is below this fraction of im2col's.
constexpr double kChooseBelow = 0.8;
/// F(4×4) is chosen by default only for layers with at least this many input channels.
constexpr int64_t kMinF4InChannels = 64;

WinogradMatrices makeMatrices(int m) {
  WinogradMatrices w;
  w.m = m;
  w.alpha = m + 2;
  if (m == 2) {
    w.bt = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
    w.g = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
    w.at = {1, 1, 1, 0, 0, 1, -1, -1};
    return w;
  }
  // Points 0, 1, -1, 2, -1/2 (and ∞): the usual ±2 pair puts 8 and 5 into Aᵀ and Bᵀ; with
  // -1/2 instead the worst rounding error in float drops about fourfold (random 3×3 filters
  // and patches against a double-precision sum).
  w.bt = {1, 1.5,  -2, -1.5, 1, 0, 0, -1, -2.5, -0.5, 1, 0, 0, 1, 0.5, -2.5, 1,    0,
          0, -0.5, -1, 0.5,  1, 0, 0, 2,  -1,   -2,   1, 0, 0, 1, 1.5, -2,   -1.5, 1};
  w.g = {1,        0,        0,        -1.0 / 3,   -1.0 / 3, -1.0 / 3,  1.0 / 3, -1.0 / 3, 1.0 / 3,
         1.0 / 15, 2.0 / 15, 4.0 / 15, -16.0 / 15, 8.0 / 15, -4.0 / 15, 0,       0,        1};
  w.at = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -0.5, 0, 0, 1, 1, 4, 0.25, 0, 0, 1, -1, 8, -0.125, 1};
  return w;
}

/// The register tile of the GEMMs: mr is 8 (or 4 with 16 vector registers), so that the input
/// transform's 8-tile vectors fill whole A panels; nr the width that pads Cout least.
void chooseTile(int registers, int64_t cout, int64_t& mr, int64_t& nr) {
  if (registers >= 32) {
    mr = 8;
    nr = roundUp(cout, 48) <= roundUp(cout, 32) ? 48 : 32;
  } else {
    mr = 4;
    nr = roundUp(cout, 24) <= roundUp(cout, 16) ? 24 : 16;
  }
}

/// Tiles of all images: batch × ceil(outH / m) × ceil(outW / m).
int64_t totalTiles(const ConvGeometry& g, int m) {
  return g.batch * ceilDiv(g.outH, m) * ceilDiv(g.outW, m);
}

/// The GEMMs' kernel: the conv kernel's arguments (and those prepareWinograd added), a spec of
/// alpha² GEMMs of chunk tiles × Cout × Cin. `u` is the transformed weights when packing them,
/// null when they are packed (then constantB is an empty placeholder and packedBArg is set).
Kernel makeGemmKernel(const Kernel& kernel, const WinogradLayout& w, const Tensor* u) {
  const GemmSpec& s = *kernel.gemm;
  const ConvGeometry& cv = *s.conv;
  const int64_t points = int64_t(w.m + 2) * (w.m + 2);
  Kernel g;
  g.name = kernel.name + ".wg";
  g.opSummary = kernel.opSummary;
  g.nodes = kernel.nodes;
  g.args = kernel.args;
  GemmSpec gs;
  gs.batch = points;
  gs.M = w.chunkTiles;
  gs.N = cv.outChannels;
  gs.K = cv.inChannels;
  // A is read from the V scratch, packed (the emitter patches the plan); these only name a
  // valid argument and make A's slices per batch.
  gs.aArg = w.vArg;
  gs.aBatchStride = 1;
  gs.aRowStride = cv.inChannels;
  gs.bArg = s.aArg;
  gs.bBatchStride = cv.inChannels * cv.outChannels;
  gs.bRowStride = cv.outChannels;
  gs.cArg = w.mArg;
  gs.cBatchStride = w.chunkTiles * cv.outChannels;
  gs.cRowStride = cv.outChannels;
  gs.constantB = u ? *u : Tensor();
  gs.packedBArg = u ? -1 : w.uArg;
  gs.mr = w.mr;
  gs.nr = w.nr;
  gs.kc = w.kc;
  gs.mc = s.mc;
  gs.nc = s.nc;
  gs.vectorRegisters = s.vectorRegisters;
  // Chunks in parallel run their GEMMs on one thread each.
  gs.parallel = s.parallel && !w.chunkParallel;
  g.gemm = std::move(gs);
  return g;
}

/// The layout of F(m×m, 3×3) for a spec: register tile (the target's, or a schedule's nr and an
/// mr of 4 or 8), K block (a schedule's, else planned), and chunks of at most `chunkBytes` of
/// scratch (0: kChunkBytes), each a multiple of 8 tiles.
WinogradLayout layoutFor(const GemmSpec& s, int m, int64_t chunkBytes) {
  const ConvGeometry& cv = *s.conv;
  WinogradLayout w;
  w.m = m;
  const int64_t points = int64_t(m + 2) * (m + 2);
  const int registers = s.vectorRegisters > 0 ? s.vectorRegisters : hostVectorRegisters();
  chooseTile(registers, cv.outChannels, w.mr, w.nr);
  if (s.mr == 4 || s.mr == 8)
    w.mr = s.mr;
  if (s.nr > 0)
    w.nr = s.nr;
  w.kc = s.kc;
  const int64_t tiles = totalTiles(cv, m);
  const int64_t maxChunk =
      std::max<int64_t>(8, (chunkBytes > 0 ? chunkBytes : kChunkBytes) /
                               (4 * points * (cv.inChannels + cv.outChannels)));
  w.chunks = ceilDiv(tiles, maxChunk);
  w.chunkTiles = roundUp(ceilDiv(tiles, w.chunks), 8);
  return w;
}

/// Splits the tiles into chunks that run in parallel (WinogradLayout::chunkParallel) when the
/// kernel is parallel: the fewest chunks, a multiple of the threads, whose padding to whole
/// A panels wastes at most a third of the tiles, within the scratch bound of one chunk, with
/// all chunks' scratch within kParallelScratchBytes, and of 32 tiles or more unless the
/// transformed weights stay in the caches. Run phase by phase on 2 threads, the
/// input transform (split by channels), the GEMMs (by ξ) and the output transform (by tiles)
/// each read what the other core wrote: GoogLeNet's 64→192 layer on 24×24 (1.5 MB of V and M)
/// took as long on two threads as on one on a host whose cores hand data over slowly.
void planParallelChunks(const GemmSpec& s, WinogradLayout& w, int64_t chunkBytes) {
  const int64_t threads = int64_t(std::max(1u, std::thread::hardware_concurrency()));
  if (!s.parallel || threads < 2)
    return;
  const ConvGeometry& cv = *s.conv;
  const int64_t points = int64_t(w.m + 2) * (w.m + 2);
  const int64_t tiles = totalTiles(cv, w.m);
  const int64_t perTile = 4 * points * (cv.inChannels + cv.outChannels);
  const int64_t maxChunk =
      std::max<int64_t>(8, (chunkBytes > 0 ? chunkBytes : kChunkBytes) / perTile);
  for (int64_t k = 1; k <= 4; ++k) {
    const int64_t perChunk = roundUp(ceilDiv(tiles, threads * k), 8);
    const int64_t chunks = ceilDiv(tiles, perChunk);
    if (perChunk > maxChunk || chunks < threads || (chunks * perChunk - tiles) * 3 > tiles ||
        chunks * perChunk * perTile > kParallelScratchBytes)
      continue;
    // Every chunk reads all the transformed weights: with few tiles per chunk and weights
    // beyond the caches that streaming is the work (VGG-11's 512→512 layer on 28×28, 4 chunks
    // of 16 tiles and 38 MB of U: 6.9 → 9.4 ms; AlexNet's 13×13 layers, chunks of 8, 25-35%
    // slower).
    if (perChunk < 32 && 4 * points * cv.inChannels * cv.outChannels > kCachedWeightBytes)
      return;
    w.chunks = chunks;
    w.chunkTiles = perChunk;
    w.chunkParallel = true;
    return;
  }
}

/// Estimated time in multiply-adds of the micro-kernel: the larger of the arithmetic (GEMMs on
/// the padded tiles and channels, and the transforms) and the weights streamed from memory.
double winogradCost(const ConvGeometry& cv, const WinogradLayout& w) {
  const double points = double(w.m + 2) * (w.m + 2);
  const double cin = double(cv.inChannels), cout = double(cv.outChannels);
  const double tiles = double(w.chunks * w.chunkTiles);
  double arithmetic =
      points * tiles *
      (cin * double(roundUp(cv.outChannels, w.nr)) + kInputCost * cin + kOutputCost * cout);
  return std::max(arithmetic, kWeightByteCost * 4.0 * points * cin * cout);
}

double im2colCost(const ConvGeometry& cv) {
  const double cin = double(cv.inChannels), cout = double(cv.outChannels);
  double arithmetic = 9.0 * cin * cout * double(cv.batch * cv.outH * cv.outW) * kIm2colOverhead;
  return std::max(arithmetic, kWeightByteCost * 4.0 * 9.0 * cin * cout);
}

KernelArg scratchArg(const std::string& name, int64_t floats) {
  KernelArg a;
  a.role = KernelArg::Role::Scratch;
  a.name = name;
  a.sizes = {floats};
  a.bytes = 4 * floats;
  return a;
}

/// U[ξ = a·alpha + b][ci][co] = (G g Gᵀ)[a][b] for the filter g = W[co, ci] (OIHW weights).
Tensor transformWeights(const Tensor& weights, const ConvGeometry& cv, const WinogradMatrices& t) {
  const int64_t cin = cv.inChannels, cout = cv.outChannels;
  const int alpha = t.alpha;
  Tensor u(DType::F32, {int64_t(alpha) * alpha, cin, cout});
  auto out = u.mutableData<float>();
  // Output channels innermost: each of the alpha² rows of U is written in order (input
  // channels innermost wrote alpha² cache lines per filter, each a row of U apart).
  for (int64_t ci = 0; ci < cin; ++ci)
    for (int64_t co = 0; co < cout; ++co) {
      double g[3][3], gg[16][3]; // G g: alpha × 3
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          int64_t at = ((co * cin + ci) * 3 + i) * 3 + j;
          g[i][j] = weights.dtype() == DType::F32 ? double(weights.data<float>()[size_t(at)])
                                                  : weights.getAsDouble(at);
        }
      for (int a = 0; a < alpha; ++a)
        for (int j = 0; j < 3; ++j) {
          double sum = 0;
          for (int i = 0; i < 3; ++i)
            sum += t.g[size_t(a * 3 + i)] * g[i][j];
          gg[a][j] = sum;
        }
      for (int a = 0; a < alpha; ++a)
        for (int b = 0; b < alpha; ++b) {
          double sum = 0;
          for (int j = 0; j < 3; ++j)
            sum += gg[a][j] * t.g[size_t(b * 3 + j)];
          out[size_t(((a * alpha + b) * cin + ci) * cout + co)] = float(sum);
        }
    }
  return u;
}

} // namespace

const WinogradMatrices& winogradMatrices(int m) {
  static const WinogradMatrices f2 = makeMatrices(2), f4 = makeMatrices(4);
  return m == 2 ? f2 : f4;
}

Expected<bool> prepareWinograd(Kernel& kernel, int64_t chunkBytes) {
  if (!kernel.gemm || !kernel.gemm->conv)
    return false;
  GemmSpec& s = *kernel.gemm;
  if (s.winograd)
    return true;
  if (s.algorithm == ConvAlgorithm::Im2col)
    return false;
  if (!winogradApplies(s)) {
    if (s.algorithm == ConvAlgorithm::Winograd)
      return makeError("kernel ", kernel.name,
                       ": Winograd needs a 3x3 convolution with stride 1, no dilation, one "
                       "group and constant weights");
    return false;
  }
  const ConvGeometry& cv = *s.conv;
  // An empty convolution (no images, channels or pixels) has nothing to transform.
  if (cv.batch < 1 || cv.inChannels < 1 || cv.outChannels < 1 || cv.outH < 1 || cv.outW < 1)
    return false;
  WinogradLayout w;
  if (s.algorithm == ConvAlgorithm::Auto) {
    // A register tile Winograd's input transform cannot fill was asked for: im2col's.
    if (s.mr != 0 && s.mr != 4 && s.mr != 8)
      return false;
    // Winograd when F(2×2) beats im2col, and then F(4×4) where the cost rule expects it
    // faster still (maps of 14×14 and up: 36 multiplies per 16 outputs, against 16 per 4; on
    // 7×7 its 8×8 cover wastes too much) and the layer has at least 64 input channels.
    // F(4×4)'s transforms round more than F(2×2)'s: with the points 0, ±1, 2, -1/2 every zoo
    // export stays inside --compare's default tolerance, but Inception-v3's 32→64 stem layer
    // in F(4×4) (15% faster) took its output past the zoo's strict comparison with PyTorch
    // (max_abs 2.3e-3 against 1.8e-3), so narrow layers keep F(2×2).
    w = layoutFor(s, 2, chunkBytes);
    if (winogradCost(cv, w) >= kChooseBelow * im2colCost(cv))
      return false;
    if (WinogradLayout w4 = layoutFor(s, 4, chunkBytes);
        cv.inChannels >= kMinF4InChannels && winogradCost(cv, w4) < winogradCost(cv, w))
      w = w4;
  } else {
    w = layoutFor(s, s.winogradTile == 4 ? 4 : 2, chunkBytes);
  }
  planParallelChunks(s, w, chunkBytes);
  const WinogradMatrices& t = winogradMatrices(w.m);
  const int64_t points = int64_t(t.alpha) * t.alpha;

  const int64_t cin = cv.inChannels, cout = cv.outChannels;
  // Chunks in parallel each have slices of their own.
  const int64_t slices = w.chunkParallel ? w.chunks : 1;
  w.vArg = int(kernel.args.size());
  kernel.args.push_back(
      scratchArg(kernel.name + ".winogradV", slices * points * w.chunkTiles * cin));
  w.mArg = int(kernel.args.size());
  kernel.args.push_back(
      scratchArg(kernel.name + ".winogradM", slices * points * w.chunkTiles * cout));
  w.chunkArg = int(kernel.args.size());
  kernel.args.push_back(scratchArg(kernel.name + ".winogradChunk", 2));

  Tensor u = transformWeights(*s.constantA, cv, t);
  Kernel gemm = makeGemmKernel(kernel, w, &u);
  if (Status st = packConstantOperands(gemm); !st.ok()) {
    kernel.args.resize(size_t(w.vArg));
    return st.error();
  }
  w.uArg = gemm.gemm->packedBArg;
  w.mr = gemm.gemm->mr;
  w.nr = gemm.gemm->nr;
  w.kc = gemm.gemm->kc;
  kernel.args.push_back(gemm.args[size_t(w.uArg)]);
  kernel.args.back().name = kernel.name + ".winogradU";
  if (w.uArg != int(kernel.args.size()) - 1) {
    kernel.args.resize(size_t(w.vArg));
    return makeError("kernel ", kernel.name, ": Winograd weights packed out of order");
  }
  s.winograd = w;
  return true;
}

Expected<WinogradGemm> winogradGemm(const Kernel& kernel) {
  if (!kernel.gemm || !kernel.gemm->winograd || !kernel.gemm->conv)
    return makeError("kernel ", kernel.name, ": not a Winograd convolution");
  const WinogradLayout& w = *kernel.gemm->winograd;
  WinogradGemm out;
  out.kernel = makeGemmKernel(kernel, w, nullptr);
  FB_ASSIGN_OR_RETURN(out.plan, planGemm(out.kernel));
  GemmPlan& p = out.plan;
  if (p.mr != w.mr || p.nr != w.nr || p.kc != w.kc || w.chunkTiles % p.mr != 0 ||
      (p.mr != 8 && p.mr != 4))
    return makeError("kernel ", kernel.name, ": the Winograd GEMM plan (mr=", p.mr, " nr=", p.nr,
                     " kc=", p.kc, ") differs from the one its weights were packed for");
  p.a = {OperandSource::Packed, w.vArg, 1, 0, 0, 1};
  p.aSlices = p.batch;
  return out;
}

Expected<std::string> describeWinograd(const Kernel& kernel) {
  FB_ASSIGN_OR_RETURN(WinogradGemm g, winogradGemm(kernel));
  const WinogradLayout& w = *kernel.gemm->winograd;
  const ConvGeometry& cv = *kernel.gemm->conv;
  const GemmPlan& p = g.plan;
  std::ostringstream os;
  os << "mr=" << p.mr << " nr=" << p.nr << " mc=" << p.mc << " kc=" << p.kc << " nc=" << p.nc
     << ", " << p.items() << " items" << (p.parallel ? ", parallel" : ", serial") << "; winograd F("
     << w.m << "x" << w.m << ",3x3): " << p.batch << " GEMMs of " << p.M << " tiles x " << p.N
     << " channels, K=" << p.K << ", weights transformed and packed at compile time, " << w.chunks
     << " chunk(s) of " << w.chunkTiles << " tiles for " << totalTiles(cv, w.m);
  if (w.chunkParallel)
    os << ", the chunks in parallel, each through its input transform, GEMMs and output "
          "transform (with bias and epilogue) on one thread";
  else
    os << "; input transform by channel blocks, output transform with bias and epilogue by tile "
          "runs";
  return os.str();
}

} // namespace fb::cg
