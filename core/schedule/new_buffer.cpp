// The one place core/schedule reaches into core/tensor: fresh buffers come from the same counter
// as the Tensor's, so their UNIQUE ids never collide with the buffers of the graph.
#include "core/schedule/kernelize.hpp"
#include "core/tensor/graph.hpp"

namespace tunebed::sched {

UOp new_buffer_uop(const std::string& device, int64_t size, DType dtype) {
  return new_buffer(device, size, dtype);
}

}  // namespace tunebed::sched
