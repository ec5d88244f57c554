// The direct depthwise-convolution generator: per output channel and row, 8-lane column vectors
// with the taps unrolled, accumulated in registers, then bias, epilogue and one store.
#include "codegen/gemm/DepthwiseEmitter.h"

#include "codegen/gemm/GemmIrBuilder.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

namespace fb::cg {

using namespace llvm;
// fb::Value (a graph value) would otherwise shadow llvm::Value here.
using gemmir::emitFor;
using gemmir::floatGep;
using gemmir::GemmIrContext;
using gemmir::loadArg;
using llvm::Value;

namespace {

constexpr int64_t kLanes = 8;
/// The bits of MaxPool's empty mark (DepthwiseIr::padValue): a quiet NaN with a payload no
/// arithmetic produces (the default NaN is 0x7fc00000 or 0xffc00000).
constexpr uint32_t kEmptyMaxBits = 0x7fd0f00du;
/// Rows above or below the image read a zero row on the worker's stack; wider rows than this
/// stay loop nests.
constexpr int64_t kMaxZeroRow = int64_t(1) << 16;
/// Interior column vectors per iteration of the row's vector loop.
constexpr int64_t kUnroll = 4;
/// Work items to aim for: enough that two threads claiming dynamically stay balanced.
constexpr int64_t kTargetItems = 32;
/// Output elements per work item to aim for when images are small.
constexpr int64_t kItemOutputs = 4096;

/// The compile-time structure of one depthwise kernel. All of it follows from the geometry, so
/// which column vectors need masks (and the masks themselves) are known when emitting.
struct DepthwisePlan {
  ConvGeometry g;
  int64_t multiplier = 1;                     ///< output channels per input channel
  int64_t rowsPerItem = 0;                    ///< output rows per work item
  int64_t rowBlocks = 1;                      ///< work items per output channel
  int64_t vectors = 0;                        ///< 8-lane vectors per output row
  int64_t interiorBegin = 0, interiorEnd = 0; ///< vectors whose loads and store need no mask
  int64_t loadWidth = kLanes; ///< input floats one tap's load reads (8*stride for strides 2-4)
  bool gather = false;        ///< strides above 4: one masked gather per tap
  bool permuted = false;      ///< stride 2: lanes held in the order one vshufps leaves them
  bool rowsMayLeave = false;  ///< some tap row falls outside the image (needs the zero row)
  /// Output rows [innerRowBegin, innerRowEnd) read only rows inside the image; the rows
  /// before and after use the zero row for their outside taps.
  int64_t innerRowBegin = 0, innerRowEnd = 0;
  bool parallel = true;
  /// Interior output rows computed per pass: 2 when consecutive rows share input rows
  /// (stride 1 with more than one kernel row), so each shared input vector is loaded once.
  /// Stride-2 pairs share only one row in three and measured slower (MobileNet-v2's 112² one).
  int64_t rowsPerPass = 1;

