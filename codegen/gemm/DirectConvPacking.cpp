// The direct convolution's compile-time half: whether it applies, the register tile and work
// split (a cost model of FMA and load slots), the per-layer choice, and the weight packing.
#include "codegen/gemm/DirectConv.h"
#include "codegen/gemm/GemmPlan.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fb::cg {

namespace {

/// Work items to aim for per thread: dynamic claiming stays balanced on a shared core.
constexpr int64_t kItemsPerThread = 4;
/// The most weight bytes one channel block's tiles may cycle through: a work item runs its tiles
/// one after another over the same block of packed weights (every input channel and tap for the
/// tile's output channels), which stays in L2 only while it is this small. ResNet-18's 512→512
/// 3×3 layers on 7×7 (K = 4608) inside the model, 2 threads, 2-core Zen 5 (1 MiB L2 per core):
/// 64-channel blocks (1.2 MB) 1000-1150 µs, 32 (590 KB) 800, 16 (295 KB) 765; its stride-2
/// 256→512 (K = 2304) 32 channels (295 KB) 390 µs, 16 425.
constexpr int64_t kMaxWeightBlockBytes = int64_t(320) << 10;
/// The weight bytes one pass of a work item's tiles reads (DirectConvLayout::passChannels): a
/// block of weights larger than this is cut into passes over fewer input channels that stay in
/// L1 while every tile of the item reads them. Reading a 256 KiB block once per tile (from L2,
/// after the first tile pulled it from memory in a burst the prefetchers cannot feed) made
/// ResNet-50's 1×1 layers on 7×7 (K = 2048 and 512, 4 MiB of weights each) 20% slower inside
/// the model than alone; ONNX Runtime's NCHWc kernels accumulate over batches of input channels
/// the same way.
constexpr int64_t kPassWeightBytes = int64_t(32) << 10;
/// The most partial-sum bytes a work item keeps on the worker's stack between passes.
constexpr int64_t kMaxPassPartialBytes = int64_t(64) << 10;
/// The largest padded input slice a work item copies onto the worker's stack.
constexpr int64_t kMaxLocalPaddingBytes = int64_t(512) << 10;

/// The widest pixel tile for `vectors` channel vectors: accumulators, the weight vectors and
/// the broadcast inputs stay within all but one of the `registers`. With unit stride the taps of
/// one filter row share their inputs (pixel j's tap kw is pixel j+1's tap kw-1), and LLVM keeps the
/// `pixels + shared` broadcasts live across those taps; more would spill accumulators.
int64_t maxTilePixels(int vectors, int64_t shared, int registers) {
  // With 16 registers, keeping a broadcast per pixel live leaves 2-6 accumulators: too few to
  // cover the FMA latency. There the unit-stride tile is sized by its accumulators alone, up to
  // 12 (LLVM reloads the shared broadcasts): 64→64 3×3 on 16×16 as AVX2 code, 2 threads,
  // 133 → 93 µs; strided tiles (few shared broadcasts) were faster as they were (7×7/2 stem
  // 105 against 127 µs).
  if (registers < 32 && shared > 0)
    return std::clamp<int64_t>((registers - 4) / vectors, 1, 28);
  return std::clamp<int64_t>((registers - 1 - vectors - shared) / (vectors + 1), 1, 28);
}

/// Cycles of one tap of a tile of `pixels` pixels and `vectors` channel vectors on a core with
/// two 512-bit FMA pipes and three load ports: FMAs, loads (weights and broadcasts), or the FMA
/// latency of 4 cycles when there are too few accumulators to cover it.
double tapCycles(int vectors, int64_t pixels) {
  return std::max({double(vectors * pixels) / 2.0, double(vectors + pixels) / 3.0, 4.0});
}

/// Tile rows per work item: of the splits into `want` to twice as many row blocks, the one
/// whose items (`outer` channel blocks × row blocks, claimed in order by whichever thread is
/// free) keep the threads busiest; ties go to fewer items. Nine equal items on two threads
/// leave one idle for a ninth of the time (SqueezeNet's stem: 3 channel blocks × 3 row blocks).
int64_t balancedRowsPerItem(int64_t tileRows, int64_t outer, int threads, int64_t want) {
  int64_t bestPer = ceilDiv(tileRows, want), bestSpan = 0;
  for (int64_t n = want; n <= std::min(2 * want, tileRows); ++n) {
    const int64_t per = ceilDiv(tileRows, n), items = ceilDiv(tileRows, per);
    std::vector<int64_t> busy(size_t(std::max(threads, 1)), 0);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < items; ++i) {
        auto next = std::min_element(busy.begin(), busy.end());
        *next += i + 1 < items ? per : tileRows - (items - 1) * per;
      }
    const int64_t span = *std::max_element(busy.begin(), busy.end());
    if (bestSpan == 0 || span < bestSpan) {
      bestSpan = span;
      bestPer = per;
    }
  }
  return bestPer;
}

