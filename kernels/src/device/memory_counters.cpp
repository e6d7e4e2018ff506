// CUPTI's range profiler (CUDA 12.6+ API: cupti_range_profiler.h with the
// host object of cupti_profiler_host.h), with libcupti opened by dlopen: only
// CUPTI's headers are used at build time, so the binary runs where libcupti
// is missing and says so. The flow: cuptiProfilerInitialize; chip name and
// counter availability -> host object -> config image of the metrics;
// cuptiRangeProfilerEnable on the runtime's primary context; per measurement a
// fresh counter data image, SetConfig (user range, user replay), passes of
// Start/PushRange/launch/PopRange/Stop until all are submitted, DecodeData,
// EvaluateToGpuValues.
#include "flashlab/kernels/device/memory_counters.hpp"
#include "shared_library.hpp"

#ifdef FLASHLAB_HAVE_CUPTI
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>

#include "cuda_check.hpp"
#endif

namespace flashlab::kernels {

const std::vector<std::string>& memory_counter_metrics() {
  static const std::vector<std::string> names = {
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "lts__t_sectors_srcunit_tex_op_read.sum",
      "lts__t_sectors_srcunit_tex_op_write.sum",
      "lts__t_sector_hit_rate.pct",
  };
  return names;
}

#ifndef FLASHLAB_HAVE_CUPTI

struct CounterSession::Impl {};

std::unique_ptr<CounterSession> CounterSession::open(int, std::string* why_not) {
#ifdef FLASHLAB_HAVE_CUDA
  if (why_not) *why_not = "this build found no CUPTI headers in the CUDA toolkit, so it reads no GPU counters";
#else
  if (why_not)
    *why_not = "this build has no CUDA support, so it reads no GPU counters (configure with -DFLASHLAB_CUDA=ON)";
#endif
  return nullptr;
}

// Unreachable: open() never returns a session here.
MemoryCounters CounterSession::measure(const std::function<void()>&, const std::function<void()>&) { return {}; }
std::string CounterSession::description() const { return {}; }

#else

namespace {

// Every entry point used; the types come from CUPTI's own headers.
#define FLASHLAB_CUPTI_ENTRY_POINTS(X)                                                                            \
  X(cuptiGetResultString) X(cuptiGetVersion) X(cuptiProfilerInitialize) X(cuptiProfilerDeInitialize)             \
  X(cuptiProfilerDeviceSupported) X(cuptiDeviceGetChipName) X(cuptiProfilerGetCounterAvailability)               \
  X(cuptiProfilerHostInitialize) X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostConfigAddMetrics)           \
  X(cuptiProfilerHostGetConfigImageSize) X(cuptiProfilerHostGetConfigImage) X(cuptiProfilerHostGetNumOfPasses)   \
  X(cuptiProfilerHostEvaluateToGpuValues) X(cuptiRangeProfilerEnable) X(cuptiRangeProfilerDisable)               \
  X(cuptiRangeProfilerGetCounterDataSize) X(cuptiRangeProfilerCounterDataImageInitialize)                        \
  X(cuptiRangeProfilerSetConfig) X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop)                            \
  X(cuptiRangeProfilerPushRange) X(cuptiRangeProfilerPopRange) X(cuptiRangeProfilerDecodeData)

struct Cupti {
#define FLASHLAB_DECLARE(name) decltype(&::name) name = nullptr;
  FLASHLAB_CUPTI_ENTRY_POINTS(FLASHLAB_DECLARE)
#undef FLASHLAB_DECLARE
  decltype(&::cuptiGetErrorMessage) error_message = nullptr;  // newer than the rest; optional
  std::string path;
};

