#include "search/tune.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <map>
#include <set>
#include <stdexcept>

#include "core/engine/check.hpp"
#include "core/ir/hash.hpp"
#include "results/candidate_writer.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::search {

results::Device fingerprint_of(const Device& device) {
  const Fingerprint f = device.fingerprint();
  return {0, f.name, f.arch, f.driver, f.compiler, f.compiler_version};
}

results::Device fingerprint_of(const std::string& device_spec) { return fingerprint_of(*open_device(device_spec)); }

namespace {

std::string source_hash(const std::string& source) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash_bytes(source)));
  return buf;
}

// Thrown through the strategy when TuneOptions::stop is set; tune() catches it.
struct Stopped {};

// A candidate of the run, committed or just recorded: what resuming and declaring need of it.
struct Known {
  std::string opts;  // what the row was recorded under: a twin's, for opts that made its source
  int64_t seq = 0;
  CandidateStatus status = CandidateStatus::ok;
  double cost = INFINITY;   // seconds; +inf unless ok
  std::string source_hash;  // "" where it never rendered
};

// The search's cost function: render, run in the pool, record, answer seconds (+inf if failed).
class TuneCost : public CostFunction {
 public:
  TuneCost(TuneTarget& target, WorkerPool& pool, results::CandidateWriter& writer, Job proto,
           int64_t kernel_id, int64_t device_id, std::map<std::string, Known> committed,
           std::set<std::string> quarantined, const TuneOptions& options, TuneResult& counts)
      : target_(target),
        pool_(pool),
        writer_(writer),
        proto_(std::move(proto)),
        kernel_id_(kernel_id),
        device_id_(device_id),
        committed_(std::move(committed)),
        quarantined_(std::move(quarantined)),
        options_(options),
        counts_(counts) {}

