#include "core/ir/npy.hpp"

#include <fstream>
#include <istream>
#include <optional>
#include <ostream>
#include <sstream>

namespace tunebed {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DescrEntry {
  Scalar scalar;
  const char* descr;
};
// Multi-byte types are little-endian ('<'); single bytes have no order ('|').
constexpr DescrEntry kDescrs[] = {
    {Scalar::Bool, "|b1"},   {Scalar::Int8, "|i1"},    {Scalar::Int16, "<i2"},   {Scalar::Int32, "<i4"},
    {Scalar::Int64, "<i8"},  {Scalar::UInt8, "|u1"},   {Scalar::UInt16, "<u2"},  {Scalar::UInt32, "<u4"},
    {Scalar::UInt64, "<u8"}, {Scalar::Float16, "<f2"}, {Scalar::Float32, "<f4"}, {Scalar::Float64, "<f8"},
};

std::string shape_literal(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

int64_t checked_numel(const std::vector<int64_t>& shape, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw NpyError(name + ": negative dimension in shape " + shape_literal(shape));
    n *= d;
  }
  return n;
}

// A tiny reader for the one dict literal NumPy writes: we look each key up by its quoted name.
struct Header {
  std::string text, name;

  std::string value_of(const std::string& key) const {
    const std::string quoted = "'" + key + "'";
    size_t at = text.find(quoted);
    if (at == std::string::npos) throw NpyError(name + ": header has no " + quoted + " in " + text);
    at = text.find(':', at + quoted.size());
    if (at == std::string::npos) throw NpyError(name + ": header has no value for " + quoted);
    at = text.find_first_not_of(' ', at + 1);
    if (at == std::string::npos) throw NpyError(name + ": header has no value for " + quoted);
    size_t end = text[at] == '(' ? text.find(')', at) + 1 : text.find_first_of(",}", at);
    if (text[at] == '\'') end = text.find('\'', at + 1) + 1;
    if (end == std::string::npos || end == 0) throw NpyError(name + ": unterminated value of " + quoted);
    return text.substr(at, end - at);
  }
};

std::vector<int64_t> parse_shape(const std::string& literal, const std::string& name) {
  if (literal.size() < 2 || literal.front() != '(' || literal.back() != ')')
    throw NpyError(name + ": shape " + literal + " is not a tuple");
  std::vector<int64_t> shape;
  std::istringstream in(literal.substr(1, literal.size() - 2));
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    if (b == std::string::npos) continue;  // the empty item after a 1-tuple's trailing comma
    item = item.substr(b, e - b + 1);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw NpyError(name + ": shape " + literal + " has a bad dimension '" + item + "'");
    shape.push_back(std::stoll(item));
  }
  return shape;
}

}  // namespace

std::string npy_descr(const DType& dtype) {
  if (!dtype.ptr && dtype.count == 1)
    for (const DescrEntry& e : kDescrs)
      if (e.scalar == dtype.scalar) return e.descr;
  throw NpyError("dtype " + to_string(dtype) + " has no NumPy equivalent");
}

void write_npy(std::ostream& out, const std::vector<int64_t>& shape, const HostBuffer& data) {
  if (checked_numel(shape, "write_npy") != data.numel())
    throw NpyError("write_npy: shape " + shape_literal(shape) + " does not hold " +
                   std::to_string(data.numel()) + " elements");
  std::string header = "{'descr': '" + npy_descr(data.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_literal(shape) + ", }";
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const size_t unpadded = kMagicLen + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(kMagic, kMagicLen);
  const char version_and_len[4] = {1, 0, static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(version_and_len, 4);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.bytes.data()),
            static_cast<std::streamsize>(data.bytes.size()));
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const HostBuffer& data) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw NpyError("cannot open " + path + " for writing");
  write_npy(out, shape, data);
  if (!out) throw NpyError("failed writing " + path);
}

NpyArray read_npy(std::istream& in, const std::string& name) {
  char prefix[kMagicLen + 4];
  if (!in.read(prefix, sizeof prefix) || std::string(prefix, kMagicLen) != std::string(kMagic, kMagicLen))
    throw NpyError(name + ": not a .npy file (bad magic)");
  if (prefix[6] != 1 || prefix[7] != 0)
    throw NpyError(name + ": .npy version " + std::to_string(prefix[6]) + "." + std::to_string(prefix[7]) +
                   " is not supported (only 1.0)");
  const size_t len = static_cast<unsigned char>(prefix[8]) | static_cast<unsigned char>(prefix[9]) << 8;
  Header header{std::string(len, '\0'), name};
  if (!in.read(header.text.data(), static_cast<std::streamsize>(len)))
    throw NpyError(name + ": truncated header");

  const std::string descr = header.value_of("descr");
  std::optional<Scalar> scalar;
  for (const DescrEntry& e : kDescrs)
    if (descr == "'" + std::string(e.descr) + "'") scalar = e.scalar;
  if (!scalar)
    throw NpyError(name + ": unsupported descr " + descr + " (little-endian numbers and bool only)");
  if (header.value_of("fortran_order") != "False") throw NpyError(name + ": Fortran order is not supported");

  NpyArray a{parse_shape(header.value_of("shape"), name), {}};
  a.data = HostBuffer(DType(*scalar), checked_numel(a.shape, name));
  if (!in.read(reinterpret_cast<char*>(a.data.bytes.data()),
               static_cast<std::streamsize>(a.data.bytes.size())))
    throw NpyError(name + ": truncated data (expected " + std::to_string(a.data.bytes.size()) + " bytes)");
  return a;
}

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError("cannot open " + path);
  return read_npy(in, path);
}

}  // namespace tunebed
