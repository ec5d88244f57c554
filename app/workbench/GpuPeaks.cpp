// GPU roofs from the CUDA driver's device attributes.
#include "app/workbench/GpuPeaks.h"
#include "codegen/gpu/CudaDriver.h"

namespace fb::workbench {

MachinePeaks peaksOfGpu(const cg::gpu::DeviceInfo& device) {
  MachinePeaks p;
  p.gflops = device.peakFp32FlopsPerSecond() / 1e9;
  p.gbps = device.peakDramBytesPerSecond() / 1e9;
  p.cacheGbps = 0;
  p.threads = device.multiprocessors * device.fp32LanesPerMultiprocessor();
  p.cpu = device.name;
  p.isa = device.smName();
  p.memoryMethod = "device attributes";
  p.measuredAt = "from the device's attributes";
  return p;
}

Expected<MachinePeaks> gpuPeaks() {
  FB_ASSIGN_OR_RETURN(const cg::gpu::CudaDriver* driver, cg::gpu::cudaDriver());
  FB_ASSIGN_OR_RETURN(cg::gpu::DeviceInfo info, driver->deviceInfo(0));
  return peaksOfGpu(info);
}

} // namespace fb::workbench
