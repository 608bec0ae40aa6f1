// The CUDA backend without a GPU: NVRTC compiles for a named architecture wherever libnvrtc is
// installed, and asking for the device where libcuda is missing fails with a clear message.
// Where a GPU is present, a vector add runs on it.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/runtime/cuda_device.hpp"
#include "tests/runtime/runtime_helpers.hpp"

namespace tunebed {
namespace {

using testing::download;
using testing::upload;

constexpr const char* kVectorAdd = R"(
extern "C" __global__ void vadd(float* out, const float* a, const float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}
)";

#define SKIP_WITHOUT_NVRTC() \
  if (auto why = nvrtc_unavailable_reason()) GTEST_SKIP() << "skipped: " << *why

TEST(Nvrtc, CompilesASmallKernelForANamedArchitectureWithoutAGpu) {
  SKIP_WITHOUT_NVRTC();
  const CudaBinary binary = nvrtc_compile(kVectorAdd, "vadd", "sm_90");
  EXPECT_NE(binary.ptx.find(".entry vadd"), std::string::npos) << binary.ptx.substr(0, 500);
  EXPECT_NE(binary.ptx.find(".target sm_90"), std::string::npos);
  ASSERT_GE(binary.cubin.size(), 4u);
  EXPECT_EQ(binary.cubin.substr(0, 4),
            "\x7f"
            "ELF")
      << "a cubin is an ELF image";
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(nvrtc_version()[0]))) << nvrtc_version();
}

TEST(Nvrtc, HalfPrecisionHeadersAreFound) {
  SKIP_WITHOUT_NVRTC();
  const CudaBinary binary = nvrtc_compile(R"(
#include <cuda_fp16.h>
extern "C" __global__ void hadd(half* out, const half* a) { out[threadIdx.x] = __hadd(a[threadIdx.x], a[0]); }
)",
                                          "hadd", "sm_80");
  EXPECT_NE(binary.ptx.find(".entry hadd"), std::string::npos);
}

TEST(Nvrtc, CompileErrorCarriesTheLogAndTheSource) {
  SKIP_WITHOUT_NVRTC();
  const std::string source =
      "extern \"C\" __global__ void broken(float* out) {\n  out[0] = not_declared;\n}\n";
  try {
    nvrtc_compile(source, "broken", "sm_90");
    FAIL() << "bad CUDA C compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("NVRTC_ERROR_COMPILATION"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("broken.cu(2): error: identifier \"not_declared\" is undefined"),
              std::string::npos)
        << e.log();
    EXPECT_EQ(e.source(), source);
    EXPECT_EQ(std::string(e.what()).rfind("nvrtc failed to compile 'broken':", 0), 0u) << e.what();
  }
}

TEST(Nvrtc, AnUnknownArchitectureIsACompileError) {
  SKIP_WITHOUT_NVRTC();
  EXPECT_THROW(nvrtc_compile(kVectorAdd, "vadd", "sm_1"), CompileError);
}

TEST(CudaDevice, WithoutAGpuOpeningSaysCudaIsNotAvailable) {
  testing::Opened opened = testing::try_open("cuda");
  if (opened.device)
    GTEST_SKIP() << "skipped: a CUDA device is present (" << opened.device->fingerprint().arch << ")";
  EXPECT_EQ(opened.why_not.rfind("CUDA is not available: ", 0), 0u) << opened.why_not;
  if (void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(lib);
  } else {
    EXPECT_NE(
        opened.why_not.find("libcuda.so could not be loaded (libcuda.so.1: cannot open shared object file"),
        std::string::npos)
        << opened.why_not;
  }
}

TEST(CudaDevice, VectorAddRunsWhereAGpuIsPresent) {
  testing::Opened opened = testing::try_open("cuda");
  if (!opened.device) GTEST_SKIP() << "skipped: " << opened.why_not;
  Device& gpu = *opened.device;
  EXPECT_EQ(gpu.fingerprint().compiler, "nvrtc");
  EXPECT_TRUE(gpu.capabilities().has_shared());
  auto program = gpu.compile(kVectorAdd, "vadd");
  const int n = 100000;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = 0.25f;
  auto ba = upload(gpu, a), bb = upload(gpu, b), out = upload(gpu, std::vector<float>(n));
  const Timing t =
      program->time({out.get(), ba.get(), bb.get()}, {n}, {{(n + 255) / 256, 1, 1}, {256, 1, 1}});
  EXPECT_EQ(t.samples.size(), 10u);
  const std::vector<float> got = download(*out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(got[i], a[i] + b[i]) << "element " << i;
}

}  // namespace
}  // namespace tunebed