  std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double> early_stop) override {
    std::vector<double> cost(batch.size(), INFINITY);
    std::vector<Job> jobs;
    std::vector<size_t> slot;
    std::vector<std::string> opts_of, hash_of;
    std::vector<std::pair<std::string, std::string>> twins;  // (opts, source hash) not run again
    for (size_t i = 0; i < batch.size(); i++) {
      check_stop();
      std::string opts = target_.space->key(batch[i]);
      // Measured already as a yardstick (measure_yardstick): the strategy gets its cost.
      if (auto it = known_.find(opts); it != known_.end()) {
        cost[i] = it->second.cost;
        continue;
      }
      if (auto it = committed_.find(opts); it != committed_.end()) {
        cost[i] = it->second.cost;
        counts_.reused++;
        known_[opts] = it->second;
        if (!it->second.source_hash.empty()) by_source_.try_emplace(it->second.source_hash, it->second);
        tried(opts, it->second.status, cost[i], true);
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
      // Opts applied in another order often make the same kernel: it is measured once, as
      // tinygrad's BEAM skips a program it has compiled. The twin's row holds the measurement.
      std::string hash = source_hash(job.kernel.source);
      if (by_source_.contains(hash) || std::ranges::find(hash_of, hash) != hash_of.end()) {
        counts_.skipped_duplicate++;
        twins.emplace_back(std::move(opts), std::move(hash));
        continue;
      }
      jobs.push_back(std::move(job));
      slot.push_back(i);
      opts_of.push_back(std::move(opts));
      hash_of.push_back(std::move(hash));
    }
    // At most one job per worker at a time, so that a stop waits for the candidates already
    // running and no more. Each is recorded as it arrives: a process killed mid-batch keeps what
    // was measured before.
    const size_t chunk = static_cast<size_t>(std::max(1, pool_.size()));
    for (size_t begin = 0; begin < jobs.size(); begin += chunk) {
      check_stop();
      const size_t end = std::min(jobs.size(), begin + chunk);
      std::vector<Job> part(jobs.begin() + static_cast<ptrdiff_t>(begin),
                            jobs.begin() + static_cast<ptrdiff_t>(end));
      // The bar falls as the batch's own results come in: a slow candidate after a fast one
      // stops early even within the batch.
      std::optional<double> bar = early_stop;
      if (best_) bar = std::min(bar.value_or(INFINITY), kEarlyStopFactor * *best_);
      for (Job& job : part) {
        job.timing.early_stop_s = bar;
        job.timing.stop_s = stop_line(bar);
      }
      pool_.run(part, [&](int j, const JobResult& r) {
        const size_t at = begin + static_cast<size_t>(j);
        record(opts_of[at], hash_of[at], r);
        if (r.status == CandidateStatus::ok) cost[slot[at]] = *r.median;
      });
      counts_.measured += static_cast<int64_t>(part.size());
    }
    // A twin is known by its source's row (the strategy still gets +inf: it has that row's cost
    // under the other opts), so that a yardstick (the baseline) that is a twin is not lost.
    for (const auto& [opts, hash] : twins)
      if (auto it = by_source_.find(hash); it != by_source_.end()) known_.try_emplace(opts, it->second);
    return cost;
  }

  // STATE measured outside the strategy's proposals and budget (the baseline, before the search:
  // its time sets the early-stop bar from the first candidate on). A strategy that proposes it
  // gets its cost without a second run; a twin of it is measured under its own opts, since the
  // strategy never had the yardstick's cost (and a replay finds every proposal's own row).
  void measure_yardstick(const Path& state) {
    evaluate({state}, std::nullopt);
    if (auto it = known_.find(target_.space->key(state)); it != known_.end()) by_source_.erase(it->second.source_hash);
  }

  // Every candidate of this kernel tried through this cost function, by opts; a twin (opts that
  // rendered an earlier candidate's source) by that candidate's row.
  const std::map<std::string, Known>& known() const { return known_; }
  std::optional<double> best() const { return best_; }

 private:
  void check_stop() const {
    if (options_.stop && options_.stop->load()) throw Stopped{};
  }

  // HASH: the source's (source_hash), "" where it never rendered.
  void record(const std::string& opts, const std::string& hash, const JobResult& r) {
    results::Candidate c;
    c.kernel_id = kernel_id_;
    c.device_id = device_id_;
    c.opts = opts;
    c.source_hash = hash;
    c.compile_ms = r.compile_ms;
    for (double s : r.samples) c.samples_us.push_back(s * 1e6);
    if (r.median) c.median_us = *r.median * 1e6;
    c.status = r.status;
    c.error = r.message;
    c.max_error = r.max_error;
    const double cost = r.status == CandidateStatus::ok ? *r.median : INFINITY;
    const Known& k = known_[opts] = {opts, writer_.add(std::move(c)), r.status, cost, hash};
    if (!hash.empty()) by_source_.try_emplace(hash, k);
    tried(opts, r.status, cost, false);
  }

  void tried(const std::string& opts, CandidateStatus status, double cost, bool reused) {
    tried_++;
    const bool better = std::isfinite(cost) && (!best_ || cost < *best_);
    if (better) best_ = cost;
    if (!options_.on_event) return;
    TuneEvent e{.kind = TuneEvent::Kind::candidate,
                .target = &target_,
                .opts = opts,
                .status = status,
                .median_s = std::isfinite(cost) ? std::optional<double>(cost) : std::nullopt,
                .reused = reused,
                .tried = tried_,
                .best_s = best_};
    options_.on_event(e);
    if (better) {
      e.kind = TuneEvent::Kind::new_best;
      options_.on_event(e);
    }
  }

  TuneTarget& target_;
  WorkerPool& pool_;
  results::CandidateWriter& writer_;
  const Job proto_;
  const int64_t kernel_id_, device_id_;
  const std::map<std::string, Known> committed_;  // of a resumed run
  const std::set<std::string> quarantined_;
  const TuneOptions& options_;
  TuneResult& counts_;
  std::map<std::string, Known> known_;
  std::map<std::string, Known> by_source_;  // this kernel's candidates so far, by source hash
  int64_t tried_ = 0;
  std::optional<double> best_;
};

