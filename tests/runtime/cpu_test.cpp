// The CPU device: kernels in the ABI of device.hpp compiled by clang, run on 1..N cores, compile
// errors with clang's message and the source, the on-disk cache, the fingerprint.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <thread>
#include <vector>

#include "core/runtime/cpu_device.hpp"
#include "core/runtime/thread_pool.hpp"
#include "tests/runtime/runtime_helpers.hpp"
#include "tests/temp_dir.hpp"

namespace tunebed {
namespace {

using testing::download;
using testing::upload;

// out = a + b over vars[0] elements, the range cut into num_cores contiguous slices.
constexpr const char* kVectorAdd = R"(
#include <stdint.h>
void vadd(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  float* out = (float*)bufs[0];
  const float* a = (const float*)bufs[1];
  const float* b = (const float*)bufs[2];
  int32_t n = vars[0], chunk = (n + num_cores - 1) / num_cores;
  int32_t start = core_id * chunk, end = start + chunk < n ? start + chunk : n;
  for (int32_t i = start; i < end; i++) out[i] = a[i] + b[i];
}
)";

// A source no earlier run can have cached: the cache test must see a miss first.
std::string unique_source(const std::string& body) {
  return "/* " + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + " */\n" + body;
}

class CpuDeviceTest : public ::testing::Test {
 protected:
  testing::ScopedCacheDir cache;
  std::shared_ptr<Device> cpu = open_device("cpu");
};

TEST_F(CpuDeviceTest, VectorAddIsRightOnOneAndSeveralCores) {
  auto program = cpu->compile(kVectorAdd, "vadd");
  const int n = 1001;  // odd, so slices are uneven
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = static_cast<float>(3 * i + 1);
  auto ba = upload(*cpu, a), bb = upload(*cpu, b);
  for (int64_t cores : {1, 2, 3, 7, 64}) {
    auto out = upload(*cpu, std::vector<float>(n, -1.0f));
    program->run({out.get(), ba.get(), bb.get()}, {n}, {{cores, 1, 1}, {1, 1, 1}});
    const std::vector<float> got = download(*out);
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(got[i], a[i] + b[i]) << "element " << i << " with " << cores << " cores";
  }
}

TEST_F(CpuDeviceTest, EveryCoreIdRunsExactlyOnceWithTheLaunchsNumCores) {
  auto program = cpu->compile(R"(
#include <stdint.h>
void ids(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  int32_t* hits = (int32_t*)bufs[0];
  int32_t* seen = (int32_t*)bufs[1];
  hits[core_id] += 1;
  seen[core_id] = num_cores * vars[0];
}
)",
                              "ids");
  const int cores = 13;
  auto hits = cpu->allocate(dtypes::int32, cores), seen = cpu->allocate(dtypes::int32, cores);
  hits->copyin(HostBuffer(dtypes::int32, cores));
  program->run({hits.get(), seen.get()}, {10}, {{cores, 1, 1}, {1, 1, 1}});
  const HostBuffer h = hits->to_host(), s = seen->to_host();
  for (int i = 0; i < cores; ++i) {
    EXPECT_EQ(h.get_int(i), 1) << "core " << i;
    EXPECT_EQ(s.get_int(i), cores * 10) << "core " << i;
  }
}

// A run of N launches is N whole launches back to back, each on every core, timed as one.
TEST_F(CpuDeviceTest, ARunOfNLaunchesLaunchesNTimes) {
  auto program = cpu->compile(R"(
#include <stdint.h>
void count(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  ((int32_t*)bufs[0])[core_id] += 1;
}
)",
                              "count");
  for (const int cores : {1, 3}) {
    auto hits = cpu->allocate(dtypes::int32, cores);
    hits->copyin(HostBuffer(dtypes::int32, cores));
    EXPECT_GT(program->run({hits.get()}, {}, {{cores, 1, 1}, {1, 1, 1}}, 37), 0.0);
    const HostBuffer h = hits->to_host();
    for (int i = 0; i < cores; ++i) EXPECT_EQ(h.get_int(i), 37) << "core " << i << " of " << cores;
    EXPECT_THROW(program->run({hits.get()}, {}, {{cores, 1, 1}, {1, 1, 1}}, 0), DeviceError);
  }
}

