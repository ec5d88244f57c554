// The CUDA driver API loaded at run time: dlopen/dlsym of libcuda.so.1, and the context, module,
// event and buffer wrappers over it. The few driver types and enum numbers used here are declared
// by hand (from CUDA's cuda.h), so the build needs no CUDA toolkit.
#include "codegen/gpu/CudaDriver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

namespace fb::cg::gpu {

namespace {

// Driver types, ABI-compatible with cuda.h (CUDAAPI is empty on Linux).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;

constexpr CUresult kCudaSuccess = 0;

// CUdevice_attribute numbers.
enum Attribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxSharedMemoryPerBlock = 8,
  kWarpSize = 10,
  kClockRate = 13,
  kMultiprocessorCount = 16,
  kMemoryClockRate = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerBlockOptin = 97,
};

// CUjit_option numbers.
enum JitOption : int {
  kJitInfoLogBuffer = 3,
  kJitInfoLogBufferSizeBytes = 4,
  kJitErrorLogBuffer = 5,
  kJitErrorLogBufferSizeBytes = 6,
  kJitLogVerbose = 12,
};

constexpr unsigned kEventDefault = 0; // CU_EVENT_DEFAULT: timing enabled

std::string mebibytes(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

/// The first `size` bytes of a JIT log buffer, without the trailing NULs and newlines.
std::string logText(const std::vector<char>& buffer, size_t size) {
  std::string text(buffer.data(), std::min(size, buffer.size()));
  text = text.substr(0, text.find('\0'));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

} // namespace

/// The driver's entry points. The `_v2` names are the ones cuda.h maps the plain names to.
struct DriverApi {
  void* library = nullptr;
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** text) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t* bytes, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr ptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count) = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned numOptions,
                                 int* options, void** optionValues) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                             unsigned blockX, unsigned blockY, unsigned blockZ,
                             unsigned sharedBytes, CUstream stream, void** params,
                             void** extra) = nullptr;
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;
};

namespace {

/// Looks up the first of `names` that the library exports into `fn`; false when none is.
template <typename Fn> bool resolve(void* library, std::initializer_list<const char*> names, Fn& fn) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) {
      fn = reinterpret_cast<Fn>(symbol);
      return true;
    }
  }
  return false;
}

