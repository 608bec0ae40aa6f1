// .npy files: a round trip through write and read, and the exact bytes NumPy's format 1.0 has.
#include "core/ir/npy.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace tunebed {
namespace {

TEST(Npy, BytesMatchNumpyFormatOne) {
  HostBuffer data(dtypes::float32, 6);
  for (int64_t k = 0; k < 6; k++) data.set_float(k, static_cast<double>(k) + 0.5);
  std::ostringstream out;
  write_npy(out, {2, 3}, data);
  const std::string bytes = out.str();
  // numpy.save(f, np.arange(6, dtype='<f4').reshape(2, 3) + 0.5) writes exactly this header.
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  EXPECT_EQ((10 + len) % 64, 0u);  // the data starts 64-byte aligned
  EXPECT_EQ(len, 118u);
  EXPECT_EQ(bytes.substr(10, header.size()), header);
  EXPECT_EQ(bytes.substr(10 + header.size(), len - header.size() - 1),
            std::string(len - header.size() - 1, ' '));
  EXPECT_EQ(bytes[10 + len - 1], '\n');
  EXPECT_EQ(bytes.size(), 10 + len + 24);
  EXPECT_EQ(bytes.substr(10 + len), std::string(reinterpret_cast<const char*>(data.bytes.data()), 24));
}

TEST(Npy, ShapesAndDtypesRoundTrip) {
  const std::vector<std::pair<DType, std::vector<int64_t>>> cases = {
      {dtypes::float32, {}}, {dtypes::float16, {5}},  {dtypes::int32, {2, 3, 4}}, {dtypes::bool_, {3, 1}},
      {dtypes::uint8, {0}},  {dtypes::int64, {1, 1}}, {dtypes::float64, {7}},     {dtypes::uint16, {2, 2}},
  };
  for (const auto& [dtype, shape] : cases) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    HostBuffer data(dtype, n);
    for (int64_t k = 0; k < n; k++) data.set_float(k, static_cast<double>(k % 5) - 1.5);
    std::stringstream io;
    write_npy(io, shape, data);
    const NpyArray back = read_npy(io);
    EXPECT_EQ(back.shape, shape) << to_string(dtype);
    EXPECT_EQ(back.data, data) << to_string(dtype);
  }
}

TEST(Npy, FileRoundTripAndDescr) {
  const std::string path = (std::filesystem::temp_directory_path() / "tunebed_npy_test.npy").string();
  HostBuffer data(dtypes::int32, 3);
  for (int64_t k = 0; k < 3; k++) data.set_int(k, -k * 1000);
  write_npy(path, {3}, data);
  const NpyArray back = read_npy(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(back.data, data);
  EXPECT_EQ(npy_descr(dtypes::bool_), "|b1");
  EXPECT_EQ(npy_descr(dtypes::float16), "<f2");
  EXPECT_THROW(npy_descr(dtypes::bfloat16), NpyError);
}

TEST(Npy, MalformedInputIsAnErrorNamingIt) {
  std::istringstream junk("not numpy at all");
  try {
    read_npy(junk, "junk.npy");
    FAIL() << "no error";
  } catch (const NpyError& e) {
    EXPECT_EQ(std::string(e.what()), "junk.npy: not a .npy file (bad magic)");
  }
  HostBuffer data(dtypes::float32, 4);
  std::ostringstream out;
  write_npy(out, {4}, data);
  std::istringstream truncated(out.str().substr(0, out.str().size() - 3));
  EXPECT_THROW(read_npy(truncated), NpyError);
  std::ostringstream wrong;
  EXPECT_THROW(write_npy(wrong, {3}, data), NpyError);  // 3 elements cannot hold 4
}

TEST(HostBuffer, HalfAndBfloatBitPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(0x1p-24f), 0x0001);
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaNs
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
  EXPECT_EQ(float_to_bfloat16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16_bits_to_float(0x4049), 3.140625f);
}

}  // namespace
}  // namespace tunebed