// The job every candidate starts from: the target's buffers filled from the input seed.
Job prototype(const TuneTarget& target, const TuneOptions& options) {
  JobData data;
  data.buffers = target.buffers;
  for (size_t i = 0; i < data.buffers.size(); i++)
    fill_random(data.buffers[i], hash_mix(options.input_seed, i));
  data.output = target.output;
  data.vars = target.vars;
  Job job;
  job.device = options.device;
  job.data = share(std::move(data));
  job.timing = options.timing;
  return job;
}

// Step 1: the unoptimized kernel against the target's oracle. Gives proto's data the expected
// output, for the candidates; the returned check says whether the root agreed.
results::KernelCheck check_root(TuneTarget& target, WorkerPool& pool, Job& proto, int64_t kernel_id,
                                int64_t device_id) {
  results::KernelCheck check{.kernel_id = kernel_id, .device_id = device_id, .oracle = target.oracle};
  // The oracles run on threads of their own while a worker compiles and runs the root: it is not
  // timed here, so nothing it measures is disturbed by them.
  const std::shared_future<Expected> expected =
      std::async(std::launch::async, [&target, &buffers = proto.data->buffers] { return target.expect(buffers); }).share();
  std::future<std::optional<std::string>> cross;
  if (target.cross_check)
    cross = std::async(std::launch::async, target.cross_check, std::cref(proto.data->buffers), std::cref(expected));
  Job job = proto;
  job.kernel = target.render(Path{});
  job.return_output = true;  // and checked here, so that the verdict keeps its numbers
  job.timing.warmup = 0;
  job.timing.runs = 0;
  const JobResult r = pool.run({job})[0];
  JobData data = *proto.data;
  data.expected = expected.get();
  proto.data = share(std::move(data));
  if (const std::optional<std::string> disagreement = cross.valid() ? cross.get() : std::nullopt) {
    check.oracle += "+" + target.cross_oracle;
    if (!disagreement->empty()) {
      check.status = "wrong";
      check.message = *disagreement;
      return check;
    }
  }
  if (r.status != CandidateStatus::ok || !r.output) {
    check.status = "failed";
    check.message = "the unoptimized kernel " + std::string(results::to_string(r.status)) + ": " + r.message;
    return check;
  }
  const Verdict v = check_output(*r.output, *proto.data->expected);
  check.status = v.ok ? "ok" : "wrong";
  check.max_error = v.max_error;
  check.worst_ratio = v.worst_ratio;
  check.unverified = v.unverified;
  if (!v.ok) check.message = "the unoptimized kernel disagrees with the " + target.oracle + ": " + v.message;
  return check;
}

// The states, already verified, re-timed interleaved in one worker and decided between
// (decide.hpp); nullopt if that failed.
std::optional<Decision> retime(TuneTarget& target, WorkerPool& pool, const Job& proto, const TuneOptions& options,
                               const std::vector<Path>& states, std::optional<int> incumbent) {
  RetimeJob job;
  job.device = options.device;
  job.buffers = proto.data->buffers;
  job.vars = proto.data->vars;
  job.policy = options.decision;
  job.incumbent = incumbent;
  // Every round of every candidate may take up to the run timeout, plus the max_seconds of rounds
  // added where candidates are close.
  job.timeout_s = options.timing.timeout_s * static_cast<double>(states.size()) + options.decision.max_seconds;
  for (const Path& p : states) job.kernels.push_back(target.render(p));
  RetimeResult r = pool.retime(job);
  if (r.status != CandidateStatus::ok) return std::nullopt;
  return r.decision;
}

