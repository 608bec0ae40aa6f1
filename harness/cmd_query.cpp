// `tunebed query`: questions a person asks a tuning database, answered as an aligned table, CSV
// or JSON (table_format.hpp). Every query reads through results/'s API, which reads the stable
// views (results/README.md); nothing is created, migrated or written.
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/db_cli.hpp"
#include "results/findings.hpp"
#include "results/json_lines.hpp"

namespace tunebed::cli {
namespace {

using results::CandidateStatus;

Cell maybe(const std::optional<double>& v) { return v ? Cell(*v) : Cell(); }
Cell text(std::string_view s) { return Cell(std::string(s)); }

void add_query_options(CommandLine& cl) {
  add_db_option(cl);
  add_output_options(cl);
}

// Notes for people (what a column means, which device is "a") follow the table; CSV and JSON
// carry only rows, and -q silences them.
void note(const Output& out, const std::string& line) {
  if (out.format == Format::table && out.verbosity != Verbosity::quiet) std::cout << line << "\n";
}

void add_filter_options(CommandLine& cl) {
  cl.options.add_options()("kernel", po::value<std::string>()->value_name("HASH"),
                           "only this kernel (a hash prefix)")(
      "workload", po::value<std::string>()->value_name("W"), "only kernels whose source starts with W")(
      "device", po::value<std::string>()->value_name("D"), "only this device (a name or id)");
}

results::Filter read_filter(const po::variables_map& vm, results::TuningDb& db) {
  if (vm.count("kernel") && vm.count("workload")) throw UsageError("give --kernel or --workload, not both");
  results::Filter f;
  if (vm.count("kernel")) f.kernel = vm["kernel"].as<std::string>();
  if (vm.count("workload")) f.workload = vm["workload"].as<std::string>();
  if (vm.count("device")) f.device_id = db.resolve_device(vm["device"].as<std::string>());
  return f;
}

int best(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed query best [--kernel HASH | --workload W] [--device D] [options]",
                 .description =
                     "The winner of each kernel on each device (and action-space version): its fastest\n"
                     "candidate that passed verification. Ordered by kernel hash, then device."};
  add_filter_options(cl);
  add_query_options(cl);
  cl.examples = {"tunebed query best", "tunebed query best --workload matmul --device cpu",
                 "tunebed query best --kernel 3f2a --format json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  Table t{{id_column("kernel"),
           {"shape"},
           {"source", 28},
           {"device"},
           {"actions"},
           {"opts", 48},
           {"median_us"},
           {"gflops"},
           {"gb_per_s"},
           id_column("run")}};
  for (const auto& b : db.best(read_filter(*vm, db))) {
    t.add_row({b.kernel_hash, b.kernel_shape, b.kernel_source, b.device, b.action_space_version, b.opts,
               b.median_us, maybe(b.gflops), maybe(b.gbytes_per_s), b.run_uuid});
  }
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

int history(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed query history KERNEL [options]",
                 .description =
                     "Every candidate ever measured for KERNEL (a hash prefix), in the order measured,\n"
                     "across runs and devices, with its status, time and error."};
  cl.options.add_options()("kernel", po::value<std::string>()->required()->value_name("HASH"), "the kernel");
  cl.positional.add("kernel", 1);
  add_query_options(cl);
  cl.examples = {"tunebed query history 3f2a", "tunebed query history 3f2a --format csv > history.csv"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  int64_t kernel = db.resolve_kernel((*vm)["kernel"].as<std::string>());
  Table t{{id_column("run"),
           {"seq"},
           {"device"},
           {"opts", 48},
           {"status"},
           {"median_us"},
           {"compile_ms"},
           {"samples"},
           {"max_error"},
           {"created_at"},
           {"error", 40}}};
  for (const auto& c : db.history(kernel)) {
    t.add_row({c.run_uuid, c.seq, c.device, c.opts, text(to_string(c.status)), maybe(c.median_us),
               maybe(c.compile_ms), static_cast<int64_t>(c.samples_us.size()), maybe(c.max_error),
               c.created_at, c.error});
  }
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

// "faster than the runner-up X by 1.12x (95% CI 1.05-1.20), p = 0.003 < 0.0024 over 20
// interleaved rounds", or that it was not told apart from it, or how the incumbent was kept.
std::string describe(const results::Confidence& c) {
  if (!c.challenger_opts) return "the only candidate re-timed: nothing to compare";
  auto opts = [](const std::string& o) { return o.empty() ? std::string("(no opts)") : o; };
  const bool significant = c.p_value < c.level;
  char figures[160];
  std::snprintf(figures, sizeof figures, "%.2fx (95%% CI %.2f-%.2f), p = %.2g %s %.2g over %lld interleaved rounds",
                c.speedup, c.speedup_low, c.speedup_high, c.p_value, significant ? "<" : ">=", c.level,
                static_cast<long long>(c.rounds));
  if (c.kept_incumbent)
    return "kept the incumbent " + opts(c.incumbent_opts.value_or("")) + ": the fastest median, " +
           opts(*c.challenger_opts) + ", was faster by " + figures + ", within the noise";
  if (significant) return "faster than the runner-up " + opts(*c.challenger_opts) + " by " + figures;
  return "not told apart from the runner-up " + opts(*c.challenger_opts) + ": " + figures + ", within the noise";
}

// The winner `why` explains: KERNEL's on DEVICE, or its only one.
results::BestRow winner_of(results::TuningDb& db, const std::string& kernel, const po::variables_map& vm) {
  results::Filter f{.kernel = kernel};
  if (vm.count("device")) f.device_id = db.resolve_device(vm["device"].as<std::string>());
  auto winners = db.best(f);
  if (winners.empty()) {
    throw std::runtime_error("kernel " + kernel + " has no winner" + (f.device_id ? " on that device" : "") +
                             ": no candidate passed verification (see tunebed query history " + kernel + ")");
  }
  if (winners.size() > 1) {
    std::string list;
    for (const auto& w : winners)
      list += (list.empty() ? "" : ", ") + w.device + " (actions " + w.action_space_version + ")";
    throw UsageError("kernel " + kernel + " has " + std::to_string(winners.size()) + " winners: " + list +
                     "; choose one with --device");
  }
  return winners.front();
}

int why(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed query why KERNEL [--device D] [--within PCT] [options]",
      .description =
          "How the search found KERNEL's winner: every candidate of the winning run on that device in\n"
          "the order tried, with its status, time and the best time so far, and the near-ties:\n"
          "verified candidates within PCT percent of the winner (the note column marks both).\n"
          "Exit 1 when no candidate of the kernel passed verification: there is no winner to explain."};
  cl.options.add_options()("kernel", po::value<std::string>()->required()->value_name("HASH"), "the kernel")(
      "device", po::value<std::string>()->value_name("D"),
      "the device (needed when the kernel won on several)")(
      "within", po::value<double>()->default_value(5.0)->value_name("PCT"), "near-tie threshold, in percent");
  cl.positional.add("kernel", 1);
  add_query_options(cl);
  cl.examples = {"tunebed query why 3f2a", "tunebed query why 3f2a --device cpu --within 2"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  double within = (*vm)["within"].as<double>();
  if (!(within >= 0)) throw UsageError("--within must be a percentage of at least 0");
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  const std::string kernel = (*vm)["kernel"].as<std::string>();
  int64_t kernel_id = db.resolve_kernel(kernel);
  results::BestRow winner = winner_of(db, kernel, *vm);

  std::map<int64_t, results::CandidateRow> tried;  // the winning run's candidates of this kernel, by seq
  for (auto& c : db.history(kernel_id)) {
    if (c.run_uuid == winner.run_uuid) tried.emplace(c.seq, std::move(c));
  }
  Table t{{{"index"},
           {"seq"},
           {"opts", 48},
           {"status"},
           {"median_us"},
           {"best_so_far_us"},
           {"elapsed_s"},
           {"vs_winner_pct"},
           {"note"}}};
  int64_t near_ties = 0, winner_index = 0, trace_length = 0;
  for (const auto& p : db.convergence(db.resolve_run(winner.run_uuid))) {
    if (p.kernel_hash != winner.kernel_hash || p.device != winner.device) continue;
    const results::CandidateRow& c = tried.at(p.seq);
    std::optional<double> slower_pct;
    if (p.median_us) slower_pct = (*p.median_us / winner.median_us - 1) * 100;
    std::string mark;
    if (c.id == winner.candidate_id) {
      mark = "winner";
      winner_index = p.candidate_index;
    } else if (p.status == CandidateStatus::ok && slower_pct && *slower_pct <= within) {
      mark = "near-tie";
      ++near_ties;
    }
    t.add_row({p.candidate_index, p.seq, c.opts, text(to_string(p.status)), maybe(p.median_us),
               maybe(p.best_so_far_us), p.elapsed_s, maybe(slower_pct), mark});
    ++trace_length;
  }
  write_table(t, out.format, out.verbosity, std::cout);
  char line[160];
  std::snprintf(line, sizeof line, "%.2f us, candidate %lld of %lld", winner.median_us,
                static_cast<long long>(winner_index), static_cast<long long>(trace_length));
  note(out, "winner on " + winner.device + ": " + winner.opts + " at " + line + " in run " +
                winner.run_uuid.substr(0, 12) + "; " + std::to_string(near_ties) + " near-tie(s) within " +
                results::json_number(within) + "%");
  if (const auto c = db.confidence(winner.candidate_id)) note(out, "confidence: " + describe(*c));
  if (const auto check = db.kernel_check(kernel_id, winner.device_id)) {
    std::string how = check->status + " against the " + check->oracle;
    if (check->max_error) {
      char margin[96];
      std::snprintf(margin, sizeof margin, " (max error %.3g, %.3gx its bound)", *check->max_error,
                    check->worst_ratio.value_or(0));
      how += margin;
    }
    // A kernel past the check budget is checked on a sample; an element with an infinite bound
    // cannot be checked at all. Either way the verdict covers less than the whole output.
    if (check->unverified > 0) how += "; " + std::to_string(check->unverified) + " output elements unverified";
    if (!check->message.empty()) how += ": " + check->message;
    note(out, "independent check on " + winner.device + ": " + how + ", " + check->checked_at);
  }
  return 0;
}

int failures(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed query failures [--kernel HASH | --workload W] [--device D] [--status S] [options]",
      .description =
          "Every candidate that did not pass: compile_error, crash, timeout (both quarantined:\n"
          "never run again on that kernel and device) or wrong. Oldest first. A stopped candidate\n"
          "(killed past the search's stop line: slow, not broken) is no failure: `query history`\n"
          "shows it."};
  add_filter_options(cl);
  cl.options.add_options()("status", po::value<std::string>()->value_name("S"),
                           "only this status: compile_error, crash, timeout or wrong");
  add_query_options(cl);
  cl.examples = {"tunebed query failures", "tunebed query failures --status wrong --format csv",
                 "tunebed query failures --workload conv -v"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  std::optional<CandidateStatus> only;
  if (vm->count("status")) {
    const auto& s = (*vm)["status"].as<std::string>();
    try {
      only = results::parse_candidate_status(s);
    } catch (const std::invalid_argument&) {
    }
    if (!only || *only == CandidateStatus::ok || *only == CandidateStatus::stopped) {
      throw UsageError("unknown failure status '" + s +
                       "' (expected compile_error, crash, timeout or wrong)");
    }
  }
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  Table t{{{"created_at"},
           id_column("run"),
           {"seq"},
           id_column("kernel"),
           {"source", 28},
           {"device"},
           {"opts", 40},
           {"status"},
           {"quarantined"},
           {"max_error"},
           {"error", 48}}};
  for (const auto& f : db.failures(read_filter(*vm, db))) {
    if (only && f.status != *only) continue;
    t.add_row({f.created_at, f.run_uuid, f.seq, f.kernel_hash, f.kernel_source, f.device, f.opts,
               text(to_string(f.status)), static_cast<int64_t>(f.quarantined), maybe(f.max_error), f.error});
  }
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

int runs(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed query runs [options]",
                 .description =
                     "Every tuning run, oldest first: strategy, seed, how it ended, how many candidates it\n"
                     "measured, and which host and tunebed build ran it."};
  add_query_options(cl);
  cl.examples = {"tunebed query runs", "tunebed query runs --format json -v"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  Table t{{id_column("run"),
           {"strategy"},
           {"seed"},
           {"status"},
           {"started_at"},
           {"ended_at"},
           {"candidates"},
           {"host"},
           {"tunebed_version"},
           {"git_rev"},
           {"imported_from", 32}}};
  for (const auto& r : db.runs()) {
    auto measured = static_cast<int64_t>(db.candidates_of_run(r.id).size());
    t.add_row({r.uuid, r.strategy, r.seed, text(to_string(r.status)), r.started_at, r.ended_at, measured,
               r.host, r.tunebed_version, r.git_rev, r.imported_from});
  }
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

// The two winners of a comparison and how many times faster b is.
std::vector<Cell> winner_cells(const results::Comparison& c) {
  auto opts = [](const std::optional<results::Winner>& w) { return w ? Cell(w->opts) : Cell(); };
  auto us = [](const std::optional<results::Winner>& w) { return w ? Cell(w->median_us) : Cell(); };
  return {opts(c.a), us(c.a), opts(c.b), us(c.b), maybe(c.speedup())};
}

int compare(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed query compare --device A --device B [options]",
                 .description =
                     "Each kernel's winner on device A and on device B, side by side. speedup is\n"
                     "a_us / b_us: above 1, B is faster. A kernel tuned on one device only shows '-'\n"
                     "for the other."};
  cl.options.add_options()("device", po::value<std::vector<std::string>>()->composing()->value_name("D"),
                           "a device name or id; give exactly two");
  add_query_options(cl);
  cl.examples = {"tunebed query compare --device cpu --device gpu0",
                 "tunebed query compare --device 1 --device 2 --format csv"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto devices =
      vm->count("device") ? (*vm)["device"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (devices.size() != 2)
    throw UsageError("compare needs exactly two --device options, got " + std::to_string(devices.size()));
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  int64_t a = db.resolve_device(devices[0]), b = db.resolve_device(devices[1]);
  if (a == b)
    throw UsageError("--device " + devices[0] + " and --device " + devices[1] + " are the same device");
  Table t{{id_column("kernel"),
           {"shape"},
           {"source", 28},
           {"a_opts", 40},
           {"a_us"},
           {"b_opts", 40},
           {"b_us"},
           {"speedup"}}};
  for (const auto& c : db.compare(a, b)) {
    std::vector<Cell> row{c.kernel_hash, c.kernel_shape, c.kernel_source};
    for (auto& cell : winner_cells(c)) row.push_back(std::move(cell));
    t.add_row(std::move(row));
  }
  write_table(t, out.format, out.verbosity, std::cout);
  note(out, "a = device " + devices[0] + ", b = device " + devices[1] + "; speedup = a_us / b_us");
  return 0;
}

int diff(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed query diff DB_A DB_B [options]",
                 .description =
                     "Per kernel, device fingerprint and action-space version: the winner in DB_A and in\n"
                     "DB_B, matched by kernel hash and fingerprint. speedup is a_us / b_us (above 1: B's\n"
                     "winner is faster); change says whether B found other opts."};
  cl.options.add_options()("a", po::value<std::string>()->required()->value_name("DB_A"),
                           "the first database")(
      "b", po::value<std::string>()->required()->value_name("DB_B"), "the second database");
  cl.positional.add("a", 1).add("b", 1);
  add_output_options(cl);
  cl.examples = {"tunebed query diff yesterday.db results/tuning.db",
                 "tunebed query diff a.db b.db --format json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto db_a = open_for_reading((*vm)["a"].as<std::string>());
  auto db_b = open_for_reading((*vm)["b"].as<std::string>());
  Table t{{id_column("kernel"),
           {"shape"},
           {"source", 28},
           {"device"},
           {"actions"},
           {"a_opts", 36},
           {"a_us"},
           {"b_opts", 36},
           {"b_us"},
           {"speedup"},
           {"change"}}};
  for (const auto& c : db_a.diff(db_b)) {
    std::string change = !c.b                     ? "only in A"
                         : !c.a                   ? "only in B"
                         : c.a->opts == c.b->opts ? "same opts"
                                                  : "new opts";
    std::vector<Cell> row{c.kernel_hash, c.kernel_shape, c.kernel_source, c.device, c.action_space_version};
    for (auto& cell : winner_cells(c)) row.push_back(std::move(cell));
    row.push_back(change);
    t.add_row(std::move(row));
  }
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

int findings(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed query findings [options]",
                 .description =
                     "Every fuzz finding (tunebed fuzz), oldest first: the target, what happened, the\n"
                     "signature it is deduplicated by, how often and when it was seen, and the size of\n"
                     "the smallest input kept (tunebed fuzz repro ID replays it)."};
  add_query_options(cl);
  cl.examples = {"tunebed query findings", "tunebed query findings --format json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto db = open_for_reading((*vm)["db"].as<std::string>());
  Table t{{{"id"},
           {"target"},
           {"kind"},
           {"signature", 60},
           {"count"},
           {"input_bytes"},
           {"minimized"},
           {"max_error"},
           {"first_seen"},
           {"last_seen"}}};
  for (const auto& f : db.findings().list())
    t.add_row({f.id, f.target, f.kind, f.signature, f.count, static_cast<int64_t>(f.input.size()),
               static_cast<int64_t>(f.minimized), maybe(f.max_error), f.first_seen, f.last_seen});
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

const std::vector<Subcommand> kQueries = {
    {"best", "the winner of each kernel on each device", best},
    {"compare", "each kernel's winners on two devices, side by side", compare},
    {"diff", "the winners of two databases, side by side", diff},
    {"failures", "candidates that failed to compile, crashed, hung or were wrong", failures},
    {"findings", "fuzz findings: target, kind, signature, count, input size", findings},
    {"history", "every candidate measured for one kernel", history},
    {"runs", "every tuning run", runs},
    {"why", "the search trace of a kernel's winner and its near-ties", why},
};

int run(const std::vector<std::string>& args) { return run_subcommand("query", kQueries, args); }

const Registrar reg{
    "query", "ask a tuning database: best, history, why, failures, findings, runs, compare, diff", run};

}  // namespace
}  // namespace tunebed::cli
