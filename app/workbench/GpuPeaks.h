// The roofs of an NVIDIA GPU for the roofline: from the device's attributes, not measured.
#pragma once

#include "app/workbench/MachinePeaks.h"
#include "core/Error.h"

namespace fb::cg::gpu {
struct DeviceInfo;
}

namespace fb::workbench {

/// FP32 peak = multiprocessors x FP32 lanes per multiprocessor x 2 (FMA) x clock; DRAM peak =
/// 2 (double data rate) x memory clock x bus width; no L2 roof. `cpu` holds the device's name,
/// `isa` its sm_NN.
MachinePeaks peaksOfGpu(const cg::gpu::DeviceInfo& device);

/// The roofs of CUDA device 0, or the driver's "no CUDA device: ..." error.
Expected<MachinePeaks> gpuPeaks();

} // namespace fb::workbench
