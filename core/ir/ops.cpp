#include "core/ir/ops.hpp"

#include <array>

namespace tunebed {

namespace {
constexpr std::array<std::string_view, kNumOps> kOpNames = {
#define TUNEBED_OP_NAME(name) #name,
    TUNEBED_OPS(TUNEBED_OP_NAME)
#undef TUNEBED_OP_NAME
};
}  // namespace

std::string_view op_name(Ops op) { return kOpNames[static_cast<int>(op)]; }

std::optional<Ops> op_from_name(std::string_view s) {
  for (int i = 0; i < kNumOps; i++)
    if (kOpNames[i] == s) return static_cast<Ops>(i);
  return std::nullopt;
}

}  // namespace tunebed
