// Search strategies, written against two small interfaces so that they can be tested on
// synthetic problems and run unchanged on real kernels:
//
//   SearchSpace    a state is the path of actions applied from the root (for kernels: the opts
//                  applied to the unoptimized Kernel); the space lists the actions legal at a
//                  state and names each state by a canonical key (the opts string), so states
//                  reached by different paths are one candidate.
//   CostFunction   evaluates a batch of states at once (the worker pool compiles them in
//                  parallel) and returns seconds, +inf for a candidate that failed.
//
// SearchContext sits between a strategy and the cost function and enforces what every strategy
// owes the user: no state is evaluated twice (a repeat costs nothing and returns the stored
// cost), the budget in candidates and in wall seconds (compilation included: it is the cost
// function's time) is never exceeded, the early-stop hint is kEarlyStopFactor (3) times the best
// time so far (as tinygrad's beam_search passes to _time_program), and every evaluation is kept in order.
//
// Reproducibility: a strategy draws only from its own seeded mt19937_64 and iterates actions in
// the space's order, so the same seed and the same costs give the same sequence of proposals. A
// budget in seconds can only cut that sequence short at a different point.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tunebed::search {

using Path = std::vector<int>;  // action ids, applied in order from the root
class TrainingSet;                // cost_model.hpp

class SearchSpace {
 public:
  virtual ~SearchSpace() = default;
  // The ids of the actions legal at STATE, ascending.
  virtual std::vector<int> actions(const Path& state) = 0;
  // The canonical name of STATE: equal keys are the same candidate.
  virtual std::string key(const Path& state) = 0;
  // What STATE makes: states of one identity are one candidate however they were reached. Its
  // key by default; for a kernel, the optimized loop nest, which opts in another order (or an
  // UPCAST of 4 against two of 2) often build alike.
  virtual std::string identity(const Path& state);
  // What the cost model (cost_model.hpp) knows of STATE, kernel_features for a kernel. Only the
  // model strategy asks; a space without features throws std::logic_error.
  virtual std::vector<float> features(const Path& state);
  // The state whose key is KEY, if it is legal here; the model strategy tries other kernels'
  // winners this way. A space that cannot parse keys answers nullopt.
  virtual std::optional<Path> parse(const std::string& key);
  // The kind of ACTION (for kernels: its OptOp). Before it stops, the model strategy tries every
  // kind on its best states once more. A space that names none has one kind.
  virtual std::string kind(int action);
};

class CostFunction {
 public:
  virtual ~CostFunction() = default;
  // Seconds for each state of BATCH, +inf where the candidate failed. EARLY_STOP: a time past
  // which the candidate cannot matter, so its measurement may stop early; one that measures the
  // batch a few at a time may lower it as the batch's own results come in.
  virtual std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double> early_stop) = 0;
};

struct Budget {
  std::optional<int64_t> candidates;
  std::optional<double> seconds;
};

// Seconds from a fixed point, read for the seconds budget: steady_seconds (the monotonic clock)
// unless a test passes a fake one that its cost function advances, so that where a budgeted
// search stops cannot depend on the machine's load.
using Clock = std::function<double()>;
double steady_seconds();

struct Evaluated {
  Path path;
  std::string key;
  double cost = 0;
};

class SearchContext {
 public:
  SearchContext(SearchSpace& space, CostFunction& cost, Budget budget, Clock clock = steady_seconds);

  SearchSpace& space() { return space_; }
  bool seen(const Path& state) { return costs_.contains(space_.key(state)); }
  // The cost of each state of BATCH: new states are evaluated together (those past the budget
  // are not, and get nullopt), states seen before return their stored cost. Duplicates within
  // the batch are evaluated once.
  std::vector<std::optional<double>> evaluate(const std::vector<Path>& batch);
  bool exhausted() const;
  int64_t evaluated() const { return static_cast<int64_t>(history_.size()); }

  const std::vector<Evaluated>& history() const { return history_; }  // in evaluation order
  const Evaluated* best() const { return best_ < 0 ? nullptr : &history_[best_]; }

 private:
  SearchSpace& space_;
  CostFunction& cost_;
  Budget budget_;
  Clock clock_;
  double start_;
  std::map<std::string, double> costs_;  // by key
  std::vector<Evaluated> history_;
  int best_ = -1;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;         // "beam", "random", "hill", "annealing", "exhaustive", "model"
  virtual std::string params_json() const = 0;  // its parameters, for the tuning database
  // Proposes states through CTX until it is done or the budget is spent.
  virtual void search(SearchContext& ctx) = 0;
};

struct SearchResult {
  std::optional<Evaluated> best;   // the cheapest finite cost; none if every candidate failed
  std::vector<Evaluated> history;  // every evaluation, in order
};
SearchResult run_search(Strategy& strategy, SearchSpace& space, CostFunction& cost, Budget budget,
                        Clock clock = steady_seconds);

// --- the strategies (one file each) ---

// tinygrad's beam_search (opt/search.py): expand every state of the beam by every legal action,
// keep the WIDTH fastest, stop when no child beats the beam's best by MIN_PROGRESS_S.
struct BeamParams {
  int width = 4;
  double min_progress_s = 0.01e-6;  // tinygrad's BEAM_MIN_PROGRESS, 0.01 us
};
std::unique_ptr<Strategy> make_beam(BeamParams params);

