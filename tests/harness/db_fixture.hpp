// What the end-to-end tests of `tunebed query`, `tunebed db` and `tunebed report` share: running
// the real `tunebed` program, a fresh temporary directory per test, and a fixture tuning database
// built through results/'s own API (the way a tuning run fills one).
//
// The fixture: two devices (cpu0, cpu1), three kernels, three runs (beam completed and random
// interrupted on cpu0, beam completed on cpu1) and candidates of every status. Run uuids and
// timestamps are fixed, so the tests (and the README's example output) are reproducible.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "results/candidate_writer.hpp"
#include "tests/harness/run_tunebed.hpp"
#include "results/tuning_db.hpp"
#include "tests/temp_dir.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::testing {

inline int count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// The fixture's kernels.
inline const std::string kMatmul = "3f2a9c0d4e5b6a71c8d9e0f1a2b3c4d5";
inline const std::string kReduce = "7b1e44a09f3c2d1e0a9b8c7d6e5f4a3b";
inline const std::string kElementwise = "c0ffee11d2e3f4a5b6c7d8e9fa0b1c2d";
inline const std::string kSoftmax = "e5e5a1b2c3d4e5f60718293a4b5c6d7e";  // only in the second fixture

inline const std::string kWinnerOpts = "UPCAST:0:8,LOCAL:1:8";

class DbFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = path("tuning.db");
    build(db_, false);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Builds the fixture at FILE. NEWER adds a fourth run (a faster matmul winner on cpu0) and a
  // kernel the first fixture lacks: the other side of `query diff`.
  static void build(const std::string& file, bool newer) {
    using namespace results;
    auto db = TuningDb::open(file, TuningDb::Mode::create);
    Device cpu0{.name = "cpu0",
                .arch = "x86_64",
                .driver = "none",
                .compiler = "clang",
                .compiler_version = "16.0.6"};
    Device cpu1{.name = "cpu1",
                .arch = "aarch64",
                .driver = "none",
                .compiler = "clang",
                .compiler_version = "16.0.6"};
    int64_t d0 = db.upsert_device(cpu0), d1 = db.upsert_device(cpu1);
    auto kernel = [&](const std::string& hash, const std::string& shape, const std::string& source,
                      int64_t flops) {
      return db.upsert_kernel({.hash = hash,
                               .ast = "SINK(" + source + ")",
                               .shape = shape,
                               .flops = flops,
                               .bytes = flops / 8,
                               .source = source});
    };
    int64_t matmul = kernel(kMatmul, "64x64x64 f32", "matmul", 2 * 64 * 64 * 64);
    int64_t reduce = kernel(kReduce, "4096 f32", "sum", 4096);
    int64_t elementwise = kernel(kElementwise, "256x256 f32", "relu", 256 * 256);

    struct Row {
      int64_t kernel, device;
      std::string opts;
      CandidateStatus status;
      std::optional<double> median_us;
    };
    int run_number = 0;
    // One run: its candidates 0.8 s apart from a fixed start, uuid and times fixed.
    auto run = [&](const std::string& strategy, RunStatus end, const std::vector<Row>& rows) {
      ++run_number;
      RunSpec spec{.strategy = strategy,
                   .params = R"({"width":4})",
                   .seed = 7 * run_number,
                   .budget_candidates = 100,
                   .action_space_version = "as1",
                   .tunebed_version = std::string(build::kVersion),
                   .git_rev = "abc1234",
                   .host = "testhost"};
      results::Run r = db.begin_run(spec);
      const std::string start = "2026-11-30T1" + std::to_string(run_number) + ":00:";
      {
        CandidateWriter writer(db, r.id);
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const Row& row = rows[i];
          char at[32];
          std::snprintf(at, sizeof at, "%02d.%03dZ", static_cast<int>((i + 1) * 800 / 1000),
                        static_cast<int>((i + 1) * 800 % 1000));
          Candidate c{.kernel_id = row.kernel,
                      .device_id = row.device,
                      .opts = row.opts,
                      .source_hash = "src-" + row.opts,
                      .compile_ms = 10.0 + static_cast<double>(i),
                      .median_us = row.median_us,
                      .status = row.status,
                      .created_at = start + at};
          if (row.median_us) c.samples_us = {*row.median_us * 1.02, *row.median_us, *row.median_us * 0.99};
          if (row.status == CandidateStatus::compile_error) {
            c.compile_ms.reset();
            c.error = "error: use of undeclared identifier \"acc0\"\nnote: in kernel r_64_64";
          } else if (row.status == CandidateStatus::crash) {
            c.error = "signal 11 (SIGSEGV)";
          } else if (row.status == CandidateStatus::timeout) {
            c.error = "timed out after 2000 ms";
          } else if (row.status == CandidateStatus::wrong) {
            c.error = "max abs error 0.5 > 1e-3";
            c.max_error = 0.5;
          }
          writer.add(c);
        }
        writer.close();
      }
      if (end == RunStatus::interrupted)
        db.mark_interrupted(r.id);
      else
        db.finish_run(r.id, end);
      char uuid[40];
      std::snprintf(uuid, sizeof uuid, "%d%031d", run_number, run_number);
      results::raw_connection(db).exec("UPDATE runs SET uuid = '" + std::string(uuid) + "', started_at = '" + start +
                   "00.000Z', ended_at = '" + start + "59.000Z' WHERE id = " + std::to_string(r.id));
    };
    using S = CandidateStatus;
    run("beam", RunStatus::completed,
        {{matmul, d0, "", S::ok, 420.0},
         {matmul, d0, "UPCAST:0:4", S::ok, 210.0},
         {matmul, d0, "UPCAST:0:4,LOCAL:1:8", S::ok, 96.5},
         {matmul, d0, "UPCAST:0:4,UNROLL:0:4", S::compile_error, std::nullopt},
         {matmul, d0, "LOCAL:0:32", S::crash, std::nullopt},
         {matmul, d0, kWinnerOpts, S::ok, 92.0},
         {matmul, d0, "UPCAST:0:8,LOCAL:1:16", S::ok, 94.1},
         {matmul, d0, "GROUP:0:16", S::wrong, 50.0},
         {matmul, d0, "UNROLL:1:8", S::timeout, std::nullopt},
         {reduce, d0, "", S::ok, 35.0},
         {reduce, d0, "GROUPTOP:0:16", S::ok, 12.5},
         {reduce, d0, "GROUPTOP:0:32", S::ok, 11.9},
         {reduce, d0, "UPCAST:0:4", S::compile_error, std::nullopt}});
    run("random", RunStatus::interrupted,
        {{matmul, d0, "", S::ok, 418.0},
         {matmul, d0, "LOCAL:1:16", S::ok, 150.0},
         {matmul, d0, "UPCAST:0:2", S::ok, 250.0}});
    run("beam", RunStatus::completed,
        {{matmul, d1, "", S::ok, 300.0},
         {matmul, d1, "UPCAST:0:4,LOCAL:1:8", S::ok, 80.0},
         {elementwise, d1, "", S::ok, 8.0},
         {elementwise, d1, "UPCAST:0:4", S::ok, 3.1}});
    if (newer) {
      int64_t softmax = kernel(kSoftmax, "32x1024 f32", "softmax", 5 * 32 * 1024);
      run("beam", RunStatus::completed,
          {{matmul, d0, "UPCAST:0:8,LOCAL:1:32", S::ok, 85.0}, {softmax, d0, "", S::ok, 40.0}});
    }
  }

  const tunebed::testing::TempDir tmp_{"tunebed-db-e2e"};
  const std::filesystem::path dir_ = tmp_.path();
  std::string db_;
};

}  // namespace tunebed::testing
