#include "search/wire.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tunebed::search {

static_assert(std::endian::native == std::endian::little,
              "the wire format is the host's little-endian layout");

void WireWriter::i64(int64_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  bytes_.insert(bytes_.end(), p, p + sizeof v);
}
void WireWriter::f64(double v) { i64(std::bit_cast<int64_t>(v)); }
void WireWriter::str(const std::string& s) {
  i64(static_cast<int64_t>(s.size()));
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  bytes_.insert(bytes_.end(), p, p + s.size());
}
void WireWriter::blob(const std::vector<std::byte>& b) {
  i64(static_cast<int64_t>(b.size()));
  bytes_.insert(bytes_.end(), b.begin(), b.end());
}

void WireReader::need(size_t n, const char* what) const {
  if (n > bytes_.size() - pos_)
    throw std::runtime_error(std::string("worker message cut short reading ") + what);
}
uint8_t WireReader::u8(const char* what) {
  need(1, what);
  return static_cast<uint8_t>(bytes_[pos_++]);
}
int64_t WireReader::i64(const char* what) {
  need(8, what);
  int64_t v;
  std::memcpy(&v, bytes_.data() + pos_, 8);
  pos_ += 8;
  return v;
}
double WireReader::f64(const char* what) { return std::bit_cast<double>(i64(what)); }
std::string WireReader::str(const char* what) {
  auto n = static_cast<size_t>(i64(what));
  need(n, what);
  std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
  pos_ += n;
  return s;
}
std::vector<std::byte> WireReader::blob(const char* what) {
  auto n = static_cast<size_t>(i64(what));
  need(n, what);
  std::vector<std::byte> b(bytes_.begin() + static_cast<ptrdiff_t>(pos_),
                           bytes_.begin() + static_cast<ptrdiff_t>(pos_ + n));
  pos_ += n;
  return b;
}
void WireReader::expect_end() {
  if (pos_ != bytes_.size()) throw std::runtime_error("worker message has trailing bytes");
}

// --- frames ---

static bool write_all(int fd, const std::byte* p, size_t n) {
  while (n > 0) {
    // send, not write: MSG_NOSIGNAL turns a dead peer into EPIPE instead of a SIGPIPE that would
    // kill the parent along with its crashed worker.
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno == EPIPE) return false;
    if (k < 0) throw std::runtime_error(std::string("writing to a worker pipe: ") + std::strerror(errno));
    p += k, n -= static_cast<size_t>(k);
  }
  return true;
}

// Reads exactly n bytes; returns how many arrived before EOF.
static size_t read_all(int fd, std::byte* p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = ::read(fd, p + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw std::runtime_error(std::string("reading a worker pipe: ") + std::strerror(errno));
    if (k == 0) break;
    got += static_cast<size_t>(k);
  }
  return got;
}

bool write_frame(int fd, const Message& payload) {
  if (payload.size() > UINT32_MAX) throw std::runtime_error("worker message over 4 GiB");
  auto len = static_cast<uint32_t>(payload.size());
  std::byte header[4];
  std::memcpy(header, &len, 4);
  return write_all(fd, header, 4) && write_all(fd, payload.data(), payload.size());
}

std::optional<Message> read_frame(int fd) {
  std::byte header[4];
  size_t got = read_all(fd, header, 4);
  if (got == 0) return std::nullopt;
  if (got < 4) throw std::runtime_error("worker frame header cut short");
  uint32_t len;
  std::memcpy(&len, header, 4);
  Message payload(len);
  if (read_all(fd, payload.data(), len) < len) throw std::runtime_error("worker frame cut short");
  return payload;
}

}  // namespace tunebed::search