  int64_t channelsPerItem = 1; ///< (image, output channel) pairs per work item
  int64_t channels() const { return g.batch * g.outChannels; }
  int64_t items() const { return (channels() + channelsPerItem - 1) / channelsPerItem * rowBlocks; }
  int64_t taps() const { return g.kernelH * g.kernelW; }
  /// Input column of element 0 of the load of column vector j, tap column kw.
  int64_t loadBase(int64_t j, int64_t kw) const {
    return j * kLanes * g.strideW - g.padLeft + kw * g.dilationW;
  }
  /// Which input floats of that load are inside the image and feed a live output lane.
  std::vector<bool> loadMask(int64_t j, int64_t kw) const {
    int64_t base = loadBase(j, kw);
    auto m = std::vector<bool>(size_t(loadWidth));
    for (int64_t e = 0; e < loadWidth; ++e) {
      int64_t lane = gather ? e : e / g.strideW;
      int64_t col = base + (gather ? e * g.strideW : e);
      m[size_t(e)] = j * kLanes + lane < g.outW && col >= 0 && col < g.inW;
    }
    return m;
  }
  bool interior(int64_t j) const { return j >= interiorBegin && j < interiorEnd; }
  /// Whether tap column kw of column vector j reads inside the image in every live lane (the
  /// lanes left of outW; the others are never stored, whatever they hold).
  bool liveLanesInside(int64_t j, int64_t kw) const {
    for (int64_t l = 0; l < kLanes && j * kLanes + l < g.outW; ++l) {
      const int64_t col = loadBase(j, kw) + l * g.strideW;
      if (col < 0 || col >= g.inW)
        return false;
    }
    return true;
  }
};

Expected<DepthwisePlan> planDepthwise(const Kernel& kernel) {
  if (!kernel.gemm || !isDepthwise(*kernel.gemm))
    return makeError("kernel ", kernel.name, ": not a depthwise convolution");
  const GemmSpec& s = *kernel.gemm;
  DepthwisePlan p;
  p.g = *s.conv;
  const ConvGeometry& g = p.g;
  p.multiplier = s.M;
  if (g.strideH < 1 || g.strideW < 1 || g.dilationH < 1 || g.dilationW < 1 || g.outH < 1 ||
      g.outW < 1 || g.batch < 1 || g.outChannels < 1 || g.inH < 1 || g.inW < 1)
    return makeError("kernel ", kernel.name, ": degenerate depthwise geometry");
  if (g.inW > kMaxZeroRow)
    return makeError("kernel ", kernel.name, ": input rows of ", g.inW,
                     " floats are wider than the depthwise generator's limit of ", kMaxZeroRow);
  if (s.bias != GemmSpec::Bias::None && s.bias != GemmSpec::Bias::PerRow)
    return makeError("kernel ", kernel.name, ": depthwise bias must be per output channel");
  if ((s.aArg < 0 && s.pooling == GemmSpec::Pooling::None) || s.bArg < 0 || s.cArg < 0)
    return makeError("kernel ", kernel.name, ": depthwise spec without operands");
  if (s.pooling != GemmSpec::Pooling::None && s.bias != GemmSpec::Bias::None)
    return makeError("kernel ", kernel.name, ": a pooling window has no bias");
  for (const EpilogueOp& op : s.epilogue) {
    if ((op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) &&
        (op.arg < 0 || size_t(op.arg) >= kernel.args.size()))
      return makeError("kernel ", kernel.name, ": epilogue operand out of range");
    if (op.perRow)
      return makeError("kernel ", kernel.name,
                       ": per-channel epilogue operands are not supported by the depthwise "
                       "generator");
  }
  p.parallel = s.parallel;
  p.gather = g.strideW > 4;
  p.permuted = g.strideW == 2;
  p.loadWidth = p.gather ? kLanes : kLanes * g.strideW;
  p.vectors = (g.outW + kLanes - 1) / kLanes;
  // Interior vectors form one run: the left bound grows and the right bound shrinks with j.
  int64_t span = p.gather ? (kLanes - 1) * g.strideW + 1 : p.loadWidth;
  auto inside = [&](int64_t j) {
    return (j + 1) * kLanes <= g.outW && p.loadBase(j, 0) >= 0 &&
           p.loadBase(j, g.kernelW - 1) + span <= g.inW;
  };
  p.interiorBegin = p.interiorEnd = 0;
  for (int64_t j = 0; j < p.vectors; ++j)
    if (inside(j)) {
      if (p.interiorEnd == p.interiorBegin)
        p.interiorBegin = j;
      p.interiorEnd = j + 1;
    }
  auto floorDiv = [](int64_t a, int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); };
  p.innerRowBegin = std::min(g.outH, (g.padTop + g.strideH - 1) / g.strideH);
  int64_t lastInner = floorDiv(g.inH - 1 - (g.kernelH - 1) * g.dilationH + g.padTop, g.strideH);
  p.innerRowEnd = std::max(p.innerRowBegin, std::min(g.outH, lastInner + 1));
  p.rowsMayLeave = p.innerRowBegin > 0 || p.innerRowEnd < g.outH;
  p.rowsPerPass = g.strideH == 1 && g.kernelH > 1 && !p.gather ? 2 : 1;
  // Split rows only when channels are too few to keep the threads busy.
  int64_t channels = g.batch * g.outChannels;
  int64_t blocks = std::min(g.outH, std::max<int64_t>(1, (kTargetItems + channels - 1) / channels));
  p.rowsPerItem = (g.outH + blocks - 1) / blocks;
  p.rowBlocks = (g.outH + p.rowsPerItem - 1) / p.rowsPerItem;
  // Small images: several channels per item, so claiming an item costs little next to it.
  if (p.rowBlocks == 1)
    p.channelsPerItem = std::clamp<int64_t>(
        std::min(channels / kTargetItems, (kItemOutputs + g.outH * g.outW - 1) / (g.outH * g.outW)),
        1, channels);
  return p;
}

/// The pointers of one output row: its taps' input rows and where it is stored.
struct OutputRow {
  std::vector<Value*> in;     ///< per kernel row: the input row (or the zero row)
  Value* y = nullptr;         ///< Y at the row's start
  Value* outOffset = nullptr; ///< the row's offset in output-shaped tensors (residuals)
  bool inside = false;        ///< every tap row is inside the image (never the zero row)
};

/// Emits one kernel's IR; holds the per-item values the row code reads.
class DepthwiseIr {
public:
  DepthwiseIr(GemmIrContext& c, const DepthwisePlan& p) : c(c), p(p), g(p.g), s(c.spec) {}

