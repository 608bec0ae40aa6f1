// Range analysis of a node from its sources' ranges: the bounds vmin/vmax hold for every value the
// node can take. Meaningful for int and bool dtypes; others get the dtype's whole range.
#pragma once

#include <cstdint>

#include "core/ir/uop.hpp"

namespace tunebed {

struct Range {
  int64_t lo, hi;
};

Range compute_range(const UOpNode& n);

}  // namespace tunebed
