#include "ring_transport.hpp"

#include <cstring>
#include <stdexcept>

#include "device/cuda_check.hpp"
#include "nccl_api.hpp"

namespace flashlab::kernels::ring {
namespace {

#ifdef FLASHLAB_HAVE_NCCL
class NcclTransport final : public Transport {
 public:
  // One process, every GPU: comms_[r] is GPU r's.
  explicit NcclTransport(const std::vector<int>& devices) {
    open_api();
    comms_.assign(devices.size(), nullptr);
    FLASHLAB_NCCL_CHECK(*api_, ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
  }
  // One rank of a job: comms_[rank] only.
  NcclTransport(int device, int P, RankGroup& group) {
    open_api();
    ncclUniqueId id{};
    if (group.rank() == 0) FLASHLAB_NCCL_CHECK(*api_, ncclGetUniqueId(&id));
    const std::string mine(reinterpret_cast<const char*>(&id), sizeof id);
    const std::string shared = group.broadcast(mine, P);
    if (shared.size() != sizeof id) throw CudaError("NCCL's unique id arrived with " + std::to_string(shared.size()) + " bytes");
    std::memcpy(&id, shared.data(), sizeof id);
    comms_.assign(static_cast<std::size_t>(P), nullptr);
    FLASHLAB_CUDA_CHECK(cudaSetDevice(device));
    FLASHLAB_NCCL_CHECK(*api_, ncclCommInitRank(&comms_[static_cast<std::size_t>(group.rank())], P, id, group.rank()));
  }
  ~NcclTransport() override {
    for (ncclComm_t c : comms_)
      if (c != nullptr) (void)api_->ncclCommDestroy(c);
  }

  void exchange(std::vector<RankLink>& ranks, int P) override {
    // All sends and receives of the exchange this process makes go in one
    // group, so that NCCL matches them and none waits on another (one thread
    // driving every GPU needs it; one rank's send and receive need it too).
    FLASHLAB_NCCL_CHECK(*api_, ncclGroupStart());
    for (RankLink& l : ranks) {
      const int r = l.rank, next = (r + 1) % P, prev = (r + P - 1) % P;
      ncclComm_t comm = comms_.at(static_cast<std::size_t>(r));
      if (comm == nullptr) throw std::logic_error("the ring's NCCL transport has no communicator for GPU " + std::to_string(r));
      for (const Region& s : l.send)
        FLASHLAB_NCCL_CHECK(*api_, ncclSend(s.data, static_cast<size_t>(s.bytes), ncclUint8, next, comm, l.stream));
      for (const Region& q : l.recv)
        FLASHLAB_NCCL_CHECK(*api_, ncclRecv(q.data, static_cast<size_t>(q.bytes), ncclUint8, prev, comm, l.stream));
    }
    FLASHLAB_NCCL_CHECK(*api_, ncclGroupEnd());
  }

  std::string name() const override { return "nccl"; }
  std::string version() const override { return detail::nccl_version_string(api_->version); }

 private:
  void open_api() {
    std::string why;
    api_ = detail::nccl_api(&why);
    if (api_ == nullptr) throw Unsupported(why);
  }

  const detail::NcclApi* api_ = nullptr;
  std::vector<ncclComm_t> comms_;
};
#endif

class LocalTransport final : public Transport {
 public:
  LocalTransport(int ranks, int device) : device_(device) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(device));
    ready_.resize(static_cast<std::size_t>(ranks));
    done_.resize(static_cast<std::size_t>(ranks));
    for (std::size_t r = 0; r < ready_.size(); ++r) {
      FLASHLAB_CUDA_CHECK(cudaEventCreateWithFlags(&ready_[r], cudaEventDisableTiming));
      FLASHLAB_CUDA_CHECK(cudaEventCreateWithFlags(&done_[r], cudaEventDisableTiming));
    }
  }
  ~LocalTransport() override {
    for (cudaEvent_t e : ready_) (void)cudaEventDestroy(e);
    for (cudaEvent_t e : done_) (void)cudaEventDestroy(e);
  }

