// Shared fixtures for the tuning-database tests: a fresh temporary directory per test, and a
// small vocabulary of devices, kernels, runs and candidates.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "results/candidate_writer.hpp"
#include "results/tuning_db.hpp"
#include "tests/temp_dir.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::results::testing {

class DbTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  const tunebed::testing::TempDir tmp_{"tunebed-results"};
  const std::filesystem::path dir_ = tmp_.path();
};

inline Device cpu(const std::string& name = "cpu0") {
  return {
      .name = name, .arch = "x86_64", .driver = "none", .compiler = "clang", .compiler_version = "16.0.6"};
}

// A kernel whose AST text is derived from its name, so distinct names are distinct kernels.
inline Kernel kernel(const std::string& name) {
  return {.hash = "h-" + name,
          .ast = "SINK(" + name + ")",
          .shape = "64x64",
          .flops = 2 * 64 * 64 * 64,
          .bytes = 3 * 64 * 64 * 4,
          .source = "workload:" + name};
}

inline RunSpec spec(const std::string& asv = "as1") {
  return {.strategy = "beam",
          .params = R"({"width":4})",
          .seed = 7,
          .budget_candidates = 100,
          .action_space_version = asv,
          .tunebed_version = std::string(build::kVersion),
          .git_rev = "abc123",
          .host = "testhost"};
}

inline Candidate ok(int64_t kernel_id, int64_t device_id, const std::string& opts, double median_us) {
  return {.kernel_id = kernel_id,
          .device_id = device_id,
          .opts = opts,
          .source_hash = "src-" + opts,
          .compile_ms = 12.5,
          .samples_us = {median_us * 1.1, median_us, median_us * 0.9},
          .median_us = median_us,
          .status = CandidateStatus::ok};
}

inline Candidate failed(int64_t kernel_id, int64_t device_id, const std::string& opts, CandidateStatus status,
                        std::optional<double> median_us = std::nullopt) {
  return {.kernel_id = kernel_id,
          .device_id = device_id,
          .opts = opts,
          .median_us = median_us,
          .status = status,
          .error = "failed: " + std::string(to_string(status)),
          .max_error = status == CandidateStatus::wrong ? std::optional(0.5) : std::nullopt};
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline int64_t count(TuningDb& db, const std::string& sql) { return results::raw_connection(db).query_int(sql); }

}  // namespace tunebed::results::testing