/// Resolves every entry point; the error names the first missing one.
Status resolveAll(DriverApi& api) {
  void* lib = api.library;
  // Each entry: the field and the names to try, newest first. cuEventElapsedTime_v2 appeared in
  // CUDA 12.8; older drivers export only the plain name, which has the same signature.
#define FB_CUDA_RESOLVE(field, ...)                                                                \
  if (!resolve(lib, {__VA_ARGS__}, api.field))                                                     \
    return makeError("libcuda.so.1 does not export ", #field, " (looked up: ", #__VA_ARGS__, ")");
  FB_CUDA_RESOLVE(cuInit, "cuInit")
  FB_CUDA_RESOLVE(cuDriverGetVersion, "cuDriverGetVersion")
  FB_CUDA_RESOLVE(cuGetErrorName, "cuGetErrorName")
  FB_CUDA_RESOLVE(cuGetErrorString, "cuGetErrorString")
  FB_CUDA_RESOLVE(cuDeviceGetCount, "cuDeviceGetCount")
  FB_CUDA_RESOLVE(cuDeviceGet, "cuDeviceGet")
  FB_CUDA_RESOLVE(cuDeviceGetName, "cuDeviceGetName")
  FB_CUDA_RESOLVE(cuDeviceGetAttribute, "cuDeviceGetAttribute")
  FB_CUDA_RESOLVE(cuDeviceTotalMem, "cuDeviceTotalMem_v2")
  FB_CUDA_RESOLVE(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
  FB_CUDA_RESOLVE(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")
  FB_CUDA_RESOLVE(cuCtxSetCurrent, "cuCtxSetCurrent")
  FB_CUDA_RESOLVE(cuCtxSynchronize, "cuCtxSynchronize")
  FB_CUDA_RESOLVE(cuMemAlloc, "cuMemAlloc_v2")
  FB_CUDA_RESOLVE(cuMemFree, "cuMemFree_v2")
  FB_CUDA_RESOLVE(cuMemcpyHtoD, "cuMemcpyHtoD_v2")
  FB_CUDA_RESOLVE(cuMemcpyDtoH, "cuMemcpyDtoH_v2")
  FB_CUDA_RESOLVE(cuMemsetD8, "cuMemsetD8_v2")
  FB_CUDA_RESOLVE(cuModuleLoadDataEx, "cuModuleLoadDataEx")
  FB_CUDA_RESOLVE(cuModuleUnload, "cuModuleUnload")
  FB_CUDA_RESOLVE(cuModuleGetFunction, "cuModuleGetFunction")
  FB_CUDA_RESOLVE(cuLaunchKernel, "cuLaunchKernel")
  FB_CUDA_RESOLVE(cuEventCreate, "cuEventCreate")
  FB_CUDA_RESOLVE(cuEventDestroy, "cuEventDestroy_v2")
  FB_CUDA_RESOLVE(cuEventRecord, "cuEventRecord")
  FB_CUDA_RESOLVE(cuEventSynchronize, "cuEventSynchronize")
  FB_CUDA_RESOLVE(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime")
#undef FB_CUDA_RESOLVE
  return Status::success();
}

std::string errorTextOf(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* description = nullptr;
  if (api.cuGetErrorName(result, &name) != kCudaSuccess || !name)
    return "CUDA error " + std::to_string(result);
  std::string text = name;
  if (api.cuGetErrorString(result, &description) == kCudaSuccess && description)
    text += std::string(" (") + description + ")";
  return text;
}

} // namespace

// -- DeviceInfo ------------------------------------------------------------------------------

std::string DeviceInfo::smName() const {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

double DeviceInfo::peakDramBytesPerSecond() const {
  return 2.0 * memoryClockKHz * 1e3 * (memoryBusWidthBits / 8.0);
}

int DeviceInfo::fp32LanesPerMultiprocessor() const {
  // Pascal GP100, Volta, Turing and Ampere GA100 have 64 FP32 lanes per SM; Maxwell, the other
  // Pascals, GA10x, Ada and Hopper have 128.
  if (major == 7)
    return 64;
  if ((major == 6 || major == 8) && minor == 0)
    return 64;
  return 128;
}

double DeviceInfo::peakFp32FlopsPerSecond() const {
  return static_cast<double>(multiprocessors) * fp32LanesPerMultiprocessor() * 2.0 * clockKHz *
         1e3;
}

// -- CudaDriver ------------------------------------------------------------------------------

CudaDriver::CudaDriver(std::unique_ptr<DriverApi> api, int deviceCount, int driverVersion)
    : m_api(std::move(api)), m_deviceCount(deviceCount), m_driverVersion(driverVersion) {}

int CudaDriver::deviceCount() const { return m_deviceCount; }

std::string CudaDriver::errorText(int result) const { return errorTextOf(*m_api, result); }

Expected<DeviceInfo> CudaDriver::deviceInfo(int ordinal) const {
  if (ordinal < 0 || ordinal >= m_deviceCount)
    return makeError("CUDA device ", ordinal, " does not exist (the driver sees ", m_deviceCount,
                     " device", m_deviceCount == 1 ? "" : "s", ")");
  const DriverApi& api = *m_api;
  auto fail = [&](const char* op, CUresult r) {
    return makeError(op, " for CUDA device ", ordinal, ": ", errorText(r));
  };
  CUdevice device = 0;
  if (CUresult r = api.cuDeviceGet(&device, ordinal); r != kCudaSuccess)
    return fail("cuDeviceGet", r);
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  if (CUresult r = api.cuDeviceGetName(name, sizeof name - 1, device); r != kCudaSuccess)
    return fail("cuDeviceGetName", r);
  info.name = name;
  size_t totalBytes = 0;
  if (CUresult r = api.cuDeviceTotalMem(&totalBytes, device); r != kCudaSuccess)
    return fail("cuDeviceTotalMem", r);
  info.totalMemoryBytes = static_cast<int64_t>(totalBytes);
  struct Query {
    Attribute attribute;
    int* field;
    const char* what;
  };
  const Query queries[] = {
      {kComputeCapabilityMajor, &info.major, "COMPUTE_CAPABILITY_MAJOR"},
      {kComputeCapabilityMinor, &info.minor, "COMPUTE_CAPABILITY_MINOR"},
      {kMultiprocessorCount, &info.multiprocessors, "MULTIPROCESSOR_COUNT"},
      {kClockRate, &info.clockKHz, "CLOCK_RATE"},
      {kMemoryClockRate, &info.memoryClockKHz, "MEMORY_CLOCK_RATE"},
      {kGlobalMemoryBusWidth, &info.memoryBusWidthBits, "GLOBAL_MEMORY_BUS_WIDTH"},
      {kL2CacheSize, &info.l2Bytes, "L2_CACHE_SIZE"},
      {kMaxThreadsPerBlock, &info.maxThreadsPerBlock, "MAX_THREADS_PER_BLOCK"},
      {kMaxSharedMemoryPerBlock, &info.sharedBytesPerBlock, "MAX_SHARED_MEMORY_PER_BLOCK"},
      {kMaxSharedMemoryPerBlockOptin, &info.sharedBytesPerBlockOptin,
       "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
      {kWarpSize, &info.warpSize, "WARP_SIZE"},
  };
  for (const Query& q : queries) {
    if (CUresult r = api.cuDeviceGetAttribute(q.field, q.attribute, device); r != kCudaSuccess)
      return makeError("cuDeviceGetAttribute(", q.what, ") for CUDA device ", ordinal, ": ",
                       errorText(r));
  }
  return info;
}

/// Loads the library, resolves the entry points, runs cuInit and counts devices.
Expected<const CudaDriver*> loadCudaDriver() {
  auto noDevice = [](const std::string& why) { return Error("no CUDA device: " + why); };
  auto api = std::make_unique<DriverApi>();
  api->library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->library) {
    const char* why = dlerror();
    return noDevice(std::string("cannot load libcuda.so.1 (") + (why ? why : "no reason given") +
                    ")");
  }
  if (Status s = resolveAll(*api); !s.ok())
    return noDevice(s.error().message());
  if (CUresult r = api->cuInit(0); r != kCudaSuccess)
    return noDevice("cuInit failed: " + errorTextOf(*api, r));
  int version = 0;
  if (CUresult r = api->cuDriverGetVersion(&version); r != kCudaSuccess)
    return noDevice("cuDriverGetVersion failed: " + errorTextOf(*api, r));
  int count = 0;
  if (CUresult r = api->cuDeviceGetCount(&count); r != kCudaSuccess)
    return noDevice("cuDeviceGetCount failed: " + errorTextOf(*api, r));
  if (count <= 0)
    return noDevice("the driver (libcuda.so.1) sees zero devices");
  // Never deleted: contexts and modules may be released during static destruction.
  return static_cast<const CudaDriver*>(new CudaDriver(std::move(api), count, version));
}

Expected<const CudaDriver*> cudaDriver() {
  static const Expected<const CudaDriver*> driver = loadCudaDriver();
  return driver;
}

Status cudaAvailable() {
  auto driver = cudaDriver();
  if (!driver.ok())
    return driver.error();
  return Status::success();
}

// -- CudaContext -----------------------------------------------------------------------------

CudaContext::CudaContext(const CudaDriver* driver, DeviceInfo device, int cuDevice, void* context)
    : m_driver(driver), m_device(std::move(device)), m_cuDevice(cuDevice), m_context(context) {}

Expected<std::unique_ptr<CudaContext>> CudaContext::create(int ordinal) {
  FB_ASSIGN_OR_RETURN(const CudaDriver* driver, cudaDriver());
  FB_ASSIGN_OR_RETURN(DeviceInfo info, driver->deviceInfo(ordinal));
  const DriverApi& api = driver->api();
  CUdevice device = 0;
  if (CUresult r = api.cuDeviceGet(&device, ordinal); r != kCudaSuccess)
    return makeError("cuDeviceGet for CUDA device ", ordinal, ": ", driver->errorText(r));
  CUcontext context = nullptr;
  if (CUresult r = api.cuDevicePrimaryCtxRetain(&context, device); r != kCudaSuccess)
    return makeError("cuDevicePrimaryCtxRetain for CUDA device ", ordinal, " (", info.name,
                     "): ", driver->errorText(r));
  return std::unique_ptr<CudaContext>(
      new CudaContext(driver, std::move(info), device, static_cast<void*>(context)));
}

CudaContext::~CudaContext() {
  // The primary context is destroyed with its last release, freeing whatever is still in it.
  (void)m_driver->api().cuDevicePrimaryCtxRelease(m_cuDevice);
}

Status CudaContext::check(int result, const std::string& op) const {
  if (result == kCudaSuccess)
    return Status::success();
  return Error(op + ": " + m_driver->errorText(result));
}

Status CudaContext::makeCurrent() const {
  return check(m_driver->api().cuCtxSetCurrent(static_cast<CUcontext>(m_context)),
               "cuCtxSetCurrent (CUDA device " + std::to_string(m_device.ordinal) + ")");
}

Expected<DevicePtr> CudaContext::allocate(int64_t bytes, const std::string& what) {
  if (bytes < 0)
    return makeError("cuMemAlloc for '", what, "': negative size ", bytes);
  FB_TRY(makeCurrent());
  CUdeviceptr ptr = 0;
  size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1)); // the driver rejects 0
  if (CUresult r = m_driver->api().cuMemAlloc(&ptr, size); r != kCudaSuccess)
    return makeError("cuMemAlloc of ", mebibytes(bytes), " for '", what, "': ",
                     m_driver->errorText(r));
  return static_cast<DevicePtr>(ptr);
}

void CudaContext::release(DevicePtr p) {
  if (p == 0 || !makeCurrent().ok())
    return;
  (void)m_driver->api().cuMemFree(static_cast<CUdeviceptr>(p));
}

Status CudaContext::upload(DevicePtr dst, const void* src, int64_t bytes) {
  if (bytes <= 0)
    return bytes == 0 ? Status::success() : makeError("cuMemcpyHtoD: negative size ", bytes);
  FB_TRY(makeCurrent());
  return check(m_driver->api().cuMemcpyHtoD(dst, src, static_cast<size_t>(bytes)),
               "cuMemcpyHtoD of " + std::to_string(bytes) + " bytes");
}

Status CudaContext::download(void* dst, DevicePtr src, int64_t bytes) {
  if (bytes <= 0)
    return bytes == 0 ? Status::success() : makeError("cuMemcpyDtoH: negative size ", bytes);
  FB_TRY(makeCurrent());
  return check(m_driver->api().cuMemcpyDtoH(dst, src, static_cast<size_t>(bytes)),
               "cuMemcpyDtoH of " + std::to_string(bytes) + " bytes");
}

Status CudaContext::fill(DevicePtr dst, uint8_t byte, int64_t bytes) {
  if (bytes <= 0)
    return bytes == 0 ? Status::success() : makeError("cuMemsetD8: negative size ", bytes);
  FB_TRY(makeCurrent());
  return check(m_driver->api().cuMemsetD8(dst, byte, static_cast<size_t>(bytes)),
               "cuMemsetD8 of " + std::to_string(bytes) + " bytes");
}

Expected<std::unique_ptr<CudaModule>> CudaContext::loadPtx(const std::string& ptx,
                                                           const std::string& what) {
  FB_TRY(makeCurrent());
  constexpr size_t kLogBytes = 64 * 1024;
  std::vector<char> infoLog(kLogBytes, '\0'), errorLog(kLogBytes, '\0');
  int options[] = {kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes, kJitErrorLogBuffer,
                   kJitErrorLogBufferSizeBytes, kJitLogVerbose};
  // Sizes travel in the pointer-sized slots themselves; the driver writes the used sizes back.
  void* values[] = {infoLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes - 1)),
                    errorLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes - 1)),
                    reinterpret_cast<void*>(static_cast<uintptr_t>(1))};
  CUmodule module = nullptr;
  CUresult r = m_driver->api().cuModuleLoadDataEx(&module, ptx.c_str(),
                                                  sizeof options / sizeof options[0], options,
                                                  values);
  size_t infoBytes = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[1]));
  size_t errorBytes = static_cast<size_t>(reinterpret_cast<uintptr_t>(values[3]));
  if (r != kCudaSuccess) {
    std::string log = logText(errorLog, errorBytes);
    return makeError("cuModuleLoadDataEx of the PTX for '", what, "' on ", m_device.smName(),
                     ": ", m_driver->errorText(r),
                     log.empty() ? std::string("; the JIT wrote no log") : "; JIT log:\n" + log);
  }
  return std::unique_ptr<CudaModule>(
      new CudaModule(this, static_cast<void*>(module), what, logText(infoLog, infoBytes)));
}

