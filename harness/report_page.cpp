#include "harness/report_page.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "harness/report_svg.hpp"

namespace tunebed::cli {
namespace {

using results::CandidateStatus;

constexpr std::array kStatuses = {CandidateStatus::ok,      CandidateStatus::compile_error, CandidateStatus::crash,
                                  CandidateStatus::timeout, CandidateStatus::wrong,         CandidateStatus::stopped};

std::string fixed(double v, const char* format = "%.2f") {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string short_id(const std::string& id) { return id.substr(0, 12); }
std::string opts_text(const std::string& opts) { return opts.empty() ? "(no opts)" : opts; }

// One kernel's tuning on one device in one run: the rows of v_convergence, in order.
struct Trace {
  std::string run_uuid, strategy, kernel_hash, device;
  std::vector<results::ConvergencePoint> points;
};

// Everything the page shows, read once from the database.
struct ReportData {
  std::vector<results::BestRow> winners;
  std::vector<Trace> traces;  // by kernel hash, device, run start
  std::map<std::string, std::pair<std::string, std::string>> kernel_labels;  // hash -> (shape, source)
  std::map<CandidateStatus, int64_t> by_status;
  int64_t quarantined = 0, runs = 0;
  struct TimeSpent {
    double compile_ms = 0, run_ms = 0;
    int64_t candidates = 0, without_compile_time = 0;
  };
  std::map<std::string, TimeSpent> time_spent;                  // by kernel hash
  std::map<std::pair<std::string, int64_t>, std::string> opts;  // (run uuid, seq) -> opts
};

ReportData read_data(results::TuningDb& db) {
  ReportData data;
  data.winners = db.best();
  for (const auto& w : data.winners) data.kernel_labels[w.kernel_hash] = {w.kernel_shape, w.kernel_source};
  auto runs = db.runs();
  data.runs = static_cast<int64_t>(runs.size());
  for (const auto& run : runs) {
    for (auto& p : db.convergence(run.id)) {
      ++data.by_status[p.status];
      if (data.traces.empty() || data.traces.back().run_uuid != run.uuid ||
          data.traces.back().kernel_hash != p.kernel_hash || data.traces.back().device != p.device) {
        data.traces.push_back({run.uuid, run.strategy, p.kernel_hash, p.device, {}});
      }
      data.traces.back().points.push_back(std::move(p));
    }
  }
  std::stable_sort(data.traces.begin(), data.traces.end(), [](const Trace& a, const Trace& b) {
    return std::tie(a.kernel_hash, a.device) < std::tie(b.kernel_hash, b.device);
  });
  for (const auto& t : data.traces) {
    auto& spent = data.time_spent[t.kernel_hash];
    if (spent.candidates > 0) continue;  // this kernel's history (all runs) is already summed
    for (const auto& c : db.history(db.resolve_kernel(t.kernel_hash))) {
      ++spent.candidates;
      data.opts[{c.run_uuid, c.seq}] = c.opts;
      if (c.compile_ms)
        spent.compile_ms += *c.compile_ms;
      else
        ++spent.without_compile_time;
      for (double us : c.samples_us) spent.run_ms += us / 1000;
    }
  }
  for (const auto& f : db.failures()) data.quarantined += f.quarantined ? 1 : 0;
  return data;
}

std::string kernel_title(const ReportData& data, const std::string& hash) {
  auto it = data.kernel_labels.find(hash);
  if (it == data.kernel_labels.end()) return short_id(hash) + " (no verified candidate)";
  return it->second.second + "  " + it->second.first + "  [" + short_id(hash) + "]";
}

// The first candidate of the winner's run on its kernel and device: the baseline it is compared to.
const results::ConvergencePoint* baseline_of(const ReportData& data, const results::BestRow& w) {
  for (const auto& t : data.traces) {
    if (t.run_uuid == w.run_uuid && t.kernel_hash == w.kernel_hash && t.device == w.device)
      return &t.points.front();
  }
  return nullptr;
}

std::string winners_section(const ReportData& data) {
  std::string html =
      "<h2>Winners</h2>\n<p>Baseline: the first candidate each winner's run measured for that kernel\n"
      "and device. The database stores no marker for hand-coded opts, so this stands in for them\n"
      "(for beam search it is the kernel with no opts applied). Speedup = baseline time / winner time.</p>\n"
      "<table>\n<tr><th>kernel</th><th>shape</th><th>source</th><th>device</th><th>opts</th>"
      "<th>median µs</th>"
      "<th>baseline opts</th><th>baseline µs</th><th>speedup</th></tr>\n";
  BarChart chart{.id = "speedup",
                 .title = "Speedup of each winner over its baseline",
                 .x_label = "speedup (x)",
                 .segment_names = {"speedup"},
                 .bars = {},
                 .marker = 1.0};
  for (const auto& w : data.winners) {
    const results::ConvergencePoint* base = baseline_of(data, w);
    std::optional<double> speedup;
    if (base && base->median_us && base->status == CandidateStatus::ok)
      speedup = *base->median_us / w.median_us;
    std::string base_opts = "-", base_us = "-";
    if (base) {
      base_opts = opts_text(data.opts.at({w.run_uuid, base->seq}));
      base_us = base->median_us && base->status == CandidateStatus::ok ? fixed(*base->median_us)
                                                                       : std::string(to_string(base->status));
    }
    html += "<tr><td><code>" + short_id(w.kernel_hash) + "</code></td><td>" + html_escape(w.kernel_shape) +
            "</td><td>" + html_escape(w.kernel_source) + "</td><td>" + html_escape(w.device) +
            "</td><td><code>" + html_escape(opts_text(w.opts)) + "</code></td><td class=\"n\">" +
            fixed(w.median_us) + "</td><td><code>" + html_escape(base_opts) + "</code></td><td class=\"n\">" +
            base_us + "</td><td class=\"n\">" + (speedup ? fixed(*speedup) + "x" : "-") + "</td></tr>\n";
    if (speedup) {
      chart.bars.push_back({w.kernel_source + " on " + w.device, {*speedup}, fixed(*speedup) + "x"});
    }
  }
  return html + "</table>\n" + render_bar_chart(chart);
}

std::string convergence_section(const ReportData& data) {
  std::string html =
      "<h2>Convergence</h2>\n<p>Best verified time so far after each candidate, one line per run and device; "
      "against seconds since the run started (a resumed run counts its pause) and against candidates "
      "tried.</p>\n";
  for (auto first = data.traces.begin(); first != data.traces.end();) {
    auto last = std::find_if(first, data.traces.end(),
                             [&](const Trace& t) { return t.kernel_hash != first->kernel_hash; });
    LineChart by_time{.id = "convergence-time-" + short_id(first->kernel_hash),
                      .title = "Best so far vs wall time",
                      .x_label = "seconds since run start",
                      .y_label = "best median (µs)"};
    LineChart by_index{.id = "convergence-candidates-" + short_id(first->kernel_hash),
                       .title = "Best so far vs candidates",
                       .x_label = "candidates tried",
                       .y_label = "best median (µs)"};
    for (auto t = first; t != last; ++t) {
      std::string name = "run " + t->run_uuid.substr(0, 8) + " (" + t->strategy + ") on " + t->device;
      Series time{name, {}}, index{name, {}};
      for (const auto& p : t->points) {
        if (!p.best_so_far_us) continue;
        time.points.emplace_back(p.elapsed_s, *p.best_so_far_us);
        index.points.emplace_back(static_cast<double>(p.candidate_index), *p.best_so_far_us);
      }
      by_time.series.push_back(std::move(time));
      by_index.series.push_back(std::move(index));
    }
    html += "<h3>" + html_escape(kernel_title(data, first->kernel_hash)) + "</h3>\n<div class=\"pair\">\n" +
            render_line_chart(by_time) + render_line_chart(by_index) + "</div>\n";
    first = last;
  }
  return html;
}

std::string failures_section(const ReportData& data) {
  int64_t total = 0, failed = 0, stopped = 0;
  BarChart chart{.id = "failures",
                 .title = "Candidates by status",
                 .x_label = "candidates",
                 .segment_names = {"candidates"},
                 .bars = {},
                 .marker = std::nullopt};
  for (CandidateStatus s : kStatuses) {
    auto it = data.by_status.find(s);
    int64_t n = it == data.by_status.end() ? 0 : it->second;
    total += n;
    if (s == CandidateStatus::stopped) stopped += n;  // slow, not broken
    else if (s != CandidateStatus::ok) failed += n;
    chart.bars.push_back({std::string(to_string(s)), {static_cast<double>(n)}, std::to_string(n)});
  }
  return "<h2>Failures</h2>\n<p>" + std::to_string(failed) + " of " + std::to_string(total) +
         " candidates failed; " + std::to_string(data.quarantined) +
         " of those (crashes and timeouts) are quarantined and never run again on their kernel and device. "
         "<code>tunebed query failures</code> lists them." +
         (stopped ? " " + std::to_string(stopped) +
                        " more were stopped past their stop line: slow, not failed, and not quarantined."
                  : "") +
         "</p>\n" +
         render_bar_chart(chart);
}

std::string time_section(const ReportData& data) {
  BarChart chart{.id = "time-split",
                 .title = "Tuning time per kernel",
                 .x_label = "milliseconds",
                 .segment_names = {"compile", "timed runs"},
                 .bars = {},
                 .marker = std::nullopt};
  double compile = 0, run = 0;
  int64_t without = 0;
  for (const auto& [hash, spent] : data.time_spent) {
    auto label = data.kernel_labels.find(hash);
    chart.bars.push_back({label == data.kernel_labels.end() ? short_id(hash) : label->second.second,
                          {spent.compile_ms, spent.run_ms},
                          fixed(spent.compile_ms + spent.run_ms, "%.1f") + " ms"});
    compile += spent.compile_ms;
    run += spent.run_ms;
    without += spent.without_compile_time;
  }
  std::string no_compile_time =
      without ? " (" + std::to_string(without) + " candidates have no compile time recorded)" : "";
  return "<h2>Where the time went</h2>\n<p>Compilation: " + fixed(compile, "%.1f") +
         " ms; timed runs (the sum of every timing sample): " + fixed(run, "%.1f") + " ms" + no_compile_time +
         ". <strong>Verification time is not stored in the tuning database</strong>, so it is not shown;\n"
         "nor is time spent outside compiling and timing (rendering, search bookkeeping).</p>\n" +
         render_bar_chart(chart);
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1260px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; } h3 { font-size: 14px; }
table { border-collapse: collapse; margin: 8px 0 16px; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; } code { font-size: 12px; }
svg.plot { font: 11px sans-serif; background: #fff; border: 1px solid #eee; margin: 4px 8px 4px 0; }
svg.plot .title { font-weight: bold; font-size: 12px; } .pair { display: flex; flex-wrap: wrap; }
)css";

}  // namespace

std::string render_report(results::TuningDb& db, const std::string& db_label) {
  ReportData data = read_data(db);
  int64_t candidates = 0;
  for (const auto& [status, n] : data.by_status) candidates += n;
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tunebed report: " +
         html_escape(db_label) + "</title>\n<style>" + kStyle +
         "</style>\n</head>\n<body>\n<h1>tunebed report: " + html_escape(db_label) + "</h1>\n<p>" +
         std::to_string(data.runs) + " runs, " + std::to_string(data.time_spent.size()) + " kernels, " +
         std::to_string(candidates) + " candidates, " + std::to_string(data.winners.size()) +
         " winners. Times are medians of timing samples, in µs.</p>\n" + winners_section(data) +
         convergence_section(data) + failures_section(data) + time_section(data) + "</body>\n</html>\n";
}

}  // namespace tunebed::cli
