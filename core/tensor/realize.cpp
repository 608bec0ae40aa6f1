#include "core/tensor/realize.hpp"

#include <mutex>
#include <stdexcept>
#include <utility>

#include "core/reference/reference.hpp"

namespace tunebed {

namespace {

std::mutex backend_mutex;

std::shared_ptr<Backend>& installed() {
  static std::shared_ptr<Backend> backend = std::make_shared<ReferenceBackend>();
  return backend;
}

}  // namespace

std::vector<HostBuffer> ReferenceBackend::realize(const std::vector<UOp>& outputs,
                                                  const BufferData& buffers) {
  reference::Evaluation ev = reference::evaluate(outputs, buffers);
  for (auto& [id, data] : ev.writes) *buffers.at(id) = std::move(data);
  std::vector<HostBuffer> out;
  for (const reference::Array& a : ev.outputs) out.push_back(reference::to_host(a));
  return out;
}

std::shared_ptr<Backend> current_backend() {
  std::lock_guard lock(backend_mutex);
  return installed();
}

std::shared_ptr<Backend> set_backend(std::shared_ptr<Backend> backend) {
  if (!backend) throw std::invalid_argument("set_backend: null backend");
  std::lock_guard lock(backend_mutex);
  return std::exchange(installed(), std::move(backend));
}

}  // namespace tunebed
