// Standard attention, the way the FlashAttention paper's Algorithm 0 writes it:
// S = τ Q Kᵀ to memory, P = softmax(S) to memory, O = P V. Three launches of
// one kernel (args.launch = 0, 1, 2), S and P in the workspace in the
// problem's dtype — the traffic the simulator's "standard" model counts.
// It works: run it, then write fa1.cu.
//
//   flashlab bench --kernel-file assets/kernels/naive.cu -n 1000 -d 64 --causal both --counters
//
// The declaration below is what FlashLab reads; every key is explained in
// kernels/README.md, "Your own kernel". The grid is the same for the three
// launches: block (x, y, z) = (column tile, row tile, b·H + h). Launch 0 uses
// every block; launches 1 and 2 work on whole rows, so only the blocks of
// x = 0 do (the others return at once).
//
// flashlab kernel
//   name:      naive
//   algorithm: naive
//   tiles:     64 x 64
//   threads:   256
//   grid:      T_c, T_r, B * H
//   launches:  3
//   workspace: B * H * N_q * N_kv * dtype_bytes
//   dtypes:    fp32, fp16, bf16
//   head_dims: 16, 32, 64, 96, 128, 256

#include "flashlab.cuh"

// The d columns of Q_i and K_j go through shared memory this many at a time
// (a tiled GEMM): the tiles stay small at every head dim.
constexpr int kChunk = 16;

// S_ij = τ Q_i K_jᵀ for one 64 × 64 tile: 256 threads, each a 4 × 4 set of
// elements (rows ty + 16·i, columns tx + 16·j).
__device__ void scores(const FlashLabArgs& a, elem_t* S) {
  constexpr int Br = FLASHLAB_BR, Bc = FLASHLAB_BC, d = FLASHLAB_HEAD_DIM;
  static_assert(Br == 64 && Bc == 64, "this GEMM is written for 64 x 64 tiles and 256 threads");
  __shared__ float Qi[Br][kChunk + 1];  // (B_r, kChunk) of Q_i in shared memory, +1 against bank conflicts
  __shared__ float Kj[Bc][kChunk + 1];  // (B_c, kChunk) of K_j
  const int bh = blockIdx.z, b = bh / a.H, h = bh % a.H;
  const int kv_head = h / (a.H / a.H_kv);
  const elem_t* q = a.q + b * a.q_stride_b + h * a.q_stride_h;
  const elem_t* k = a.k + b * a.kv_stride_b + kv_head * a.kv_stride_h;
  const int row0 = blockIdx.y * Br, col0 = blockIdx.x * Bc;
  const int ty = threadIdx.x / 16, tx = threadIdx.x % 16;
  float acc[4][4] = {};
  for (int x0 = 0; x0 < d; x0 += kChunk) {
    for (int e = threadIdx.x; e < Br * kChunk; e += blockDim.x) {
      const int r = e / kChunk, c = e % kChunk;
      const bool in = row0 + r < a.N_q && x0 + c < d;
      Qi[r][c] = in ? load(q + (row0 + r) * a.q_stride_n + x0 + c) : 0.f;
      const bool kin = col0 + r < a.N_kv && x0 + c < d;
      Kj[r][c] = kin ? load(k + (col0 + r) * a.kv_stride_n + x0 + c) : 0.f;
    }
    __syncthreads();
    for (int x = 0; x < kChunk; ++x) {
      float qa[4], kb[4];
      for (int i = 0; i < 4; ++i) qa[i] = Qi[ty + 16 * i][x];
      for (int j = 0; j < 4; ++j) kb[j] = Kj[tx + 16 * j][x];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += qa[i] * kb[j];
    }
    __syncthreads();
  }
  // Every element is written, masked or not: the mask comes in the softmax.
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r < a.N_q && c < a.N_kv) store(S + (long long)r * a.N_kv + c, acc[i][j] * a.scale);
    }
}

