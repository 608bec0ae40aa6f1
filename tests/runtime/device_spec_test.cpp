// Device specs, the registry of open devices, and the checks shared by every backend (buffer
// sizes, launch dims, timing arguments), shown on the CPU device.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/runtime/device.hpp"
#include "tests/runtime/runtime_helpers.hpp"

namespace tunebed {
namespace {

TEST(DeviceSpec, ParsesBackendAndOptionalIndex) {
  EXPECT_EQ(parse_device_spec("cpu").kind, DeviceKind::Cpu);
  EXPECT_FALSE(parse_device_spec("cpu").index.has_value());
  EXPECT_EQ(parse_device_spec("opencl").kind, DeviceKind::OpenCL);
  EXPECT_FALSE(parse_device_spec("opencl").index.has_value());
  EXPECT_EQ(parse_device_spec("opencl:2").index, 2);
  EXPECT_EQ(parse_device_spec("cuda:0").kind, DeviceKind::Cuda);
  EXPECT_EQ(parse_device_spec("cuda:0").index, 0);
  EXPECT_EQ(parse_device_spec("CUDA:1").kind, DeviceKind::Cuda) << "backend names are case-insensitive";
}

void expect_spec_error(const std::string& spec, const std::string& message) {
  try {
    parse_device_spec(spec);
    ADD_FAILURE() << "'" << spec << "' was accepted";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(DeviceSpec, RejectsBadSpecsNamingWhatWasWrong) {
  expect_spec_error("tpu", "unknown device 'tpu': expected cpu, opencl[:N] or cuda[:N]");
  expect_spec_error("", "unknown device ''");
  expect_spec_error("cpu:0", "cpu takes no index");
  expect_spec_error("opencl:", "bad device index '' in 'opencl:'");
  expect_spec_error("opencl:x", "bad device index 'x'");
  expect_spec_error("cuda:-1", "bad device index '-1'");
  expect_spec_error("cuda:1x", "bad device index '1x'");
  EXPECT_THROW(open_device("gpu"), DeviceError);
}

TEST(DeviceRegistry, OpeningTheSameNameWhileAliveGivesTheSameDevice) {
  auto a = open_device("cpu");
  auto b = open_device("CPU");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->name(), "cpu");
}

TEST(Buffer, CopiesMustMatchTheBufferSizeExactly) {
  auto cpu = open_device("cpu");
  auto buf = cpu->allocate(dtypes::float32, 4);
  EXPECT_EQ(buf->nbytes(), 16u);
  std::vector<float> three(3);
  try {
    buf->copyin(std::as_bytes(std::span(three)));
    ADD_FAILURE() << "a short copyin was accepted";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "copyin of 12 bytes into a buffer of 4 float32 (16 bytes) on cpu");
  }
  EXPECT_THROW(buf->copyout(std::as_writable_bytes(std::span(three))), DeviceError);
  EXPECT_THROW(buf->copyin(HostBuffer(dtypes::int32, 4)), DeviceError) << "dtype mismatch";
}

TEST(Buffer, HostBufferRoundTripsThroughTheDevice) {
  auto cpu = open_device("cpu");
  HostBuffer host(dtypes::int16, 5);
  for (int i = 0; i < 5; ++i) host.set_int(i, i * 1000 - 2000);
  auto buf = cpu->allocate(dtypes::int16, 5);
  buf->copyin(host);
  EXPECT_EQ(buf->to_host(), host);
}

TEST(Buffer, OnlyScalarsOfNonNegativeCount) {
  auto cpu = open_device("cpu");
  EXPECT_THROW(cpu->allocate(dtypes::float32.vec(4), 1), DeviceError);
  EXPECT_THROW(cpu->allocate(dtypes::float32.ptr_to(4), 1), DeviceError);
  EXPECT_THROW(cpu->allocate(dtypes::void_, 1), DeviceError);
  EXPECT_THROW(cpu->allocate(dtypes::float32, -1), DeviceError);
  auto empty = cpu->allocate(dtypes::float32, 0);
  EXPECT_EQ(empty->nbytes(), 0u);
  empty->copyin(std::span<const std::byte>());
}

constexpr const char* kNop = R"(
#include <stdint.h>
void nop(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  (void)bufs; (void)vars; (void)core_id; (void)num_cores;
}
)";

TEST(Launch, DimsOutsideTheCapabilitiesAreRejectedBeforeLaunching) {
  testing::ScopedCacheDir cache;
  auto cpu = open_device("cpu");
  auto program = cpu->compile(kNop, "nop");
  auto expect_rejected = [&](LaunchDims dims, const std::string& message) {
    try {
      program->run({}, {}, dims);
      ADD_FAILURE() << "launch accepted";
    } catch (const DeviceError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_rejected({{1, 1, 1}, {2, 1, 1}}, "local (2, 1, 1) exceeds the device's limit (1, 1, 1)");
  expect_rejected({{1, 2, 1}, {1, 1, 1}}, "global (1, 2, 1) exceeds the device's limit (1024, 1, 1)");
  expect_rejected({{0, 1, 1}, {1, 1, 1}}, "launch dims must be >= 1");
  EXPECT_NO_THROW(program->run({}, {}, {{1, 1, 1}, {1, 1, 1}}));
}

TEST(Launch, NullBuffersAreRejected) {
  testing::ScopedCacheDir cache;
  auto cpu = open_device("cpu");
  auto program = cpu->compile(kNop, "nop");
  EXPECT_THROW(program->run({nullptr}, {}, {}), DeviceError);
}

TEST(Timing, ReturnsEverySampleAndTheirMedian) {
  testing::ScopedCacheDir cache;
  auto cpu = open_device("cpu");
  auto program = cpu->compile(kNop, "nop");
  const Timing t = program->time({}, {}, {}, {.warmup = 1, .runs = 5});
  ASSERT_EQ(t.samples.size(), 5u);
  std::vector<double> sorted = t.samples;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(t.median, sorted[2]);
  EXPECT_GE(sorted[0], 0.0);
  const Timing even = program->time({}, {}, {}, {.warmup = 0, .runs = 4});
  sorted = even.samples;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_EQ(even.samples.size(), 4u);
  EXPECT_DOUBLE_EQ(even.median, (sorted[1] + sorted[2]) / 2);
  EXPECT_THROW(program->time({}, {}, {}, {.warmup = 0, .runs = 0}), DeviceError);
  EXPECT_THROW(program->time({}, {}, {}, {.warmup = -1, .runs = 3}), DeviceError);
}

TEST(CompileErrorText, NumbersTheSourceLines) {
  const CompileError e("clang", "k", "<stdin>:2:1: error: boom", "int a;\nint b\n");
  EXPECT_EQ(std::string(e.what()), "clang failed to compile 'k':\n<stdin>:2:1: error: boom");
  EXPECT_EQ(e.numbered_source(), "   1 | int a;\n   2 | int b\n");
}

}  // namespace
}  // namespace tunebed
