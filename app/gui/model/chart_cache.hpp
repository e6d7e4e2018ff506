// The model charts by what they were built from — the inputs and the open
// results, and the chart's id — and one worker thread that builds charts
// ahead of time (a lecture's scenes, while the first is on screen). A chart
// a view needs now is taken from here, or built on the spot (model.hpp:
// need_chart): a roofline with a hundred measured points or the IO curves at
// a dozen N through the L2 model take a second or more each, which a clicker
// must not wait for twice.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "state/app_state.hpp"

namespace flashlab::gui {

class ChartCache {
 public:
  struct Job {
    std::string key;  // chart id, inputs and results (model.cpp: chart_key)
    const analysis::ChartEntry* entry = nullptr;
    analysis::ChartContext context;
    std::shared_ptr<const analysis::BenchResults> results;  // measured points; null: none open
  };

  ChartCache();
  ~ChartCache();  // stops the worker after the chart it is building
  ChartCache(const ChartCache&) = delete;
  ChartCache& operator=(const ChartCache&) = delete;

  // The chart built for `key`, if any.
  std::optional<analysis::ChartSpec> find(const std::string& key) const;
  // The chart of `job`, now: from the cache, from the worker when it is
  // building it (waiting for it), else built on this thread.
  analysis::ChartSpec get(const Job& job);
  // Builds `job` on the worker when nothing has it yet (in the order asked).
  void ahead(Job job);
  // Whether the worker has nothing left to build.
  bool idle() const;
  // Charts built so far, and by the worker.
  int built() const;

 private:
  void work();
  static analysis::ChartSpec build(const Job& job);

  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::map<std::string, analysis::ChartSpec> charts_;
  std::deque<Job> queue_;
  std::string building_;  // the key the worker is building now
  bool stop_ = false;
  int built_ = 0;
  std::thread worker_;
};

// The cache of `s`, made on first use.
ChartCache& chart_cache(AppState& s);

}  // namespace flashlab::gui