Status CudaContext::launch(void* function, std::array<unsigned, 3> grid,
                           std::array<unsigned, 3> block, unsigned sharedBytes, void** params) {
  std::string shape = "grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
                      std::to_string(grid[2]) + ", block " + std::to_string(block[0]) + "x" +
                      std::to_string(block[1]) + "x" + std::to_string(block[2]) + ", " +
                      std::to_string(sharedBytes) + " dynamic shared bytes";
  if (!function)
    return makeError("cuLaunchKernel (", shape, "): no kernel function");
  for (unsigned extent : {grid[0], grid[1], grid[2], block[0], block[1], block[2]})
    if (extent == 0)
      return makeError("cuLaunchKernel (", shape, "): an empty grid or block");
  FB_TRY(makeCurrent());
  return check(m_driver->api().cuLaunchKernel(static_cast<CUfunction>(function), grid[0], grid[1],
                                              grid[2], block[0], block[1], block[2], sharedBytes,
                                              /*stream=*/nullptr, params, /*extra=*/nullptr),
               "cuLaunchKernel (" + shape + ")");
}

Status CudaContext::synchronize() {
  FB_TRY(makeCurrent());
  return check(m_driver->api().cuCtxSynchronize(), "cuCtxSynchronize");
}

Expected<std::unique_ptr<CudaEvent>> CudaContext::createEvent() {
  FB_TRY(makeCurrent());
  CUevent event = nullptr;
  FB_TRY(check(m_driver->api().cuEventCreate(&event, kEventDefault), "cuEventCreate"));
  return std::unique_ptr<CudaEvent>(new CudaEvent(this, static_cast<void*>(event)));
}

