// Features of an optimized kernel, for the learned cost model (cost_model.hpp).
//
// They are read off the Kernel's loop nest after the opts (core/opt/kernel.hpp), not off the
// generated code, so that ranking a candidate costs an apply_opts and no lowering: the search
// scores hundreds of unmeasured candidates per step. Each one is something a performance engineer
// would look at first:
//
//   the loops      log2 of the extent of each axis type (outer loops, locals, threads, grouped
//                  and plain reduces, upcasts, unrolls), the number of loop axes and the extent
//                  of the innermost loop that is not unrolled;
//   the body       what one iteration of the innermost loop does once upcasts and unrolls are
//                  expanded: loads and stores of distinct elements, the widest unit-stride (vector)
//                  access of each, the accumulators, an estimate of the registers the body
//                  holds (accumulators plus loaded values) and its FLOPs per load;
//   the memory     bytes per FLOP of the whole kernel (core/opt/cost.hpp), and per input of the
//                  innermost loop: whether it walks memory contiguously, re-reads one element
//                  (stride 0, a broadcast) or strides past a cache line;
//   the rest       the threads (THREAD), the launch's work items, locals and shared memory, a
//                  tensor core, the number of opts.
//
// Sizes are logarithms (log2(1 + x)) so that a tree splits a 16 and a 1M extent as easily as a
// 2 and a 4. Symbolic sizes count at their maximum.
#pragma once

#include <string>
#include <vector>

namespace tunebed {
class Kernel;
}

namespace tunebed::search {

// The features' names, in the order kernel_features returns them.
const std::vector<std::string>& kernel_feature_names();
std::vector<float> kernel_features(const Kernel& k);

}  // namespace tunebed::search
