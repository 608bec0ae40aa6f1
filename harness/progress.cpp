#include "harness/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "harness/cli.hpp"
#include "results/json_lines.hpp"

namespace tunebed::cli {
namespace {

using Kind = search::TuneEvent::Kind;

std::string short_hash(const std::string& hash) { return hash.substr(0, 12); }

std::string micros(std::optional<double> seconds) {
  if (!seconds) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", *seconds * 1e6);
  return buf;
}

std::string duration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%ds", static_cast<int>(s));
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  return buf;
}

class NoProgress : public Progress {
 public:
  void run_start(const RunInfo&) override {}
  void event(const KernelSlot&, const search::TuneEvent&) override {}
  void kernel_failed(const KernelSlot&, const std::string&, const std::string&) override {}
  void run_done(const std::string&, size_t, size_t) override {}
};

class LiveProgress : public Progress {
 public:
  void run_start(const RunInfo& run) override {
    std::fprintf(stderr, "run %lld (%s): %zu kernel(s) into %s%s\n", static_cast<long long>(run.run_id),
                 run.run_uuid.substr(0, 12).c_str(), run.kernels, run.db.c_str(),
                 run.resumed ? ", resumed" : "");
  }

  void event(const KernelSlot& slot, const search::TuneEvent& e) override {
    const results::Kernel& k = e.target->kernel;
    switch (e.kind) {
      case Kind::kernel_start:
        kernel_start_ = elapsed();
        tried_ = 0;
        best_.reset();
        break;
      case Kind::candidate:
        tried_ = e.tried;
        best_ = e.best_s;
        break;
      case Kind::new_best:
        return;  // its candidate event drew the line already
      case Kind::kernel_done:
        kernels_done_++;
        clear();
        std::fprintf(stderr, "[%zu/%zu] %s %s  %s\n", slot.index, slot.count, short_hash(k.hash).c_str(),
                     k.shape.c_str(), outcome(*e.result).c_str());
        return;
    }
    // Past the budget is the baseline (the default opts), measured after the search.
    std::string count = std::to_string(tried_);
    if (tried_ <= slot.budget) count += "/" + std::to_string(slot.budget);
    clear();
    std::fprintf(stderr, "[%zu/%zu] %s %s  candidate %s  best %s  ETA %s", slot.index, slot.count,
                 short_hash(k.hash).c_str(), k.shape.c_str(), count.c_str(), micros(best_).c_str(),
                 eta(slot).c_str());
    std::fflush(stderr);
  }

  // The command prints the error itself, on a line of its own: clear the live line for it.
  void kernel_failed(const KernelSlot&, const std::string&, const std::string&) override {
    kernels_done_++;
    clear();
  }

  void run_done(const std::string& status, size_t done, size_t failed) override {
    clear();
    std::fprintf(stderr, "run %s: %zu kernel(s) done, %zu failed, %s\n", status.c_str(), done, failed,
                 duration(elapsed()).c_str());
  }

 private:
  static void clear() { std::fputs("\r\033[K", stderr); }

  static std::string outcome(const search::TuneResult& r) {
    if (r.interrupted) return "interrupted";
    std::string s = micros(r.median_s);
    if (r.baseline_s) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " (default %.1f us, %.2fx)", *r.baseline_s * 1e6,
                    *r.baseline_s / r.median_s);
      s += buf;
    }
    return s + (r.cache_hit ? ", cache hit" : "");
  }

  std::string eta(const KernelSlot& slot) const {
    const double in_kernel = elapsed() - kernel_start_;
    const double this_left = tried_ > 0 ? in_kernel / static_cast<double>(tried_) *
                                              static_cast<double>(std::max<int64_t>(0, slot.budget - tried_))
                                        : 0;
    const double per_kernel =
        kernels_done_ > 0 ? kernel_start_ / static_cast<double>(kernels_done_) : in_kernel;
    return duration(this_left + per_kernel * static_cast<double>(slot.count - slot.index));
  }

  double kernel_start_ = 0;
  size_t kernels_done_ = 0;
  int64_t tried_ = 0;
  std::optional<double> best_;
};

