// Writes a terabyte past the start of O: an illegal address on the GPU.
// flashlab kernel
//   algorithm: fa2
//   tiles:     64 x 64
//   threads:   64
//   grid:      T_r, B * H
//   dtypes:    fp32, fp16
//   head_dims: 64

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  const long long row = blockIdx.x * (long long)FLASHLAB_BR + threadIdx.x;
  store(a.o + (1LL << 40) + row, 1.f);
}
