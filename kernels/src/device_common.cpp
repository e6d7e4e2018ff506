#include "flashlab/kernels/device.hpp"

namespace flashlab::kernels {

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace flashlab::kernels
