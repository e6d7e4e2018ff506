// What a kernel file's child process and FlashLab say to each other, as JSON:
// the request (the kernel file, its compiled versions, the problems, the run's
// options) and each case's row (sim::MeasuredRun). One line per message on the
// child's reply pipe: "ready", "row {...}", "fatal {...}".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/kernels/student/compile.hpp"

namespace flashlab::kernels::student::detail {

struct ChildRequest {
  std::string kernel_path;               // the kernel file as given (read again by the child)
  std::vector<CompiledVersion> versions;  // with `image` the path of the file holding it
  std::vector<sim::AttentionProblem> problems;
  RunOptions options;
  int device = 0;
};

nlohmann::json to_json(const sim::AttentionProblem& p);
sim::AttentionProblem problem_from_json(const nlohmann::json& j);
nlohmann::json to_json(const sim::MeasuredRun& r);
sim::MeasuredRun run_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ChildRequest& r);
ChildRequest request_from_json(const nlohmann::json& j);

}  // namespace flashlab::kernels::student::detail