// libcupti stays loaded for the life of the process: CUPTI hooks into the
// driver, and unloading it under a live context is not supported.
bool load_cupti(Cupti& api, std::string& why_not) {
  const std::vector<std::string> candidates = detail::library_candidates(
      "FLASHLAB_CUPTI", {"libcupti.so.13", "libcupti.so"}, {"/extras/CUPTI/lib64/libcupti.so", "/lib64/libcupti.so"});
  void* lib = detail::open_first_library(candidates, "CUPTI", "FLASHLAB_CUPTI", api.path, why_not);
  if (!lib) return false;
  bool complete = true;
#define FLASHLAB_BIND(name)                                                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name));                         \
  if (!api.name && complete) {                                                                \
    why_not = api.path + " lacks " #name " (the range profiler needs CUPTI 12.6 or newer)"; \
    complete = false;                                                                         \
  }
  FLASHLAB_CUPTI_ENTRY_POINTS(FLASHLAB_BIND)
#undef FLASHLAB_BIND
  api.error_message = reinterpret_cast<decltype(api.error_message)>(dlsym(lib, "cuptiGetErrorMessage"));
  return complete;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string describe_failure(const Cupti& api, const char* call, CUptiResult r) {
  const char* name = nullptr;
  std::string out = std::string(call) + " failed: ";
  out += api.cuptiGetResultString(r, &name) == CUPTI_SUCCESS && name ? name : "CUPTI error " + std::to_string(r);
  const char* message = nullptr;
  if (api.error_message && api.error_message(r, &message) == CUPTI_SUCCESS && message && *message)
    out += " (" + one_line(message) + ")";
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
    out += "; reading GPU performance counters needs root, or the NVIDIA driver loaded with "
           "NVreg_RestrictProfilingToAdminUsers=0 (https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
  return out;
}

// Every CUPTI parameter struct starts with structSize and pPriv; the rest is zero.
template <class P>
P params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}
#define FLASHLAB_PARAMS(type) params<type>(type##_STRUCT_SIZE)
// ... and most of the rest name the range profiler object or the host object.
#define FLASHLAB_RANGE_PARAMS(type) with_range(FLASHLAB_PARAMS(type), range)
#define FLASHLAB_HOST_PARAMS(type) with_host(FLASHLAB_PARAMS(type), host)
template <class P>
P with_range(P p, CUpti_RangeProfiler_Object* r) {
  p.pRangeProfilerObject = r;
  return p;
}
template <class P>
P with_host(P p, CUpti_Profiler_Host_Object* h) {
  p.pHostObject = h;
  return p;
}

template <class Fn>
Fn driver_entry_point(const char* symbol, std::string& why_not) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found);
  if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) {
    why_not = std::string("the CUDA driver does not give ") + symbol + " (cudaGetDriverEntryPointByVersion: " +
              cudaGetErrorName(e) + ")";
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}

// One session per device: CUPTI let a second range profiler start on the same
// context (seen with CUPTI 13.0), and two would count each other's work.
std::mutex& open_devices_mutex() {
  static std::mutex m;
  return m;
}
std::set<int>& open_devices() {
  static std::set<int> devices;
  return devices;
}

}  // namespace

struct CounterSession::Impl {
  Cupti api;
  int device = 0;
  CUcontext context = nullptr;
  std::string chip;
  std::size_t config_passes = 0;
  bool profiler_initialized = false;
  bool registered = false;     // holds its device in open_devices()
  bool replay_open = false;    // a replay was configured and not evaluated
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* range = nullptr;
  std::vector<std::uint8_t> config, counter_data;
  std::vector<const char*> metric_names;

  void check(const char* call, CUptiResult r) const {
    if (r != CUPTI_SUCCESS) throw CounterError(describe_failure(api, call, r));
  }

  ~Impl() {
    // Teardown in reverse; failures here have nobody left to tell.
    if (range) {
      auto p = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_Disable_Params);
      (void)api.cuptiRangeProfilerDisable(&p);
    }
    if (host) {
      auto p = FLASHLAB_HOST_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      (void)api.cuptiProfilerHostDeinitialize(&p);
    }
    if (profiler_initialized) {
      auto p = FLASHLAB_PARAMS(CUpti_Profiler_DeInitialize_Params);
      (void)api.cuptiProfilerDeInitialize(&p);
    }
    if (registered) {
      const std::lock_guard<std::mutex> lock(open_devices_mutex());
      open_devices().erase(device);
    }
  }

  void start(std::string& why_not);
  void enable_range_profiler();
  void pass(const std::function<void()>& launch, bool& all_submitted);
  MemoryCounters measure(const std::function<void()>& before_pass, const std::function<void()>& launch);
};

#define FLASHLAB_CUPTI(fn, p) check(#fn, api.fn(&p))

