// `flashlab bench` as a user runs it on a machine without a GPU: bad input is
// one line and exit 2, before any device is touched; no device is one line and
// exit 2 too.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/run_flashlab.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/sim/problem/ring_partition.hpp"

namespace fs = std::filesystem;

namespace {

using flashlab::test::check_refused;
using flashlab::test::Run;

// `flashlab bench ARGS` in this file's own scratch folder.
const flashlab::test::ScratchRuns bench("flashlab-bench-cli", "bench");

}  // namespace

TEST_CASE("bench: bad input is one line and exit 2", "[cli][bench]") {
  flashlab::test::check_refusals(bench, {
      {"--kernels naive,nope", "unknown kernel 'nope' (known: naive, naive_cublas, fa1, fa2"},
      {"--causal maybe", "--causal: expected no, yes or both"},
      {"--dtype fp16,fp8", "--dtype: unknown dtype 'fp8'"},
      {"--repeats 3", "--repeats: at least 10"},
      {"--seq 1024,", "--seq"},
      {"--seq 0", "--seq: must be at least 1"},
      {"--batch lots", "--batch: 'lots' is not a whole number"},
      {"--emb-dim 1000 --heads 3", "embedding dim 1000 is not a multiple of heads 3"},
      {"--emb-dim 2048 --heads 16 --head-dim 64", "16 × head dim 64 = 1024"},
      {"--tokens 1000 --seq 3", "1000 tokens is not a whole number of sequences of N=3"},
      {"--seq 64 --seq-kv 32 --causal yes", "causal attention needs seq_kv = seq_q"},
      {"--heads 8 --kv-heads 3", "not a multiple of H_kv = 3"},
      {"--heads 8 --kv-heads 16", "H_kv"},
      {"--br 64", "--br and --bc go together"},
      {"--tiles huge", "--tiles: expected default or paper"},
      {"--mem-limit plenty", "--mem-limit: 'plenty' is not a whole number"},
      {"--check maybe", "--check: expected sampled, full or off"},
      {"--sweep no-such-sweep", "--sweep: unknown sweep 'no-such-sweep' (known: "},
      {"--input-scale -1", "--input-scale"},
      {"--no-such-flag", "no-such-flag"},
      {"--pass sideways", "--pass: expected fwd, bwd or fwd+bwd"},
      {"--pass bwd --kernels fa2", "fa2 computes the fwd pass"},
      {"--pass fwd --kernels naive_bwd", "naive_bwd computes the bwd pass"},
  });
}

TEST_CASE("bench --gpus: the ring's bad input is one line and exit 2, before any device", "[cli][bench][ring]") {
  flashlab::test::check_refusals(bench, {
      {"--gpus 2 --layout diagonal", "--layout: expected one of " + flashlab::sim::ring_layout_names() + ", got 'diagonal'"},
      {"--gpus 2 --model gpt-5", "unknown model 'gpt-5' (known: llama2-7b"},
      {"--model llama2-7b", "give --gpus P too"},
      {"--virtual-gpus", "give --gpus P too"},
      {"--comm-stream default", "give --gpus P too"},
      {"--gpus 2 --comm-stream high", "--comm-stream: expected priority or default (got 'high')"},
      {"--gpus 2 --kernels fa2", "--kernels is not a ring option"},
      {"--gpus 2 --pass bwd", "--pass: the ring runs fwd or fwd+bwd"},
      {"--gpus 2 --dtype fp32", "--dtype: the ring runs fp16 or bf16"},
      {"--gpus 2 --devices 0,x", "--devices: expected CUDA device numbers"},
      {"--gpus 2 --devices 0", "--devices: 1 devices for a ring of 2 GPUs"},
      {"--gpus 0", "--gpus: must be at least 1"},
      {"--gpus 2 --repeats 2", "--repeats: at least 3"},
      {"--gpus 2 --model llama2-7b --heads 8", "alternatives"},
      {"--gpus 2 --heads 8 --kv-heads 3", "8"},
      {"--sweep perf --gpus 2", "one-GPU sweep"},
      {"--gpus 4 --seq 5", "5"},
  });
}

TEST_CASE("bench --gpus: a machine that cannot run the ring says why, exit 2", "[cli][bench][ring]") {
  const std::string why = flashlab::kernels::cuda_unavailable_reason();
  if (why.empty()) {
    WARN("SKIPPED: this machine has a GPU; the multi-GPU tests cover the ring");
    return;
  }
  const Run r = bench("--gpus 2 --model llama3.2-1b --seq 8K --quiet");
  check_refused(r, "--gpus 2: ");
  CHECK_THAT(r.err, Catch::Contains(why));
  check_refused(bench("--sweep ring-llama2-7b --quiet"), why);
}

