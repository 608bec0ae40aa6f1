// `tunebed replay`: a strategy run against a database's stored measurements instead of the
// machine (search/replay.hpp): no compiling, no timing. Per kernel, the candidates it needed to
// come within 5% of the best stored time; with --curve, its best-so-far after every candidate.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/opt/kernel.hpp"
#include "harness/cli.hpp"
#include "harness/db_cli.hpp"
#include "harness/table_format.hpp"
#include "harness/tune_batch.hpp"
#include "search/kernel_space.hpp"
#include "search/kernel_target.hpp"
#include "search/replay.hpp"
#include "search/stored.hpp"
#include "search/tune.hpp"
#include "search/worker_pool.hpp"

namespace tunebed::cli {
namespace {

Cell us(double seconds) { return std::isfinite(seconds) ? Cell(seconds * 1e6) : Cell(); }

// The strategy's replay options: its name and what make_strategy takes.
struct Replayer {
  std::string name;
  StrategyOptions options;
  HeldOutTraining training{options};

  // DB: the replayed database, all of it whatever --kernel and --device keep of it for replaying.
  std::unique_ptr<search::Strategy> make(const search::StoredKernel& k, results::TuningDb& db) {
    StrategyOptions o = options;
    if (name == "model") o.prior = std::make_shared<const search::TrainingSet>(training.without(k, db));
    return make_strategy(name, o);
  }
};

// --target: nullopt for "best", else the W of "beam:W"; a UsageError for anything else.
std::optional<int> beam_target(const std::string& target) {
  if (target == "best") return std::nullopt;
  const std::string digits = target.starts_with("beam:") ? target.substr(5) : "";
  if (!digits.empty() && digits.size() <= 4 && digits.find_first_not_of("0123456789") == std::string::npos &&
      std::stoi(digits) >= 1)
    return std::stoi(digits);
  throw UsageError("--target must be best or beam:W with a width W from 1 to 9999, not '" + target + "'");
}

// BEAM of width BEAM_WIDTH replayed on K with the same budget: its best is the time to reach.
search::ReplayResult beam_replay(int beam_width, const search::StoredKernel& k, int64_t budget) {
  search::KernelSpace space(Kernel(k.ast, Renderer::for_device(k.device)));
  auto beam = make_strategy("beam", {.width = beam_width});
  return search::replay(*beam, space, k.costs, budget);
}

std::string describe(const results::Device& d) {
  return d.name + " (" + d.arch + ", " + d.driver + ", " + d.compiler + " " + d.compiler_version + ")";
}

// --fill and --confirm: measurements on this machine of a kernel stored in the database. They pool
// with the stored ones or are set against them, so the kernel must have been measured on this
// machine's device fingerprint.
class ThisMachine {
 public:
  // FLAG: the option that measures, for the errors.
  ThisMachine(results::TuningDb& db, std::string flag) : db_(db), flag_(std::move(flag)) {}

  // Throws a UsageError unless K was measured on this machine's device fingerprint.
  void require_here(const search::StoredKernel& k) const {
    const results::Device here = search::fingerprint_of(k.device);
    const results::Device& there = k.fingerprint;
    if (!results::same_fingerprint(here, there))
      throw UsageError(flag_ + ": kernel " + k.hash + " was measured on " + describe(there) + ", this machine is " +
                       describe(here) + "; " + flag_.substr(2) + " only data from this machine");
  }

  // K as stored once OPTS are measured too: a tune run of the given states (compiled, verified
  // and timed in workers like any candidate).
  search::StoredKernel fill(const search::StoredKernel& k, const std::vector<std::string>& opts) {
    search::KernelTarget target = target_of(k);
    search::TuneTarget& t = target.target();
    std::vector<search::Path> states;
    for (const std::string& o : opts)
      if (std::optional<search::Path> p = t.parse(o)) states.push_back(std::move(*p));
    auto given = search::make_given_states(states);
    search::TuneOptions options;
    options.device = k.device;
    options.retune = true;  // the stored winner is the incumbent: a filled state must beat it beyond the noise
    options.budget = {static_cast<int64_t>(states.size()) + 1, std::nullopt};
    search::tune(t, *given, pool_, db_, options);
    for (search::StoredKernel& again : search::stored_kernels(db_, {.kernel = k.hash}))
      if (again.fingerprint.id == k.fingerprint.id) return std::move(again);
    throw results::DbError("kernel " + k.hash + " lost its winner while being filled");
  }