// -- CudaModule ------------------------------------------------------------------------------

CudaModule::CudaModule(CudaContext* context, void* module, std::string what, std::string infoLog)
    : m_context(context), m_module(module), m_what(std::move(what)),
      m_infoLog(std::move(infoLog)) {}

CudaModule::~CudaModule() {
  if (m_context->makeCurrent().ok())
    (void)m_context->driver().api().cuModuleUnload(static_cast<CUmodule>(m_module));
}

Expected<void*> CudaModule::function(const std::string& name) const {
  FB_TRY(m_context->makeCurrent());
  CUfunction function = nullptr;
  CUresult r = m_context->driver().api().cuModuleGetFunction(
      &function, static_cast<CUmodule>(m_module), name.c_str());
  if (r != kCudaSuccess)
    return makeError("cuModuleGetFunction of kernel '", name, "' in the module for '", m_what,
                     "': ", m_context->driver().errorText(r));
  return static_cast<void*>(function);
}

// -- CudaEvent -------------------------------------------------------------------------------

CudaEvent::CudaEvent(CudaContext* context, void* event) : m_context(context), m_event(event) {}

CudaEvent::~CudaEvent() {
  if (m_context->makeCurrent().ok())
    (void)m_context->driver().api().cuEventDestroy(static_cast<CUevent>(m_event));
}