// The stored winner, run and verified again (and timed against the baseline, when there is one);
// nullopt when it is not there or no longer right: then it is demoted and DEMOTED says why.
std::optional<TuneResult> cache_hit(TuneTarget& target, WorkerPool& pool, results::TuningDb& db,
                                    const Job& proto, const TuneOptions& options, int64_t kernel_id,
                                    int64_t device_id, std::string& demoted) {
  std::optional<results::BestEntry> best = db.cached_best(kernel_id, device_id, target.action_space_version);
  if (!best) return std::nullopt;
  std::optional<Path> path = target.parse(best->opts);
  if (!path) return std::nullopt;
  std::vector<Path> states = {*path};
  if (target.baseline && target.space->key(*target.baseline) != best->opts)
    states.push_back(*target.baseline);
  std::vector<Job> jobs;
  for (const Path& p : states) {
    Job job = proto;
    try {
      job.kernel = target.render(p);
    } catch (const std::exception&) {
      if (jobs.empty()) return std::nullopt;
      states.pop_back();  // the baseline does not render: the hit stands without it
      break;
    }
    jobs.push_back(std::move(job));
  }
  std::vector<JobResult> r = pool.run(jobs);
  if (r[0].status != CandidateStatus::ok) {
    demoted = "re-verification: " + std::string(results::to_string(r[0].status)) + ": " + r[0].message;
    db.demote(best->candidate_id, demoted);
    return std::nullopt;
  }
  TuneResult hit;
  hit.cache_hit = true;
  hit.opts = best->opts;
  hit.median_s = *r[0].median;
  if (!target.baseline) return hit;
  hit.baseline_opts = target.space->key(*target.baseline);
  if (states.size() == 1) {
    hit.baseline_s = hit.baseline_opts == hit.opts ? std::optional<double>(hit.median_s) : std::nullopt;
    return hit;
  }
  if (r[1].status != CandidateStatus::ok) return hit;
  if (std::optional<Decision> t = retime(target, pool, proto, options, states, std::nullopt)) {
    hit.median_s = t->medians[0];
    hit.baseline_s = t->medians[1];
  } else {
    hit.baseline_s = *r[1].median;
  }
  return hit;
}

// STATE joins RANKED (if it ran correctly in this run, measured now outside the search's budget
// if the search did not reach it: a yardstick, not a proposal); its index there, or nullopt.
std::optional<int> rank_also(const Path& state, TuneTarget& target, TuneCost& cost, std::vector<Evaluated>& ranked) {
  const std::string key = target.space->key(state);
  if (!cost.known().contains(key)) cost.evaluate({state}, std::nullopt);
  auto it = cost.known().find(key);
  if (it == cost.known().end() || !std::isfinite(it->second.cost)) return std::nullopt;
  // Under the opts its row was recorded with: a twin's, when STATE made that candidate's source.
  const Known& row = it->second;
  auto at = std::ranges::find(ranked, row.opts, &Evaluated::key);
  if (at == ranked.end())
    at = ranked.insert(ranked.end(), {target.parse(row.opts).value_or(state), row.opts, row.cost});
  return static_cast<int>(at - ranked.begin());
}

