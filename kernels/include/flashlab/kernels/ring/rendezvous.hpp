// The ranks of a job, joined over TCP: rank 0 listens on the rendezvous
// address (launch_env.hpp says where), every other rank connects to it and
// says who it is. The connections stay open for the job's few host-side
// exchanges — NCCL's unique id, the barrier before each timed run, each run's
// CUDA-event times, the rows the fp64 check reads — all through rank 0 (a
// star: a few kilobytes per run, the check's rows once per problem).
//
// Why TCP and not MPI_Bcast: it needs no library on the GPU machines (the
// project's GPU hosts have no MPI), works the same under torchrun, srun and
// mpirun, and across nodes; the same choice as PyTorch's TCP store. NCCL
// itself carries the ring's tensors.
//
// Nothing hangs silently: joining waits at most `join_timeout` (then one line
// naming the ranks that did not come, or the address that did not answer); a
// rank that fails says so to the others (abort), and a peer that dies closes
// its socket, both of which end every rank's next exchange with an error.
// Plain C++ over POSIX sockets, no CUDA: CI tests it on the loopback.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace flashlab::kernels {

struct RankEnvironment;

// The job could not be joined, or a rank left or failed: one line.
struct RendezvousError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RankGroup {
 public:
  // Rank 0 listens on `port` (all addresses) and waits for the others; rank r
  // connects to `address`:`port`, retrying until `join_timeout`.
  static std::unique_ptr<RankGroup> join(int rank, int world, const std::string& address, int port,
                                         std::chrono::milliseconds join_timeout);
  static std::unique_ptr<RankGroup> join(const RankEnvironment& e, std::chrono::milliseconds join_timeout);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return world_; }

  // Among ranks 0 … members − 1 (every rank of them calls it, in the same
  // order): every member's bytes, in rank order.
  std::vector<std::string> allgather(const std::string& mine, int members);
  // Rank 0's bytes, on every member.
  std::string broadcast(const std::string& from_rank0, int members);
  void barrier(int members) { (void)allgather(std::string(), members); }

  // Tells the other ranks that this one stopped, and why; they throw
  // RendezvousError("rank r: why") at their next exchange. Never throws.
  void abort(const std::string& why) noexcept;

 private:
  RankGroup(int rank, int world) : rank_(rank), world_(world) {}
  void check_members(int members) const;
  std::string receive(int peer_socket, int peer_rank);
  void send(int peer_socket, int peer_rank, char kind, const std::string& bytes);

  int rank_ = 0, world_ = 1;
  int listener_ = -1;
  std::vector<int> peers_;  // rank 0: the socket of rank r at [r]; others: [0] is rank 0's
  bool aborted_ = false;
};

}  // namespace flashlab::kernels
