// The CUDA driver API loaded at run time with dlopen("libcuda.so.1"): device queries, a
// device's primary context, memory, PTX modules, launches and events.
//
// The build never needs CUDA (no cuda.h, no link-time libcuda): a machine without a driver or a
// device gets an error that starts with "no CUDA device: " and says why. Every driver failure
// becomes an fb::Error that names the operation and the driver's error; nothing throws or aborts.
#pragma once

#include "core/Error.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace fb::cg::gpu {

/// A device address (the driver's CUdeviceptr).
using DevicePtr = uint64_t;

/// What the driver reports about one device, plus the peaks derived from it.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0; ///< compute capability
  int multiprocessors = 0;
  int64_t totalMemoryBytes = 0;
  int clockKHz = 0;
  int memoryClockKHz = 0;
  int memoryBusWidthBits = 0;
  int l2Bytes = 0;
  int maxThreadsPerBlock = 0;
  int sharedBytesPerBlock = 0;
  /// The most shared memory a kernel may use after opting in
  /// (cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)).
  int sharedBytesPerBlockOptin = 0;
  int warpSize = 32;

  /// The PTX target name of this compute capability, e.g. "sm_90".
  std::string smName() const;
  /// The DRAM peak: 2 (double data rate) * memory clock * bus width in bytes.
  double peakDramBytesPerSecond() const;
  /// The FP32 FMA peak: SMs * FP32 lanes per SM * 2 flops * clock.
  double peakFp32FlopsPerSecond() const;
  /// FP32 lanes per SM of this architecture (64 on sm_60/70/75/80, 128 on sm_86/89/90 and on
  /// Maxwell/sm_61; 128 for anything newer than the table knows).
  int fp32LanesPerMultiprocessor() const;
};

/// The driver's entry points, filled by dlsym; defined in CudaDriver.cpp only, so that no CUDA
/// type leaks into users of this header.
struct DriverApi;

/// The process-wide driver, loaded once by cudaDriver(); it is never unloaded.
class CudaDriver {
public:
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  /// How many devices the driver sees (at least one: cudaDriver() fails with none).
  int deviceCount() const;
  /// Queries one device's name, memory and attributes.
  Expected<DeviceInfo> deviceInfo(int ordinal) const;
  /// The driver's name and description of a CUresult:
  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string errorText(int result) const;
  /// The driver's version as the driver encodes it (1000 * major + 10 * minor, 12040 = 12.4).
  int driverVersion() const { return m_driverVersion; }

  /// The entry points, for the GPU runtime's own implementation files.
  const DriverApi& api() const { return *m_api; }

private:
  friend Expected<const CudaDriver*> loadCudaDriver();
  CudaDriver(std::unique_ptr<DriverApi> api, int deviceCount, int driverVersion);

  std::unique_ptr<DriverApi> m_api; ///< owned; holds the dlopen handle, which is never closed
  int m_deviceCount = 0;
  int m_driverVersion = 0;
};

/// The process-wide driver: dlopen("libcuda.so.1") and cuInit once, thread-safe; later calls
/// return the same driver or the same error. The error starts with "no CUDA device: " and says
/// why: the library was not found (with dlerror's text), a symbol is missing (named), cuInit
/// failed (with the driver's error), or the driver sees zero devices.
Expected<const CudaDriver*> cudaDriver();
/// Success when cudaDriver() succeeds, otherwise its error.
Status cudaAvailable();

class CudaModule;
class CudaEvent;

/// A device's primary context, retained for this object's life. Every method first makes it
/// current on the calling thread (cuCtxSetCurrent), so any thread may call. Not copyable.
class CudaContext {
public:
  /// Retains device `ordinal`'s primary context.
  static Expected<std::unique_ptr<CudaContext>> create(int ordinal = 0);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  const DeviceInfo& device() const { return m_device; }
  const CudaDriver& driver() const { return *m_driver; }