class JsonlProgress : public Progress {
 public:
  void run_start(const RunInfo& run) override {
    emit("run_start", {{"run", run.run_id},
                       {"run_uuid", run.run_uuid},
                       {"db", run.db},
                       {"kernels", static_cast<int64_t>(run.kernels)},
                       {"resumed", static_cast<int64_t>(run.resumed)}});
  }

  void event(const KernelSlot& slot, const search::TuneEvent& e) override {
    const results::Kernel& k = e.target->kernel;
    results::JsonRow row = {{"index", static_cast<int64_t>(slot.index)}, {"kernel", k.hash}};
    switch (e.kind) {
      case Kind::kernel_start:
        row.insert(row.end(), {{"kernels", static_cast<int64_t>(slot.count)},
                               {"shape", k.shape},
                               {"source", k.source},
                               {"budget", slot.budget}});
        return emit("kernel_start", row);
      case Kind::candidate:
      case Kind::new_best:
        row.insert(row.end(), {{"tried", e.tried},
                               {"opts", e.opts},
                               {"status", std::string(results::to_string(e.status))},
                               {"median_us", us(e.median_s)},
                               {"best_us", us(e.best_s)},
                               {"reused", static_cast<int64_t>(e.reused)}});
        return emit(e.kind == Kind::candidate ? "candidate" : "new_best", row);
      case Kind::kernel_done: {
        const search::TuneResult& r = *e.result;
        std::optional<double> speedup;
        if (r.baseline_s && r.median_s > 0 && !r.interrupted) speedup = *r.baseline_s / r.median_s;
        row.insert(row.end(), {{"cache_hit", static_cast<int64_t>(r.cache_hit)},
                               {"interrupted", static_cast<int64_t>(r.interrupted)},
                               {"opts", r.opts},
                               {"tuned_us", r.interrupted ? results::Value{} : us(r.median_s)},
                               {"default_opts", r.baseline_opts},
                               {"default_us", us(r.baseline_s)},
                               {"speedup", speedup ? results::Value{*speedup} : results::Value{}},
                               {"measured", r.measured},
                               {"reused", r.reused}});
        return emit("kernel_done", row);
      }
    }
  }

  void kernel_failed(const KernelSlot& slot, const std::string& hash, const std::string& message) override {
    emit("kernel_done", {{"index", static_cast<int64_t>(slot.index)}, {"kernel", hash}, {"error", message}});
  }

  void run_done(const std::string& status, size_t done, size_t failed) override {
    emit(
        "run_done",
        {{"status", status}, {"done", static_cast<int64_t>(done)}, {"failed", static_cast<int64_t>(failed)}});
  }

 private:
  static results::Value us(std::optional<double> seconds) {
    return seconds ? results::Value{*seconds * 1e6} : results::Value{};
  }

  void emit(const std::string& name, results::JsonRow fields) {
    results::JsonRow row = {{"event", name}, {"t", std::round(elapsed() * 1e3) / 1e3}};
    row.insert(row.end(), fields.begin(), fields.end());
    // One write per line, flushed: a CI log or a pipe sees each event as it happens.
    std::cout << results::to_json(row) << std::endl;
  }
};

}  // namespace

std::unique_ptr<Progress> make_progress(const std::string& mode) {
  if (mode == "auto") return make_progress(::isatty(STDERR_FILENO) ? "live" : "none");
  if (mode == "live") return std::make_unique<LiveProgress>();
  if (mode == "jsonl") return std::make_unique<JsonlProgress>();
  if (mode == "none") return std::make_unique<NoProgress>();
  throw UsageError("--progress '" + mode + "': expected auto, live, jsonl or none");
}

}  // namespace tunebed::cli
