// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): the
// seeded generator behind Tensor::rand/randn/randint. Written out here rather than taken from
// <random>, whose distributions are implementation-defined: the same seed must give the same
// tensors with every standard library.
#pragma once

#include <cstdint>

namespace tunebed {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with `bits` random bits (at most 53): k * 2^-bits.
  double uniform(int bits = 53) {
    return static_cast<double>(next() >> (64 - bits)) * (1.0 / static_cast<double>(uint64_t{1} << bits));
  }

 private:
  uint64_t state_;
};

}  // namespace tunebed