// The top-k distinct correct states, the baseline and the incumbent (the winner stored before this
// run, if it still parses; else the baseline) are re-timed interleaved and decided between
// (decide.hpp): a candidate replaces the incumbent only when it is faster beyond the noise. The
// winner becomes the stored best, with the decision's confidence.
void declare_winner(TuneTarget& target, WorkerPool& pool, results::TuningDb& db,
                    results::CandidateWriter& writer, const SearchContext& ctx, TuneCost& cost, const Job& proto,
                    const TuneOptions& options, int64_t run_id, const std::optional<Path>& stored,
                    TuneResult& result) {
  std::vector<Evaluated> ranked;
  for (const Evaluated& e : ctx.history())
    if (std::isfinite(e.cost)) ranked.push_back(e);
  std::ranges::stable_sort(ranked, {}, &Evaluated::cost);
  ranked.resize(std::min<size_t>(ranked.size(), static_cast<size_t>(std::max(1, options.top_k))));
  std::optional<int> baseline, incumbent;
  if (target.baseline) {
    result.baseline_opts = target.space->key(*target.baseline);
    baseline = rank_also(*target.baseline, target, cost, ranked);
  }
  incumbent = stored ? rank_also(*stored, target, cost, ranked) : std::nullopt;
  if (!incumbent) incumbent = baseline;
  writer.flush();  // declare_winner below names candidates by their committed seq
  if (ranked.empty()) return;
  std::vector<double> medians;
  for (const Evaluated& e : ranked) medians.push_back(e.cost);
  std::vector<results::RetimedCandidate> retimed;
  std::optional<results::Confidence> confidence;
  size_t winner = static_cast<size_t>(std::ranges::min_element(medians) - medians.begin());
  if (ranked.size() > 1) {
    std::vector<Path> states;
    for (const Evaluated& e : ranked) states.push_back(e.path);
    if (std::optional<Decision> d = retime(target, pool, proto, options, states, incumbent)) {
      medians = d->medians;
      winner = static_cast<size_t>(d->winner);
      for (size_t i = 0; i < ranked.size(); i++) {
        std::vector<double> us;
        for (double s : d->samples[i]) us.push_back(s * 1e6);
        retimed.push_back({cost.known().at(ranked[i].key).seq, std::move(us), medians[i] * 1e6});
      }
      confidence = results::Confidence{
          .challenger_opts = d->challenger >= 0 ? std::optional(ranked[static_cast<size_t>(d->challenger)].key)
                                              : std::nullopt,
          .incumbent_opts = incumbent ? std::optional(ranked[static_cast<size_t>(*incumbent)].key) : std::nullopt,
          .kept_incumbent = d->kept_incumbent,
          .p_value = d->p_value,
          .speedup = d->speedup.ratio,
          .speedup_low = d->speedup.low,
          .speedup_high = d->speedup.high,
          .rounds = d->rounds,
          .level = d->level};
    }  // else the search's own figures stand, and the lowest median wins
  }
  result.opts = ranked[winner].key;
  result.median_s = medians[winner];
  result.confidence = confidence;
  if (baseline) result.baseline_s = medians[static_cast<size_t>(*baseline)];
  db.declare_winner(run_id, cost.known().at(result.opts).seq, retimed, confidence);
}

// The search within RUN_ID, its candidates recorded as they come; sets result.interrupted when
// stopped. STORED: the winner stored before the run, the incumbent of declare_winner.
void search_in_run(TuneTarget& target, Strategy& strategy, WorkerPool& pool, results::TuningDb& db,
                   const Job& proto, const TuneOptions& options, int64_t run_id, int64_t kernel_id,
                   int64_t device_id, std::map<std::string, Known> committed, const std::optional<Path>& stored,
                   TuneResult& result) {
  std::vector<std::string> q = db.quarantined_opts(kernel_id, device_id);
  result.run_id = run_id;
  results::CandidateWriter writer(db, run_id);
  TuneCost cost(target, pool, writer, proto, kernel_id, device_id, std::move(committed),
                std::set<std::string>(q.begin(), q.end()), options, result);
  SearchContext ctx(*target.space, cost, options.budget);
  try {
    // The baseline first: a slow candidate then gets one launch, not its full samples.
    if (target.baseline) cost.measure_yardstick(*target.baseline);
    strategy.search(ctx);
  } catch (const Stopped&) {
    result.interrupted = true;
  }
  if (!result.interrupted) {
    try {
      declare_winner(target, pool, db, writer, ctx, cost, proto, options, run_id, stored, result);
    } catch (const Stopped&) {
      result.interrupted = true;  // while measuring the baseline
    }
  }
  writer.close();  // what was measured before a stop is committed
}

}  // namespace

