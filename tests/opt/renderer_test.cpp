// The Renderer records and the tensor-core tables.
#include "core/opt/renderer.hpp"

#include <gtest/gtest.h>

namespace tunebed {
namespace {

TEST(Renderer, RecordsHaveTinygradsCapabilities) {
  Renderer cpu = Renderer::cpu(8), cl = Renderer::opencl(), cuda = Renderer::cuda(80);
  EXPECT_FALSE(cpu.has_local);
  EXPECT_FALSE(cpu.global_max);
  EXPECT_EQ(cpu.threads, 8);
  EXPECT_EQ(cpu.vector_widths, (std::vector<int>{4, 8}));
  EXPECT_TRUE(cl.has_local && cl.has_shared);
  EXPECT_TRUE(cl.tensor_cores.empty());
  EXPECT_EQ(cl.threads, 0);
  EXPECT_EQ(cuda.shared_max, 49152);
  EXPECT_EQ(cuda.local_max, (std::array<int64_t, 3>{1024, 1024, 64}));
  EXPECT_EQ(cuda.tensor_cores.size(), 5u);
  EXPECT_EQ(Renderer::cuda(75).tensor_cores.size(), 2u);
  EXPECT_TRUE(Renderer::cuda(70).tensor_cores.empty());
}

TEST(Renderer, ForDeviceNamesTheKnownDevices) {
  EXPECT_EQ(Renderer::for_device("opencl").device, "GPU");
  try {
    Renderer::for_device("tpu");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown device \"tpu\" (one of cpu, opencl, cuda)");
  }
  EXPECT_THROW(Renderer::cpu(0), std::invalid_argument);
}

int count(const std::vector<std::string>& opts, char kind, char dim = 0) {
  int n = 0;
  for (const std::string& o : opts) n += o[0] == kind && (dim == 0 || o[1] == dim);
  return n;
}

// tinygrad's TensorCore.__post_init__ checks, on the transcribed tables.
TEST(TensorCores, CudaTablesSatisfyTinygradsInvariants) {
  for (const TensorCore& tc : cuda_sm80_tensor_cores()) {
    SCOPED_TRACE(tc.name());
    int locals = count(tc.opts, 'l'), upcasts = count(tc.opts, 'u');
    int reduces = 0;
    for (int k = tc.dims[2]; k > 1; k /= 2) reduces++;
    EXPECT_EQ(tc.dims[0] * tc.dims[1], 1 << (locals + upcasts));
    EXPECT_EQ(tc.threads, 1 << locals);
    EXPECT_EQ(tc.elements_per_thread[2], 1 << upcasts);
    EXPECT_EQ(tc.dims[0], 1 << (count(tc.opts, 'l', '0') + count(tc.opts, 'u', '0')));
    EXPECT_EQ(tc.dims[1], 1 << (count(tc.opts, 'l', '1') + count(tc.opts, 'u', '1')));
    for (const auto& sw : tc.swizzle) {
      EXPECT_EQ(static_cast<int>(sw[0].size()), locals);
      EXPECT_EQ(static_cast<int>(sw[1].size()), upcasts);
      EXPECT_EQ(static_cast<int>(sw[2].size()), reduces);
    }
  }
  EXPECT_EQ(cuda_sm80_tensor_cores()[0].name(), "WMMA_8_16_16_float16_float32");
}

}  // namespace
}  // namespace tunebed
