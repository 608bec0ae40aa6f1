#include "harness/tune_batch.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "core/imports/corpus.hpp"
#include "core/imports/tinygrad_ast.hpp"
#include "core/ir/text.hpp"
#include "core/schedule/schedule.hpp"
#include "search/cost_model.hpp"
#include "search/kernel_target.hpp"
#include "core/tensor/workloads.hpp"
#include "harness/cli.hpp"
#include "harness/db_cli.hpp"
#include "search/stored.hpp"

namespace tunebed::cli {
namespace {

bool reduces(const UOp& ast) {
  return std::ranges::any_of(ast.toposort(), [](const UOp& u) { return u.op() == Ops::REDUCE_AXIS; });
}

// The kernels of one entry, before deduplication.
class Expander {
 public:
  Expander(const TuneDefaults& defaults, uint64_t seed, const KernelLookup& lookup)
      : defaults_(defaults), seed_(seed), lookup_(lookup) {}

  std::vector<BatchKernel> kernels(const ManifestEntry& e) {
    origin_ = e.origin;
    options_ = resolve(e.options);
    out_.clear();
    switch (e.kind) {
      case ManifestEntry::Kind::workload:
        workload(e.value);
        break;
      case ManifestEntry::Kind::ast:
        ast_file(e.value);
        break;
      case ManifestEntry::Kind::corpus:
        corpus(e);
        break;
      case ManifestEntry::Kind::kernel:
        stored(e.value);
        break;
    }
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw UsageError(origin_ + ": " + what); }

  EntryOptions resolve(const EntryOptions& o) const {
    EntryOptions r{o.strategy.value_or(defaults_.strategy), o.budget.value_or(defaults_.budget),
                   o.seconds.value_or(defaults_.seconds), o.width.value_or(defaults_.width)};
    try {
      make_strategy(*r.strategy, {.width = *r.width});
    } catch (const UsageError& e) {
      fail(e.what());
    }
    return r;
  }

  void add(const UOp& ast, std::string source) {
    UOp plain = search::strip_info(ast);
    out_.push_back({plain, kernel_hash(plain), std::move(source), origin_, options_, false});
  }

  void workload(const std::string& spec) {
    Workload w = [&] {
      try {
        return make_workload(spec, seed_);
      } catch (const WorkloadError& e) {
        fail(e.what());
      }
    }();
    for (const ScheduleItem& item : create_schedule({w.output.uop()}).items) {
      if (item.is_copy()) continue;
      add(item.ast, w.spec);
      out_.back().from_workload = true;
    }
  }

  UOp parse(const std::string& text, const std::string& what) const {
    try {
      return parse_uop(text);
    } catch (const std::exception& e) {
      fail(what + " does not parse: " + e.what());
    }
  }

  void ast_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot read AST file '" + path + "'");
    std::ostringstream text;
    text << in.rdbuf();
    try {  // tunebed's canonical text or a tinygrad AST line, as `tunebed run --ast` takes
      add(imports::parse_kernel_text(text.str()).ast, path);
    } catch (const std::exception& e) {
      fail("AST file '" + path + "' does not parse: " + e.what());
    }
  }

  void corpus(const ManifestEntry& e) {
    std::vector<std::string> lines;
    try {
      lines = imports::read_lines(e.value);
    } catch (const imports::CorpusError& err) {
      fail(err.what());
    }
    std::vector<std::pair<UOp, std::string>> kept;
    for (const imports::CorpusKernel& k : imports::import_lines(lines).kernels) {
      UOp ast = parse(k.text, e.value + ":" + std::to_string(k.line));
      if (!e.reduce_only || reduces(ast)) kept.emplace_back(ast, e.value + ":" + std::to_string(k.line));
    }
    if (kept.empty()) fail("corpus '" + e.value + "' has no kernels" + (e.reduce_only ? " that reduce" : ""));
    std::vector<size_t> chosen(kept.size());
    for (size_t i = 0; i < chosen.size(); i++) chosen[i] = i;
    if (e.sample && static_cast<size_t>(*e.sample) < kept.size()) {
      // A partial Fisher-Yates shuffle with tunebed's own pick (the same on every standard
      // library), then back to line order so that the sample reads like the corpus.
      std::mt19937_64 rng(e.sample_seed);
      const auto n = static_cast<size_t>(*e.sample);
      for (size_t i = 0; i < n; i++) std::swap(chosen[i], chosen[i + search::pick(rng, chosen.size() - i)]);
      chosen.resize(n);
      std::ranges::sort(chosen);
    }
    for (size_t i : chosen) add(kept[i].first, kept[i].second);
  }

