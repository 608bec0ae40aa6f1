// The OpenCL device on whatever platform the ICD loader offers (PoCL here and in CI): vector add,
// a __local-memory reduction with barriers, build errors with the build log, limits, timing,
// device choice. Skipped, with the reason, where no OpenCL platform is installed.
#include <gtest/gtest.h>

#include "core/runtime/opencl_device.hpp"
#include "tests/runtime/runtime_helpers.hpp"

namespace tunebed {
namespace {

using testing::download;
using testing::upload;

constexpr const char* kVectorAdd = R"(
__kernel void vadd(__global float* out, __global const float* a, __global const float* b, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) out[i] = a[i] + b[i];
}
)";

// Each group of LOCAL work-items sums LOCAL*4 inputs: 4 per item into __local memory, then a tree
// over the items with a barrier per level; item 0 writes the group's partial sum.
constexpr const char* kLocalSum = R"(
#define LOCAL 64
__kernel void local_sum(__global float* partial, __global const float* in, int n) {
  __local float acc[LOCAL];
  int lid = get_local_id(0), base = get_group_id(0) * LOCAL * 4;
  float s = 0.0f;
  for (int k = 0; k < 4; k++) {
    int i = base + k * LOCAL + lid;
    if (i < n) s += in[i];
  }
  acc[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = LOCAL / 2; stride > 0; stride /= 2) {
    if (lid < stride) acc[lid] += acc[lid + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = acc[0];
}
)";

class OpenCLTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::Opened opened = testing::try_open("opencl");
    if (!opened.device) GTEST_SKIP() << "no OpenCL device: " << opened.why_not;
    cl = opened.device;
  }
  std::shared_ptr<Device> cl;
};

TEST_F(OpenCLTest, VectorAddIsRight) {
  auto program = cl->compile(kVectorAdd, "vadd");
  const int n = 1000;  // not a multiple of the group size: the last group masks
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = static_cast<float>(i) * 0.5f, b[i] = static_cast<float>(n - i);
  auto ba = upload(*cl, a), bb = upload(*cl, b), out = upload(*cl, std::vector<float>(n, -1));
  program->run({out.get(), ba.get(), bb.get()}, {n}, {{(n + 63) / 64, 1, 1}, {64, 1, 1}});
  const std::vector<float> got = download(*out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << "element " << i;
}

TEST_F(OpenCLTest, LocalMemoryReductionWithBarriersIsRight) {
  ASSERT_GE(cl->capabilities().max_local_size, 64);
  ASSERT_GE(cl->capabilities().shared_memory_bytes, 64 * 4);
  auto program = cl->compile(kLocalSum, "local_sum");
  const int n = 3001, groups = (n + 255) / 256;
  std::vector<float> in(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 97);  // small integers: sums are exact
  auto bin = upload(*cl, in), partial = upload(*cl, std::vector<float>(groups, -1));
  program->run({partial.get(), bin.get()}, {n}, {{groups, 1, 1}, {64, 1, 1}});
  const std::vector<float> got = download(*partial);
  for (int g = 0; g < groups; ++g) {
    float want = 0;
    for (int i = g * 256; i < std::min(n, (g + 1) * 256); ++i) want += in[i];
    EXPECT_EQ(got[g], want) << "group " << g;
  }
}

TEST_F(OpenCLTest, BuildErrorCarriesTheBuildLogAndTheSource) {
  const std::string source = "__kernel void broken(__global float* out) {\n  out[0] = undeclared_thing;\n}\n";
  try {
    cl->compile(source, "broken");
    FAIL() << "bad OpenCL C built";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undeclared_thing"), std::string::npos)
        << "the build log names the culprit: " << e.log();
    EXPECT_EQ(e.source(), source);
  }
}

TEST_F(OpenCLTest, AMissingKernelIsACompileErrorNamingIt) {
  try {
    cl->compile(kVectorAdd, "vsub");
    FAIL() << "a missing kernel was found";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("CL_INVALID_KERNEL_NAME: the program has no kernel 'vsub'"), std::string::npos)
        << e.log();
  }
}

