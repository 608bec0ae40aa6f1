// Stable 64-bit hashing. Structural hashes key the tuning database, so they must not depend on
// pointers, std::hash or the platform: the same UOp graph hashes the same in every run.
#pragma once

#include <cstdint>
#include <string_view>

namespace tunebed {

// splitmix64's finaliser over a combination of two words.
constexpr uint64_t hash_mix(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// FNV-1a over bytes.
constexpr uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace tunebed
