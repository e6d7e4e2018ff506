#include "chart_cache.hpp"

#include <algorithm>

namespace flashlab::gui {

namespace {

// The cache keeps this many charts; beyond it the oldest are dropped (a
// lecture has a few dozen, a lab session's slider many more).
constexpr size_t kMaxCharts = 256;

}  // namespace

ChartCache::ChartCache() : worker_([this] { work(); }) {}

ChartCache::~ChartCache() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

analysis::ChartSpec ChartCache::build(const Job& job) {
  try {
    return job.entry->build(job.context, job.results.get(), {});
  } catch (const std::exception& e) {
    analysis::ChartSpec c;
    c.id = job.entry->id;
    c.title = job.entry->title;
    c.notes.push_back(std::string("cannot draw: ") + e.what());
    return c;
  }
}

std::optional<analysis::ChartSpec> ChartCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = charts_.find(key);
  if (it == charts_.end()) return std::nullopt;
  return it->second;
}

analysis::ChartSpec ChartCache::get(const Job& job) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return building_ != job.key; });
    if (const auto it = charts_.find(job.key); it != charts_.end()) return it->second;
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](const Job& j) { return j.key == job.key; }), queue_.end());
  }
  analysis::ChartSpec c = build(job);
  std::lock_guard<std::mutex> lock(mutex_);
  if (charts_.size() >= kMaxCharts) charts_.erase(charts_.begin());
  charts_[job.key] = c;
  ++built_;
  return c;
}

void ChartCache::ahead(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (charts_.count(job.key) || building_ == job.key) return;
    for (const Job& j : queue_)
      if (j.key == job.key) return;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
}

bool ChartCache::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.empty() && building_.empty();
}

int ChartCache::built() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return built_;
}

void ChartCache::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    if (charts_.count(job.key)) continue;
    building_ = job.key;
    lock.unlock();
    analysis::ChartSpec c = build(job);
    lock.lock();
    if (charts_.size() >= kMaxCharts) charts_.erase(charts_.begin());
    charts_[job.key] = std::move(c);
    ++built_;
    building_.clear();
    done_.notify_all();
  }
}

ChartCache& chart_cache(AppState& s) {
  if (!s.chart_cache) s.chart_cache = std::make_shared<ChartCache>();
  return *s.chart_cache;
}

}  // namespace flashlab::gui