TEST_F(CpuDeviceTest, CompileErrorCarriesClangsMessageAndTheSource) {
  const std::string source = "#include <stdint.h>\nvoid broken(void* const* bufs) {\n  int x = ;\n}\n";
  try {
    cpu->compile(source, "broken");
    FAIL() << "bad C compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("<stdin>:3:11: error: expected expression"), std::string::npos) << e.log();
    EXPECT_EQ(e.source(), source);
    EXPECT_EQ(std::string(e.what()).rfind("clang failed to compile 'broken':", 0), 0u) << e.what();
  }
}

TEST_F(CpuDeviceTest, AMissingEntryIsACompileErrorNamingIt) {
  try {
    cpu->compile(kVectorAdd, "vsub");
    FAIL() << "a missing entry was found";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("defines no function 'vsub'"), std::string::npos) << e.log();
  }
}

TEST_F(CpuDeviceTest, SecondCompileOfTheSameSourceIsACacheHitWithoutClang) {
  const std::string source = unique_source(kVectorAdd);
  const int64_t before = clang_invocations();
  auto first = cpu->compile(source, "vadd");
  EXPECT_EQ(clang_invocations(), before + 1);
  auto second = cpu->compile(source, "vadd");
  EXPECT_EQ(clang_invocations(), before + 1) << "the second compile ran clang";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(cache.path() / "cpu"), {}), 1)
      << "one object, and no temporaries left behind";
  // The cached object runs.
  auto a = upload(*cpu, {1, 2}), b = upload(*cpu, {10, 20}), out = upload(*cpu, {0, 0});
  second->run({out.get(), a.get(), b.get()}, {2}, {});
  EXPECT_EQ(download(*out), (std::vector<float>{11, 22}));
  cpu->compile(source + " ", "vadd");
  EXPECT_EQ(clang_invocations(), before + 2) << "a different source is a different key";
}

// Kernels are compiled to an object and linked by ld directly (no C runtime start files): one
// that calls into libm still finds it.
TEST_F(CpuDeviceTest, AKernelCallingLibmRuns) {
  const std::string source = unique_source(R"(
#include <math.h>
#include <stdint.h>
void vmath(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  volatile float* out = (float*)bufs[0];
  const float* a = (const float*)bufs[1];
  for (int32_t i = 0; i < vars[0]; i++) out[i] = sinf(a[i]) + log2f(a[i]) + powf(a[i], 1.5f);
}
)");
  auto program = cpu->compile(source, "vmath");
  auto a = upload(*cpu, {0.5f, 3.0f}), out = upload(*cpu, {0, 0});
  program->run({out.get(), a.get()}, {2}, {});
  const std::vector<float> got = download(*out);
  for (size_t i = 0; i < 2; i++) {
    const float x = i == 0 ? 0.5f : 3.0f;
    EXPECT_FLOAT_EQ(got[i], std::sin(x) + std::log2(x) + std::pow(x, 1.5f)) << x;
  }
}

TEST_F(CpuDeviceTest, ConcurrentCompilesOfOneSourceAllGetAWorkingObject) {
  const std::string source = unique_source(kVectorAdd);
  std::vector<std::unique_ptr<Program>> programs(4);
  std::vector<std::string> errors(programs.size());
  std::vector<std::thread> threads;
  threads.reserve(programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        programs[i] = cpu->compile(source, "vadd");
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) ASSERT_EQ(e, "");
  auto a = upload(*cpu, {1}), b = upload(*cpu, {2});
  for (auto& p : programs) {
    auto out = upload(*cpu, {0});
    p->run({out.get(), a.get(), b.get()}, {1}, {});
    EXPECT_EQ(download(*out)[0], 3.0f);
  }
}

TEST_F(CpuDeviceTest, TimingIncludesEveryRun) {
  auto program = cpu->compile(kVectorAdd, "vadd");
  auto a = upload(*cpu, std::vector<float>(1 << 16, 1)), out = upload(*cpu, std::vector<float>(1 << 16));
  const Timing t = program->time({out.get(), a.get(), a.get()}, {1 << 16}, {{2, 1, 1}, {1, 1, 1}}, {1, 7});
  EXPECT_EQ(t.samples.size(), 7u);
  for (double s : t.samples) EXPECT_GT(s, 0.0);
  EXPECT_EQ(download(*out)[12345], 2.0f);
}

