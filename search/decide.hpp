// Statistical winners: which of a few verified candidates is faster, decided by a test on their
// samples rather than by comparing two medians.
//
// The candidates are timed round-robin (A B C A B C ..., so every one sees the same drift) for
// `min_rounds`. Then, while some candidate cannot yet be told apart from the leader (the lowest
// median), the leader and those candidates get `step` more rounds; candidates already separated
// are not timed again. So two candidates far apart cost min_rounds, two close ones up to
// max_rounds (or max_seconds). "Told apart" is a one-sided Mann-Whitney U test: it needs no
// assumption about the shape of the timing distribution, which on a shared machine has a long
// right tail (preemptions, a core woken late). Testing after every step is looking several times,
// and the leader is picked from several candidates, so each test runs at
// level = alpha / (looks x challengers) (Bonferroni): the chance that noise alone replaces the
// incumbent stays under alpha (tests/search/decide_test.cpp measures it).
//
// The incumbent is the candidate that holds the title before this decision: the stored winner
// when a kernel is tuned again, else the baseline (the default opts). A leader that is not faster
// than the incumbent beyond the noise (p >= alpha) does not replace it: the incumbent is kept. So
// re-running a tune does not flip the winner between near-equal candidates on noise alone.
//
// What the decision reports is its confidence: the p-value of the comparison that decided it (the
// winner against the runner-up; when the incumbent was kept, the leader against the incumbent),
// and the speedup of the faster of that pair over the other, median over median, with a 95%
// bootstrap interval (seeded: the same samples give the same interval).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace tunebed::search {

struct DecisionPolicy {
  int min_rounds = 10;       // interleaved rounds of every candidate before the first test
  int max_rounds = 40;       // at most this many for any candidate
  int step = 5;              // rounds added while a candidate is not told apart from the leader
  double alpha = 0.05;       // the chance noise alone may replace the incumbent, over all tests
  double max_seconds = 5;    // no rounds are added past this much timing (after min_rounds)
};

// One-sided Mann-Whitney U test: the probability of samples this far apart or further if A were
// not faster than B (A's values not stochastically smaller). Normal approximation with the tie
// correction and a continuity correction; 1 when either side is empty.
double p_faster(const std::vector<double>& a, const std::vector<double>& b);

struct Speedup {
  double ratio = 1;  // median(b) / median(a)
  double low = 1, high = 1;  // its 95% bootstrap interval
};
// How many times faster A is than B, with a percentile bootstrap interval over REPS resamples.
Speedup bootstrap_speedup(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed = 0,
                          int reps = 1000);

struct Decision {
  std::vector<std::vector<double>> samples;  // per candidate, in measurement order
  std::vector<double> medians;
  int winner = -1;
  int leader = -1;      // the lowest median (the earliest on a tie)
  int challenger = -1;  // what the winner was tested against; -1 for a single candidate
  bool kept_incumbent = false;  // the leader did not beat the incumbent beyond the noise
  double p_value = 1;           // of the deciding comparison (see above)
  double level = 0;             // what each test's p-value was compared with (alpha, corrected)
  Speedup speedup;              // of the faster of that pair over the other
  int rounds = 0;               // the most rounds any candidate was timed
  bool significant() const { return p_value < level; }
};

// Times N candidates as above and decides. time_once(i) launches candidate i once and returns its
// seconds; the clock, when given, says how long timing has taken (for max_seconds).
Decision decide(int n, std::optional<int> incumbent, const DecisionPolicy& policy,
                const std::function<double(int)>& time_once, const std::function<double()>& clock = {});

}  // namespace tunebed::search
