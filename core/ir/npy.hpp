// NumPy's .npy format, version 1.0, for HostBuffers: little-endian, C order, so any result tunebed
// writes can be checked with `numpy.load`. The layout (numpy/lib/format.py):
//
//   "\x93NUMPY" 0x01 0x00  uint16 header length  header
//
// where the header is a Python dict literal, `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`,
// padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes.
// bfloat16 has no NumPy dtype and is refused; so is anything that is not a plain scalar dtype.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/host_buffer.hpp"

namespace tunebed {

struct NpyArray {
  std::vector<int64_t> shape;
  HostBuffer data;
};

// A malformed or unsupported .npy file; the message names the file and what was wrong.
struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string npy_descr(const DType& dtype);  // "<f4", "|b1", ...; throws NpyError for bfloat16

void write_npy(std::ostream& out, const std::vector<int64_t>& shape, const HostBuffer& data);
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const HostBuffer& data);
NpyArray read_npy(std::istream& in, const std::string& name = "<stream>");
NpyArray read_npy(const std::string& path);

}  // namespace tunebed
