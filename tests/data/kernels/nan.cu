// Writes every element of O, each a NaN it computed (0/0).
// flashlab kernel
//   algorithm: fa2
//   tiles:     64 x 64
//   threads:   64
//   grid:      T_r, B * H
//   dtypes:    fp32, fp16
//   head_dims: 64

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  const int b = blockIdx.y / a.H, h = blockIdx.y % a.H;
  const int r = blockIdx.x * FLASHLAB_BR + threadIdx.x;
  if (r >= a.N_q) return;
  elem_t* o = a.o + b * a.q_stride_b + h * a.q_stride_h + r * a.q_stride_n;
  const float zero = load(a.q) - load(a.q);
  for (int x = 0; x < a.d; ++x) store(o + x, zero / zero);
}