struct TileShape {
  int vectors = 1;
  int64_t rows = 1, cols = 1;
  int64_t tiles = 1; ///< per image, group and channel block
  double cost = 0;
};

/// The tile for `vectors`: a row split into nearly equal segments of at most maxTilePixels, or
/// whole rows stacked when a row is shorter; its cost is the sum over all tiles of the image.
TileShape shapeFor(int vectors, int64_t shared, int64_t m, int64_t outH, int64_t outW,
                   int registers) {
  const int64_t kLanes = int64_t(vectorLanes(registers));
  TileShape t;
  t.vectors = vectors;
  const int64_t most = maxTilePixels(vectors, shared, registers);
  const int64_t segments = ceilDiv(outW, most);
  t.cols = ceilDiv(outW, segments);
  t.rows = t.cols == outW ? std::clamp<int64_t>(most / outW, 1, outH) : 1;
  const int64_t lastCols = outW - (segments - 1) * t.cols;
  const int64_t fullRows = outH / t.rows, lastRows = outH % t.rows;
  double perRow = double(segments - 1) * tapCycles(vectors, t.rows * t.cols) +
                  tapCycles(vectors, t.rows * lastCols);
  double perLast = lastRows == 0 ? 0.0
                                 : double(segments - 1) * tapCycles(vectors, lastRows * t.cols) +
                                       tapCycles(vectors, lastRows * lastCols);
  t.cost = double(ceilDiv(m, kLanes * vectors)) * (double(fullRows) * perRow + perLast);
  t.tiles = ceilDiv(outH, t.rows) * segments;
  return t;
}

