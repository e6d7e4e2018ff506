// Never returns: a loop that sleeps forever (__nanosleep is an instruction of
// its own, so no compiler removes the loop as it may an empty one).
// flashlab kernel
//   algorithm: fa2
//   tiles:     64 x 64
//   threads:   64
//   grid:      T_r, B * H
//   dtypes:    fp32, fp16
//   head_dims: 64

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  for (;;) __nanosleep(1000);
  store(a.o, 0.f);
}