Status CudaEvent::record() {
  FB_TRY(m_context->makeCurrent());
  CUresult r = m_context->driver().api().cuEventRecord(static_cast<CUevent>(m_event),
                                                       /*stream=*/nullptr);
  if (r != kCudaSuccess)
    return makeError("cuEventRecord: ", m_context->driver().errorText(r));
  return Status::success();
}

Status CudaEvent::synchronize() {
  FB_TRY(m_context->makeCurrent());
  CUresult r = m_context->driver().api().cuEventSynchronize(static_cast<CUevent>(m_event));
  if (r != kCudaSuccess)
    return makeError("cuEventSynchronize: ", m_context->driver().errorText(r));
  return Status::success();
}

Expected<float> CudaEvent::millisecondsSince(const CudaEvent& start) const {
  FB_TRY(m_context->makeCurrent());
  float ms = 0;
  CUresult r = m_context->driver().api().cuEventElapsedTime(
      &ms, static_cast<CUevent>(start.m_event), static_cast<CUevent>(m_event));
  if (r != kCudaSuccess)
    return makeError("cuEventElapsedTime: ", m_context->driver().errorText(r));
  return ms;
}

// -- DeviceBuffer ----------------------------------------------------------------------------

Expected<DeviceBuffer> DeviceBuffer::allocate(CudaContext& context, int64_t bytes,
                                              const std::string& what) {
  FB_ASSIGN_OR_RETURN(DevicePtr ptr, context.allocate(bytes, what));
  DeviceBuffer buffer;
  buffer.m_context = &context;
  buffer.m_ptr = ptr;
  buffer.m_bytes = bytes;
  return buffer;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    m_context = other.m_context;
    m_ptr = other.m_ptr;
    m_bytes = other.m_bytes;
    other.m_context = nullptr;
    other.m_ptr = 0;
    other.m_bytes = 0;
  }
  return *this;
}

void DeviceBuffer::reset() {
  if (m_context && m_ptr)
    m_context->release(m_ptr);
  m_context = nullptr;
  m_ptr = 0;
  m_bytes = 0;
}

} // namespace fb::cg::gpu
