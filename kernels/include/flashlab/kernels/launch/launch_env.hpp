// Which rank of a job this process is, as the launcher that started it says:
// torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the
// step's node list) or Open MPI's mpirun (OMPI_COMM_WORLD_RANK, _SIZE,
// _LOCAL_RANK, _LOCAL_SIZE; PMIX_RANK). The first launcher whose rank variable
// is set wins, in that order. Where rank 0 listens for the others (the
// rendezvous, rendezvous.hpp):
//   address  MASTER_ADDR; else, under Slurm, the first host of the node list;
//            else, when every rank is on this host, 127.0.0.1;
//   port     FLASHLAB_RENDEZVOUS_PORT; else MASTER_PORT + 1 (torchrun's own
//            store holds MASTER_PORT itself); else, under Slurm,
//            20000 + the job id mod 10000.
// Plain C++, no CUDA: CI tests it.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace flashlab::kernels {

struct RankEnvironment {
  std::string launcher;      // "torchrun", "slurm", "mpirun"
  int rank = 0;              // 0 … world − 1
  int world = 1;             // ranks in the job
  int local_rank = 0;        // rank on this host: the GPU it takes
  int local_world = -1;      // ranks on this host; -1 when the launcher does not say
  std::string master_addr;   // where rank 0 listens
  int port = 0;
  std::string address_from;  // "MASTER_ADDR", "SLURM_STEP_NODELIST", "one host"
  std::string port_from;     // "FLASHLAB_RENDEZVOUS_PORT", "MASTER_PORT + 1", "SLURM_JOB_ID"
};

// The variables of the process's environment (getenv), or a test's map.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// Reads the rank from `env`. Throws std::invalid_argument with one line that
// names the missing or wrong variable (and what would set it) when no launcher
// is found or a variable does not parse.
RankEnvironment rank_environment(const EnvLookup& env);

// The first host of a Slurm node list: "gpu[07-09,12],cpu3" → "gpu07".
// Throws std::invalid_argument for an empty or malformed list.
std::string first_slurm_host(const std::string& nodelist);

// "rank 2 of 4 (torchrun; local rank 2), rendezvous at 10.0.0.1:29501"
std::string describe(const RankEnvironment& e);

}  // namespace flashlab::kernels