/// The layers the direct convolution is measured to beat both im2col and Winograd on (2-core
/// Zen 5, docs/decisions.md): few output channels per group — one or two zmm of them, where
/// im2col's 8×48 tile and Winograd's GEMMs run mostly empty — with a filter of more than one
/// tap (a 1×1 convolution is already a plain GEMM without im2col). Up to 48 channels only on
/// maps of at most 16×16 pixels (DenseNet's growth layers, GoogLeNet's 5×5 branches), up to
/// 192 on maps under 8×8, where streaming the weights is the work (1×1 filters included), and
/// any number for a 3×3 filter on maps of at most 16×16 when K ≤ 1536. Not for
/// a short K (a first layer on 3 or 4 channels: 27 products per output do not pay for the
/// tile's scatters; im2col ran 3.4× faster), nor where the scatter's 16 lanes are a multiple of
/// 4 KiB apart (a 32×32 or 64×64 map: all in one L1 set) unless K is long enough to hide it.
bool directConvWins(const ConvGeometry& g, int registers) {
  const int64_t m = g.outChannels / g.groups;
  const int64_t k = g.inChannels / g.groups * g.kernelH * g.kernelW;
  const bool oneSet = (g.outH * g.outW * 4) % 4096 == 0;
  // On a map of fewer than 8×8 outputs the threads split the channel blocks (planDirectConv):
  // Inception-v3's 26 1×7 and 7×1 layers of 128-192 channels on 4×4 went 12% faster in all.
  // There 1×1 layers gain too (DenseNet-121's 40 bottlenecks on 4×4 and 2×2: 2.04 → 1.85 ms).
  // More channels only where each weight meets at most 16 outputs: ResNet-18's 256- and
  // 512-channel layers on 4×4 and 2×2 (64×64 input) ran twice as fast direct, GoogLeNet's
  // 208-288-channel 3×3 layers on 6×6 slower (43 → 51 µs) with the 4-vector blocks of then
  // (smallMap below takes them now, in blocks whose weights fit L2).
  const int64_t outputs = g.outH * g.outW;
  const bool weightBound = outputs < 64 && (m <= 192 || outputs <= 16);
  // Up to 64 channels on maps of at most 16×16 when the reduction is short (K < 256), which
  // leaves im2col's packing and Winograd's transforms little to amortize: SqueezeNet's 16→64
  // 3×3 layers on 14×14, 29 µs as im2col, 17 direct (the model −3.5%).
  const bool shortReduction = m <= 64 && outputs <= 256 && k < 256;
  // Few input channels (32 to 48) under a 3×3 or wider filter, on any map: Winograd's
  // transforms and products then move more memory than its short GEMMs save, which shows
  // inside a model, where they meet cold caches (per kernel in the models, 2 threads,
  // alternating binaries: SqueezeNet 1.0's expand layers at 224×224 32→128 on 54×54 906 → 750
  // µs, on 27×27 342 → 196, 48→192 on 27×27 495 → 418; Inception-v3's 32→64 on 47×47 390 →
  // 277; alone Winograd was the faster). With 16 inputs im2col stays (54×54: 214 against 223).
  const int64_t cinG = g.inChannels / g.groups;
  const bool fewInputs =
      g.kernelH * g.kernelW >= 9 && cinG >= 32 && cinG <= 48 && g.strideH == 1 && g.strideW == 1;
  // Any number of channels for a 3×3 (or wider) filter on a map of at most 16×16 outputs when
  // K ≤ 1536 (measured 2026-11-28, alternating runs on a 2-core Zen 5: ResNet-18 −4 to −7%,
  // GoogLeNet −6 to −10%, Inception-v3 −3 to −7%, DenseNet −2%, SqueezeNet ±3%; its 32→128
  // layer on 14×14, 82 µs as Winograd, 62 direct). Longer reductions keep Winograd or im2col:
  // AlexNet's 13×13 layers (K 1728-3456) ran 4.5% slower direct, VGG-11's 14×14 (K 4608) 6%.
  // On maps under 8×8 longer reductions too, once a channel block's weights fit L2
  // (kMaxWeightBlockBytes): ResNet-18's 512→512 layers on 7×7 at 224×224 (K = 4608), F(2×2)
  // Winograd reading 16/9 of the weights, 930 → 730 µs inside the model (ORT 680).
  // Longer reductions also where F(4×4) Winograd would tile the map with a quarter of its
  // tiles' area or more outside it (13×13 as 16×16: a third): its GEMMs then read 4× the
  // weights (36 points instead of 9 taps) for fewer outputs kept. AlexNet's 13×13 layers
  // inside the model (2026-12-07, 2 threads, alternating, direct with input-channel passes):
  // 384→256 (K 3456) 1064 → 812 µs, 256→256 566 → 521, 192→384 565 → 592 (noise); ResNet-50's
  // and VGG's 14×14 layers (23% outside) stay Winograd, 8-19% faster than direct.
  const int64_t tiledArea = ((g.outH + 3) / 4 * 4) * ((g.outW + 3) / 4 * 4);
  const bool ragged4x4 = 3 * tiledArea >= 4 * outputs;
  const bool smallMap = outputs <= 256 && g.kernelH * g.kernelW >= 9 &&
                        (k <= 1536 || outputs < 64 || ragged4x4);
  // Filters of 5×5 and wider at stride 1 on 32+ input channels: im2col copies each input
  // element once per tap (25 for 5×5) and Winograd does not apply. AlexNet's 64→192 5×5 on
  // 27×27 inside the model: 1549-1603 µs as im2col, 1213-1219 direct (ORT 1305).
  const bool wideFilter = g.kernelH * g.kernelW >= 25 && g.strideH == 1 && g.strideW == 1 &&
                          g.inChannels / g.groups >= 32;
  // Strided layers (no Winograd there): the im2col GEMM first gathers a strided copy of the
  // input. Inside the models, 2 threads (2026-11-28): ResNet-18's 3×3/2 64→128 on 28×28
  // 464 → 341 µs, 256→512 on 7×7 540 → 373, its 1×1/2 downsamples 76 → 52 and 72 → 54 µs;
  // AlexNet's 11×11/4 stem (K = 363) 660 → 440 µs; ResNet-50's 3×3/2 layers 989 → 708,
  // 927 → 685 and 1066 → 939 µs. The 7×7/2 stems on 3 channels (K = 147) too, since their
  // tiles count the broadcasts the taps share and single pixels leave without a scatter
  // (2026-12-07, per kernel inside the models: ResNet-18's 891 → 719 µs, SqueezeNet's
  // 1349 → 1231; before, SqueezeNet's spilled and ran 20% slower than im2col). Not 1×1/2
  // layers with a long K or a larger map: ResNet-50's downsamples (K 256-1024 on 28×28 to
  // 7×7) 2-5% slower. Not a 3×3/2 stem (K = 27).
  const bool strided = (g.strideH > 1 || g.strideW > 1) &&
                       (g.kernelH * g.kernelW > 1 ? g.inChannels / g.groups >= 16 || k >= 128
                                                  : k <= 256 && outputs <= 256);
  // Pointwise layers with K ≥ 128 of at least 128 channels on maps of at most 8×8, or of at
  // least 256 on maps of at most 16×16: the im2col GEMM packs the input once per run in a
  // phase of its own, each thread then reading the half the other packed; direct reads the
  // input where it lies. Per kernel inside the models (2 threads, alternating binaries,
  // 2026-11-28): ResNeXt-50's 1×1 layers on 8×8 83-91 → 63-72 µs, its 128→256 and 256→256 on
  // 16×16 85-92 → 68-80 and 141 → 131; DenseNet-121's 128-channel bottlenecks on 8×8
  // 30-52 → 17-36 µs, but on 16×16 (K 64-256) 2-10% slower, as were GoogLeNet's on 12×12,
  // and ResNeXt's with K = 64.
  const bool pointwise = g.kernelH * g.kernelW == 1 && g.strideH == 1 && g.strideW == 1 &&
                         k >= 128 && ((outputs <= 64 && m >= 128) || (outputs <= 256 && m >= 256));
  // Grouped 3×3 layers of at least 16 channels per group (ResNeXt's 32 groups of 16 on 4×4
  // and of 32 on 2×2; the im2col GEMM runs 32 tiny GEMMs, each packing its slice of the input):
  // isolated, 2 threads, 12 µs direct against 31-39 as im2col, 20-22 against 43-52 (2026-11-28).
  // Groups of 8 channels (RegNet's) on maps over 16×16: 224 channels in 28 groups on 14×14
  // 80 → 50 µs, 56 in 7 on 28×28 88 → 50; on 8×8 and 16×16 even. Groups of 4 (ResNeXt's
  // layer1, 128 channels on 16×16) 18% slower, a tile's 16 lanes then holding 4 live channels.
  // With AVX2's 8-channel ymm tiles groups of 8 win everywhere (as AVX2 code on the same host:
  // 14×14 145 → 42 µs, 28×28 128 → 43, 8×8 24 → 17, ResNeXt's 32 of 32 on 2×2 49 → 20).
  if (g.groups > 1) {
    const bool wideGroups = registers >= 32 ? m >= 16 || (m >= 8 && outputs > 256) : m >= 8;
    return g.kernelH * g.kernelW > 1 && wideGroups && k >= 64 && (!oneSet || k >= 512);
  }
  // The other rules were measured on AVX-512 only.
  if (registers < 32)
    return false;
  return g.groups == 1 && (g.kernelH * g.kernelW > 1 || weightBound || pointwise || strided) &&
         m >= 16 && k >= 128 && (!oneSet || k >= 512) &&
         (m <= 32 || (m <= 48 && outputs <= 256) || shortReduction || weightBound || smallMap ||
          pointwise || strided || fewInputs || wideFilter);
}

