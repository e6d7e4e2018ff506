// How the ring's buffers travel between its GPUs: one exchange is, for every
// GPU r at once, its sends to GPU r + 1 and its receives from GPU r − 1, on
// GPU r's communication stream (after whatever that stream already waits
// for). NCCL between real GPUs; copies between the buffers of virtual GPUs on
// one device for the tests. Host code over the CUDA runtime (and NCCL).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "flashlab/kernels/ring/rendezvous.hpp"
#include "flashlab/kernels/ring/ring.hpp"

namespace flashlab::kernels::ring {

// One contiguous region that travels: what GPU r sends (its `send` list, in
// order) arrives in GPU r + 1's `recv` list, the same sizes in the same order.
struct Region {
  void* data = nullptr;
  i64 bytes = 0;
};

struct RankLink {
  int rank = 0;                // the GPU's place in the ring, 0 … P − 1
  int device = 0;              // CUDA ordinal
  cudaStream_t stream = nullptr;  // the rank's communication stream
  std::vector<Region> send;    // to rank r + 1
  std::vector<Region> recv;    // from rank r − 1
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Enqueues one exchange on the streams of the ranks this process drives
  // (all P of them, or one); returns at once.
  virtual void exchange(std::vector<RankLink>& ranks, int P) = 0;
  virtual std::string name() const = 0;
  virtual std::string version() const { return {}; }
};

// NCCL over `devices` (one communicator per GPU, made by ncclCommInitAll).
// Throws CudaError (naming NCCL's error) or Unsupported (no NCCL).
std::unique_ptr<Transport> open_nccl_transport(const std::vector<int>& devices);
// NCCL between the P ranks of a job, this process being rank `group.rank()`
// on `device`: rank 0 makes NCCL's unique id and the group hands it to the
// others (ncclCommInitRank).
std::unique_ptr<Transport> open_nccl_rank_transport(int device, int P, RankGroup& group);
// P ranks on `device`: cudaMemcpyAsync from each rank's send regions into the
// next rank's receive regions.
std::unique_ptr<Transport> open_local_transport(int ranks, int device);

// Empty when NCCL can be used here; else why not (one sentence).
std::string nccl_unavailable_reason();
std::string nccl_version();  // "2.28.9", empty when not loaded

}  // namespace flashlab::kernels::ring
