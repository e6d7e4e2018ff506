// Where a ring ran (sim::RunMeta with its parallel part): the first GPU's
// device meta as the runner writes it, every GPU's name, NCCL's version and
// environment, the topology `nvidia-smi topo -m` shows; with a process per GPU,
// every rank's host, device and GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "flashlab/kernels/ring/ring.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "nccl_api.hpp"
#include "ring_transport.hpp"

namespace flashlab::kernels {

namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// A process per GPU: rank 0's machine meta, every rank's host, device and GPU.
sim::RunMeta ranked_ring_meta(const RingOptions& options, int gpus, const RankEnvironment* env) {
  RankGroup& group = *options.group;
  RingOptions one = options;
  one.group = nullptr;
  sim::RunMeta meta = ring_meta(one, 1, nullptr);
  sim::ParallelMeta& m = meta.parallel_part();
  const int device = options.devices.empty() ? 0 : options.devices.front();
  const std::string mine = std::to_string(env ? env->local_rank : 0) + "\n" + std::to_string(device) + "\n" +
                           host_name() + "\n" + query_device(device).name;
  const std::vector<std::string> all = group.allgather(mine, gpus);
  m.launcher = env ? env->launcher : std::string("ranks");
  m.gpu_names.clear();
  std::vector<std::pair<std::string, int>> per_host;
  for (int r = 0; r < gpus; ++r) {
    std::istringstream in(all[static_cast<std::size_t>(r)]);
    sim::ProcessRank k;
    k.rank = r;
    std::string line;
    std::getline(in, line);
    k.local_rank = std::atoi(line.c_str());
    std::getline(in, line);
    k.device = std::atoi(line.c_str());
    std::getline(in, k.host);
    std::getline(in, k.gpu);
    m.gpu_names.push_back(k.gpu);
    auto h = std::find_if(per_host.begin(), per_host.end(), [&](const auto& p) { return p.first == k.host; });
    if (h == per_host.end()) per_host.push_back({k.host, 1});
    else ++h->second;
    m.ranks.push_back(k);
  }
  for (const auto& h : per_host) m.gpus_per_node = std::max(m.gpus_per_node, h.second);
  m.nccl_version = ring::nccl_version();
  return meta;
}

}  // namespace

sim::RunMeta ring_meta(const RingOptions& options, int gpus, const RankEnvironment* ranks) {
  if (options.group != nullptr && gpus > 1) return ranked_ring_meta(options, gpus, ranks);
  // The meta of the ring's first GPU (its device, clocks, driver).
  const int first = options.transport == RingTransport::local || options.devices.empty() ? 0 : options.devices.front();
  std::unique_ptr<Backend> b = open_cuda_backend(first);
  sim::RunMeta meta = bench_meta(*b, options);  // the runner's metadata: the ring's options are its options
  sim::ParallelMeta& m = meta.parallel_part();
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess) m.gpu_count = count;
  for (int r = 0; r < gpus; ++r) {
    const int dev = options.transport == RingTransport::local
                        ? 0
                        : (options.devices.empty() ? r : options.devices[static_cast<std::size_t>(r)]);
    if (dev >= count) continue;
    std::string name = query_device(dev).name;
    if (options.transport == RingTransport::local) name += " (virtual GPU " + std::to_string(r) + " on device 0)";
    m.gpu_names.push_back(name);
  }
  if (options.transport == RingTransport::nccl) m.nccl_version = ring::nccl_version();
  m.environment = detail::nccl_environment();
  m.topology = nvidia_smi_topology();
  m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
  return meta;
}

}  // namespace flashlab::kernels