  void exchange(std::vector<RankLink>& ranks, int P) override {
    if (static_cast<int>(ranks.size()) != P) throw std::logic_error("the ring's local transport drives every virtual GPU");
    FLASHLAB_CUDA_CHECK(cudaSetDevice(device_));
    // A send region may be written again only once the next rank has copied
    // it, and a copy may start only once the sender's data is there: each
    // stream waits for its sender's readiness and its receiver's last copy.
    for (int r = 0; r < P; ++r) FLASHLAB_CUDA_CHECK(cudaEventRecord(ready_[static_cast<std::size_t>(r)], ranks[static_cast<std::size_t>(r)].stream));
    for (int r = 0; r < P; ++r) {
      RankLink& l = ranks[static_cast<std::size_t>(r)];
      const int prev = (r + P - 1) % P, next = (r + 1) % P;
      const RankLink& from = ranks[static_cast<std::size_t>(prev)];
      FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(l.stream, ready_[static_cast<std::size_t>(prev)], 0));
      if (exchanged_) FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(l.stream, done_[static_cast<std::size_t>(next)], 0));
      if (from.send.size() != l.recv.size())
        throw CudaError("the ring's local transport: rank " + std::to_string(prev) + " sends " +
                        std::to_string(from.send.size()) + " regions, rank " + std::to_string(r) + " receives " +
                        std::to_string(l.recv.size()));
      for (std::size_t k = 0; k < l.recv.size(); ++k) {
        if (from.send[k].bytes != l.recv[k].bytes)
          throw CudaError("the ring's local transport: region " + std::to_string(k) + " of rank " + std::to_string(prev) +
                          " has " + std::to_string(from.send[k].bytes) + " bytes, rank " + std::to_string(r) +
                          " expects " + std::to_string(l.recv[k].bytes));
        FLASHLAB_CUDA_CHECK(cudaMemcpyAsync(l.recv[k].data, from.send[k].data, static_cast<std::size_t>(l.recv[k].bytes),
                                            cudaMemcpyDeviceToDevice, l.stream));
      }
    }
    for (int r = 0; r < P; ++r) FLASHLAB_CUDA_CHECK(cudaEventRecord(done_[static_cast<std::size_t>(r)], ranks[static_cast<std::size_t>(r)].stream));
    exchanged_ = true;
  }

  std::string name() const override { return "local"; }

 private:
  int device_;
  bool exchanged_ = false;
  std::vector<cudaEvent_t> ready_, done_;
};

}  // namespace

std::unique_ptr<Transport> open_nccl_transport(const std::vector<int>& devices) {
#ifdef FLASHLAB_HAVE_NCCL
  return std::make_unique<NcclTransport>(devices);
#else
  (void)devices;
  throw Unsupported(nccl_unavailable_reason());
#endif
}

std::unique_ptr<Transport> open_nccl_rank_transport(int device, int P, RankGroup& group) {
#ifdef FLASHLAB_HAVE_NCCL
  return std::make_unique<NcclTransport>(device, P, group);
#else
  (void)device;
  (void)P;
  (void)group;
  throw Unsupported(nccl_unavailable_reason());
#endif
}

std::unique_ptr<Transport> open_local_transport(int ranks, int device) {
  return std::make_unique<LocalTransport>(ranks, device);
}

std::string nccl_unavailable_reason() {
#ifdef FLASHLAB_HAVE_NCCL
  std::string why;
  return detail::nccl_api(&why) != nullptr ? std::string() : why;
#else
  return "this build has no NCCL (nccl.h was not found when it was configured)";
#endif
}

std::string nccl_version() {
#ifdef FLASHLAB_HAVE_NCCL
  const detail::NcclApi* api = detail::nccl_api();
  return api != nullptr ? detail::nccl_version_string(api->version) : std::string();
#else
  return {};
#endif
}

}  // namespace flashlab::kernels::ring