// Random walks from the root (stopping at each step with probability 1 / (legal actions + 1),
// as core/opt's random_opts), evaluated BATCH at a time, until the budget is spent or
// MAX_STALE_DRAWS walks in a row found nothing new.
struct RandomParams {
  uint64_t seed = 0;
  int batch = 8;
  int max_depth = 8;
  int max_stale_draws = 256;
};
std::unique_ptr<Strategy> make_random(RandomParams params);

// Stochastic first-improvement hill climbing: evaluate the unseen children of the current
// state BATCH at a time in a seeded random order, move to the best of the first batch that
// improves by MIN_PROGRESS_S; at a local optimum restart from a random walk, RESTARTS times.
struct HillClimbParams {
  uint64_t seed = 0;
  int batch = 8;
  double min_progress_s = 0.01e-6;
  int restarts = 2;
  int max_depth = 8;
};
std::unique_ptr<Strategy> make_hill_climb(HillClimbParams params);

// Simulated annealing over paths: a move appends a legal action, drops the last one, or
// replaces it. A worse state is accepted with probability exp(-(c' - c) / (T c)), a relative
// change, so the temperature means the same for a 1 us and a 1 s kernel; T cools geometrically
// from T_START to T_END over STEPS proposals. BATCH proposals are evaluated together and the
// first one accepted, in order, is taken.
struct AnnealingParams {
  uint64_t seed = 0;
  int batch = 8;
  double t_start = 0.3, t_end = 0.003;
  int64_t steps = 400;
};
std::unique_ptr<Strategy> make_annealing(AnnealingParams params);

// Every state breadth-first from the root, in action order, BATCH at a time, to MAX_DEPTH actions,
// until the budget is spent: complete data for replay (replay.hpp). States reached by two paths
// are one candidate (SearchContext), so the levels shrink to the distinct opts strings.
struct ExhaustiveParams {
  int batch = 8;
  int max_depth = 8;
};
std::unique_ptr<Strategy> make_exhaustive(ExhaustiveParams params);

// Model-guided search (model_search.cpp), as TVM's Ansor: every step ranks the unseen children of
// the EXPAND best states measured so far (the root counts while it has no time; when these have
// no unseen child, every measured state) by a cost model (cost_model.hpp) and measures only its
// top TOP_FRACTION of them (rounded up), at most TOP_K: BEAM measures every child of its beam, so
// a step costs a fixed share of what BEAM's would. A child whose identity (SearchSpace::identity)
// equals a state already evaluated (or another child's) is left out: opts in another order often
// build the same kernel. Two models add up: one trained once on PRIOR (other
// kernels' measurements: what transfers), and one retrained after every step on what the prior
// got wrong about this kernel's own measurements (boosting on the prior's predictions), so a step
// costs a fit over tens of rows, not over the whole prior. Right after the root it measures the
// model's top TRANSPLANTS of the prior's winners (where they parse: states of this space). With
// nothing to learn from (no prior, only the root measured) it takes a seeded random order. The pool looks LOOKAHEAD levels
// further, unmeasured: the children of the model's AHEAD_WIDTH favourites of each level join it,
// so a step can measure a state whose parent is slow (an UPCAST that pays only once the UNROLL
// after it exists) without measuring the parent first. After PATIENCE steps without progress of
// MIN_PROGRESS_S it sweeps: the model's favourite unseen child of each kind of action (for
// kernels, each OptOp) among the children of the SWEEP best states is measured, for a model can
// misjudge a whole kind (THREAD, on a 2-core CPU) so that its top few never hold one, where BEAM,
// measuring every child, tries them all; and its favourite of the best state less one of its
// actions (one_less), for the steps only add actions, so a state reached in one jump (a
// transplant) has no other way back to a faster, simpler one inside it. Progress there resumes
// the steps; else it stops, as it does when no unseen child is left, or RESTARTS times it starts
// again in another basin: under the model's favourite child of the root whose action does not begin
// the best state of a basin before, growing only from states under it, and ending without a sweep.
// SWEEP 0: no sweep.
struct ModelParams {
  uint64_t seed = 0;
  std::string model = "xgboost";  // make_cost_model's names
  int top_k = 4;
  double top_fraction = 0.15;
  int transplants = 2;
  int expand = 4;
  int patience = 2;
  int sweep = 1;  // 0: no sweep
  int restarts = 0;
  int lookahead = 0;
  int ahead_width = 4;
  double min_progress_s = 0.01e-6;
  std::shared_ptr<const TrainingSet> prior;
};
std::unique_ptr<Strategy> make_model_search(ModelParams params);

// The given STATES, in one batch, and nothing else (given_states.cpp): what `replay --fill`
// measures.
std::unique_ptr<Strategy> make_given_states(std::vector<Path> states);

// --- helpers the strategies share ---

// A uniform index in [0, n) and a uniform double in [0, 1), by hand so that they are the same
// with every standard library (its distributions are implementation-defined).
size_t pick(std::mt19937_64& rng, size_t n);
double uniform(std::mt19937_64& rng);
// A random walk from the root: at each step stop with probability 1 / (legal + 1), else take a
// random legal action; at most MAX_DEPTH actions.
Path random_walk(SearchSpace& space, std::mt19937_64& rng, int max_depth);
// Every child of STATE (STATE plus one legal action), in action order.
std::vector<Path> children(SearchSpace& space, const Path& state);
// Whether every action of STATE is legal at the state before it: STATE is one of the space's.
bool reachable(SearchSpace& space, const Path& state);
// STATE less one of its actions, for each action whose removal leaves the others legal, first
// action first: the way back from a state reached in one jump to a simpler one inside it.
std::vector<Path> one_less(SearchSpace& space, const Path& state);

}  // namespace tunebed::search