TEST_F(OpenCLTest, LocalSizeLimitsAreQueriedAndEnforced) {
  const Capabilities& caps = cl->capabilities();
  EXPECT_TRUE(caps.has_local());
  EXPECT_TRUE(caps.has_shared());
  EXPECT_GE(caps.compute_units, 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(caps.max_local_dims[i], 1);
    EXPECT_LE(caps.max_local_dims[i], caps.max_local_size) << "dim " << i;
  }
  auto program = cl->compile(kVectorAdd, "vadd");
  auto buf = upload(*cl, {0});
  try {
    program->run({buf.get(), buf.get(), buf.get()}, {1}, {{1, 1, 1}, {caps.max_local_dims[0] + 1, 1, 1}});
    FAIL() << "an oversized group was launched";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the device's limit"), std::string::npos) << e.what();
  }
}

TEST_F(OpenCLTest, WrongArgumentCountIsRejected) {
  auto program = cl->compile(kVectorAdd, "vadd");
  auto buf = upload(*cl, {0});
  try {
    program->run({buf.get(), buf.get()}, {1}, {});
    FAIL() << "three arguments for four were accepted";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("the kernel takes 4 arguments, got 2 buffers and 1 vars"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(OpenCLTest, BuffersOfAnotherDeviceAreRejected) {
  auto program = cl->compile(kVectorAdd, "vadd");
  auto host = upload(*open_device("cpu"), {0});
  try {
    program->run({host.get(), host.get(), host.get()}, {1}, {});
    FAIL() << "a CPU buffer was passed to OpenCL";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("buffer 0 lives on cpu"), std::string::npos) << e.what();
  }
}

TEST_F(OpenCLTest, EventTimingGivesEverySample) {
  auto program = cl->compile(kVectorAdd, "vadd");
  const int n = 1 << 16;
  auto a = upload(*cl, std::vector<float>(n, 2)), out = upload(*cl, std::vector<float>(n));
  const Timing t = program->time({out.get(), a.get(), a.get()}, {n}, {{n / 64, 1, 1}, {64, 1, 1}}, {1, 5});
  ASSERT_EQ(t.samples.size(), 5u);
  for (double s : t.samples) EXPECT_GT(s, 0.0);
  EXPECT_EQ(download(*out)[n - 1], 4.0f);
}

TEST_F(OpenCLTest, FingerprintNamesDeviceAndCompiler) {
  const Fingerprint& f = cl->fingerprint();
  const std::vector<OpenCLDeviceEntry> devices = list_opencl_devices();
  EXPECT_EQ(f.name, "opencl:0");
  EXPECT_EQ(f.arch, devices[0].device_name);
  EXPECT_NE(f.compiler.find(devices[0].platform_name), std::string::npos) << f.compiler;
  EXPECT_NE(f.compiler_version.find("OpenCL C"), std::string::npos) << f.compiler_version;
}

TEST_F(OpenCLTest, EnvironmentChoosesTheDefaultDevice) {
  const std::vector<OpenCLDeviceEntry> devices = list_opencl_devices();
  const OpenCLDeviceEntry& last = devices.back();
  setenv("TUNEBED_OPENCL_DEVICE", (std::to_string(last.platform) + ":" + std::to_string(last.device)).c_str(),
         1);
  EXPECT_EQ(default_opencl_device(), last.index);
  std::string part = last.device_name.substr(0, 6);
  for (char& c : part) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  setenv("TUNEBED_OPENCL_DEVICE", part.c_str(), 1);  // a name fragment, any case
  EXPECT_LE(default_opencl_device(), last.index);
  setenv("TUNEBED_OPENCL_DEVICE", "no device is called this", 1);
  try {
    default_opencl_device();
    ADD_FAILURE() << "a name matching nothing was accepted";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("matches no device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(last.device_name), std::string::npos)
        << "the message lists the devices";
  }
  unsetenv("TUNEBED_OPENCL_DEVICE");
  EXPECT_EQ(default_opencl_device(), 0);
}

TEST_F(OpenCLTest, AnIndexPastTheLastDeviceSaysWhatExists) {
  const size_t count = list_opencl_devices().size();
  try {
    open_device("opencl:" + std::to_string(count));
    FAIL() << "a device past the end was opened";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist; " + std::to_string(count) + " OpenCL device(s)"),
              std::string::npos)
        << e.what();
  }
}

TEST(OpenCLErrorName, NamesKnownCodesAndNumbersOthers) {
  EXPECT_EQ(opencl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
  EXPECT_EQ(opencl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(opencl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(opencl_error_name(-9999), "CL error -9999");
}

}  // namespace
}  // namespace tunebed
