#include "flashlab/kernels/launch/launch_env.hpp"

#include <cctype>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "flashlab/sim/core/format.hpp"

namespace flashlab::kernels {
namespace {

// One launcher's names for the same four facts.
struct LauncherVars {
  const char* launcher;
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;
};
constexpr LauncherVars kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"mpirun", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
};

int whole(const std::string& name, const std::string& text, int low, int high) {
  const std::optional<sim::i64> v = sim::parse_whole(text);
  if (!v || *v < low || *v > high)
    throw std::invalid_argument(name + "='" + text + "' is not a whole number from " + std::to_string(low) + " to " +
                                std::to_string(high));
  return static_cast<int>(*v);
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    if (const char* v = std::getenv(name.c_str())) return std::string(v);
    return std::nullopt;
  };
}

std::string first_slurm_host(const std::string& nodelist) {
  // Up to the first comma outside brackets; a bracket keeps its first number.
  std::string host;
  for (std::size_t i = 0; i < nodelist.size(); ++i) {
    const char c = nodelist[i];
    if (c == ',') break;
    if (c != '[') {
      host += c;
      continue;
    }
    const std::size_t close = nodelist.find(']', i);
    if (close == std::string::npos) throw std::invalid_argument("node list '" + nodelist + "' has an unclosed '['");
    std::string first;
    for (std::size_t k = i + 1; k < close && std::isdigit(static_cast<unsigned char>(nodelist[k])); ++k)
      first += nodelist[k];
    if (first.empty()) throw std::invalid_argument("node list '" + nodelist + "': a range must start with a number");
    host += first;
    i = close;
  }
  if (host.empty()) throw std::invalid_argument("node list '" + nodelist + "' names no host");
  return host;
}

RankEnvironment rank_environment(const EnvLookup& env) {
  const LauncherVars* found = nullptr;
  for (const LauncherVars& l : kLaunchers)
    if (env(l.rank)) {
      found = &l;
      break;
    }
  if (found == nullptr)
    throw std::invalid_argument(
        "--ranks: no launcher's rank in the environment (RANK and WORLD_SIZE from torchrun, SLURM_PROCID and "
        "SLURM_NTASKS from srun, OMPI_COMM_WORLD_RANK and _SIZE from mpirun); start it with one of them or with "
        "scripts/launch-ranks.sh");
  RankEnvironment e;
  e.launcher = found->launcher;
  auto need = [&](const char* name) {
    const std::optional<std::string> v = env(name);
    if (!v)
      throw std::invalid_argument(std::string("--ranks: ") + found->rank + " is set (" + e.launcher + ") but " + name +
                                  " is not");
    return *v;
  };
  try {
    e.world = whole(found->world, need(found->world), 1, 65536);
    e.rank = whole(found->rank, need(found->rank), 0, e.world - 1);
    e.local_rank = whole(found->local_rank, need(found->local_rank), 0, e.world - 1);
    if (const auto lw = env(found->local_world)) {
      // Slurm's tasks per node may read "4(x2)": the count before the bracket.
      const std::string text = lw->substr(0, lw->find('('));
      e.local_world = whole(found->local_world, text, 1, e.world);
    }
  } catch (const std::invalid_argument& x) {
    const std::string what = x.what();
    if (what.rfind("--ranks", 0) == 0) throw;
    throw std::invalid_argument("--ranks: " + what);
  }

  if (const auto a = env("MASTER_ADDR"); a && !a->empty()) {
    e.master_addr = *a;
    e.address_from = "MASTER_ADDR";
  } else if (e.launcher == "slurm" && (env("SLURM_STEP_NODELIST") || env("SLURM_JOB_NODELIST"))) {
    const bool step = env("SLURM_STEP_NODELIST").has_value();
    e.address_from = step ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST";
    try {
      e.master_addr = first_slurm_host(*env(e.address_from));
    } catch (const std::invalid_argument& x) {
      throw std::invalid_argument("--ranks: " + e.address_from + ": " + x.what());
    }
  } else if (e.local_world == e.world) {
    e.master_addr = "127.0.0.1";
    e.address_from = "one host";
  } else {
    throw std::invalid_argument("--ranks: MASTER_ADDR is not set: say where rank 0 runs (export MASTER_ADDR=host)");
  }

  if (const auto p = env("FLASHLAB_RENDEZVOUS_PORT")) {
    e.port = whole("FLASHLAB_RENDEZVOUS_PORT", *p, 1, 65535);
    e.port_from = "FLASHLAB_RENDEZVOUS_PORT";
  } else if (const auto m = env("MASTER_PORT")) {
    try {
      e.port = whole("MASTER_PORT", *m, 1, 65534) + 1;
    } catch (const std::invalid_argument& x) {
      throw std::invalid_argument(std::string("--ranks: ") + x.what());
    }
    e.port_from = "MASTER_PORT + 1";
  } else if (const auto job = env("SLURM_JOB_ID"); job && e.launcher == "slurm") {
    e.port = 20000 + static_cast<int>(whole("SLURM_JOB_ID", *job, 0, 2147483647) % 10000);
    e.port_from = "SLURM_JOB_ID";
  } else {
    throw std::invalid_argument(
        "--ranks: MASTER_PORT is not set: give the job a port (export MASTER_PORT=29500; rank 0 listens on the one "
        "after it) or set FLASHLAB_RENDEZVOUS_PORT");
  }
  return e;
}

std::string describe(const RankEnvironment& e) {
  return "rank " + std::to_string(e.rank) + " of " + std::to_string(e.world) + " (" + e.launcher + "; local rank " +
         std::to_string(e.local_rank) + "), rendezvous at " + e.master_addr + ":" + std::to_string(e.port);
}

}  // namespace flashlab::kernels
