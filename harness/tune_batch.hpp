// The batch `tunebed tune` works through: manifest entries (or workload specs) expanded into
// kernels, each with the strategy and budget it is tuned with, and the plan that a batch run
// stores so that `tunebed tune --resume RUN` can finish it without the original arguments.
//
// The plan is manifest text with one `kernel HASH strategy=... budget=... seconds=... width=...`
// line per kernel, every option resolved; the kernels' ASTs are in the database's kernels table
// (the batch upserts them before it starts), so a plan and a database are the whole batch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/uop.hpp"
#include "harness/cli.hpp"
#include "harness/manifest.hpp"
#include "results/json_lines.hpp"
#include "results/tuning_db.hpp"
#include "search/stored.hpp"
#include "search/strategy.hpp"

namespace tunebed::cli {

// What an entry does not set: the command line's options.
struct TuneDefaults {
  std::string strategy = "beam";
  int64_t budget = 24;
  double seconds = 60;
  int width = 2;
};

struct BatchKernel {
  UOp ast;               // without its KernelInfo: what is computed, not how
  std::string hash;      // kernel_hash(ast), the database's key
  std::string source;    // the workload spec, AST file or corpus line it came from
  std::string origin;    // the manifest line ("FILE:LINE") or the command line ("argument 2")
  EntryOptions options;  // all four set
  // A workload's kernel (SOURCE is its spec): its schedule is also checked against the Eigen
  // reference before it is tuned (workload_check.hpp).
  bool from_workload = false;
};

// The stored AST text and source of a kernel hash, for `kernel HASH` entries; nullopt if unknown.
using KernelLookup =
    std::function<std::optional<std::pair<std::string, std::string>>(const std::string& hash)>;

// Every entry's kernels in manifest order, each kernel once (the first entry naming it decides
// its options). SEED seeds the workloads' inputs. Throws UsageError "ORIGIN: ..." for an entry
// that names an unknown workload or strategy, an unreadable file, an AST that does not parse, a
// corpus sample or filter that leaves nothing, or a hash LOOKUP does not know.
std::vector<BatchKernel> expand(const std::vector<ManifestEntry>& entries, const TuneDefaults& defaults,
                                uint64_t seed, const KernelLookup& lookup);

// The plan of KERNELS, as stored with a batch run (see above).
std::string plan_text(const std::vector<BatchKernel>& kernels);

// What a strategy is made with beside its name. PRIOR is the model strategy's training data from
// other kernels (search/stored.hpp); without it the model learns from this kernel alone.
struct StrategyOptions {
  uint64_t seed = 0;
  int width = 2;
  std::string cost_model = "xgboost";
  int model_top_k = search::ModelParams{}.top_k;        // the model strategy's candidates per step
  int model_patience = search::ModelParams{}.patience;  // its steps without progress before it stops
  int model_lookahead = search::ModelParams{}.lookahead;  // the levels its model ranks unmeasured
  int model_restarts = search::ModelParams{}.restarts;    // the basins it starts again in
  std::optional<std::string> train_db;  // the model's training data; none: the tuned or replayed database
  std::shared_ptr<const search::TrainingSet> prior;
};

// "beam", "random", "hill", "annealing", "exhaustive" or "model"; anything else is a UsageError
// listing them.
std::unique_ptr<search::Strategy> make_strategy(const std::string& name, const StrategyOptions& options);

// The cost model's options (`rank`, and the model strategy's): --cost-model and --train-db.
// cost_model_options reads them into StrategyOptions; an unknown model or a --train-db that is
// not a file is a UsageError naming the flag.
void add_cost_model_options(CommandLine& cl);
StrategyOptions cost_model_options(const po::variables_map& vm);
// The model strategy's options of `tune` and `replay`: the cost model's, --model-top-k,
// --model-patience and --model-lookahead. model_options reads them into StrategyOptions' model
// fields; a top-k or patience under 1 or a negative look-ahead is a UsageError too.
void add_model_options(CommandLine& cl);
StrategyOptions model_options(const po::variables_map& vm);
// The flags add_model_options adds, and the first of FLAGS given on the command line (not left at
// its default), if any.
const std::vector<std::string>& model_flags();
std::optional<std::string> first_given(const po::variables_map& vm, const std::vector<std::string>& flags);
// Where no kernel uses the model strategy, a model option given on the command line would be
// ignored: it is a UsageError naming the flag instead.
void refuse_unused_model_options(const po::variables_map& vm);
// The stored kernels an offline command (`replay`, `rank`) works on: --kernel HASH and --device D
// keep some. add_stored_kernel_options adds both; stored_kernels_of reads them and returns the
// kernels of DB with a winner under this tunebed's action space, or throws a UsageError (an
// unknown or ambiguous --kernel or --device; nothing to VERB).
void add_stored_kernel_options(CommandLine& cl);
std::vector<search::StoredKernel> stored_kernels_of(const po::variables_map& vm, results::TuningDb& db,
                                                    const std::string& verb);
// What the model strategy learns from on DEVICE (by its fingerprint): every kernel of
// OPTIONS.train_db (or, with none, of DB) measured there. Says on standard error how much that is.
search::TrainingSet model_training(const StrategyOptions& options, results::TuningDb& db,
                                   const results::Device& device);
// The training set of an offline command (`replay`, `rank`) for one stored kernel: model_training
// on its device, read once per device, less the kernel's own rows (a model judged on a kernel it
// was never trained on).
class HeldOutTraining {
 public:
  explicit HeldOutTraining(StrategyOptions options) : options_(std::move(options)) {}
  // DB: the whole database, whatever --kernel and --device keep of it.
  search::TrainingSet without(const search::StoredKernel& k, results::TuningDb& db);

 private:
  StrategyOptions options_;
  std::map<int64_t, search::TrainingSet> by_device_;  // per device id
};
// The model fields of OPTIONS as a run's params (cost_model, model_top_k, model_patience,
// model_lookahead, model_restarts, train_db), and back: load_model_options sets the fields PARAMS holds and
// leaves the others.
void store_model_options(const StrategyOptions& options, results::JsonRow& params);
void load_model_options(const results::JsonRow& params, StrategyOptions& options);

}  // namespace tunebed::cli
