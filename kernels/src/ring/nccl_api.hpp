// NCCL, opened at run time (dlopen), so that every binary starts on a machine
// without libnccl and the ring says why it is off. Only nccl.h is needed at
// build time (CMake finds it in the CUDA toolkit); a build without the header
// compiles this to a loader that always answers "not built with NCCL".
#pragma once

#include <string>
#include <vector>

#ifdef FLASHLAB_HAVE_NCCL
#include <nccl.h>
#endif

namespace flashlab::kernels::detail {

#ifdef FLASHLAB_HAVE_NCCL
struct NcclApi {
  std::string path;     // the library that was opened
  int version = 0;      // ncclGetVersion: 22809 for 2.28.9
  ncclResult_t (*ncclGetVersion)(int*) = nullptr;
  ncclResult_t (*ncclCommInitAll)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId*) = nullptr;
  ncclResult_t (*ncclCommInitRank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
  ncclResult_t (*ncclSend)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*ncclRecv)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  const char* (*ncclGetErrorString)(ncclResult_t) = nullptr;
  const char* (*ncclGetLastError)(ncclComm_t) = nullptr;  // may be null (older NCCL)
};

// The loaded library (once per process); null with `why_not` set when it
// cannot be opened or lacks an entry point. $FLASHLAB_NCCL may name the file.
const NcclApi* nccl_api(std::string* why_not = nullptr);

// "2.28.9" from 22809 (and 2.x.y from the older 2xyy form).
std::string nccl_version_string(int v);

// Throws CudaError "file:line: call failed: ncclInvalidUsage (NCCL's words; its last error)".
void check_nccl(const NcclApi& api, ncclResult_t r, const char* call, const char* file, int line);
#define FLASHLAB_NCCL_CHECK(api, call) \
  ::flashlab::kernels::detail::check_nccl((api), (api).call, #call, __FILE__, __LINE__)
#endif

// NVLink multicast (NVLS) stays off in this process, whatever the environment
// says: NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
// NVSHMEM_DISABLE_NVLS=1 are set before any communicator exists. The ring
// uses point-to-point sends, which never need it, and a program that creates
// multicast objects on a shared host can take its GPUs out of service.
void keep_nvlink_multicast_off();

// The environment that changes what NCCL does, "NAME=value" for the variables
// set: the multicast switches above, NCCL_P2P_LEVEL, NCCL_PROTO, NCCL_ALGO,
// NCCL_DEBUG, CUDA_VISIBLE_DEVICES (what a measurement records beside it).
std::vector<std::string> nccl_environment();

}  // namespace flashlab::kernels::detail
