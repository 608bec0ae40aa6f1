// The values a kernel's DEFINE_VARs take, by name: what a runner binds and the AST interpreter
// reads. 64-bit, as the index arithmetic the variables enter.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tunebed {

using VarVals = std::map<std::string, int64_t>;

}  // namespace tunebed