  /// `void <name>.items(ptr args, i64 begin, i64 end)`: work items [begin, end).
  Function* emitItems() {
    Function* f = gemmir::makeItemsFunction(c, "items");
    Value* argv = f->getArg(0);
    IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", f));
    m_zeroRow = nullptr;
    if (p.rowsMayLeave) {
      // The padding row: zeros, or MaxPool's empty mark (padding never wins a maximum).
      auto* zero = b.CreateAlloca(c.f32, c.c64(g.inW), "zero.row");
      zero->setAlignment(Align(32));
      if (isMax())
        emitFor(b, c.c64(0), c.c64(g.inW), c.c64(1), "pad.col", [&](Value* i) {
          b.CreateAlignedStore(padValue(), floatGep(b, zero, i), Align(4));
        });
      else
        b.CreateMemSet(zero, b.getInt8(0), c.c64(4 * g.inW), Align(32));
      m_zeroRow = zero;
    }
    m_xBase = loadArg(b, argv, s.bArg, "X");
    m_wBase = s.pooling == GemmSpec::Pooling::None ? loadArg(b, argv, s.aArg, "W") : nullptr;
    m_yBase = loadArg(b, argv, s.cArg, "Y");
    m_biasBase = s.bias != GemmSpec::Bias::None ? loadArg(b, argv, s.biasArg, "bias") : nullptr;
    m_residualBase.assign(c.kernel.args.size(), nullptr);
    for (const EpilogueOp& op : s.epilogue)
      if ((op.kind == EpilogueOp::Kind::AddTensor || op.kind == EpilogueOp::Kind::MulTensor) &&
          !m_residualBase[size_t(op.arg)])
        m_residualBase[size_t(op.arg)] = loadArg(b, argv, op.arg, "residual");

    emitFor(b, f->getArg(1), f->getArg(2), c.c64(1), "item", [&](Value* item) {
      Value* rb = b.CreateURem(item, c.c64(p.rowBlocks), "rowblock");
      Value* chunk = b.CreateUDiv(item, c.c64(p.rowBlocks), "chunk");
      Value* first = b.CreateMul(chunk, c.c64(p.channelsPerItem), "chan.first");
      Value* last =
          gemmir::emitMin(b, c.c64(p.channels()), b.CreateAdd(first, c.c64(p.channelsPerItem)));
      Value* rowBegin = b.CreateMul(rb, c.c64(p.rowsPerItem), "row.begin");
      Value* rowEnd =
          gemmir::emitMin(b, c.c64(g.outH), b.CreateAdd(rowBegin, c.c64(p.rowsPerItem)));
      emitFor(b, first, last, c.c64(1), "chan",
              [&](Value* chan) { emitChannel(b, chan, rowBegin, rowEnd); });
    });
    b.CreateRetVoid();
    return f;
  }

private:
  /// Rows [rowBegin, rowEnd) of flat channel `chan` (image * Cout + output channel).
  void emitChannel(IRBuilder<>& b, Value* chan, Value* rowBegin, Value* rowEnd) {
    Value* co = b.CreateURem(chan, c.c64(g.outChannels), "co");
    Value* bi = b.CreateUDiv(chan, c.c64(g.outChannels), "image");
    Value* ci = b.CreateUDiv(co, c.c64(p.multiplier), "ci");
    Value* chanIn = b.CreateAdd(b.CreateMul(bi, c.c64(g.inChannels)), ci);
    m_xChan = floatGep(b, m_xBase, b.CreateMul(chanIn, c.c64(g.inH * g.inW)), "X.chan");
    Value* chanOut = b.CreateAdd(b.CreateMul(bi, c.c64(g.outChannels)), co);
    m_outChanOffset = b.CreateMul(chanOut, c.c64(g.outH * g.outW), "Y.chan.off");
    m_yChan = floatGep(b, m_yBase, m_outChanOffset, "Y.chan");
    // The channel's taps, splat once and kept for all its rows (a pooling window has none).
    m_weights.clear();
    Value* wChan =
        m_wBase ? floatGep(b, m_wBase, b.CreateMul(co, c.c64(p.taps())), "W.chan") : nullptr;
    for (int64_t t2 = 0; wChan && t2 < p.taps(); ++t2) {
      Value* w = b.CreateAlignedLoad(c.f32, floatGep(b, wChan, c.c64(t2)), Align(4), "w");
      m_weights.push_back(b.CreateVectorSplat(kLanes, w, "w.splat"));
    }
    // Accumulators start at the bias when it needs no scaling after the sum.
    m_biasInit = c.vf(0.0f);
    m_biasLate = nullptr;
    if (m_biasBase) {
      Value* v = b.CreateAlignedLoad(c.f32, floatGep(b, m_biasBase, co), Align(4), "bias.co");
      if (s.beta != 1.0f)
        v = b.CreateFMul(v, c.cf(s.beta));
      Value* splat = b.CreateVectorSplat(kLanes, v, "bias.splat");
      (s.alpha == 1.0f ? m_biasInit : m_biasLate) = splat;
    }
    // Edge rows apart, so the interior rows' loads need no select of the zero row (LLVM
    // would push that select into every load's address).
    auto rows = [&](int64_t from, int64_t to, bool edge, const char* name) {
      if (from >= to)
        return;
      Value* lo = b.CreateSelect(b.CreateICmpSGT(rowBegin, c.c64(from)), rowBegin, c.c64(from));
      Value* hi = gemmir::emitMin(b, rowEnd, c.c64(to));
      if (edge || p.rowsPerPass == 1) {
        emitFor(b, lo, hi, c.c64(1), name, [&](Value* oh) { emitRows(b, oh, edge, 1); });
        return;
      }
      // Row pairs (their shared input rows are loaded once), then the odd row left.
      int64_t n = p.rowsPerPass;
      Value* pairsEnd =
          b.CreateSub(hi, b.CreateSRem(b.CreateSub(hi, lo), c.c64(n)), "oh.pairs.end");
      emitFor(b, lo, pairsEnd, c.c64(n), name, [&](Value* oh) { emitRows(b, oh, edge, n); });
      emitFor(b, pairsEnd, hi, c.c64(1), "oh.rest", [&](Value* oh) { emitRows(b, oh, edge, 1); });
    };
    rows(0, p.innerRowBegin, true, "oh.top");
    rows(p.innerRowBegin, p.innerRowEnd, false, "oh");
    rows(p.innerRowEnd, g.outH, true, "oh.bottom");
  }