float elementAt(const Tensor& t, int64_t offset) {
  if (t.dtype() == DType::F32)
    return t.data<float>()[size_t(offset)];
  return float(t.getAsDouble(offset));
}

} // namespace

bool directConvApplies(const GemmSpec& spec, int registers) {
  if (!spec.conv || !spec.constantA || registers < 16 || isDepthwise(spec) ||
      spec.pooling != GemmSpec::Pooling::None ||
      (spec.bias != GemmSpec::Bias::None && spec.bias != GemmSpec::Bias::PerRow))
    return false;
  const ConvGeometry& g = *spec.conv;
  if (g.groups < 1 || g.inChannels % g.groups != 0 || g.outChannels % g.groups != 0 ||
      g.batch < 1 || g.inChannels < 1 || g.outChannels < 1 || g.outH < 1 || g.outW < 1 ||
      g.kernelH < 1 || g.kernelW < 1 || g.strideH < 1 || g.strideW < 1 || g.dilationH < 1 ||
      g.dilationW < 1 || g.padTop < 0 || g.padLeft < 0)
    return false;
  const int64_t maxOffset = int64_t(1) << 31;
  const int64_t needH = (g.outH - 1) * g.strideH + (g.kernelH - 1) * g.dilationH + 1;
  const int64_t needW = (g.outW - 1) * g.strideW + (g.kernelW - 1) * g.dilationW + 1;
  const int64_t plane = std::max(g.inH + g.padTop, needH) * std::max(g.inW + g.padLeft, needW);
  return g.batch * g.inChannels * plane < maxOffset &&
         g.batch * g.outChannels * g.outH * g.outW < maxOffset &&
         spec.constantA->numElements() ==
             g.outChannels * (g.inChannels / g.groups) * g.kernelH * g.kernelW;
}

