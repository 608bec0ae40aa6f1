// A learned cost model: it ranks candidates of a kernel from their features (features.hpp) so
// that the search measures only the most promising ones (the `model` strategy, strategy.hpp),
// as TVM's Ansor does with XGBoost.
//
// What it learns is relative: the target of a measured candidate is log(its time) minus the mean
// log time of the measured candidates of its kernel. A 10 us and a 10 ms kernel then teach the same
// lesson ("this upcast halves the time"), which is what lets a model trained on some workloads
// rank the candidates of others (transfer), and a ranking within one kernel is all a search needs.
//
// The model is gradient-boosted trees from XGBoost's C API (libxgboost), trained single-threaded
// with a fixed seed so that a search that uses it is reproducible. A ridge regression on the
// standardized features sits beside it only as the baseline it is compared with.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tunebed::search {

// Measured candidates of several kernels: features, seconds, and which kernel each row is from.
class TrainingSet {
 public:
  // Adds one kernel's measured candidates (the learnable times only), under the name GROUP (a
  // kernel hash). WEIGHT scales their say. WINNER: the opts that won on it, if known, which the
  // model strategy tries on kernels like it.
  void add_kernel(const std::string& group, const std::vector<std::vector<float>>& features,
                  const std::vector<double>& seconds, float weight = 1, std::string winner = {});
  // The rows of every kernel but GROUP: a model that has not seen it (leave-one-out).
  TrainingSet without(const std::string& group) const;
  void append(const TrainingSet& other);
  // Each row's target minus BASE's entry for it: what a model fitted next learns is what another
  // model (whose predictions BASE holds) got wrong, as boosting does.
  void subtract(const std::vector<float>& base);

  // Whether a time can be learned from: finite (a failed candidate teaches nothing about speed)
  // and positive (a time under the timer's resolution has no log).
  static bool learnable(double seconds) { return std::isfinite(seconds) && seconds > 0; }

  size_t rows() const { return target_.size(); }
  size_t kernels() const { return groups_.size(); }
  // Each kernel's winner, where known, in the order they were added.
  std::vector<std::string> winners() const;
  const std::vector<float>& features() const { return x_; }  // row-major, rows() x width()
  const std::vector<float>& target() const { return target_; }
  const std::vector<float>& weight() const { return weight_; }
  size_t width() const;

 private:
  std::vector<float> x_, target_, weight_;
  std::vector<int> group_of_;  // per row, an index into groups_
  std::vector<std::string> groups_;
  std::vector<std::string> winners_;  // per group, "" where unknown
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;  // "xgboost", "ridge"
  // Trains from scratch on DATA (at least one row).
  virtual void fit(const TrainingSet& data) = 0;
  // A score per row of X (row-major, each kernel_feature_names().size() wide): lower is faster,
  // comparable between candidates of one kernel.
  virtual std::vector<float> predict(const std::vector<float>& x) const = 0;
};

struct XGBoostParams {
  int rounds = 60;
  int max_depth = 6;
  double eta = 0.2;
  uint64_t seed = 0;
};
std::unique_ptr<CostModel> make_xgboost(XGBoostParams params = {});
// Ridge regression with penalty LAMBDA on standardized features: the baseline.
std::unique_ptr<CostModel> make_ridge(double lambda = 1.0);
// "xgboost" or "ridge"; throws std::invalid_argument for another name.
std::unique_ptr<CostModel> make_cost_model(const std::string& name, uint64_t seed);

}  // namespace tunebed::search