TEST_CASE("bench: listing kernels and sweeps needs no GPU", "[cli][bench]") {
  Run r = bench("--list");
  CHECK(r.code == 0);
  for (const char* id : {"naive", "naive_cublas", "fa1", "fa2"}) CHECK_THAT(r.out, Catch::Contains(id));
  r = bench("--list-sweeps");
  CHECK(r.code == 0);
  for (const char* s : {"lab-batch-seq", "lab-heads", "lab-emb-dim", "lab-head-dim", "lab-causal", "fa2-paper", "perf",
                        "ring-llama2-7b", "ring-llama3.2-3b", "ring-llama3.2-1b"})
    CHECK_THAT(r.out, Catch::Contains(s));
  CHECK_THAT(r.out, !Catch::Contains("ERROR"));
}

TEST_CASE("the registry listing shows every kernel and whether it can run here", "[cli][bench]") {
  const Run r = bench("--list");
  REQUIRE(r.code == 0);
  const std::string& t = r.out;
  for (const flashlab::kernels::KernelInfo& k : flashlab::kernels::registry()) {
    CHECK_THAT(t, Catch::Contains(k.id));
    CHECK_THAT(t, Catch::Contains(k.name));
  }
  flashlab::test::check_contains_each(t, {
      "runtime (B_r, B_c)",
      // Each backward rung says which forward rung it runs after.
      "bwd (after naive_cublas)",
      "bwd (after fa2)",
      "16, 32, 64, 96, 128, 256",
  });
}

TEST_CASE("bench: no CUDA device (or no CUDA in the build) is one line and exit 2", "[cli][bench]") {
  const std::string why = flashlab::kernels::cuda_unavailable_reason();
  const Run r = bench("--kernels fa2 --batch 1 --heads 1 --seq 65 --check-only --quiet");
  if (why.empty()) {
    // A machine with a GPU: the same command runs and prints its table.
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("fa2"));
    return;
  }
  check_refused(r, "CUDA");
  CHECK_THAT(r.err, Catch::Contains(why));
  if (!flashlab::kernels::built_with_cuda()) CHECK_THAT(r.err, Catch::Contains("this build has no CUDA support"));
  else CHECK_THAT(r.err, Catch::Contains("cudaGetDeviceCount"));
}

TEST_CASE("bench --ranks: the launcher's variables are read first, each missing one is one line and exit 2") {
  // The variables a launcher would set, set here for the child and taken back after.
  struct Var {
    const char* name;
    const char* value;
  };
  auto with = [](std::initializer_list<Var> vars, const std::string& args) {
    for (const Var& v : vars) ::setenv(v.name, v.value, 1);
    const Run r = bench(args);
    for (const Var& v : vars) ::unsetenv(v.name);
    return r;
  };
  flashlab::test::check_refusals(bench, {
      {"--ranks", "give --gpus P too"},
      {"--gpus 2 --rendezvous-timeout 5", "--rendezvous-timeout is for --ranks"},
      {"--gpus 2 --ranks --virtual-gpus", "give one"},
      {"--gpus 2 --ranks --devices 0,1", "--ranks: each rank takes its local GPU"},
      {"--gpus 2 --ranks", "--ranks: no launcher's rank in the environment"},
  });
  const std::initializer_list<Var> torchrun = {
      {"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}};
  check_refused(with({{"RANK", "0"}, {"WORLD_SIZE", "2"}}, "--gpus 2 --ranks"),
                "--ranks: RANK is set (torchrun) but LOCAL_RANK is not");
  check_refused(with({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}, "--gpus 2 --ranks"),
                "--ranks: MASTER_ADDR is not set");
  check_refused(with({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "1"},
                      {"SLURM_STEP_NODELIST", "gpu[01-02]"}, {"SLURM_JOB_ID", "77"}},
                     "--gpus 8 --ranks"),
                "rank 1: --gpus 8 needs 8 ranks; the job has 4 (slurm)");
  check_refused(with(torchrun, "--gpus 2 --ranks --rendezvous-timeout 0"), "--rendezvous-timeout: seconds from 1 to 3600");
  if (!flashlab::kernels::built_with_cuda()) {
    // Every variable in place: next is the GPU, which a build without CUDA does not have.
    check_refused(with(torchrun, "--gpus 2 --ranks"), "rank 0: ");
  }
}
