// Never returns: the loop's condition reads a value nothing changes.
// flashlab kernel
//   algorithm: fa2
//   tiles:     64 x 64
//   threads:   64
//   grid:      T_r, B * H
//   dtypes:    fp32, fp16
//   head_dims: 64

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  volatile int keep_going = 1;
  while (keep_going) {
  }
  store(a.o, 0.f);
}