  /// Output rows oh .. oh+count-1: edge vectors with constant masks, the interior run in a
  /// loop. The rows' vectors at one column are accumulated together and stored after, so
  /// LLVM loads an input vector two rows share once.
  void emitRows(IRBuilder<>& b, Value* oh0, bool edge, int64_t count) {
    m_rowSet.clear();
    for (int64_t r = 0; r < count; ++r) {
      OutputRow row;
      row.inside = !edge;
      Value* oh = r ? b.CreateAdd(oh0, c.c64(r), "oh.next") : oh0;
      for (int64_t kh = 0; kh < g.kernelH; ++kh) {
        Value* ih = b.CreateAdd(b.CreateMul(oh, c.c64(g.strideH)),
                                c.c64(kh * g.dilationH - g.padTop), "ih");
        if (!edge) {
          row.in.push_back(floatGep(b, m_xChan, b.CreateMul(ih, c.c64(g.inW)), "X.row"));
          continue;
        }
        Value* valid = b.CreateICmpULT(ih, c.c64(g.inH), "row.inside");
        Value* off = b.CreateMul(b.CreateSelect(valid, ih, c.c64(0)), c.c64(g.inW));
        row.in.push_back(b.CreateSelect(valid, floatGep(b, m_xChan, off), m_zeroRow, "X.row"));
      }
      Value* rowOff = b.CreateMul(oh, c.c64(g.outW), "row.off");
      row.outOffset = b.CreateAdd(m_outChanOffset, rowOff);
      row.y = floatGep(b, m_yChan, rowOff, "Y.row");
      m_rowSet.push_back(std::move(row));
    }

    // Vectors go in pairs where they can (the epilogue then runs on both at once, in 16 lanes
    // with AVX-512: a SiLU's exp costs the same per vector whichever its width).
    auto known = [&](int64_t from, int64_t to) {
      for (int64_t j = from; j < to; j += 2) {
        std::vector<Column> cols = {{c.c64(j), j}};
        if (j + 1 < to)
          cols.push_back({c.c64(j + 1), j + 1});
        emitVectors(b, cols);
      }
    };
    known(0, p.interiorBegin);
    int64_t run = p.interiorEnd - p.interiorBegin;
    int64_t looped = run / kUnroll * kUnroll;
    if (looped > 0)
      emitFor(b, c.c64(p.interiorBegin), c.c64(p.interiorBegin + looped), c.c64(kUnroll), "jv",
              [&](Value* jv) {
                for (int64_t u = 0; u < kUnroll; u += 2)
                  emitVectors(
                      b, {{b.CreateAdd(jv, c.c64(u)), -1}, {b.CreateAdd(jv, c.c64(u + 1)), -1}});
              });
    // The interior's remainder (unmasked) and the right edge.
    known(p.interiorBegin + looped, p.vectors);
  }