  /// Allocates `bytes` of device memory (at least one byte: the driver rejects zero). The error
  /// names `what`, the size in MiB and the driver's error.
  Expected<DevicePtr> allocate(int64_t bytes, const std::string& what);
  /// Frees memory from allocate(); 0 is ignored. A failure is dropped: this runs in destructors,
  /// and a failed free leaves the caller nothing to do.
  void release(DevicePtr p);
  /// Copies host to device; waits until the copy is done.
  Status upload(DevicePtr dst, const void* src, int64_t bytes);
  /// Copies device to host; waits for earlier work on the default stream.
  Status download(void* dst, DevicePtr src, int64_t bytes);
  /// Sets `bytes` bytes at `dst` to `byte`.
  Status fill(DevicePtr dst, uint8_t byte, int64_t bytes);

  /// Loads PTX text, compiled for this device by the driver's JIT. The error names `what` and
  /// includes the JIT's error log.
  Expected<std::unique_ptr<CudaModule>> loadPtx(const std::string& ptx, const std::string& what);

  /// Launches `function` (from CudaModule::function) on the default stream: grid and block as
  /// {x, y, z}, `sharedBytes` of dynamic shared memory, and `params` as cuLaunchKernel's
  /// kernelParams (an array of pointers, one to each parameter's value). Does not wait.
  Status launch(void* function, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                unsigned sharedBytes, void** params);
  /// Waits for all work in the context; reports an earlier launch's failure.
  Status synchronize();

  /// Creates an event with timing enabled.
  Expected<std::unique_ptr<CudaEvent>> createEvent();

  /// Makes this context current on the calling thread (every method above does it first).
  Status makeCurrent() const;

private:
  CudaContext(const CudaDriver* driver, DeviceInfo device, int cuDevice, void* context);
  /// "op: CUDA_ERROR_... (...)" for a failed call, success for CUDA_SUCCESS.
  Status check(int result, const std::string& op) const;

  const CudaDriver* m_driver; ///< process-wide, not owned
  DeviceInfo m_device;
  int m_cuDevice = 0;
  void* m_context = nullptr; ///< the retained primary CUcontext; released by the destructor
};

/// A loaded PTX module; unloaded when destroyed. Its context must outlive it.
class CudaModule {
public:
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  /// The kernel named `name` (a CUfunction for CudaContext::launch); the error names it.
  Expected<void*> function(const std::string& name) const;
  /// The JIT's info log from loading (register and shared-memory use, when the driver says).
  const std::string& jitInfoLog() const { return m_infoLog; }

private:
  friend class CudaContext;
  CudaModule(CudaContext* context, void* module, std::string what, std::string infoLog);

  CudaContext* m_context; ///< not owned
  void* m_module;         ///< the CUmodule
  std::string m_what;
  std::string m_infoLog;
};

/// A timing event on the default stream; destroyed with the object. Its context must outlive it.
class CudaEvent {
public:
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  /// Records the event on the default stream (after the work launched so far).
  Status record();
  /// Waits until the recorded work is done.
  Status synchronize();
  /// Milliseconds from `start`'s record to this event's; both must be recorded, and this one
  /// complete (synchronize() first).
  Expected<float> millisecondsSince(const CudaEvent& start) const;

private:
  friend class CudaContext;
  CudaEvent(CudaContext* context, void* event);

  CudaContext* m_context; ///< not owned
  void* m_event;          ///< the CUevent
};

/// Device memory owned by value: freed when destroyed. Move-only; the context must outlive it.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// Allocates `bytes` in `context`; the error names `what` (see CudaContext::allocate).
  static Expected<DeviceBuffer> allocate(CudaContext& context, int64_t bytes,
                                         const std::string& what);
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  DevicePtr ptr() const { return m_ptr; }
  int64_t bytes() const { return m_bytes; }
  CudaContext* context() const { return m_context; }
  /// Frees the memory now; the buffer becomes empty.
  void reset();

private:
  CudaContext* m_context = nullptr; ///< not owned
  DevicePtr m_ptr = 0;
  int64_t m_bytes = 0;
};

} // namespace fb::cg::gpu
