// 48 KiB of static shared memory on top of a declared 190,000 B of dynamic:
// more than any GPU gives one block, though each alone would fit.
// flashlab kernel
//   algorithm: fa2
//   tiles:     64 x 64
//   threads:   64
//   smem:      190000
//   grid:      T_r, B * H
//   dtypes:    fp32, fp16
//   head_dims: 64

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  __shared__ float table[12288];
  float* dynamic = flashlab::shared_memory<float>();
  table[threadIdx.x] = dynamic[threadIdx.x];
  store(a.o + threadIdx.x, table[threadIdx.x]);
}