  // How many times slower FOUND is than TARGET, two stored states of K, when they are re-timed
  // head to head (interleaved in one worker, as tune's finalists are: search/decide.hpp): median
  // over median, with its 95% bootstrap interval. Nothing is recorded. nullopt when either no
  // longer parses or re-timing failed.
  std::optional<search::Speedup> confirm(const search::StoredKernel& k, const std::string& target_opts,
                                         const std::string& found_opts) {
    search::KernelTarget target = target_of(k);
    search::TuneTarget& t = target.target();
    std::optional<search::Path> a = t.parse(target_opts), b = t.parse(found_opts);
    if (!a || !b) return std::nullopt;
    search::TuneOptions options;
    options.device = k.device;
    std::optional<search::Decision> d = search::retime_states(t, pool_, options, {*a, *b}, 0);
    if (!d) return std::nullopt;
    return search::bootstrap_speedup(d->samples[0], d->samples[1]);
  }

 private:
  search::KernelTarget target_of(const search::StoredKernel& k) {
    return search::KernelTarget(k.ast, db_.kernel(db_.resolve_kernel(k.hash)).source, k.device);
  }

  results::TuningDb& db_;
  std::string flag_;
  search::WorkerPool pool_;
};

// The opts of K's lowest stored cost (the target of --target best).
std::optional<std::string> best_stored_opts(const search::StoredKernel& k) {
  auto it = std::ranges::min_element(k.costs, {}, [](const auto& kv) { return kv.second; });
  if (it == k.costs.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->first;
}

// --confirm, over the kernels: the strategy's best against the target's, re-timed head to head.
// A stored cost is the median of one candidate's samples, and the target is the lowest of the
// tens BEAM measured, so it is the luckiest draw of many: "within 5%" by stored medians can be
// lost or won on noise. Re-timed together, the two face the same machine at the same time.
class Confirmed {
 public:
  // K's found best against its goal; the row's three cells (ratio, low, high) as it goes.
  std::vector<Cell> judge(ThisMachine& machine, search::KernelSpace& space, const search::StoredKernel& k,
                          const std::optional<std::string>& goal, const std::optional<std::string>& found) {
    std::optional<search::Path> a = goal ? space.parse(*goal) : std::nullopt;
    std::optional<search::Path> b = found ? space.parse(*found) : std::nullopt;
    if (a && b && space.identity(*a) == space.identity(*b)) {  // one kernel: nothing to re-time
      same_++;
      return {Cell(std::string("same")), Cell(), Cell()};
    }
    std::optional<search::Speedup> h2h = a && b ? machine.confirm(k, *goal, *found) : std::nullopt;
    if (!h2h) {
      failed_++;
      return {Cell(), Cell(), Cell()};
    }
    retimed_++;
    within_ += h2h->ratio <= 1.05;
    behind_ += h2h->low > 1.05;
    return {Cell(h2h->ratio), Cell(h2h->low), Cell(h2h->high)};
  }

  void summarize(const std::string& strategy, size_t kernels, std::ostream& out) const {
    out << strategy << " re-timed head to head against the target: within 5% on " << same_ + within_ << " of "
        << kernels << " kernel(s) (" << same_ << " found the target's own kernel, " << retimed_ << " re-timed";
    if (failed_ > 0) out << ", " << failed_ << " could not be";
    out << "); the target more than 5% faster at 95% confidence on " << behind_ << "\n";
  }

 private:
  int same_ = 0, retimed_ = 0, failed_ = 0;
  int within_ = 0;  // re-timed, and the median ratio at most 1.05
  int behind_ = 0;  // re-timed, and the ratio's 95% interval wholly past 1.05
};

// At most this many rounds of replay and fill per kernel: each round's measurements can change
// the strategy's path and so what it proposes next.
constexpr int kFillRounds = 4;

int replay_cmd(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed replay [--strategy S] [--budget N] [--kernel HASH] [--device D] [--curve] [options]",
      .description =
          "Run a search strategy against the measurements stored in the tuning database instead of\n"
          "the machine: each candidate it proposes costs what the database measured for those opts on\n"
          "that device (a failed one: infinite), so nothing is compiled or timed and a strategy is\n"
          "compared on many kernels in seconds. The action space is the kernel's real one; a\n"
          "candidate the database never measured counts as missing (and infinite): replay data made\n"
          "by `tunebed tune --exhaustive` covers everything within its budget.\n"
          "\n"
          "Per kernel: the candidates stored, proposed and missing, the best stored time, the best the\n"
          "strategy found, the target (the best stored time, or with --target beam:W the best BEAM of\n"
          "width W finds in the same budget), and to_5pct, the candidates it needed to come within 5%\n"
          "of the target (empty: never). wall_s is what measuring those candidates took when they were\n"
          "stored (compile time and timed samples); search_s is the strategy's own time in this replay\n"
          "(for the model: training and ranking). --curve prints the best-so-far after every candidate.\n"
          "\n"
          "The model strategy trains on every other kernel of --train-db (default: this database)\n"
          "measured on the same device, never on the kernel it replays.\n"
          "\n"
          "--fill makes the replay exact for this strategy and the target: the candidates it (and the\n"
          "target's BEAM) proposed that the data lacks are measured on this machine, as a tune run of\n"
          "strategy `given` in the database (compiled, verified and timed in workers), and the kernel\n"
          "is replayed again, up to 4 rounds. `missing` then counts only what could not be measured\n"
          "(a duplicate of another candidate's source, a quarantined crash). The new measurements pool\n"
          "with the stored ones, so --fill refuses a kernel measured on another device fingerprint.\n"
          "\n"
          "--confirm re-times, on this machine, each kernel's found best against the target's state,\n"
          "head to head (interleaved in one worker, as tune re-times its finalists; nothing is\n"
          "recorded): retimed is how many times slower the found kernel is, median over median, and\n"
          "low and high its 95% bootstrap interval; `same` where the strategy found the target's own\n"
          "kernel. A stored target is the lowest of many medians, its luckiest draw, so \"within 5%\"\n"
          "by stored costs can be won or lost on noise; the last lines say how many are within 5%\n"
          "re-timed, and on how many the target is more than 5% faster at 95% confidence."};
  cl.options.add_options()                                                                            //
      ("strategy", po::value<std::string>()->default_value("beam"), "beam, random, hill, annealing, exhaustive or model")  //
      ("budget", po::value<int64_t>()->default_value(64), "candidates per kernel at most")             //
      ("seed", po::value<uint64_t>()->default_value(0), "seed of the strategy")                         //
      ("width", po::value<int>()->default_value(4), "beam width")                                       //
      ("target", po::value<std::string>()->default_value("best"), "best (stored) or beam:W")             //
      ("curve", po::bool_switch(), "print every candidate's best-so-far")                              //
      ("fill", po::bool_switch(), "measure missing candidates on this machine and replay again")         //
      ("confirm", po::bool_switch(), "re-time each kernel's found best against the target, head to head");
  add_stored_kernel_options(cl);
  add_model_options(cl);
  add_db_option(cl);
  add_output_options(cl);
  cl.examples = {"tunebed tune matmul:M=64,N=64,K=64 --exhaustive --budget 300 --db full.db",
                 "tunebed replay --db full.db --strategy beam --budget 40",
                 "tunebed replay --db full.db --strategy model --target beam:4 --budget 400",
                 "tunebed replay --db full.db --strategy random --seed 3 --curve --format csv",
                 "tunebed replay --db live.db --strategy model --target beam:4 --budget 400 --fill",
                 "tunebed replay --db live.db --strategy model --target beam:4 --budget 400 --confirm"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const Output out = output_options(*vm);
  const int64_t budget = (*vm)["budget"].as<int64_t>();
  if (budget < 1) throw UsageError("--budget must be at least 1");
  const std::optional<int> target = beam_target((*vm)["target"].as<std::string>());
  StrategyOptions options = model_options(*vm);
  options.seed = (*vm)["seed"].as<uint64_t>();
  options.width = (*vm)["width"].as<int>();
  Replayer replayer{(*vm)["strategy"].as<std::string>(), options};
  make_strategy(replayer.name, replayer.options);  // a bad name fails before any work
  if (replayer.name != "model") refuse_unused_model_options(*vm);
  const bool fill = (*vm)["fill"].as<bool>(), confirm = (*vm)["confirm"].as<bool>();
  const bool curve = (*vm)["curve"].as<bool>();
  if (confirm && curve) throw UsageError("--confirm and --curve are exclusive: --curve prints every candidate, not each kernel's best");
  auto db = fill ? open_for_writing((*vm)["db"].as<std::string>()) : open_for_reading((*vm)["db"].as<std::string>());
  std::optional<ThisMachine> machine;
  if (fill || confirm) machine.emplace(db, fill ? "--fill" : "--confirm");

  const std::vector<search::StoredKernel> kernels = stored_kernels_of(*vm, db, "replay");

  Table table{curve ? std::vector<Column>{id_column("kernel"), {"device"}, {"index"}, {"opts", 48}, {"us"}, {"best_us"}}
                    : std::vector<Column>{id_column("kernel"), {"device"}, {"stored"}, {"proposed"}, {"missing"},
                                          {"best_us"}, {"found_us"}, {"target_us"}, {"to_5pct"}, {"wall_s"},
                                          {"search_s"}}};
  if (confirm)
    for (const char* c : {"retimed", "low", "high"}) table.columns.push_back({c});
  Confirmed confirmed;
  std::vector<int64_t> reached;
  int64_t proposed = 0, target_proposed = 0;  // over every kernel: the strategy's, the target BEAM's
  for (search::StoredKernel k : kernels) {
    if (machine) machine->require_here(k);
    search::KernelSpace space(Kernel(k.ast, Renderer::for_device(k.device)));
    search::ReplayResult r, beam;
    double search_s = 0;
    for (int round = 0;; round++) {
      auto strategy = replayer.make(k, db);
      const double started = search::steady_seconds();
      r = search::replay(*strategy, space, k.costs, budget);
      search_s = search::steady_seconds() - started;
      if (target) beam = beam_replay(*target, k, budget);
      std::vector<std::string> missing = r.missing_opts;
      missing.insert(missing.end(), beam.missing_opts.begin(), beam.missing_opts.end());
      if (!fill || missing.empty() || round == kFillRounds) break;
      const size_t known = k.costs.size();
      k = machine->fill(k, missing);
      if (k.costs.size() == known) break;  // nothing more could be measured
    }
    if (curve) {
      for (size_t i = 0; i < r.steps.size(); i++)
        table.add_row({k.hash, k.device, static_cast<int64_t>(i + 1), r.steps[i].opts,
                       r.steps[i].cost ? us(*r.steps[i].cost) : Cell(std::string("missing")),
                       us(r.steps[i].best_so_far)});
      continue;
    }
    const double goal = !target ? r.best_stored : beam.steps.empty() ? INFINITY : beam.steps.back().best_so_far;
    const std::optional<int64_t> to5 = r.candidates_to(1.05 * goal);
    double wall = 0;
    for (int64_t i = 0; i < to5.value_or(0); i++)
      if (auto it = k.wall_s.find(r.steps[i].opts); it != k.wall_s.end()) wall += it->second;
    if (to5) reached.push_back(*to5);
    proposed += static_cast<int64_t>(r.steps.size());
    target_proposed += static_cast<int64_t>(beam.steps.size());
    std::vector<Cell> row = {k.hash, k.device, static_cast<int64_t>(k.costs.size()),
                             static_cast<int64_t>(r.steps.size()), r.missing, us(r.best_stored),
                             us(r.steps.empty() ? INFINITY : r.steps.back().best_so_far), us(goal),
                             to5 ? Cell(*to5) : Cell(), to5 ? Cell(wall) : Cell(), Cell(search_s)};
    if (confirm) {
      const std::optional<std::string> goal_opts = target ? beam.best_opts() : best_stored_opts(k);
      for (Cell& c : confirmed.judge(*machine, space, k, goal_opts, r.best_opts())) row.push_back(std::move(c));
    }
    table.add_row(std::move(row));
  }
  write_table(table, out.format, out.verbosity, std::cout);
  if (curve || out.format != Format::table || out.verbosity == Verbosity::quiet) return 0;
  if (confirm) confirmed.summarize(replayer.name, kernels.size(), std::cout);
  std::ranges::sort(reached);
  std::cout << replayer.name << " came within 5% of the target on " << reached.size() << " of " << kernels.size()
            << " kernel(s)";
  if (!reached.empty()) std::cout << "; median " << reached[reached.size() / 2] << " candidates to get there";
  std::cout << "\n";
  // The price of its verdicts: what it proposed against what the target's BEAM proposed.
  if (target && target_proposed > 0)
    std::cout << replayer.name << " proposed " << proposed << " candidate(s), " << std::fixed << std::setprecision(2)
              << static_cast<double>(proposed) / static_cast<double>(target_proposed) << " of BEAM width " << *target
              << "'s " << target_proposed << "\n";
  return 0;
}

const Registrar reg{"replay", "run a search strategy against a database's stored measurements, offline",
                    replay_cmd};

}  // namespace
}  // namespace tunebed::cli
