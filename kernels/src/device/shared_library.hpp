// Opening a CUDA library at run time (libcupti, libnccl): the first of the
// candidates dlopen accepts, or — when none — one sentence naming the first
// failure, the other paths tried and the variable that may name the file.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace flashlab::kernels::detail {

// $env_var when set, else `names` (sonames for the loader's search path), then
// each of `subpaths` under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda.
inline std::vector<std::string> library_candidates(const char* env_var, const std::vector<std::string>& names,
                                                   const std::vector<std::string>& subpaths) {
  if (const char* forced = std::getenv(env_var); forced && *forced) return {forced};
  std::vector<std::string> out = names;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root && *root)
      for (const std::string& sub : subpaths) out.push_back(std::string(root) + sub);
  for (const std::string& sub : subpaths) out.push_back("/usr/local/cuda" + sub);
  return out;
}

// The handle (kept for the life of the process) and its path; nullptr with
// `why_not` = "WHAT not found: dlopen(...) failed: ... (also tried ...; ENV may name the library)".
inline void* open_first_library(const std::vector<std::string>& candidates, const std::string& what,
                                const char* env_var, std::string& path, std::string& why_not) {
  std::string first_error;
  for (const std::string& c : candidates) {
    if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = c;
      return lib;
    }
    if (first_error.empty()) {
      const char* e = dlerror();
      first_error = "dlopen(" + c + ") failed: " + (e ? e : "unknown error");
    }
  }
  why_not = what + " not found: " + first_error;
  for (std::size_t k = 1; k < candidates.size(); ++k) why_not += (k == 1 ? " (also tried " : ", ") + candidates[k];
  if (candidates.size() > 1) why_not += std::string("; ") + env_var + " may name the library)";
  return nullptr;
}

}  // namespace flashlab::kernels::detail