void CounterSession::Impl::start(std::string& why_not) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    why_not = std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(e) + " (" +
              cudaGetErrorString(e) + ")";
    return;
  }
  if (device < 0 || device >= count) {
    why_not = "no CUDA device " + std::to_string(device) + ": this machine has " + std::to_string(count);
    return;
  }
  FLASHLAB_CUDA_CHECK(cudaSetDevice(device));
  FLASHLAB_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context and makes it current
  auto get_current = driver_entry_point<CUresult (*)(CUcontext*)>("cuCtxGetCurrent", why_not);
  auto get_device = driver_entry_point<CUresult (*)(CUdevice*)>("cuCtxGetDevice", why_not);
  CUdevice cu_device = 0;
  if (!get_current || !get_device) return;
  if (get_current(&context) != CUDA_SUCCESS || !context || get_device(&cu_device) != CUDA_SUCCESS) {
    why_not = "no current CUDA context on device " + std::to_string(device) + " after cudaFree(0)";
    return;
  }

  auto init = FLASHLAB_PARAMS(CUpti_Profiler_Initialize_Params);
  FLASHLAB_CUPTI(cuptiProfilerInitialize, init);
  profiler_initialized = true;

  auto supported = FLASHLAB_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  supported.cuDevice = cu_device;
  supported.api = CUPTI_PROFILER_RANGE_PROFILING;
  FLASHLAB_CUPTI(cuptiProfilerDeviceSupported, supported);
  if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    why_not = "CUPTI cannot profile device " + std::to_string(device) + ", not supported:";
    const std::pair<const char*, CUpti_Profiler_Support_Level> parts[] = {
        {" architecture (compute capability 7.0+ needed)", supported.architecture},
        {" SLI", supported.sli},
        {" vGPU (profiling off for this VM?)", supported.vGpu},
        {" confidential computing", supported.confidentialCompute},
        {" CMP (mining) GPU", supported.cmp},
        {" WSL", supported.wsl}};
    for (const auto& [what, level] : parts)
      if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why_not += what;
    return;
  }

  auto chip_params = FLASHLAB_PARAMS(CUpti_Device_GetChipName_Params);
  chip_params.deviceIndex = static_cast<std::size_t>(device);
  FLASHLAB_CUPTI(cuptiDeviceGetChipName, chip_params);
  chip = chip_params.pChipName ? chip_params.pChipName : "";

  // Availability first: it fails once a profiling session is live on the context.
  auto avail = FLASHLAB_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  avail.ctx = context;
  FLASHLAB_CUPTI(cuptiProfilerGetCounterAvailability, avail);
  std::vector<std::uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  FLASHLAB_CUPTI(cuptiProfilerGetCounterAvailability, avail);

  auto host_init = FLASHLAB_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host_init.pChipName = chip.c_str();
  host_init.pCounterAvailabilityImage = availability.data();
  FLASHLAB_CUPTI(cuptiProfilerHostInitialize, host_init);
  host = host_init.pHostObject;

  for (const std::string& m : memory_counter_metrics()) metric_names.push_back(m.c_str());
  auto add = FLASHLAB_HOST_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.ppMetricNames = metric_names.data();
  add.numMetrics = metric_names.size();
  if (const CUptiResult r = api.cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS)  // a name this chip lacks
    throw CounterError(describe_failure(api, "cuptiProfilerHostConfigAddMetrics", r) + " for chip " + chip);
  auto size = FLASHLAB_HOST_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  FLASHLAB_CUPTI(cuptiProfilerHostGetConfigImageSize, size);
  config.resize(size.configImageSize);
  auto image = FLASHLAB_HOST_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  image.configImageSize = config.size();
  image.pConfigImage = config.data();
  FLASHLAB_CUPTI(cuptiProfilerHostGetConfigImage, image);
  auto passes = FLASHLAB_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.configImageSize = config.size();
  passes.pConfigImage = config.data();
  FLASHLAB_CUPTI(cuptiProfilerHostGetNumOfPasses, passes);
  config_passes = passes.numOfPasses;
  enable_range_profiler();
}

void CounterSession::Impl::enable_range_profiler() {
  auto enable = FLASHLAB_PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = context;
  FLASHLAB_CUPTI(cuptiRangeProfilerEnable, enable);
  range = enable.pRangeProfilerObject;
  auto data_size = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  data_size.pMetricNames = metric_names.data();
  data_size.numMetrics = metric_names.size();
  data_size.maxNumOfRanges = 1;
  data_size.maxNumRangeTreeNodes = 1;
  FLASHLAB_CUPTI(cuptiRangeProfilerGetCounterDataSize, data_size);
  counter_data.resize(data_size.counterDataSize);
}

// One replay pass: the device is idle at both ends of the range, so the range
// holds `launch`'s work and nothing else.
void CounterSession::Impl::pass(const std::function<void()>& launch, bool& all_submitted) {
  FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
  auto start_params = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_Start_Params);
  FLASHLAB_CUPTI(cuptiRangeProfilerStart, start_params);
  auto push = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_PushRange_Params);
  push.pRangeName = "launch";
  auto pop = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_PopRange_Params);
  auto stop = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_Stop_Params);
  try {
    FLASHLAB_CUPTI(cuptiRangeProfilerPushRange, push);
    launch();
    FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (...) {
    // Close what was opened so the session stays usable; the first error wins.
    (void)api.cuptiRangeProfilerPopRange(&pop);
    (void)api.cuptiRangeProfilerStop(&stop);
    throw;
  }
  FLASHLAB_CUPTI(cuptiRangeProfilerPopRange, pop);
  FLASHLAB_CUPTI(cuptiRangeProfilerStop, stop);
  all_submitted = stop.isAllPassSubmitted != 0;
}

