// A process per GPU, without a GPU: the rank read from each launcher's
// variables (and the one line for a missing or wrong one), the first host of
// a Slurm node list, and the rendezvous on the loopback — ranks as threads,
// their exchanges, a rank that fails, a rank that never comes, a master that
// is not there. The ring over these ranks runs on the GPU machines
// (tests/kernels/test_gpu_ring_multi.cpp, scripts/device-run.sh ranks).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "flashlab/kernels/launch/launch_env.hpp"
#include "flashlab/kernels/ring/rendezvous.hpp"
#include "../support/loopback.hpp"

using namespace flashlab::kernels;
using Env = std::map<std::string, std::string>;
using std::chrono::milliseconds;

namespace {

// Who a rank is, as its launcher's variables say: the launcher, its rank and the
// job's size, its rank and the count of ranks on its host, where rank 0 listens.
struct RankIdentity {
  const char* launcher;
  int rank, world, local_rank, local_world;
  const char* master_addr;
};

void check_rank_identity(const RankEnvironment& e, const RankIdentity& want) {
  CHECK(e.launcher == want.launcher);
  CHECK(e.rank == want.rank);
  CHECK(e.world == want.world);
  CHECK(e.local_rank == want.local_rank);
  CHECK(e.local_world == want.local_world);
  CHECK(e.master_addr == want.master_addr);
}

EnvLookup lookup(const Env& env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

std::string refusal(const Env& env) {
  try {
    (void)rank_environment(lookup(env));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

// Runs `body(rank)` for every rank of a `world`-rank job on the loopback, one
// thread each; returns what each rank's body returned, or its error.
std::vector<std::string> run_ranks(int world, const std::function<std::string(RankGroup&)>& body,
                                   milliseconds timeout = milliseconds(10000), const std::vector<int>& absent = {}) {
  const flashlab::test::HeldLoopbackPort held;
  const int port = held.port();
  std::vector<std::string> out(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    if (std::find(absent.begin(), absent.end(), r) != absent.end()) {
      out[static_cast<std::size_t>(r)] = "(absent)";
      continue;
    }
    threads.emplace_back([&, r] {
      try {
        std::unique_ptr<RankGroup> g = RankGroup::join(r, world, "127.0.0.1", port, timeout);
        out[static_cast<std::size_t>(r)] = body(*g);
      } catch (const std::exception& e) {
        out[static_cast<std::size_t>(r)] = std::string("error: ") + e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

}  // namespace

TEST_CASE("ranks: torchrun's variables give the rank, the local GPU and rank 0's address") {
  const RankEnvironment e = rank_environment(lookup({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                                     {"LOCAL_WORLD_SIZE", "4"}, {"MASTER_ADDR", "node7"},
                                                     {"MASTER_PORT", "29500"}}));
  check_rank_identity(e, {"torchrun", 5, 8, 1, 4, "node7"});
  CHECK(e.port == 29501);  // torchrun's own store holds MASTER_PORT
  CHECK(e.port_from == "MASTER_PORT + 1");
  CHECK(describe(e) == "rank 5 of 8 (torchrun; local rank 1), rendezvous at node7:29501");
}

TEST_CASE("ranks: Slurm's variables, rank 0 on the first host of the node list, the port from the job id") {
  const RankEnvironment e = rank_environment(
      lookup({{"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS_PER_NODE", "8(x2)"},
              {"SLURM_STEP_NODELIST", "gpu[07-08]"}, {"SLURM_JOB_ID", "123456"}}));
  check_rank_identity(e, {"slurm", 9, 16, 1, 8, "gpu07"});
  CHECK(e.address_from == "SLURM_STEP_NODELIST");
  CHECK(e.port == 20000 + 123456 % 10000);
  // MASTER_ADDR, when the batch script exports it, wins over the node list.
  const RankEnvironment m = rank_environment(lookup({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"},
                                                     {"SLURM_LOCALID", "0"}, {"SLURM_STEP_NODELIST", "a,b"},
                                                     {"MASTER_ADDR", "10.0.0.2"}, {"MASTER_PORT", "4000"}}));
  CHECK(m.master_addr == "10.0.0.2");
  CHECK(m.port == 4001);
}

TEST_CASE("ranks: Open MPI's variables, one host needing no address, FLASHLAB_RENDEZVOUS_PORT first") {
  const RankEnvironment e = rank_environment(
      lookup({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
              {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}, {"FLASHLAB_RENDEZVOUS_PORT", "31000"}, {"MASTER_PORT", "29500"}}));
  check_rank_identity(e, {"mpirun", 3, 4, 3, 4, "127.0.0.1"});
  CHECK(e.address_from == "one host");
  CHECK(e.port == 31000);
}

TEST_CASE("ranks: a missing or wrong variable is one line that names it") {
  CHECK_THAT(refusal({}), Catch::Contains("no launcher's rank in the environment"));
  CHECK(refusal({{"RANK", "0"}, {"WORLD_SIZE", "2"}}) == "--ranks: RANK is set (torchrun) but LOCAL_RANK is not");
  CHECK(refusal({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}) ==
        "--ranks: RANK='2' is not a whole number from 0 to 1");
  CHECK(refusal({{"RANK", "0"}, {"WORLD_SIZE", "two"}, {"LOCAL_RANK", "0"}}) ==
        "--ranks: WORLD_SIZE='two' is not a whole number from 1 to 65536");
  CHECK_THAT(refusal({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}),
             Catch::StartsWith("--ranks: MASTER_ADDR is not set"));
  CHECK_THAT(refusal({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "h"}}),
             Catch::StartsWith("--ranks: MASTER_PORT is not set"));
  CHECK(refusal({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "h"},
                 {"MASTER_PORT", "99999"}}) == "--ranks: MASTER_PORT='99999' is not a whole number from 1 to 65534");
  CHECK(refusal({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"},
                 {"SLURM_STEP_NODELIST", "gpu[x-2]"}, {"SLURM_JOB_ID", "1"}}) ==
        "--ranks: SLURM_STEP_NODELIST: node list 'gpu[x-2]': a range must start with a number");
}

TEST_CASE("ranks: the first host of a Slurm node list") {
  CHECK(first_slurm_host("node1") == "node1");
  CHECK(first_slurm_host("gpu[07-09,12],cpu3") == "gpu07");
  CHECK(first_slurm_host("a-[3-5]-b") == "a-3-b");
  CHECK(first_slurm_host("x,y") == "x");
  CHECK_THROWS_WITH(first_slurm_host(""), Catch::Contains("names no host"));
  CHECK_THROWS_WITH(first_slurm_host("gpu[1-2"), Catch::Contains("unclosed"));
}

TEST_CASE("ranks: the rendezvous on the loopback: every rank's bytes, in rank order, on every rank") {
  const int world = GENERATE(2, 3, 5);
  const std::vector<std::string> got = run_ranks(world, [world](RankGroup& g) {
    std::string seen;
    // Three rounds of different sizes (one empty, one large): the frames keep their order.
    for (int round = 0; round < 3; ++round) {
      const std::string mine = round == 0   ? std::string()
                               : round == 1 ? "r" + std::to_string(g.rank())
                                            : std::string(static_cast<std::size_t>(100000 + g.rank()), 'a' + g.rank());
      const std::vector<std::string> all = g.allgather(mine, world);
      REQUIRE(static_cast<int>(all.size()) == world);
      for (int r = 0; r < world; ++r) seen += std::to_string(all[static_cast<std::size_t>(r)].size()) + ",";
      seen += all.back().substr(0, 2) + ";";
    }
    seen += g.broadcast(g.rank() == 0 ? "from 0" : "not this", world);
    g.barrier(world);
    // A smaller ring among the first two ranks; the others wait for the next whole exchange.
    if (g.rank() < 2) seen += "|" + g.allgather(std::to_string(g.rank()), 2)[1];
    g.barrier(world);
    return seen;
  });
  for (int r = 0; r < world; ++r) {
    INFO("rank " << r << ": " << got[static_cast<std::size_t>(r)]);
    CHECK(got[static_cast<std::size_t>(r)].rfind("error", 0) == std::string::npos);
    CHECK(got[static_cast<std::size_t>(r)].find("from 0") != std::string::npos);
    if (r < 2) CHECK_THAT(got[static_cast<std::size_t>(r)], Catch::EndsWith("|1"));
  }
  // Every rank saw the same thing (the part before rank-dependent extras).
  const std::string first = got[0].substr(0, got[0].find("from 0"));
  for (int r = 1; r < world; ++r) CHECK(got[static_cast<std::size_t>(r)].substr(0, first.size()) == first);
  CHECK_THAT(first, Catch::Contains(std::to_string(100000 + world - 1) + ","));
}

TEST_CASE("ranks: a rank that fails tells the others, who stop at their next exchange with its words") {
  const std::vector<std::string> got = run_ranks(3, [](RankGroup& g) -> std::string {
    g.barrier(3);
    if (g.rank() == 2) {
      g.abort("cudaErrorIllegalAddress in the ring's step 1");
      return "aborted";
    }
    g.barrier(3);  // rank 2 never comes: its abort ends this
    return "went on";
  });
  CHECK(got[2] == "aborted");
  CHECK(got[0] == "error: rank 2: cudaErrorIllegalAddress in the ring's step 1");
  CHECK(got[1] == "error: rank 2: cudaErrorIllegalAddress in the ring's step 1");
}

TEST_CASE("ranks: a rank that leaves without a word ends the others' next exchange") {
  const std::vector<std::string> got = run_ranks(3, [](RankGroup& g) -> std::string {
    g.barrier(3);
    if (g.rank() == 1) return "left";  // its group closes with the thread's scope
    g.barrier(3);
    return "went on";
  });
  CHECK(got[1] == "left");
  CHECK_THAT(got[0], Catch::Contains("rank 1 left the job"));
  CHECK_THAT(got[2], Catch::StartsWith("error: rank 1 left the job"));
}

TEST_CASE("ranks: a rank that never comes stops every rank within the timeout, named") {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> got =
      run_ranks(4, [](RankGroup&) { return std::string("joined"); }, milliseconds(1500), {2});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(took < 10);
  const std::string want = "1 of 3 ranks did not join rank 0 on port ";
  for (int r : {0, 1, 3}) {
    INFO("rank " << r);
    CHECK_THAT(got[static_cast<std::size_t>(r)], Catch::Contains(want) && Catch::Contains("within 1500 ms (missing: 2)"));
  }
}

TEST_CASE("ranks: no rank 0 at the address: one line within the timeout") {
  const int port = flashlab::test::free_loopback_port();
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  try {
    (void)RankGroup::join(1, 2, "127.0.0.1", port, milliseconds(1000));
  } catch (const RendezvousError& e) {
    why = e.what();
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(took >= 0.9);
  CHECK(took < 5);
  CHECK(why == "rank 1 could not reach rank 0 at 127.0.0.1:" + std::to_string(port) +
                   " within 1 s (Connection refused)");
}

TEST_CASE("ranks: two processes given one rank, or different job sizes, are refused at the join") {
  const int port = flashlab::test::free_loopback_port();
  std::string r0, r1a, r1b;
  std::thread t0([&] {
    try {
      (void)RankGroup::join(0, 3, "127.0.0.1", port, milliseconds(5000));
      r0 = "joined";
    } catch (const std::exception& e) {
      r0 = e.what();
    }
  });
  auto one = [&](std::string& out) {
    try {
      (void)RankGroup::join(1, 3, "127.0.0.1", port, milliseconds(5000));
      out = "joined";
    } catch (const std::exception& e) {
      out = e.what();
    }
  };
  std::thread t1(one, std::ref(r1a)), t2(one, std::ref(r1b));
  t0.join();
  t1.join();
  t2.join();
  CHECK(r0 == "rank 1 joined twice (two processes were given the same rank)");
  // Both rank-1 processes hear it (the first from rank 0's last word, the second at once).
  CHECK(r1a == r0);
  CHECK(r1b == r0);
}
