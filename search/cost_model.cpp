#include "search/cost_model.hpp"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tunebed::search {

// --- the training set ---

void TrainingSet::add_kernel(const std::string& group, const std::vector<std::vector<float>>& features,
                             const std::vector<double>& seconds, float weight, std::string winner) {
  if (features.size() != seconds.size())
    throw std::invalid_argument("cost model: " + std::to_string(features.size()) + " feature rows for " +
                                std::to_string(seconds.size()) + " times");
  double mean = 0;
  size_t n = 0;
  for (double s : seconds)
    if (learnable(s)) mean += std::log(s), n++;
  if (n == 0) return;
  mean /= static_cast<double>(n);
  const int g = static_cast<int>(groups_.size());
  groups_.push_back(group);
  winners_.push_back(std::move(winner));
  for (size_t i = 0; i < seconds.size(); i++) {
    if (!learnable(seconds[i])) continue;
    if (!x_.empty() && features[i].size() != width())
      throw std::invalid_argument("cost model: rows of " + std::to_string(features[i].size()) + " and " +
                                  std::to_string(width()) + " features");
    x_.insert(x_.end(), features[i].begin(), features[i].end());
    target_.push_back(static_cast<float>(std::log(seconds[i]) - mean));
    weight_.push_back(weight);
    group_of_.push_back(g);
  }
}

size_t TrainingSet::width() const { return target_.empty() ? 0 : x_.size() / target_.size(); }

TrainingSet TrainingSet::without(const std::string& group) const {
  TrainingSet out;
  const size_t w = width();
  std::vector<int> renumber(groups_.size(), -1);
  for (size_t g = 0; g < groups_.size(); g++)
    if (groups_[g] != group) {
      renumber[g] = static_cast<int>(out.groups_.size());
      out.groups_.push_back(groups_[g]);
      out.winners_.push_back(winners_[g]);
    }
  for (size_t r = 0; r < rows(); r++) {
    if (renumber[group_of_[r]] < 0) continue;
    out.x_.insert(out.x_.end(), x_.begin() + static_cast<ptrdiff_t>(r * w), x_.begin() + static_cast<ptrdiff_t>((r + 1) * w));
    out.target_.push_back(target_[r]);
    out.weight_.push_back(weight_[r]);
    out.group_of_.push_back(renumber[group_of_[r]]);
  }
  return out;
}

void TrainingSet::append(const TrainingSet& other) {
  if (other.rows() == 0) return;
  if (rows() > 0 && other.width() != width())
    throw std::invalid_argument("cost model: appending rows of " + std::to_string(other.width()) + " features to " +
                                std::to_string(width()));
  const int base = static_cast<int>(groups_.size());
  groups_.insert(groups_.end(), other.groups_.begin(), other.groups_.end());
  winners_.insert(winners_.end(), other.winners_.begin(), other.winners_.end());
  x_.insert(x_.end(), other.x_.begin(), other.x_.end());
  target_.insert(target_.end(), other.target_.begin(), other.target_.end());
  weight_.insert(weight_.end(), other.weight_.begin(), other.weight_.end());
  for (int g : other.group_of_) group_of_.push_back(base + g);
}

std::vector<std::string> TrainingSet::winners() const {
  std::vector<std::string> out;
  for (const std::string& w : winners_)
    if (!w.empty()) out.push_back(w);
  return out;
}

void TrainingSet::subtract(const std::vector<float>& base) {
  if (base.size() != rows())
    throw std::invalid_argument("cost model: " + std::to_string(base.size()) + " base values for " +
                                std::to_string(rows()) + " rows");
  for (size_t r = 0; r < rows(); r++) target_[r] -= base[r];
}

namespace {

// --- XGBoost ---

void check(int rc, const char* what) {
  if (rc != 0) throw std::runtime_error(std::string("xgboost: ") + what + ": " + XGBGetLastError());
}

struct Matrix {
  DMatrixHandle h = nullptr;
  Matrix(const std::vector<float>& x, size_t width) {
    check(XGDMatrixCreateFromMat(x.data(), x.size() / width, width, NAN, &h), "XGDMatrixCreateFromMat");
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  ~Matrix() { XGDMatrixFree(h); }
};

class XGBoost : public CostModel {
 public:
  explicit XGBoost(XGBoostParams p) : p_(p) {}
  XGBoost(const XGBoost&) = delete;
  XGBoost& operator=(const XGBoost&) = delete;
  ~XGBoost() override { XGBoosterFree(booster_); }
  std::string name() const override { return "xgboost"; }

  void fit(const TrainingSet& data) override {
    if (data.rows() == 0) throw std::invalid_argument("cost model: nothing to train on");
    width_ = data.width();
    Matrix train(data.features(), width_);
    check(XGDMatrixSetFloatInfo(train.h, "label", data.target().data(), data.rows()), "label");
    check(XGDMatrixSetFloatInfo(train.h, "weight", data.weight().data(), data.rows()), "weight");
    XGBoosterFree(booster_);
    booster_ = nullptr;
    check(XGBoosterCreate(&train.h, 1, &booster_), "XGBoosterCreate");
    // One thread and a fixed seed: the same data gives the same trees, so a search is reproducible.
    const std::pair<const char*, std::string> params[] = {
        {"objective", "reg:squarederror"}, {"max_depth", std::to_string(p_.max_depth)},
        {"eta", std::to_string(p_.eta)},   {"nthread", "1"},
        {"seed", std::to_string(p_.seed & 0x7fffffff)}, {"verbosity", "0"}};
    for (const auto& [k, v] : params) check(XGBoosterSetParam(booster_, k, v.c_str()), k);
    for (int i = 0; i < p_.rounds; i++) check(XGBoosterUpdateOneIter(booster_, i, train.h), "XGBoosterUpdateOneIter");
  }