// Regression: a kernel shorter than the clock's step was timed one launch at a time, so its
// samples were the clock's steps (10-20 ns) and overhead. Its samples now each span at least
// kMinSampleSpan of launches: whatever the machine's speed, the kernel ran that many times.
TEST_F(CpuDeviceTest, AShortKernelsSamplesAreManyLaunchesEach) {
  auto program = cpu->compile(R"(
#include <stdint.h>
void tick(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  ((int64_t*)bufs[0])[0] += 1;
}
)",
                              "tick");
  auto count = cpu->allocate(dtypes::int64, 1);
  count->copyin(HostBuffer(dtypes::int64, 1));
  const Timing t = program->time({count.get()}, {}, {{1, 1, 1}, {1, 1, 1}}, {2, 5});
  ASSERT_EQ(t.samples.size(), 5u);
  // A warm-up of a millisecond (far more than two launches of a kernel of nanoseconds), then 5
  // samples of launches_per_sample launches each (the last warm-up call's clock pair alone is
  // well under kMinSampleSpan / 2): at least 2 each.
  const int64_t launched = count->to_host().get_int(0);
  EXPECT_GE(launched, 2 + 5 * 2) << launched;
}

TEST_F(CpuDeviceTest, FingerprintNamesClangAndItsVersion) {
  const Fingerprint& f = cpu->fingerprint();
  EXPECT_EQ(f.name, "cpu");
  EXPECT_EQ(f.compiler, "clang");
  EXPECT_TRUE(std::regex_match(f.compiler_version, std::regex(R"(\d+\.\d+(\.\d+)?)"))) << f.compiler_version;
  EXPECT_FALSE(f.arch.empty());
  EXPECT_FALSE(f.driver.empty());
  const Capabilities& caps = cpu->capabilities();
  EXPECT_EQ(caps.compute_units, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_FALSE(caps.has_local());
  EXPECT_FALSE(caps.has_shared());
}

// Why a ClangCompiler made with TUNEBED_CLANG=CLANG is unavailable ("" if it is available).
std::string unavailable_with(const std::string& clang) {
  const testing::ScopedEnv scoped("TUNEBED_CLANG", clang);
  try {
    ClangCompiler compiler;
  } catch (const DeviceError& e) {
    return e.what();
  }
  return "";
}

// A fake clang in DIR that answers the probes (its linker: LINKER) and logs each call to DIR/calls.
std::filesystem::path fake_clang(const std::filesystem::path& dir, const std::string& linker) {
  const std::filesystem::path fake = dir / "clang";
  std::ofstream(fake) << "#!/bin/sh\n"
                         "echo \"$1\" >> '" << (dir / "calls").string() << "'\n"
                         "case \"$1\" in\n"
                         "  --version) echo 'clang version 14.0.6' ;;\n"
                         "  -print-prog-name=ld) echo '" << linker << "' ;;\n"
                         "esac\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  return fake;
}

TEST(CpuDeviceUnavailable, AMissingClangSaysSo) {
  const std::string why = unavailable_with("clang-that-does-not-exist");
  EXPECT_NE(why.find("CPU device is not available: cannot run clang-that-does-not-exist"), std::string::npos)
      << why;
}

// A clang whose linker cannot be run could never build a kernel: the device says so up front.
TEST(CpuDeviceUnavailable, AClangWhoseLinkerCannotRunSaysSo) {
  const tunebed::testing::TempDir dir("tunebed-fake-clang");
  const std::filesystem::path fake = fake_clang(dir.path(), (dir.path() / "no-such-ld").string());
  const std::string why = unavailable_with(fake.string());
  EXPECT_NE(why.find("CPU device is not available: " + fake.string() + "'s linker"), std::string::npos) << why;
}

// The tuner opens the CPU device for its fingerprint at every kernel: clang is asked its version
// and its linker once per process, not every time.
TEST(CpuDeviceUnavailable, ClangIsProbedOncePerProcess) {
  const tunebed::testing::TempDir dir("tunebed-fake-clang");
  const std::filesystem::path fake = fake_clang(dir.path(), "ld");
  ASSERT_EQ(unavailable_with(fake.string()), "");
  ASSERT_EQ(unavailable_with(fake.string()), "");
  // The two questions are asked at once, so either may be logged first.
  std::ifstream calls(dir.path() / "calls");
  std::vector<std::string> logged;
  for (std::string line; std::getline(calls, line);) logged.push_back(line);
  std::ranges::sort(logged);
  EXPECT_EQ(logged, (std::vector<std::string>{"--version", "-print-prog-name=ld"}));
}

TEST(ThreadPool, ParallelForCallsEachIndexOnceFromManyDispatches) {
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    const int n = 1 + round % 17;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int i) { hits[static_cast<size_t>(i)]++; });
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "round " << round << " index " << i;
  }
}

}  // namespace
}  // namespace tunebed
