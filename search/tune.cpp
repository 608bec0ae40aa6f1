#include "search/tune.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "core/ir/hash.hpp"
#include "results/candidate_writer.hpp"

namespace tunebed::search {

results::Device fingerprint_of(const std::string& device_spec) {
  const Fingerprint f = open_device(device_spec)->fingerprint();
  return {0, f.name, f.arch, f.driver, f.compiler, f.compiler_version};
}

namespace {

std::string source_hash(const std::string& source) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash_bytes(source)));
  return buf;
}

// The search's cost function: render, run in the pool, record, answer seconds (+inf if failed).
class TuneCost : public CostFunction {
 public:
  TuneCost(TuneTarget& target, WorkerPool& pool, results::CandidateWriter& writer, Job proto,
           int64_t kernel_id, int64_t device_id, std::map<std::string, double> committed,
           std::set<std::string> quarantined, TuneResult& counts)
      : target_(target),
        pool_(pool),
        writer_(writer),
        proto_(std::move(proto)),
        kernel_id_(kernel_id),
        device_id_(device_id),
        committed_(std::move(committed)),
        quarantined_(std::move(quarantined)),
        counts_(counts) {}

  std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double> early_stop) override {
    std::vector<double> cost(batch.size(), INFINITY);
    std::vector<Job> jobs;
    std::vector<size_t> slot;
    std::vector<std::string> opts_of;
    for (size_t i = 0; i < batch.size(); i++) {
      std::string opts = target_.space->key(batch[i]);
      if (auto it = committed_.find(opts); it != committed_.end()) {
        cost[i] = it->second;
        counts_.reused++;
        continue;
      }
      if (quarantined_.contains(opts)) {
        counts_.skipped_quarantined++;
        continue;
      }
      Job job = proto_;
      try {
        job.kernel = target_.render(batch[i]);
      } catch (const std::exception& e) {
        record(opts, "",
               JobResult{.status = CandidateStatus::compile_error,
                         .message = std::string("cannot render: ") + e.what()});
        continue;
      }
      job.timing.early_stop_s = early_stop;
      jobs.push_back(std::move(job));
      slot.push_back(i);
      opts_of.push_back(std::move(opts));
    }
    // Recorded as each arrives: a process killed mid-batch keeps what was measured before.
    pool_.run(jobs, [&](int j, const JobResult& r) {
      record(opts_of[j], jobs[j].kernel.source, r);
      if (r.status == CandidateStatus::ok) cost[slot[j]] = *r.median;
    });
    counts_.measured += static_cast<int64_t>(jobs.size());
    return cost;
  }

 private:
  void record(const std::string& opts, const std::string& source, const JobResult& r) {
    results::Candidate c;
    c.kernel_id = kernel_id_;
    c.device_id = device_id_;
    c.opts = opts;
    c.source_hash = source.empty() ? "" : source_hash(source);
    c.compile_ms = r.compile_ms;
    for (double s : r.samples) c.samples_us.push_back(s * 1e6);
    if (r.median) c.median_us = *r.median * 1e6;
    c.status = r.status;
    c.error = r.message;
    c.max_error = r.max_error;
    writer_.add(std::move(c));
  }

  TuneTarget& target_;
  WorkerPool& pool_;
  results::CandidateWriter& writer_;
  const Job proto_;
  const int64_t kernel_id_, device_id_;
  const std::map<std::string, double> committed_;  // opts -> seconds, of a resumed run
  const std::set<std::string> quarantined_;
  TuneResult& counts_;
};

// The job every candidate starts from: the target's buffers filled from the input seed.
Job prototype(const TuneTarget& target, const TuneOptions& options) {
  Job job;
  job.device = options.device;
  job.buffers = target.buffers;
  for (size_t i = 0; i < job.buffers.size(); i++)
    fill_random(job.buffers[i], hash_mix(options.input_seed, i));
  job.output = target.output;
  job.vars = target.vars;
  job.timing = options.timing;
  return job;
}

HostBuffer reference_output(TuneTarget& target, WorkerPool& pool, Job job) {
  job.kernel = target.render(Path{});
  job.return_output = true;
  job.timing.warmup = 0;
  job.timing.runs = 0;
  JobResult r = pool.run({job})[0];
  if (r.status != CandidateStatus::ok || !r.output)
    throw std::runtime_error("the unoptimized kernel " + target.kernel.hash + " failed (" +
                             std::string(results::to_string(r.status)) +
                             "), so there is no reference: " + r.message);
  return *r.output;
}