std::optional<Decision> retime_states(TuneTarget& target, WorkerPool& pool, const TuneOptions& options,
                                      const std::vector<Path>& states, std::optional<int> incumbent) {
  return retime(target, pool, prototype(target, options), options, states, incumbent);
}

TuneResult tune(TuneTarget& target, Strategy& strategy, WorkerPool& pool, results::TuningDb& db,
                const TuneOptions& options) {
  if (!target.space || !target.render || !target.parse)
    throw std::invalid_argument("tune target " + target.kernel.hash +
                                " lacks a space, a render or a parse function");
  if (options.run_id && options.resume_run)
    throw std::invalid_argument("tune: run_id and resume_run are exclusive (the caller resumes its own run)");
  auto emit = [&](TuneEvent::Kind kind, const TuneResult* r) {
    if (options.on_event) options.on_event(TuneEvent{.kind = kind, .target = &target, .result = r});
  };
  emit(TuneEvent::Kind::kernel_start, nullptr);
  const int64_t device_id = db.upsert_device(fingerprint_of(options.device));
  const int64_t kernel_id = db.upsert_kernel(target.kernel);
  Job proto = prototype(target, options);
  const results::KernelCheck check = check_root(target, pool, proto, kernel_id, device_id);
  db.record_check(check);
  if (check.status != "ok") {
    TuneResult refused;
    refused.not_tuned = check.message;
    emit(TuneEvent::Kind::kernel_done, &refused);
    return refused;
  }

  std::optional<int64_t> run_id = options.run_id ? options.run_id : options.resume_run;
  std::map<std::string, Known> committed;
  if (run_id) {
    const results::Run run = db.run(*run_id);
    if (run.action_space_version != target.action_space_version)
      throw std::invalid_argument("run " + std::to_string(*run_id) + " searched action space " +
                                  run.action_space_version + ", not this target's " +
                                  target.action_space_version);
    for (const results::CommittedCandidate& c : db.candidates_of_run(*run_id))
      if (c.kernel_id == kernel_id && c.device_id == device_id)
        committed[c.opts] = {c.opts, c.seq, c.status,
                             c.status == CandidateStatus::ok && c.median_us ? *c.median_us * 1e-6 : INFINITY,
                             c.source_hash};
  }

  std::string demoted;
  if (!options.retune && !options.resume_run && committed.empty())
    if (std::optional<TuneResult> hit =
            cache_hit(target, pool, db, proto, options, kernel_id, device_id, demoted)) {
      emit(TuneEvent::Kind::kernel_done, &*hit);
      return *hit;
    }

  const bool own_run = !options.run_id;
  if (own_run) {
    results::RunSpec spec;
    spec.strategy = strategy.name();
    spec.params = strategy.params_json();
    spec.seed = static_cast<int64_t>(options.seed);
    spec.budget_candidates = options.budget.candidates;
    spec.budget_seconds = options.budget.seconds;
    spec.action_space_version = target.action_space_version;
    spec.tunebed_version = build::kVersion;
    spec.git_rev = build::kGitRev;
    run_id = options.resume_run ? db.resume_run(*options.resume_run).id : db.begin_run(spec).id;
  }

  TuneResult result;
  result.demoted = demoted;
  std::optional<Path> stored;
  if (auto best = db.cached_best(kernel_id, device_id, target.action_space_version)) stored = target.parse(best->opts);
  try {
    search_in_run(target, strategy, pool, db, proto, options, *run_id, kernel_id, device_id,
                  std::move(committed), stored, result);
  } catch (...) {
    if (own_run) db.finish_run(*run_id, results::RunStatus::failed);
    throw;
  }
  if (own_run) {
    if (result.interrupted)
      db.mark_interrupted(*run_id);
    else
      db.finish_run(*run_id, results::RunStatus::completed);
  }
  emit(TuneEvent::Kind::kernel_done, &result);
  return result;
}

}  // namespace tunebed::search