  /// A column vector: its index j (a run-time value) and `known`, its constant index, or -1
  /// inside the interior loop.
  struct Column {
    Value* j;
    int64_t known;
  };

  /// One or two column vectors of every row in the set: taps, then bias, epilogue and store
  /// per row.
  void emitVectors(IRBuilder<>& b, const std::vector<Column>& cols) {
    std::vector<std::vector<Value*>> totals(m_rowSet.size());
    for (size_t r = 0; r < m_rowSet.size(); ++r)
      for (const Column& col : cols)
        totals[r].push_back(accumulate(b, m_rowSet[r], col.j, col.known));
    for (size_t r = 0; r < m_rowSet.size(); ++r)
      store(b, m_rowSet[r], cols, totals[r]);
  }

  /// The taps of column vector j of one output row, summed from the bias.
  Value* accumulate(IRBuilder<>& b, const OutputRow& row, Value* j, int64_t known) {
    bool masked = known >= 0 && !p.interior(known);
    // Narrow rows give the out-of-order core few independent vectors: two partial sums halve
    // the FMA dependency chain.
    // A maximum is one chain over the taps in the interpreter's order (row by row), from the
    // empty mark: NaN wins only as a window's first tap, and ±0 ties keep the first.
    std::vector<Value*> acc = {isMax() ? padVector(kLanes) : m_biasInit};
    if (p.vectors <= 2 && g.kernelH > 1 && !isMax())
      acc.push_back(c.vf(0.0f));
    // Stride 2: the wide load of tap offset o, whose odd floats are the taps of offset o + 1.
    std::map<std::pair<int64_t, int64_t>, Value*> wides;
    bool started = false, realMax = false; // a tap combined; one in every lane (no empty mark)
    Value* col0 = b.CreateMul(j, c.c64(kLanes * g.strideW), "col0");
    // Taps column by column (a convolution's sums do not mind the order), or row by row.
    const int64_t outer = isMax() ? g.kernelH : g.kernelW, inner = isMax() ? g.kernelW : g.kernelH;
    for (int64_t t = 0; t < outer * inner; ++t) {
      const int64_t kh = isMax() ? t / inner : t % inner, kw = isMax() ? t % inner : t / inner;
      std::vector<bool> mask;
      if (masked) {
        mask = p.loadMask(known, kw);
        if (std::none_of(mask.begin(), mask.end(), [](bool x) { return x; }))
          continue; // every lane of this tap column reads padding
        if (std::all_of(mask.begin(), mask.end(), [](bool x) { return x; }))
          mask.clear();
      }
      int64_t offset = kw * g.dilationW - g.padLeft;
      Value* base = b.CreateAdd(col0, c.c64(offset), "iw");
      Value* x = nullptr;
      auto shared = wides.find({kh, offset - 1});
      if (p.permuted && shared != wides.end()) {
        // Float 2l+1 of that load is this tap's lane l, inside the row exactly when the
        // load's mask (over the same columns) let it through.
        x = b.CreateShuffleVector(shared->second, ArrayRef<int>{1, 3, 9, 11, 5, 7, 13, 15}, "x");
      } else {
        Value* wide = nullptr;
        x = loadTap(b, row.in[size_t(kh)], base, mask, &wide);
        wides[{kh, offset}] = wide;
      }
      Value*& sum = acc[size_t(kh) % acc.size()];
      // A masked load (a row narrower than the vector, or an edge) still fills every live
      // lane when its masked-off floats feed only lanes that are never stored.
      const bool everyLane = row.inside && (mask.empty() || p.liveLanesInside(known, kw));
      // The window's first tap, inside the image in every lane, is the maximum so far; once
      // one such tap is in, no lane holds the empty mark.
      sum =
          isMax() && !started && everyLane ? x : combine(b, sum, x, kh * g.kernelW + kw, !realMax);
      started = true;
      realMax = realMax || everyLane;
    }
    Value* total = acc[0];
    for (size_t i = 1; i < acc.size(); ++i)
      total = b.CreateFAdd(total, acc[i], "acc.sum");
    if (isMax() && !realMax) // a window wholly in the padding: -inf, the interpreter's empty max
      total = b.CreateSelect(isPad(b, total), c.vf(-std::numeric_limits<float>::infinity()), total,
                             "max.empty");
    if (p.permuted)
      total = b.CreateShuffleVector(total, ArrayRef<int>{0, 1, 4, 5, 2, 3, 6, 7}, "acc.ordered");
    if (s.pooling == GemmSpec::Pooling::Average)
      total = b.CreateFMul(total, c.vf(s.poolScale), "average");
    if (s.alpha != 1.0f)
      total = b.CreateFMul(total, c.vf(s.alpha), "alpha");
    if (m_biasLate)
      total = b.CreateFAdd(total, m_biasLate, "biased");
    return total;
  }