// The stored winner, run and verified again; nullopt when it is not there or no longer right.
std::optional<TuneResult> cache_hit(TuneTarget& target, WorkerPool& pool, results::TuningDb& db,
                                    const Job& proto, int64_t kernel_id, int64_t device_id) {
  std::optional<results::BestEntry> best = db.cached_best(kernel_id, device_id, target.action_space_version);
  if (!best) return std::nullopt;
  std::optional<Path> path = target.parse(best->opts);
  if (!path) return std::nullopt;
  Job job = proto;
  try {
    job.kernel = target.render(*path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  JobResult r = pool.run({job})[0];
  if (r.status != CandidateStatus::ok) return std::nullopt;
  TuneResult hit;
  hit.cache_hit = true;
  hit.opts = best->opts;
  hit.median_s = *r.median;
  return hit;
}

// The top-k distinct correct states, re-timed interleaved; the lowest median wins.
void declare_winner(TuneTarget& target, WorkerPool& pool, const SearchContext& ctx, const Job& proto,
                    const TuneOptions& options, TuneResult& result) {
  std::vector<Evaluated> ranked;
  for (const Evaluated& e : ctx.history())
    if (std::isfinite(e.cost)) ranked.push_back(e);
  if (ranked.empty()) return;
  std::ranges::stable_sort(ranked, {}, &Evaluated::cost);
  ranked.resize(std::min<size_t>(ranked.size(), static_cast<size_t>(std::max(1, options.top_k))));
  result.opts = ranked[0].key;
  result.median_s = ranked[0].cost;
  if (ranked.size() < 2) return;
  RetimeJob job;
  job.device = options.device;
  job.buffers = proto.buffers;
  job.vars = proto.vars;
  job.rounds = options.retime_rounds;
  job.timeout_s = options.timing.timeout_s * static_cast<double>(ranked.size());
  for (const Evaluated& e : ranked) job.kernels.push_back(target.render(e.path));
  RetimeResult r = pool.retime(job);
  if (r.status != CandidateStatus::ok) return;  // keep the search's own ranking
  result.opts = ranked[r.retimed.winner].key;
  result.median_s = r.retimed.medians[r.retimed.winner];
}

}  // namespace

TuneResult tune(TuneTarget& target, Strategy& strategy, WorkerPool& pool, results::TuningDb& db,
                const TuneOptions& options) {
  if (!target.space || !target.render || !target.parse)
    throw std::invalid_argument("tune target " + target.kernel.hash +
                                " lacks a space, a render or a parse function");
  const int64_t device_id = db.upsert_device(fingerprint_of(options.device));
  const int64_t kernel_id = db.upsert_kernel(target.kernel);
  Job proto = prototype(target, options);
  proto.reference = reference_output(target, pool, proto);

  if (!options.retune && !options.resume_run)
    if (std::optional<TuneResult> hit = cache_hit(target, pool, db, proto, kernel_id, device_id)) return *hit;

  results::RunSpec spec;
  spec.strategy = strategy.name();
  spec.params = strategy.params_json();
  spec.seed = static_cast<int64_t>(options.seed);
  spec.budget_candidates = options.budget.candidates;
  spec.budget_seconds = options.budget.seconds;
  spec.action_space_version = target.action_space_version;
  spec.tunebed_version = options.tunebed_version;
  spec.git_rev = options.git_rev;
  results::Run run = options.resume_run ? db.resume_run(*options.resume_run) : db.begin_run(spec);

  std::map<std::string, double> committed;
  if (options.resume_run)
    for (const results::CommittedCandidate& c : db.candidates_of_run(run.id))
      if (c.kernel_id == kernel_id && c.device_id == device_id)
        committed[c.opts] = c.status == CandidateStatus::ok && c.median_us ? *c.median_us * 1e-6 : INFINITY;
  std::vector<std::string> q = db.quarantined_opts(kernel_id, device_id);

  TuneResult result;
  result.run_id = run.id;
  try {
    results::CandidateWriter writer(db, run.id);
    TuneCost cost(target, pool, writer, proto, kernel_id, device_id, std::move(committed),
                  std::set<std::string>(q.begin(), q.end()), result);
    SearchContext ctx(*target.space, cost, options.budget);
    strategy.search(ctx);
    writer.close();
    declare_winner(target, pool, ctx, proto, options, result);
  } catch (...) {
    db.finish_run(run.id, results::RunStatus::failed);
    throw;
  }
  db.finish_run(run.id, results::RunStatus::completed);
  return result;
}

}  // namespace tunebed::search
