// clang's verdict on rendered sources with every -Wall warning an error.
#pragma once

#include <string>
#include <vector>

namespace tunebed::testing {

// "" when every source compiles cleanly with `clang -Wall -Werror -fsyntax-only` (one clang run
// for all of them), else clang's messages.
std::string clang_warnings(const std::vector<std::string>& sources);

}  // namespace tunebed::testing