  /// The epilogue and the store of one or two column vectors of one output row: two are joined
  /// for the epilogue, then stored each with its own mask.
  void store(IRBuilder<>& b, const OutputRow& row, const std::vector<Column>& cols,
             const std::vector<Value*>& totals) {
    std::vector<Value*> storeMask(cols.size(), nullptr), colOff(cols.size());
    for (size_t v = 0; v < cols.size(); ++v) {
      int64_t known = cols[v].known;
      if (known >= 0 && !p.interior(known) && (known + 1) * kLanes > g.outW)
        storeMask[v] = laneMask(g.outW - known * kLanes);
      colOff[v] = b.CreateMul(cols[v].j, c.c64(kLanes), "ow");
    }
    auto join = [&](const std::function<Value*(size_t)>& part) -> Value* {
      if (cols.size() == 1)
        return part(0);
      SmallVector<int, 16> all;
      for (int l = 0; l < 2 * kLanes; ++l)
        all.push_back(l);
      return b.CreateShuffleVector(part(0), part(1), all, "joined");
    };
    Value* total = join([&](size_t v) { return totals[v]; });
    for (const EpilogueOp& op : s.epilogue)
      total = gemmir::applyEpilogueOp(c, b, op, total, [&](int arg) -> Value* {
        return join([&](size_t v) -> Value* {
          Value* at =
              floatGep(b, m_residualBase[size_t(arg)], b.CreateAdd(row.outOffset, colOff[v]));
          if (storeMask[v])
            return b.CreateMaskedLoad(c.v8f32, at, Align(4), storeMask[v], c.vf(0.0f), "residual");
          return b.CreateAlignedLoad(c.v8f32, at, Align(4), "residual");
        });
      });
    for (size_t v = 0; v < cols.size(); ++v) {
      Value* part = total;
      if (cols.size() == 2) {
        SmallVector<int, 8> half;
        for (int l = 0; l < kLanes; ++l)
          half.push_back(int(v) * kLanes + l);
        part = b.CreateShuffleVector(total, half, "half");
      }
      Value* out = floatGep(b, row.y, colOff[v], "Y.at");
      if (storeMask[v])
        b.CreateMaskedStore(part, out, Align(4), storeMask[v]);
      else
        b.CreateAlignedStore(part, out, Align(4));
    }
  }