  void stored(const std::string& hash) {
    std::optional<std::pair<std::string, std::string>> found = lookup_ ? lookup_(hash) : std::nullopt;
    if (!found) fail("no kernel " + hash + " in the tuning database");
    add(parse(found->first, "stored kernel " + hash), found->second);
  }

  const TuneDefaults& defaults_;
  const uint64_t seed_;
  const KernelLookup& lookup_;
  std::string origin_;
  EntryOptions options_;
  std::vector<BatchKernel> out_;
};

}  // namespace

std::vector<BatchKernel> expand(const std::vector<ManifestEntry>& entries, const TuneDefaults& defaults,
                                uint64_t seed, const KernelLookup& lookup) {
  Expander expander(defaults, seed, lookup);
  std::vector<BatchKernel> batch;
  std::set<std::string> seen;
  for (const ManifestEntry& e : entries)
    for (BatchKernel& k : expander.kernels(e))
      if (seen.insert(k.hash).second) batch.push_back(std::move(k));
  return batch;
}

std::string plan_text(const std::vector<BatchKernel>& kernels) {
  std::string text;
  for (const BatchKernel& k : kernels) text += "kernel " + k.hash + format_options(k.options) + "\n";
  return text;
}

std::unique_ptr<search::Strategy> make_strategy(const std::string& name, const StrategyOptions& o) {
  if (name == "beam") return search::make_beam({.width = o.width});
  if (name == "random") return search::make_random({.seed = o.seed});
  if (name == "hill") return search::make_hill_climb({.seed = o.seed});
  if (name == "annealing") return search::make_annealing({.seed = o.seed});
  if (name == "exhaustive") return search::make_exhaustive({});
  if (name == "model") {
    try {
      return search::make_model_search({.seed = o.seed,
                                        .model = o.cost_model,
                                        .top_k = o.model_top_k,
                                        .patience = o.model_patience,
                                        .restarts = o.model_restarts,
                                        .lookahead = o.model_lookahead,
                                        .prior = o.prior});
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  throw UsageError("unknown strategy '" + name + "' (expected beam, random, hill, annealing, exhaustive or model)");
}

void add_cost_model_options(CommandLine& cl) {
  cl.options.add_options()                                                                                 //
      ("cost-model", po::value<std::string>()->default_value(search::ModelParams{}.model), "the model: xgboost or ridge")  //
      ("train-db", po::value<std::string>()->value_name("FILE"),
       "the model's training data: the kernels of FILE measured on this device (default: --db)");
}

void add_model_options(CommandLine& cl) {
  add_cost_model_options(cl);
  const search::ModelParams defaults;
  const std::string top_k_help = "the model strategy measures at most its model's top K per step (a step measures " +
                                 std::to_string(std::lround(100 * defaults.top_fraction)) +
                                 "% of its pool, rounded up)";
  cl.options.add_options()  //
      ("model-top-k", po::value<int>()->default_value(defaults.top_k)->value_name("K"),
       top_k_help.c_str())  //
      ("model-patience", po::value<int>()->default_value(defaults.patience)->value_name("N"),
       "after N steps without progress the model strategy tries the best state's favourite child of each "
       "OptOp, and stops unless one is faster")  //
      ("model-lookahead", po::value<int>()->default_value(defaults.lookahead)->value_name("L"),
       "the model strategy ranks L levels past its pool's children unmeasured, and measures the favourites "
       "of every level (0: only the children)")  //
      ("model-restarts", po::value<int>()->default_value(defaults.restarts)->value_name("R"),
       "when it would stop, the model strategy starts again R times, each under its favourite child of the "
       "root whose OptOp begins no best so far, and grows only from there");
}

StrategyOptions cost_model_options(const po::variables_map& vm) {
  StrategyOptions o{.cost_model = vm["cost-model"].as<std::string>()};
  try {
    search::make_cost_model(o.cost_model, 0);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--cost-model: " + std::string(e.what()));
  }
  if (vm.count("train-db")) {
    const std::string path = vm["train-db"].as<std::string>();
    if (!std::filesystem::is_regular_file(path)) throw UsageError("--train-db: no tuning database at '" + path + "'");
    o.train_db = std::filesystem::absolute(path).string();  // a resume from another directory finds it
  }
  return o;
}

StrategyOptions model_options(const po::variables_map& vm) {
  StrategyOptions o = cost_model_options(vm);
  o.model_top_k = vm["model-top-k"].as<int>();
  o.model_patience = vm["model-patience"].as<int>();
  o.model_lookahead = vm["model-lookahead"].as<int>();
  o.model_restarts = vm["model-restarts"].as<int>();
  for (const char* knob : {"model-top-k", "model-patience"})
    if (vm[knob].as<int>() < 1) throw UsageError(std::string("--") + knob + " must be at least 1");
  for (const char* knob : {"model-lookahead", "model-restarts"})
    if (vm[knob].as<int>() < 0) throw UsageError(std::string("--") + knob + " must be at least 0");
  return o;
}

const std::vector<std::string>& model_flags() {
  static const std::vector<std::string> flags = {"cost-model", "model-top-k", "model-patience", "model-lookahead",
                                                 "model-restarts", "train-db"};
  return flags;
}

std::optional<std::string> first_given(const po::variables_map& vm, const std::vector<std::string>& flags) {
  for (const std::string& flag : flags)
    if (vm.count(flag) && !vm[flag].defaulted()) return flag;
  return std::nullopt;
}

void refuse_unused_model_options(const po::variables_map& vm) {
  if (const std::optional<std::string> flag = first_given(vm, model_flags()))
    throw UsageError("--" + *flag + " is an option of the model strategy, which nothing here uses");
}

void add_stored_kernel_options(CommandLine& cl) {
  cl.options.add_options()                                                                          //
      ("kernel", po::value<std::string>()->value_name("HASH"), "only this kernel (a hash prefix)")  //
      ("device", po::value<std::string>()->value_name("D"), "the device whose measurements to use");
}

std::vector<search::StoredKernel> stored_kernels_of(const po::variables_map& vm, results::TuningDb& db,
                                                    const std::string& verb) {
  results::Filter filter;
  try {
    if (vm.count("kernel")) filter.kernel = db.kernel(db.resolve_kernel(vm["kernel"].as<std::string>())).hash;
    if (vm.count("device")) filter.device_id = db.resolve_device(vm["device"].as<std::string>());
  } catch (const results::DbError& e) {
    throw UsageError(e.what());  // an unknown or ambiguous --kernel or --device is bad input
  }
  std::vector<search::StoredKernel> kernels = search::stored_kernels(db, filter);
  if (kernels.empty())
    throw UsageError("no kernel of " + db.path() + " has a winner under this tunebed's action space (" +
                     search::action_space_version({}) + ") to " + verb +
                     (vm.count("kernel") || vm.count("device") ? " for that --kernel/--device" : ""));
  return kernels;
}

search::TrainingSet model_training(const StrategyOptions& options, results::TuningDb& db,
                                   const results::Device& device) {
  std::optional<results::TuningDb> other;
  if (options.train_db) other.emplace(open_for_reading(*options.train_db));
  search::TrainingSet data = search::training_set(search::stored_kernels(other ? *other : db), device);
  std::cerr << "model: training data: " << data.kernels() << " kernel(s), " << data.rows() << " measurement(s) of "
            << (options.train_db ? *options.train_db : std::string("--db"))
            << " on this device (a kernel never learns from its own)\n";
  return data;
}

search::TrainingSet HeldOutTraining::without(const search::StoredKernel& k, results::TuningDb& db) {
  auto it = by_device_.find(k.fingerprint.id);
  if (it == by_device_.end()) it = by_device_.emplace(k.fingerprint.id, model_training(options_, db, k.fingerprint)).first;
  return it->second.without(k.hash);
}

void store_model_options(const StrategyOptions& options, results::JsonRow& params) {
  params.emplace_back("cost_model", options.cost_model);
  params.emplace_back("model_top_k", static_cast<int64_t>(options.model_top_k));
  params.emplace_back("model_patience", static_cast<int64_t>(options.model_patience));
  params.emplace_back("model_lookahead", static_cast<int64_t>(options.model_lookahead));
  params.emplace_back("model_restarts", static_cast<int64_t>(options.model_restarts));
  if (options.train_db) params.emplace_back("train_db", *options.train_db);
}

void load_model_options(const results::JsonRow& params, StrategyOptions& options) {
  for (const auto& [key, value] : params) {
    if (key == "cost_model" && std::holds_alternative<std::string>(value))
      options.cost_model = std::get<std::string>(value);
    if (key == "model_top_k" && std::holds_alternative<int64_t>(value))
      options.model_top_k = static_cast<int>(std::get<int64_t>(value));
    if (key == "model_patience" && std::holds_alternative<int64_t>(value))
      options.model_patience = static_cast<int>(std::get<int64_t>(value));
    if (key == "model_lookahead" && std::holds_alternative<int64_t>(value))
      options.model_lookahead = static_cast<int>(std::get<int64_t>(value));
    if (key == "model_restarts" && std::holds_alternative<int64_t>(value))
      options.model_restarts = static_cast<int>(std::get<int64_t>(value));
    if (key == "train_db" && std::holds_alternative<std::string>(value)) options.train_db = std::get<std::string>(value);
  }
}

}  // namespace tunebed::cli
