// check-corpus --log FILE: each kernel's variant results appended as JSON lines the moment it
// finishes, so that a long check (all of tinygrad's dataset with 20 random opt sequences takes
// hours on two cores) that stops — Ctrl-C, a machine's time limit, a kill — resumes where it was:
// kernels already in the log under the same seed and K are not checked again, their logged
// results are counted instead.
//
// One line per variant: {"hash":..., "seed":"S", "random_opts":K, "variant":i, "variants":n,
// "kind":..., "opts":..., "outcome":..., "message":...}. A kernel counts as logged when all n of
// its lines are there.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "harness/corpus_check.hpp"

namespace tunebed::cli {

// The kernels PATH logged under SEED and K, by kernel hash; {} when PATH does not exist. A last
// line cut short (the writer was killed mid-line) is ignored; any other line that is not a log
// line throws std::runtime_error naming PATH and the line number.
std::map<std::string, std::vector<VariantResult>> read_check_log(const std::string& path, uint64_t seed,
                                                                 int random_opts);

class CheckLog {
 public:
  // Appends to PATH (created when missing); throws std::runtime_error when it cannot be opened.
  CheckLog(const std::string& path, uint64_t seed, int random_opts);
  // One kernel's results, flushed at once.
  void write(const std::string& hash, const std::vector<VariantResult>& results);

 private:
  std::ofstream out_;
  std::string path_;
  uint64_t seed_;
  int random_opts_;
};

}  // namespace tunebed::cli
