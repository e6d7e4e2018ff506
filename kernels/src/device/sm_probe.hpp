// Which SMs are free while other work holds some (sm_probe.cu): a launch of
// one CTA per SM, each asking for the SM's whole shared memory (so no two
// share an SM, and none shares one with another kernel's CTA), each holding
// its SM for `hold_ns` of the GPU's global timer. A CTA that started late
// waited for an SM another kernel held. Plain declarations for host C++.
#pragma once

namespace flashlab::kernels::detail {

// `ctas` CTAs on the current device's stream `stream`; CTA c writes the SM it
// ran on to smid[c] and its start (globaltimer, ns) to start_ns[c] (device
// arrays of `ctas`). Sets the kernel's shared-memory attribute on the current
// device before it launches (the attribute is per device).
void launch_sm_probe(int ctas, int smem_bytes, long long hold_ns, unsigned* smid, long long* start_ns, void* stream);

}  // namespace flashlab::kernels::detail