  bool isMax() const { return s.pooling == GemmSpec::Pooling::Max; }
  /// What a tap outside the image contributes: 0, or to a maximum the empty mark, a NaN with a
  /// payload of its own (kEmptyMaxBits) that the maximum treats as "no tap yet".
  Constant* padValue() const {
    if (!isMax())
      return c.cf(0.0f);
    return ConstantFP::get(c.ctx, APFloat(APFloat::IEEEsingle(), APInt(32, kEmptyMaxBits)));
  }
  Constant* padVector(int64_t lanes) const {
    return ConstantVector::getSplat(ElementCount::getFixed(unsigned(lanes)), padValue());
  }
  /// Lanes of `v` holding the empty mark (compared as bits: it is a NaN).
  Value* isPad(IRBuilder<>& b, Value* v) {
    return b.CreateICmpEQ(b.CreateBitCast(v, c.v8i32),
                          ConstantInt::get(c.v8i32, uint64_t(kEmptyMaxBits)), "empty");
  }

  /// One tap into an accumulator: acc + x·w[tap] (a convolution), acc + x (AveragePool), or the
  /// interpreter's maximum (MaxPool): the first tap of a window is taken whatever it is, a later
  /// one only when greater, so NaN wins only as the first. `mayBeEmpty`: some lane of acc may
  /// still hold the empty mark (else the maximum is one vmaxps).
  Value* combine(IRBuilder<>& b, Value* acc, Value* x, int64_t tap, bool mayBeEmpty) {
    switch (s.pooling) {
    case GemmSpec::Pooling::Max: {
      Value* take = b.CreateFCmpOGT(x, acc);
      if (mayBeEmpty)
        take = b.CreateOr(take, isPad(b, acc));
      return b.CreateSelect(take, x, acc, "acc.max");
    }
    case GemmSpec::Pooling::Average:
      return b.CreateFAdd(acc, x, "acc");
    case GemmSpec::Pooling::None:
      break;
    }
    return b.CreateIntrinsic(Intrinsic::fmuladd, {c.v8f32}, {x, m_weights[size_t(tap)], acc},
                             nullptr, "acc");
  }

  /// The input vector of one tap: lane l holds X[row, base + l*stride] (in vshufps order for
  /// stride 2). `mask` (empty: all loaded floats are inside the row) is over the loaded floats.
  Value* loadTap(IRBuilder<>& b, Value* row, Value* base, const std::vector<bool>& mask,
                 Value** wideOut) {
    Value* zero = padVector(kLanes);
    if (p.gather) {
      SmallVector<Constant*, 8> lanes;
      for (int64_t l = 0; l < kLanes; ++l)
        lanes.push_back(ConstantInt::get(c.i64, l * g.strideW));
      Value* idx = b.CreateAdd(b.CreateVectorSplat(kLanes, base), ConstantVector::get(lanes));
      // Masked-off lanes may point outside the row; they are never read.
      Value* ptrs = b.CreateGEP(c.f32, row, idx, "x.ptrs");
      return b.CreateMaskedGather(c.v8f32, ptrs, Align(4), constMask(mask, kLanes), zero, "x");
    }
    auto* ty = FixedVectorType::get(c.f32, unsigned(p.loadWidth));
    // A masked load may start left of the row (padding); its masked-off floats are not read.
    Value* at = mask.empty() ? floatGep(b, row, base) : b.CreateGEP(c.f32, row, base);
    Value* wide = mask.empty()
                      ? static_cast<Value*>(b.CreateAlignedLoad(ty, at, Align(4), "x.wide"))
                      : b.CreateMaskedLoad(ty, at, Align(4), constMask(mask, p.loadWidth),
                                           padVector(p.loadWidth), "x.wide");
    *wideOut = wide;
    if (g.strideW == 1)
      return wide;
    SmallVector<int, 8> pick;
    if (p.permuted) {
      // vshufps of the two halves: logical lanes 0 1 4 5 2 3 6 7, undone once per vector.
      pick = {0, 2, 8, 10, 4, 6, 12, 14};
    } else {
      for (int64_t l = 0; l < kLanes; ++l)
        pick.push_back(int(l * g.strideW));
    }
    return b.CreateShuffleVector(wide, pick, "x");
  }