  std::vector<float> predict(const std::vector<float>& x) const override {
    if (!booster_) throw std::logic_error("cost model: predict before fit");
    if (x.empty()) return {};
    Matrix m(x, width_);
    bst_ulong n = 0;
    const float* out = nullptr;
    check(XGBoosterPredict(booster_, m.h, 0, 0, 0, &n, &out), "XGBoosterPredict");
    return {out, out + n};
  }

 private:
  XGBoostParams p_;
  BoosterHandle booster_ = nullptr;
  size_t width_ = 0;
};

// --- the ridge baseline ---

class Ridge : public CostModel {
 public:
  explicit Ridge(double lambda) : lambda_(lambda) {}
  std::string name() const override { return "ridge"; }

  void fit(const TrainingSet& data) override {
    if (data.rows() == 0) throw std::invalid_argument("cost model: nothing to train on");
    const size_t n = data.rows(), w = data.width();
    const std::vector<float>& x = data.features();
    // Standardize each feature, then solve (Z'WZ + lambda I) beta = Z'W y; the intercept is the
    // weighted mean target, unpenalized.
    mean_.assign(w, 0), scale_.assign(w, 0);
    double wsum = 0, ymean = 0;
    for (size_t r = 0; r < n; r++) {
      wsum += data.weight()[r], ymean += data.weight()[r] * data.target()[r];
      for (size_t j = 0; j < w; j++) mean_[j] += data.weight()[r] * x[r * w + j];
    }
    ymean /= wsum;
    for (double& m : mean_) m /= wsum;
    for (size_t r = 0; r < n; r++)
      for (size_t j = 0; j < w; j++) scale_[j] += data.weight()[r] * std::pow(x[r * w + j] - mean_[j], 2);
    for (double& s : scale_) s = s > 0 ? std::sqrt(s / wsum) : 1;
    std::vector<double> a(w * w, 0), b(w, 0);
    for (size_t r = 0; r < n; r++) {
      const double wr = data.weight()[r], y = data.target()[r] - ymean;
      for (size_t i = 0; i < w; i++) {
        const double zi = (x[r * w + i] - mean_[i]) / scale_[i];
        b[i] += wr * zi * y;
        for (size_t j = 0; j < w; j++) a[i * w + j] += wr * zi * (x[r * w + j] - mean_[j]) / scale_[j];
      }
    }
    for (size_t i = 0; i < w; i++) a[i * w + i] += lambda_;
    beta_ = solve(a, b, w);
    intercept_ = ymean;
  }

  std::vector<float> predict(const std::vector<float>& x) const override {
    if (beta_.empty()) throw std::logic_error("cost model: predict before fit");
    const size_t w = beta_.size();
    std::vector<float> out;
    for (size_t r = 0; r * w < x.size(); r++) {
      double y = intercept_;
      for (size_t j = 0; j < w; j++) y += beta_[j] * (x[r * w + j] - mean_[j]) / scale_[j];
      out.push_back(static_cast<float>(y));
    }
    return out;
  }

 private:
  // Gaussian elimination with partial pivoting; A is symmetric positive definite (lambda > 0).
  static std::vector<double> solve(std::vector<double> a, std::vector<double> b, size_t w) {
    for (size_t c = 0; c < w; c++) {
      size_t p = c;
      for (size_t r = c + 1; r < w; r++)
        if (std::abs(a[r * w + c]) > std::abs(a[p * w + c])) p = r;
      for (size_t j = 0; j < w; j++) std::swap(a[c * w + j], a[p * w + j]);
      std::swap(b[c], b[p]);
      for (size_t r = c + 1; r < w; r++) {
        const double f = a[r * w + c] / a[c * w + c];
        for (size_t j = c; j < w; j++) a[r * w + j] -= f * a[c * w + j];
        b[r] -= f * b[c];
      }
    }
    std::vector<double> beta(w);
    for (size_t c = w; c-- > 0;) {
      double s = b[c];
      for (size_t j = c + 1; j < w; j++) s -= a[c * w + j] * beta[j];
      beta[c] = s / a[c * w + c];
    }
    return beta;
  }

  double lambda_;
  std::vector<double> mean_, scale_, beta_;
  double intercept_ = 0;
};

}  // namespace

std::unique_ptr<CostModel> make_xgboost(XGBoostParams params) { return std::make_unique<XGBoost>(params); }

std::unique_ptr<CostModel> make_ridge(double lambda) {
  if (!(lambda > 0)) throw std::invalid_argument("ridge penalty must be positive");
  return std::make_unique<Ridge>(lambda);
}

std::unique_ptr<CostModel> make_cost_model(const std::string& name, uint64_t seed) {
  if (name == "xgboost") return make_xgboost({.seed = seed});
  if (name == "ridge") return make_ridge();
  throw std::invalid_argument("unknown cost model '" + name + "' (expected xgboost or ridge)");
}

}  // namespace tunebed::search