// P = softmax(S) row by row, in place; causal: P_rc = 0 for c > r. One warp
// per row (8 warps, 64 rows): an online pass for the maximum m and the sum ℓ,
// each lane over its own columns, then the lanes' (m, ℓ) merged.
__device__ void softmax_rows(const FlashLabArgs& a, elem_t* S) {
  constexpr int Br = FLASHLAB_BR;
  __shared__ float part_m[8][32], part_l[8][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int rr = warp; rr < Br; rr += 8) {
    const int r = blockIdx.y * Br + rr;
    const int n = r >= a.N_q ? 0 : a.causal ? r + 1 : a.N_kv;  // the columns row r sees
    elem_t* row = S + (long long)(r < a.N_q ? r : 0) * a.N_kv;
    float m = flashlab::neg_infinity(), l = 0.f;
    for (int c = lane; c < n; c += 32) {
      const float s = load(row + c);
      const float m_new = fmaxf(m, s);
      l = l * __expf(m - m_new) + __expf(s - m_new);
      m = m_new;
    }
    part_m[warp][lane] = m;
    part_l[warp][lane] = l;
    __syncwarp();
    float row_m = flashlab::neg_infinity();
    for (int x = 0; x < 32; ++x) row_m = fmaxf(row_m, part_m[warp][x]);
    float row_l = 0.f;
    for (int x = 0; x < 32; ++x)
      if (part_l[warp][x] > 0.f) row_l += part_l[warp][x] * __expf(part_m[warp][x] - row_m);
    __syncwarp();
    for (int c = lane; c < n; c += 32) store(row + c, __expf(load(row + c) - row_m) / row_l);
    if (r < a.N_q)
      for (int c = n + lane; c < a.N_kv; c += 32) store(row + c, 0.f);
  }
}

// O_i = P_i V for one tile of 64 rows: each thread d / 4 elements of the
// tile (element e of the thread: index threadIdx.x + 256·e of the 64 × d tile);
// the keys go through shared memory kChunk at a time.
__device__ void output(const FlashLabArgs& a, const elem_t* P) {
  constexpr int Br = FLASHLAB_BR, d = FLASHLAB_HEAD_DIM;
  constexpr int per_thread = (Br * d + 255) / 256;
  __shared__ float Pt[Br][kChunk + 1];  // (B_r, kChunk) of P_i
  __shared__ float Vj[kChunk][d];       // (kChunk, d) of V
  const int bh = blockIdx.z, b = bh / a.H, h = bh % a.H;
  const int kv_head = h / (a.H / a.H_kv);
  const elem_t* v = a.v + b * a.kv_stride_b + kv_head * a.kv_stride_h;
  elem_t* o = a.o + b * a.q_stride_b + h * a.q_stride_h;
  const int row0 = blockIdx.y * Br;
  float acc[per_thread];
  for (int e = 0; e < per_thread; ++e) acc[e] = 0.f;
  for (int col0 = 0; col0 < a.N_kv; col0 += kChunk) {
    for (int e = threadIdx.x; e < Br * kChunk; e += blockDim.x) {
      const int r = e / kChunk, c = e % kChunk;
      Pt[r][c] = row0 + r < a.N_q && col0 + c < a.N_kv ? load(P + (long long)(row0 + r) * a.N_kv + col0 + c) : 0.f;
    }
    for (int e = threadIdx.x; e < kChunk * d; e += blockDim.x) {
      const int r = e / d, c = e % d;
      Vj[r][c] = col0 + r < a.N_kv ? load(v + (col0 + r) * a.kv_stride_n + c) : 0.f;
    }
    __syncthreads();
    for (int e = 0; e < per_thread; ++e) {
      const int idx = threadIdx.x + e * 256;
      if (idx >= Br * d) break;
      const int r = idx / d, c = idx % d;
      float s = 0.f;
      for (int x = 0; x < kChunk; ++x) s += Pt[r][x] * Vj[x][c];
      acc[e] += s;
    }
    __syncthreads();
  }
  for (int e = 0; e < per_thread; ++e) {
    const int idx = threadIdx.x + e * 256;
    if (idx >= Br * d) break;
    const int r = idx / d, c = idx % d;
    if (row0 + r < a.N_q) store(o + (row0 + r) * a.q_stride_n + c, acc[e]);
  }
}

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  // The workspace: S, then P in its place, [B·H, N_q, N_kv] in the problem's dtype.
  elem_t* S = static_cast<elem_t*>(a.workspace) + (long long)blockIdx.z * a.N_q * a.N_kv;
  if (a.launch == 0) scores(a, S);
  else if (blockIdx.x == 0 && a.launch == 1) softmax_rows(a, S);
  else if (blockIdx.x == 0 && a.launch == 2) output(a, S);
}
