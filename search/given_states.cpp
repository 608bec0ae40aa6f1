// The given states, measured once each in one batch: how `tunebed replay --fill` measures the
// candidates a replay proposed that its data lacked (replay.hpp), through tune() like any run.
#include <sstream>

#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

class GivenStates : public Strategy {
 public:
  explicit GivenStates(std::vector<Path> states) : states_(std::move(states)) {}
  std::string name() const override { return "given"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"states\":" << states_.size() << "}";
    return s.str();
  }
  void search(SearchContext& ctx) override { ctx.evaluate(states_); }

 private:
  std::vector<Path> states_;
};

}  // namespace

std::unique_ptr<Strategy> make_given_states(std::vector<Path> states) {
  return std::make_unique<GivenStates>(std::move(states));
}

}  // namespace tunebed::search
