// The checked-in sample of tinygrad's kernel dataset (tests/data/sops-sample.txt; README.md beside
// it says which lines it holds), found through TUNEBED_SOURCE_DIR as ctest sets it.
#pragma once

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tunebed::testing {

inline std::string sops_sample_path() {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tests/data/sops-sample.txt";
}

// Every line, blank ones too, so that line n of the file is element n - 1.
inline std::vector<std::string> sops_sample_lines() {
  std::ifstream f(sops_sample_path());
  if (!f) throw std::runtime_error(sops_sample_path() + " not found: set TUNEBED_SOURCE_DIR");
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

}  // namespace tunebed::testing
