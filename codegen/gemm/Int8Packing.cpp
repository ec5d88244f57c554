// Compile-time packing of an int8 kernel's weights, per-channel corrections and multipliers,
// and the choice of its inner-product form and register tile.
#include "codegen/gemm/Int8GemmEmitter.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fb::cg {

namespace {

/// Four bytes per lane and k-step in both forms: four s8 (VNNI) or two i16.
constexpr int64_t kLaneBytes = 4;

std::vector<int32_t> int32Values(const Tensor& t) {
  std::vector<int32_t> v(size_t(t.numElements()));
  if (t.dtype() == DType::U8) {
    auto d = t.data<uint8_t>();
    std::copy(d.begin(), d.end(), v.begin());
  } else {
    auto d = t.data<int8_t>();
    std::copy(d.begin(), d.end(), v.begin());
  }
  return v;
}

KernelArg weightArg(const std::string& name, Tensor data) {
  KernelArg a;
  a.role = KernelArg::Role::Weight;
  a.name = name;
  a.dtype = data.dtype();
  a.sizes = data.sizes();
  a.bytes = int64_t(data.byteSize());
  a.data = std::move(data);
  return a;
}

/// True where double(sum) * multiplier stays within ±2^30 for every channel: |sum| is at most
/// K · 255² plus the channel's |bias| (both operands minus their zero points lie in
/// [-255, 255]), and an int32 sum never exceeds 2^31 in magnitude whatever it wraps to.
bool requantFitsInt32(const Int8GemmSpec& s) {
  if (s.outType == DType::I32)
    return false;
  const int64_t channels = s.channels();
  for (int64_t c = 0; c < channels; ++c) {
    const double bias = s.bias.empty() ? 0.0 : std::abs(double(s.bias[size_t(c)]));
    const double m = s.multiplierOf(c);
    const double sum = std::min(double(s.K) * 255.0 * 255.0 + bias, 2147483648.0);
    if (!(sum * std::abs(m) <= 1073741824.0)) // false for NaN as well
      return false;
  }
  return true;
}

} // namespace

