#include "core/symbolic/eval.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <unordered_map>

namespace tunebed {

namespace {

const std::string& var_name(const UOp& v) { return v.arg().as_tuple().at(0).as_string(); }

}  // namespace

Evaluator::Evaluator(const UOp& root) : order_(root.toposort()) {
  std::unordered_map<const UOpNode*, int> index;
  for (size_t i = 0; i < order_.size(); i++) index.emplace(order_[i].get(), static_cast<int>(i));
  for (const UOp& u : order_) {
    std::vector<int> s;
    for (const UOp& x : u.src()) s.push_back(index.at(x.get()));
    src_.push_back(std::move(s));
    if (u.op() == Ops::DEFINE_VAR) vars_.push_back(u);
  }
  std::sort(vars_.begin(), vars_.end(), [](const UOp& a, const UOp& b) {
    return var_name(a) != var_name(b) ? var_name(a) < var_name(b) : a.hash() < b.hash();
  });
  for (const UOp& u : order_) {
    auto it = std::find(vars_.begin(), vars_.end(), u);
    var_index_.push_back(it == vars_.end() ? -1 : static_cast<int>(it - vars_.begin()));
  }
  values_.resize(order_.size());
}

std::vector<std::string> Evaluator::var_names() const {
  std::vector<std::string> names;
  for (const UOp& v : vars_) names.push_back(var_name(v));
  return names;
}

ConstValue Evaluator::eval(const std::vector<int64_t>& values) const {
  if (values.size() != vars_.size())
    throw std::invalid_argument("eval: " + std::to_string(vars_.size()) + " variables, " +
                                std::to_string(values.size()) + " values");
  std::vector<ConstValue> operands;
  for (size_t i = 0; i < order_.size(); i++) {
    const UOp& u = order_[i];
    if (var_index_[i] >= 0) {
      int64_t v = values[static_cast<size_t>(var_index_[i])];
      if (v < u.vmin() || v > u.vmax())
        throw std::invalid_argument("eval: " + var_name(u) + " = " + std::to_string(v) + " is outside its bounds");
      values_[i] = ConstValue::integer(u.dtype(), v);
    } else if (u.is_const()) {
      values_[i] = ConstValue::of(u);
    } else {
      operands.clear();
      for (int s : src_[i]) operands.push_back(values_[static_cast<size_t>(s)]);
      values_[i] = exec_alu(u.op(), u.dtype(), operands);
    }
  }
  return values_.back();
}

std::string Mismatch::to_string() const {
  std::string s;
  for (const auto& [name, v] : assignment) s += name + "=" + std::to_string(v) + " ";
  return s + "gives " + a.to_string() + " vs " + b.to_string();
}

std::optional<Mismatch> find_mismatch(const UOp& a, const UOp& b, uint64_t exhaustive_limit, int samples,
                                      uint64_t seed) {
  Evaluator ea(a), eb(b);
  std::vector<std::string> names = ea.var_names(), bnames = eb.var_names();
  // b's values, picked out of a's by name
  std::vector<size_t> pick;
  for (const std::string& n : bnames) {
    auto it = std::find(names.begin(), names.end(), n);
    if (it == names.end()) throw std::invalid_argument("find_mismatch: variable " + n + " is not in the first expression");
    pick.push_back(static_cast<size_t>(it - names.begin()));
  }
  std::vector<int64_t> va(names.size()), vb(bnames.size());
  auto differs = [&]() -> std::optional<Mismatch> {
    for (size_t i = 0; i < pick.size(); i++) vb[i] = va[pick[i]];
    ConstValue ra = ea.eval(va), rb = eb.eval(vb);
    if (ra == rb) return std::nullopt;
    Mismatch m{{}, ra, rb};
    for (size_t i = 0; i < names.size(); i++) m.assignment.emplace_back(names[i], va[i]);
    return m;
  };
  const std::vector<UOp>& vars = ea.vars();
  unsigned __int128 points = 1;
  for (const UOp& v : vars) {
    points *= static_cast<unsigned __int128>(static_cast<__int128>(v.vmax()) - v.vmin() + 1);
    if (points > exhaustive_limit) break;
  }
  if (points <= exhaustive_limit) {
    for (size_t i = 0; i < vars.size(); i++) va[i] = vars[i].vmin();
    for (;;) {
      if (auto m = differs()) return m;
      size_t i = 0;  // next assignment, odometer style
      for (; i < vars.size() && va[i] == vars[i].vmax(); i++) va[i] = vars[i].vmin();
      if (i == vars.size()) return std::nullopt;
      va[i]++;
    }
  }
  std::mt19937_64 rng(seed);
  for (int s = 0; s < samples; s++) {
    for (size_t i = 0; i < vars.size(); i++) {
      int64_t lo = vars[i].vmin(), hi = vars[i].vmax();
      int64_t special[] = {lo, hi, 0, 1, -1};
      int64_t choice = static_cast<int64_t>(rng() % 8);
      if (choice < 5 && special[choice] >= lo && special[choice] <= hi) va[i] = special[choice];
      else {
        uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0: all of int64
        va[i] = static_cast<int64_t>(static_cast<uint64_t>(lo) + (span ? rng() % span : rng()));
      }
    }
    if (auto m = differs()) return m;
  }
  return std::nullopt;
}

}  // namespace tunebed