DirectConvLayout planDirectConv(const GemmSpec& spec, int threads) {
  const ConvGeometry& g = *spec.conv;
  if (threads <= 0)
    threads = int(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t m = g.outChannels / g.groups;
  const int registers = spec.vectorRegisters > 0 ? spec.vectorRegisters : hostVectorRegisters();
  const int64_t kLanes = int64_t(vectorLanes(registers));
  TileShape best;
  // A schedule's `mr` (16, 32, 48 or 64 output channels) fixes the tile's vectors.
  int asked = spec.mr % kLanes == 0 && spec.mr >= kLanes && spec.mr <= 4 * kLanes
                  ? int(spec.mr / kLanes)
                  : 0;
  // A small map (fewer than 8×8 outputs) reads each weight a few times only, so streaming the
  // weights from memory is most of the work; splitting the threads by rows would make each of
  // them stream all the weights. Then channel blocks go to the threads instead: the fewest
  // vectors that give each thread a block of its own (128→32 on 4×4, weights cold: 10 → 7.8 µs).
  const bool weightBound = g.outH * g.outW < 64 && asked == 0;
  // A strided tile shares broadcasts too: pixel j's tap kw is pixel j+1's tap kw - stride.
  // On AVX-512 LLVM keeps them live as it does with unit stride, and a tile sized without them
  // spills (SqueezeNet's 7×7/2 stem, 96 channels: 3 zmm × 7 pixels reloaded 114 values per
  // input channel).
  const int64_t shared = g.strideW == 1    ? std::min<int64_t>(g.kernelW - 1, 8)
                         : registers >= 32 ? std::min<int64_t>((g.kernelW - 1) / g.strideW, 8)
                                           : 0;
  const int64_t blockBytesPerVector =
      kLanes * (g.inChannels / g.groups) * g.kernelH * g.kernelW * int64_t(sizeof(float));
  // A strided tile shares few broadcasts between taps: with one vector it loads an input per
  // FMA or nearly and the load ports bind, so it keeps two (ResNet-50's 512→512 3×3/2 to 7×7, K =
  // 4608, inside the model: 906-943 µs with 16 channels, 810-841 with 32, 1056-1080 with 64).
  const int mostVectors = int(
      std::clamp<int64_t>(kMaxWeightBlockBytes / blockBytesPerVector, g.strideW > 1 ? 2 : 1, 4));
  if (weightBound) {
    // When the widest tile's channel blocks do not divide among the threads, take the tile of
    // down to half its vectors whose blocks spread best (fewest vectors on the busiest thread;
    // ties: more blocks, for the dynamic claiming). 192 channels on 2 threads as 3 blocks of 4
    // vectors leave one thread idle a third of the time, 6 blocks of 2 do not (SqueezeNet's
    // 48→192 3×3 on 7×7: 30 → 21.5 µs each).
    const int widest = int(std::clamp<int64_t>(ceilDiv(m, kLanes) / threads, 1, 4));
    auto busiest = [&](int v) { return ceilDiv(ceilDiv(m, kLanes * v), threads) * v; };
    asked = widest;
    if (ceilDiv(m, kLanes * widest) % threads != 0)
      for (int v = widest - 1; v >= (widest + 1) / 2; --v)
        if (busiest(v) <= busiest(asked))
          asked = v;
    // A block's weights that outgrow L2 are reread from farther away by each of its tiles.
    if (asked > mostVectors && shapeFor(asked, shared, m, g.outH, g.outW, registers).tiles > 1)
      asked = mostVectors;
  }
  for (int v = 1; v <= 4; ++v) {
    if (asked != 0 && v != asked)
      continue;
    TileShape t = shapeFor(v, shared, m, g.outH, g.outW, registers);
    if (asked == 0 && v > mostVectors && t.tiles > 1)
      continue;
    // Ties go to more vectors: fewer passes over the input.
    if (best.cost == 0 || t.cost <= best.cost)
      best = t;
  }
  DirectConvLayout d;
  d.lanes = int(kLanes);
  d.ocVectors = best.vectors;
  d.tileRows = int(best.rows);
  d.tileCols = int(best.cols);
  d.channelBlocks = ceilDiv(m, kLanes * best.vectors);
  const int64_t tileRowsTotal = ceilDiv(g.outH, best.rows);
  const int64_t outer = g.batch * g.groups * d.channelBlocks;
  const int64_t wantRowItems =
      weightBound ? 1
                  : std::clamp<int64_t>(ceilDiv(int64_t(threads) * kItemsPerThread, outer), 1,
                                        tileRowsTotal);
  d.tileRowsPerItem = weightBound
                          ? tileRowsTotal
                          : balancedRowsPerItem(tileRowsTotal, outer, threads, wantRowItems);
  d.rowItems = ceilDiv(tileRowsTotal, d.tileRowsPerItem);
  // Passes over the input channels when the block's weights outgrow L1 and the item has more
  // than one tile to read them (a single tile reads each weight once either way).
  const int64_t cinG = g.inChannels / g.groups, taps = g.kernelH * g.kernelW;
  const int64_t tilesPerItem = d.tileRowsPerItem * ceilDiv(g.outW, best.cols);
  const int64_t channelBytes = taps * kLanes * best.vectors * int64_t(sizeof(float));
  const int64_t partialBytes =
      tilesPerItem * best.vectors * kLanes * best.rows * best.cols * int64_t(sizeof(float));
  if (tilesPerItem > 1 && channelBytes * cinG > kPassWeightBytes &&
      partialBytes <= kMaxPassPartialBytes) {
    // A multiple of 4 channels: the tile's loop unrolls 1×1 filters by 4.
    const int64_t pass = std::max<int64_t>(4, kPassWeightBytes / channelBytes / 4 * 4);
    if (pass < cinG)
      d.passChannels = pass;
  }
  const int64_t needH = (g.outH - 1) * g.strideH + (g.kernelH - 1) * g.dilationH + 1;
  const int64_t needW = (g.outW - 1) * g.strideW + (g.kernelW - 1) * g.dilationW + 1;
  d.paddedH = std::max(g.inH + g.padTop, needH);
  d.paddedW = std::max(g.inW + g.padLeft, needW);
  return d;
}

Expected<bool> prepareDirectConv(Kernel& kernel) {
  if (!kernel.gemm || !kernel.gemm->conv)
    return false;
  GemmSpec& s = *kernel.gemm;
  if (s.direct)
    return true;
  const int registers = s.vectorRegisters > 0 ? s.vectorRegisters : hostVectorRegisters();
  const int64_t kLanes = int64_t(vectorLanes(registers));
  // A schedule's mr of 16-64 channels sets the direct tile (the GUI's schedule form offers it);
  // any other GEMM blocking asks for the im2col GEMM.
  const bool directBlocking =
      s.nr == 0 && s.mc == 0 && s.kc == 0 && s.nc == 0 &&
      (s.mr == 0 || (s.mr % kLanes == 0 && s.mr >= kLanes && s.mr <= 4 * kLanes));
  if (s.algorithm == ConvAlgorithm::Auto &&
      !(directConvApplies(s, registers) && directConvWins(*s.conv, registers) && directBlocking))
    return false;
  if (s.algorithm != ConvAlgorithm::Auto && s.algorithm != ConvAlgorithm::Direct)
    return false;
  if (!directConvApplies(s, registers))
    return makeError("kernel ", kernel.name,
                     ": the direct convolution needs constant weights, a bias per channel or "
                     "none, and an AVX2 or AVX-512 target");
  const ConvGeometry& g = *s.conv;
  DirectConvLayout d = planDirectConv(s);
  const bool padded = g.padTop > 0 || g.padLeft > 0 || d.paddedH > g.inH || d.paddedW > g.inW;
  if (!padded) {
    d.paddedH = g.inH;
    d.paddedW = g.inW;
  } else {
    // The padded rows one item's tiles read; copied by the item itself while they fit the
    // stack (a separate phase costs a barrier: 3-5 µs of a 40 µs layer on 2 threads).
    const int64_t itemRows = std::min<int64_t>(d.tileRowsPerItem * d.tileRows, g.outH);
    const int64_t rows = (itemRows - 1) * g.strideH + (g.kernelH - 1) * g.dilationH + 1;
    if ((g.inChannels / g.groups) * rows * d.paddedW * 4 <= kMaxLocalPaddingBytes)
      d.localRows = rows;
  }

  // [groups][channel blocks][Cin/groups][KH][KW][16·vectors], zero past the group's channels.
  const int64_t m = g.outChannels / g.groups, cinG = g.inChannels / g.groups;
  const int64_t taps = g.kernelH * g.kernelW, width = d.lanes * d.ocVectors;
  Tensor packed(DType::F32, {g.groups * d.channelBlocks * cinG * taps * width});
  auto out = packed.mutableData<float>();
  const Tensor& w = *s.constantA;
  int64_t at = 0;
  for (int64_t grp = 0; grp < g.groups; ++grp)
    for (int64_t blk = 0; blk < d.channelBlocks; ++blk)
      for (int64_t ci = 0; ci < cinG; ++ci)
        for (int64_t tap = 0; tap < taps; ++tap)
          for (int64_t lane = 0; lane < width; ++lane, ++at) {
            const int64_t co = blk * width + lane;
            out[size_t(at)] =
                co < m ? elementAt(w, ((grp * m + co) * cinG + ci) * taps + tap) : 0.0f;
          }
  KernelArg weights;
  weights.role = KernelArg::Role::Weight;
  weights.name = kernel.name + ".directW";
  weights.sizes = {packed.numElements()};
  weights.bytes = int64_t(packed.byteSize());
  weights.data = std::move(packed);
  d.weightArg = int(kernel.args.size());
  kernel.args.push_back(std::move(weights));
  if (padded && d.localRows == 0) {
    KernelArg scratch;
    scratch.role = KernelArg::Role::Scratch;
    scratch.name = kernel.name + ".directPadded";
    scratch.sizes = {g.batch * g.inChannels * d.paddedH * d.paddedW};
    scratch.bytes = 4 * scratch.sizes[0];
    d.paddedArg = int(kernel.args.size());
    kernel.args.push_back(std::move(scratch));
  }
  s.direct = d;
  return true;
}

Expected<std::string> describeDirectConv(const Kernel& kernel) {
  if (!kernel.gemm || !kernel.gemm->direct || !kernel.gemm->conv)
    return makeError("kernel ", kernel.name, ": not a direct convolution");
  const DirectConvLayout& d = *kernel.gemm->direct;
  const ConvGeometry& g = *kernel.gemm->conv;
  std::ostringstream os;
  os << "direct convolution " << g.kernelH << 'x' << g.kernelW << " stride " << g.strideH << 'x'
     << g.strideW;
  if (g.dilationH != 1 || g.dilationW != 1)
    os << " dilation " << g.dilationH << 'x' << g.dilationW;
  if (g.groups != 1)
    os << " groups " << g.groups;
  os << ": register tile " << d.ocVectors * d.lanes << " channels (" << d.ocVectors
     << (d.lanes == 16 ? " zmm) x " : " ymm) x ") << d.tileRows << 'x' << d.tileCols
     << " pixels, input broadcast per tap, "
     << "weights packed at compile time, "
     << (d.localRows > 0    ? "input rows copied per item into a zero-bordered slice, "
         : d.paddedArg >= 0 ? "input copied into a zero-bordered plane, "
                            : "input read in place, ")
     << (d.passChannels > 0 ? "input channels in passes of " + std::to_string(d.passChannels) +
                                  " (partial sums kept per item), "
                            : std::string())
     << g.batch * g.groups * d.channelBlocks * d.rowItems << " items (" << d.channelBlocks
     << " channel blocks x " << d.rowItems << " row blocks of " << d.tileRowsPerItem * d.tileRows
     << " rows per image and group), outputs scattered to NCHW";
  return os.str();
}

} // namespace fb::cg
