// FlashLabArgs as the host packs it: field for field the struct of
// flashlab.cuh, the pointers untyped. Every kernel compiles with
// FLASHLAB_ARGS_BYTES = sizeof(HostArgs), and flashlab.cuh refuses to compile
// when its own struct has another size.
#pragma once

namespace flashlab::kernels::student::detail {

struct HostArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  void* workspace;
  long long workspace_bytes;
  long long q_stride_b, q_stride_h, q_stride_n;
  long long kv_stride_b, kv_stride_h, kv_stride_n;
  int B, H, H_kv, N_q, N_kv, d;
  int causal;
  int launch;
  int Br, Bc;
  int T_r, T_c;
  float scale;
};

}  // namespace flashlab::kernels::student::detail
