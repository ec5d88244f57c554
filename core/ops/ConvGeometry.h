// Sliding-window geometry shared by Conv, ConvTranspose, the pools, QLinearConv and ConvInteger:
// reading kernel/stride/dilation/padding attributes, output sizes and SAME padding splits.
#pragma once

#include "core/Attribute.h"
#include "core/TensorType.h"

#include <string>
#include <vector>

namespace fb {

/// ONNX's auto_pad attribute.
enum class AutoPad : uint8_t { NotSet, SameUpper, SameLower, Valid };

/// The window attributes of one node, one entry per spatial axis.
struct WindowGeometry {
  std::vector<int64_t> kernel;    ///< -1 where the kernel size is not known yet (symbolic W)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> padsBegin; ///< from `pads`; recomputed for SAME by the size functions
  std::vector<int64_t> padsEnd;
  std::vector<int64_t> outputPadding; ///< ConvTranspose only (zeros otherwise)
  std::vector<int64_t> outputShape;   ///< ConvTranspose's output_shape (spatial), may be empty
  AutoPad autoPad = AutoPad::NotSet;
  bool ceilMode = false;

  size_t rank() const { return kernel.size(); }
  /// The extent a dilated kernel covers on axis i.
  int64_t effectiveKernel(size_t i) const { return (kernel[i] - 1) * dilations[i] + 1; }
};

/// What a window op reads from its attributes.
enum class WindowKind : uint8_t {
  Conv,          ///< kernel_shape optional (from W), no ceil_mode
  ConvTranspose, ///< like Conv, plus output_padding and output_shape
  Pool,          ///< kernel_shape required, ceil_mode allowed
};

/// Reads auto_pad, kernel_shape, strides, dilations, pads and the kind's extra attributes for
/// `spatialRank` axes, checking counts and ranges. `weightKernel` is W's spatial dims (Conv
/// kinds) and fills or checks kernel_shape. Errors name the attribute but not the node.
Expected<WindowGeometry> readWindowGeometry(const AttrMap& attrs, WindowKind kind,
                                            size_t spatialRank,
                                            const std::vector<Dim>& weightKernel = {});

/// The output dim of a forward window op (Conv, pools) on axis i for input dim `in`: unknown
/// when `in` or the kernel is not static. An error when the window does not fit.
Expected<Dim> windowOutputDim(const WindowGeometry& g, size_t i, const Dim& in);
/// Resolves SAME padding for concrete input sizes and returns the output spatial sizes.
Expected<std::vector<int64_t>> windowOutputSizes(WindowGeometry& g,
                                                 const std::vector<int64_t>& inSizes);

/// ConvTranspose's output dim on axis i (output_shape wins when given).
Expected<Dim> transposedOutputDim(const WindowGeometry& g, size_t i, const Dim& in);
/// Resolves ConvTranspose's padding for concrete input sizes and returns its output sizes.
Expected<std::vector<int64_t>> transposedOutputSizes(WindowGeometry& g,
                                                     const std::vector<int64_t>& inSizes);

/// Output type dims of Conv-like ops (Conv, QLinearConv, ConvInteger) from X and W, checking
/// ranks, channels against `group` and kernel_shape. Errors name X and W with their types.
Expected<std::vector<Dim>> convOutputDims(const AttrMap& attrs, const TensorType& x,
                                          const TensorType& w);

/// "[N, 3, 224, 224]".
std::string dimsToString(const std::vector<Dim>& dims);

/// A conv problem in a canonical 3-D form: 1-D and 2-D spatial problems get leading axes of
/// size 1, so one kernel serves every rank.
struct ConvProblem {
  int64_t batch = 1;
  int64_t inChannels = 1;  ///< channels of the tensor read (X for Conv, X for ConvTranspose)
  int64_t outChannels = 1; ///< channels of the tensor written
  int64_t groups = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t padBegin[3] = {0, 0, 0};
  int64_t padEnd[3] = {0, 0, 0};

  int64_t inSpatial() const { return in[0] * in[1] * in[2]; }
  int64_t outSpatial() const { return out[0] * out[1] * out[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
};

/// Builds a ConvProblem from resolved geometry, X's sizes [N, C, ...] and the output's sizes.
ConvProblem makeConvProblem(const WindowGeometry& g, const std::vector<int64_t>& xSizes,
                            const std::vector<int64_t>& ySizes, int64_t groups);

} // namespace fb
