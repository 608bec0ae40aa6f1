// What crosses a supervised child's socket (supervisor.hpp): frames, and the fields inside them.
//
// A frame is a little-endian u32 payload length, then the payload, whose first byte is the
// message kind (each client has its own enum of kinds). Fields are fixed-width little-endian
// integers and doubles, strings and byte arrays as a u64 length then the bytes. Both ends are the
// same binary (the child is forked), so the format needs no versioning, only to be unambiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tunebed::search {

using Message = std::vector<std::byte>;

// A payload under construction / being read. Reading past the end throws std::runtime_error
// naming the field: a torn frame from a dying child is reported, not trusted.
class WireWriter {
 public:
  template <class Kind>
  explicit WireWriter(Kind kind) {
    u8(static_cast<uint8_t>(kind));
  }
  void u8(uint8_t v) { bytes_.push_back(static_cast<std::byte>(v)); }
  void i64(int64_t v);
  void f64(double v);
  void str(const std::string& s);
  void blob(const std::vector<std::byte>& b);
  const Message& bytes() const { return bytes_; }

 private:
  Message bytes_;
};

class WireReader {
 public:
  explicit WireReader(Message bytes) : bytes_(std::move(bytes)) {}
  // The first byte, as the client's enum of kinds; the client rejects a kind it does not expect.
  template <class Kind>
  Kind kind() {
    return static_cast<Kind>(u8("message kind"));
  }
  uint8_t u8(const char* what);
  int64_t i64(const char* what);
  double f64(const char* what);
  std::string str(const char* what);
  std::vector<std::byte> blob(const char* what);
  void expect_end();

 private:
  void need(size_t n, const char* what) const;
  Message bytes_;
  size_t pos_ = 0;
};

// Frames on a stream socket: blocking, whole frames, EINTR retried. write_frame returns false
// when the other end is gone (EPIPE); read_frame returns nullopt on a clean EOF before a frame and
// throws std::runtime_error on a frame cut short.
bool write_frame(int fd, const Message& payload);
std::optional<Message> read_frame(int fd);

}  // namespace tunebed::search