  /// A constant <n x i1>: all true when `mask` is empty.
  Value* constMask(const std::vector<bool>& mask, int64_t n) {
    SmallVector<Constant*, 32> bits;
    for (int64_t e = 0; e < n; ++e)
      bits.push_back(ConstantInt::get(c.i1, mask.empty() || mask[size_t(e)]));
    return ConstantVector::get(bits);
  }

  /// The first `live` of 8 lanes.
  Value* laneMask(int64_t live) {
    std::vector<bool> m(kLanes);
    for (int64_t l = 0; l < kLanes; ++l)
      m[size_t(l)] = l < live;
    return constMask(m, kLanes);
  }

  GemmIrContext& c;
  const DepthwisePlan& p;
  const ConvGeometry& g;
  const GemmSpec& s;
  // Per kernel.
  Value* m_zeroRow = nullptr;
  Value *m_xBase = nullptr, *m_wBase = nullptr, *m_yBase = nullptr, *m_biasBase = nullptr;
  std::vector<Value*> m_residualBase;
  // Per channel.
  Value* m_xChan = nullptr;
  Value* m_yChan = nullptr;
  Value* m_outChanOffset = nullptr;
  std::vector<Value*> m_weights;
  Value* m_biasInit = nullptr;
  Value* m_biasLate = nullptr;
  // Per output row.
  std::vector<OutputRow> m_rowSet;
};

} // namespace

Expected<Function*> emitDepthwiseKernel(Module& module, const Kernel& kernel) {
  FB_ASSIGN_OR_RETURN(DepthwisePlan plan, planDepthwise(kernel));
  if (module.getFunction(kernel.name))
    return makeError("kernel ", kernel.name,
                     ": a function of that name already exists in the module");
  // GemmIrContext carries a GEMM plan for the GEMM pieces; none of the helpers used here read it.
  GemmPlan unusedGemmPlan;
  GemmIrContext c(module, kernel, unusedGemmPlan);
  DepthwiseIr ir(c, plan);
  Function* items = ir.emitItems();

  Function* entry = c.makeFunction("", Type::getVoidTy(c.ctx), {c.ptr}, /*internal=*/false);
  entry->getArg(0)->setName("args");
  entry->addParamAttr(0, Attribute::NoAlias);
  IRBuilder<> b(BasicBlock::Create(c.ctx, "entry", entry));
  Function* worker =
      gemmir::emitRunItems(c, b, entry->getArg(0), items, plan.items(), plan.parallel, "worker");
  b.CreateRetVoid();

  std::string message;
  raw_string_ostream os(message);
  for (Function* fn : {items, worker, entry})
    if (fn && verifyFunction(*fn, &os))
      return makeError("kernel ", kernel.name, ": generated invalid LLVM IR: ", os.str());
  return entry;
}

Expected<std::string> describeDepthwise(const Kernel& kernel) {
  FB_ASSIGN_OR_RETURN(DepthwisePlan p, planDepthwise(kernel));
  const ConvGeometry& g = p.g;
  std::ostringstream os;
  const GemmSpec::Pooling pooling = kernel.gemm->pooling;
  os << (pooling == GemmSpec::Pooling::Max       ? "direct max pool "
         : pooling == GemmSpec::Pooling::Average ? "direct average pool "
                                                 : "direct depthwise ")
     << g.kernelH << 'x' << g.kernelW << " stride " << g.strideH << 'x' << g.strideW;
  if (g.dilationH != 1 || g.dilationW != 1)
    os << " dilation " << g.dilationH << 'x' << g.dilationW;
  if (p.multiplier != 1)
    os << " multiplier " << p.multiplier;
  os << ", " << p.vectors << " 8-lane vectors per row ("
     << p.vectors - (p.interiorEnd - p.interiorBegin) << " masked), "
     << (p.gather         ? "gathered"
         : g.strideW == 1 ? "contiguous"
                          : "strided")
     << " loads, " << p.items() << " items (" << g.batch * g.outChannels << " channels / "
     << p.channelsPerItem << " per item × " << p.rowBlocks << " row blocks)"
     << (p.parallel ? ", parallel" : ", serial");
  return os.str();
}

} // namespace fb::cg
