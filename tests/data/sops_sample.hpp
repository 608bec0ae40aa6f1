// The checked-in sample of tinygrad's kernel dataset (tests/data/sops-sample.txt; README.md beside
// it says which lines it holds) and the other files of tests/data, found through
// TUNEBED_SOURCE_DIR as ctest sets it.
#pragma once

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tunebed::testing {

inline std::string test_data_path(const std::string& file) {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tests/data/" + file;
}

inline std::string sops_sample_path() { return test_data_path("sops-sample.txt"); }

// Every line of tests/data/FILE, blank ones too, so that line n of the file is element n - 1.
inline std::vector<std::string> test_data_lines(const std::string& file) {
  std::ifstream f(test_data_path(file));
  if (!f) throw std::runtime_error(test_data_path(file) + " not found: set TUNEBED_SOURCE_DIR");
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

inline std::vector<std::string> sops_sample_lines() { return test_data_lines("sops-sample.txt"); }

}  // namespace tunebed::testing