Status packInt8Operands(Kernel& kernel, const Int8Target& target) {
  assert(kernel.int8 && "packInt8Operands takes an int8 kernel");
  Int8GemmSpec& s = *kernel.int8;
  if (s.isa)
    return Status::success();
  if (!target.avx2)
    return makeError(kernel.name, ": the int8 generator needs AVX2");
  const bool rowsAreWeights = s.weightsAreRows();
  const int64_t channels = s.channels();
  const std::vector<int32_t> w = int32Values(s.weights);
  auto zeroPoint = [&](int64_t c) {
    return s.weightZeroPoints.size() == 1 ? s.weightZeroPoints[0] : s.weightZeroPoints[size_t(c)];
  };
  // Weight (channel c, k) minus its zero point: OIHW rows of a conv, [K, N] columns of a matmul.
  auto weightAt = [&](int64_t c, int64_t k) {
    return (rowsAreWeights ? w[size_t(c * s.K + k)] : w[size_t(k * s.N + c)]) - zeroPoint(c);
  };
  s.requantFitsInt32 = requantFitsInt32(s);
  s.avx512 = target.vectorRegisters >= 32;
  if (s.depthwise()) {
    // Direct: the taps minus their zero points as int32, the bias, the multipliers.
    const int64_t taps = s.K, padded = channels * taps + 16;
    std::vector<int32_t> tapValues(size_t(padded), 0), bias(size_t(channels + 16), 0);
    std::vector<int64_t> multiplierBits(size_t(channels + 16), 0);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t k = 0; k < taps; ++k)
        tapValues[size_t(c * taps + k)] = weightAt(c, k);
      bias[size_t(c)] = s.bias.empty() ? 0 : s.bias[size_t(c)];
      double m = s.multiplierOf(c);
      std::memcpy(&multiplierBits[size_t(c)], &m, sizeof m);
    }
    s.isa = Int8Isa::Depthwise;
    s.mr = 1;
    s.nr = target.vectorRegisters >= 32 ? 16 : 8; // output columns per vector: zmm or ymm
    s.packedArg = int(kernel.args.size());
    kernel.args.push_back(
        weightArg(kernel.name + ".taps", Tensor::fromVector<int32_t>({padded}, tapValues)));
    s.correctionArg = int(kernel.args.size());
    kernel.args.push_back(
        weightArg(kernel.name + ".correction", Tensor::fromVector<int32_t>({channels + 16}, bias)));
    s.multiplierArg = int(kernel.args.size());
    kernel.args.push_back(weightArg(kernel.name + ".multiplier",
                                    Tensor::fromVector<int64_t>({channels + 16}, multiplierBits)));
    // The vpdpbusd row form: 16 lanes gathered by vpermb from one 64-byte load per kernel row.
    const ConvGeometry& g = *s.conv;
    const int64_t quads = (g.kernelW + 3) / 4;
    const bool tapsFitS8 = std::all_of(tapValues.begin(), tapValues.end(),
                                       [](int32_t v) { return v >= -128 && v <= 127; });
    if (target.vnni512 && target.vbmi && s.nr == 16 && tapsFitS8 &&
        15 * g.strideW + (g.kernelW - 1) * g.dilationW < 64) {
      std::vector<int32_t> words(size_t(channels * g.kernelH * quads + 16), 0);
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t kh = 0; kh < g.kernelH; ++kh)
          for (int64_t kw = 0; kw < g.kernelW; ++kw) {
            uint32_t& word =
                reinterpret_cast<uint32_t&>(words[size_t((c * g.kernelH + kh) * quads + kw / 4)]);
            const uint32_t byte =
                uint8_t(int8_t(tapValues[size_t(c * taps + kh * g.kernelW + kw)]));
            word |= byte << (8 * (kw % 4));
          }
      s.tapQuadsArg = int(kernel.args.size());
      kernel.args.push_back(weightArg(kernel.name + ".tapQuads",
                                      Tensor::fromVector<int32_t>({int64_t(words.size())}, words)));
    }
    return Status::success();
  }
  bool fitsS8 = true;
  for (int64_t c = 0; c < channels && fitsS8; ++c)
    for (int64_t k = 0; k < s.K; ++k) {
      int32_t v = weightAt(c, k);
      if (v < -128 || v > 127) {
        fitsS8 = false;
        break;
      }
    }
  const Int8Isa isa = target.vnni && fitsS8 ? Int8Isa::Vnni : Int8Isa::Int16;
  const int64_t group = isa == Int8Isa::Vnni ? 4 : 2; // k values per lane and step
  const int64_t elemBytes = kLaneBytes / group;
  const int64_t kSteps = (s.K + group - 1) / group;
  // Accumulators mr × nr/8 plus nr/8 column vectors and a broadcast fit the registers (16
  // accumulators of 32 registers; 8 of 16, leaving room for vpmaddwd's products).
  const int64_t mr = std::min<int64_t>(s.M, target.vectorRegisters >= 32 ? 8 : 4);
  // With 512-bit VNNI the k loop runs on zmm: 32 columns are two zmm per row (16 accumulators).
  const int64_t nr = s.N <= 8 ? 8 : isa == Int8Isa::Vnni && target.vnni512 && s.N > 16 ? 32 : 16;
  const int64_t rowPanels = (s.M + mr - 1) / mr, colPanels = (s.N + nr - 1) / nr;

  // The weights' micro-panels.
  auto put = [&](std::vector<uint8_t>& dst, int64_t lane, int64_t e, int32_t v) {
    uint8_t* p = dst.data() + lane * kLaneBytes + e * elemBytes;
    if (isa == Int8Isa::Vnni) {
      *p = uint8_t(int8_t(v));
    } else {
      int16_t h = int16_t(v);
      std::memcpy(p, &h, sizeof h);
    }
  };
  std::vector<uint8_t> packed;
  if (rowsAreWeights) {
    packed.assign(size_t(s.groups * rowPanels * kSteps * mr * kLaneBytes), 0);
    for (int64_t g = 0; g < s.groups; ++g)
      for (int64_t p = 0; p < rowPanels; ++p)
        for (int64_t q = 0; q < kSteps; ++q)
          for (int64_t r = 0; r < mr; ++r)
            for (int64_t e = 0; e < group; ++e) {
              const int64_t m = p * mr + r, k = q * group + e;
              if (m < s.M && k < s.K)
                put(packed, ((g * rowPanels + p) * kSteps + q) * mr + r, e,
                    weightAt(g * s.M + m, k));
            }
  } else {
    packed.assign(size_t(colPanels * kSteps * nr * kLaneBytes), 0);
    for (int64_t j = 0; j < colPanels; ++j)
      for (int64_t q = 0; q < kSteps; ++q)
        for (int64_t l = 0; l < nr; ++l)
          for (int64_t e = 0; e < group; ++e) {
            const int64_t n = j * nr + l, k = q * group + e;
            if (n < s.N && k < s.K)
              put(packed, (j * kSteps + q) * nr + l, e, weightAt(n, k));
          }
  }

  // Per channel: the int32 correction and the multiplier, padded so that a whole register tile
  // past the last channel reads defined values (those lanes are never stored).
  const int64_t padded = (rowsAreWeights ? channels + mr : colPanels * nr) + 16;
  std::vector<int32_t> correction(size_t(padded), 0);
  std::vector<int64_t> multiplierBits(size_t(padded), 0);
  // VNNI reads the activation as u8: i8 data is biased by 128, and so is its zero point.
  const int64_t actZp = s.actZeroPoint + (s.actType == DType::I8 ? 128 : 0);
  for (int64_t c = 0; c < channels; ++c) {
    int64_t corr = s.bias.empty() ? 0 : s.bias[size_t(c)];
    if (isa == Int8Isa::Vnni) {
      int64_t sum = 0;
      for (int64_t k = 0; k < s.K; ++k)
        sum += weightAt(c, k);
      corr -= actZp * sum;
    }
    // int32 arithmetic wraps like the interpreter's accumulator.
    correction[size_t(c)] = int32_t(uint32_t(uint64_t(corr)));
    double m = s.multiplierOf(c);
    std::memcpy(&multiplierBits[size_t(c)], &m, sizeof m);
  }

  Tensor packedT(DType::U8, {int64_t(packed.size())});
  std::memcpy(packedT.mutableData<uint8_t>().data(), packed.data(), packed.size());
  s.isa = isa;
  s.mr = mr;
  s.nr = nr;
  s.packedArg = int(kernel.args.size());
  kernel.args.push_back(weightArg(kernel.name + ".packedW", std::move(packedT)));
  s.correctionArg = int(kernel.args.size());
  kernel.args.push_back(
      weightArg(kernel.name + ".correction", Tensor::fromVector<int32_t>({padded}, correction)));
  s.multiplierArg = int(kernel.args.size());
  kernel.args.push_back(weightArg(kernel.name + ".multiplier",
                                  Tensor::fromVector<int64_t>({padded}, multiplierBits)));
  KernelArg act;
  act.role = KernelArg::Role::Scratch;
  act.name = kernel.name + ".packedAct";
  act.dtype = DType::U8;
  act.bytes = rowsAreWeights ? s.slices() * colPanels * kSteps * nr * kLaneBytes
                             : rowPanels * kSteps * mr * kLaneBytes;
  act.sizes = {act.bytes};
  s.packedActArg = int(kernel.args.size());
  kernel.args.push_back(std::move(act));
  return Status::success();
}

} // namespace fb::cg