std::unique_ptr<CounterSession> CounterSession::open(int device, std::string* why_not) {
  std::string why;
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  try {
    {
      const std::lock_guard<std::mutex> lock(open_devices_mutex());
      impl->registered = open_devices().insert(device).second;
    }
    if (!impl->registered)
      why = "a counter session is already open on device " + std::to_string(device) + " (one at a time)";
    else if (load_cupti(impl->api, why))
      impl->start(why);
  } catch (const std::exception& e) {  // CounterError, CudaError
    why = one_line(e.what());
  } catch (...) {
    why = "unknown error while opening CUPTI";
  }
  if (why.empty()) return std::unique_ptr<CounterSession>(new CounterSession(std::move(impl)));
  if (why_not) *why_not = why;
  return nullptr;
}

MemoryCounters CounterSession::measure(const std::function<void()>& before_pass,
                                       const std::function<void()>& launch) {
  return impl_->measure(before_pass, launch);
}

MemoryCounters CounterSession::Impl::measure(const std::function<void()>& before_pass,
                                             const std::function<void()>& launch) {
  FLASHLAB_CUDA_CHECK(cudaSetDevice(device));
  if (replay_open) {
    // The last replay stopped part way (a launch threw): a new SetConfig does
    // not restart it (the next decode gives NaN, seen with CUPTI 13.0), so
    // start the range profiler afresh.
    auto off = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_Disable_Params);
    range = nullptr;
    FLASHLAB_CUPTI(cuptiRangeProfilerDisable, off);
    enable_range_profiler();
  }
  replay_open = true;
  auto init = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  FLASHLAB_CUPTI(cuptiRangeProfilerCounterDataImageInitialize, init);

  auto set_config = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  set_config.configSize = config.size();
  set_config.pConfig = config.data();
  set_config.counterDataImageSize = counter_data.size();
  set_config.pCounterDataImage = counter_data.data();
  set_config.range = CUPTI_UserRange;
  set_config.replayMode = CUPTI_UserReplay;
  set_config.maxRangesPerPass = 1;
  set_config.numNestingLevels = 1;
  set_config.minNestingLevel = 1;
  set_config.targetNestingLevel = 1;  // passIndex 0: a fresh replay
  FLASHLAB_CUPTI(cuptiRangeProfilerSetConfig, set_config);

  MemoryCounters out;
  constexpr int kMaxPasses = 64;  // far above what five metrics need; a guard against a CUPTI that never finishes
  for (bool all_submitted = false; !all_submitted;) {
    if (out.passes == kMaxPasses)
      throw CounterError("cuptiRangeProfilerStop still asks for passes after " + std::to_string(kMaxPasses));
    if (before_pass) before_pass();
    pass(launch, all_submitted);
    ++out.passes;
  }
  FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());

  auto decode = FLASHLAB_RANGE_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  FLASHLAB_CUPTI(cuptiRangeProfilerDecodeData, decode);
  if (decode.numOfRangeDropped != 0)
    throw CounterError("cuptiRangeProfilerDecodeData dropped " + std::to_string(decode.numOfRangeDropped) +
                       " range(s): the counter data image is too small");

  std::vector<double> values(metric_names.size(), 0.0);
  auto eval = FLASHLAB_HOST_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  eval.pCounterDataImage = counter_data.data();
  eval.counterDataImageSize = counter_data.size();
  eval.ppMetricNames = metric_names.data();
  eval.numMetrics = metric_names.size();
  eval.pMetricValues = values.data();
  FLASHLAB_CUPTI(cuptiProfilerHostEvaluateToGpuValues, eval);
  replay_open = false;
  for (std::size_t k = 0; k < 4; ++k)
    if (!std::isfinite(values[k]))
      throw CounterError(std::string("cuptiProfilerHostEvaluateToGpuValues gave no value for ") + metric_names[k] +
                         " (a replay pass is missing)");

  constexpr double kSectorBytes = 32;
  out.dram_read_bytes = values[0];
  out.dram_write_bytes = values[1];
  out.l2_read_bytes = values[2] * kSectorBytes;
  out.l2_write_bytes = values[3] * kSectorBytes;
  // CUPTI (and ncu) report up to ~100.2% on pure write streams; a rate stays in [0, 1].
  out.l2_hit_rate = std::isfinite(values[4]) && values[4] >= 0 ? std::min(values[4] / 100.0, 1.0) : -1.0;
  return out;
}

std::string CounterSession::description() const {
  std::uint32_t version = 0;
  if (impl_->api.cuptiGetVersion(&version) != CUPTI_SUCCESS) version = 0;
  return "CUPTI " + std::to_string(version) + " (" + impl_->api.path + "), chip " + impl_->chip + ", " +
         std::to_string(impl_->config_passes) + (impl_->config_passes == 1 ? " pass" : " passes") + " per measurement";
}

#endif

CounterSession::CounterSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CounterSession::~CounterSession() = default;

}  // namespace flashlab::kernels
