// Augmented assign: the seed's check_load_st, and assigns that must work.
#include <gtest/gtest.h>

#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

BufferData deep_copy(const BufferData& b) {
  BufferData out;
  for (const auto& [id, buf] : b) out[id] = std::make_shared<HostBuffer>(*buf);
  return out;
}

// Runs the schedule of `t` with the AST interpreter on a copy of its input data.
std::vector<double> run(const Tensor& t) {
  const Schedule s = create_schedule({t.uop()});
  BufferData data = deep_copy(t.buffers());
  run_schedule(s, data);
  const HostBuffer out = read_output(s.outputs[0], data);
  std::vector<double> v;
  for (int64_t k = 0; k < out.numel(); k++) v.push_back(out.get_float(k));
  return v;
}

TEST(Assign, SelfOperandTransposedRaisesTheSeedsError) {
  Tensor a = Tensor::randn({4, 4}, 1);
  a += a.transpose();
  try {
    create_schedule({a.uop()});
    FAIL() << "a += a.T scheduled";
  } catch (const ScheduleError& e) {
    EXPECT_STREQ(e.what(),
                 "self operand of augmented assign must be contiguous.\n"
                 "help: consider using .contiguous():\n"
                 "   - a += a.T\n"
                 "   + a += a.T.contiguous()");
  }
}

TEST(Assign, SelfOperandMadeContiguousWorks) {
  Tensor a = Tensor::randn({4, 4}, 1);
  const std::vector<double> before = Tensor(a).values<double>();
  a += a.transpose().contiguous();
  EXPECT_EQ(create_schedule({a.uop()}).items.size(), 2u);  // tinygrad: 2 (the copy, the assign)
  const std::vector<double> after = run(a);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      EXPECT_FLOAT_EQ(after[i * 4 + j], static_cast<float>(before[i * 4 + j] + before[j * 4 + i]));
}

TEST(Assign, SelfOperandItselfWorks) {
  Tensor a = Tensor::randn({3, 5}, 2);
  const std::vector<double> before = Tensor(a).values<double>();
  a += a;
  EXPECT_EQ(create_schedule({a.uop()}).items.size(), 1u);  // tinygrad: 1
  const std::vector<double> after = run(a);
  for (size_t k = 0; k < before.size(); k++) EXPECT_FLOAT_EQ(after[k], static_cast<float>(2 * before[k]));
}

TEST(Assign, BuffersOnTwoDevicesInOneKernelAreAnErrorNamingThem) {
  const UOp a = Tensor::empty({4}, dtypes::float32, "CPU").uop();
  const UOp b = Tensor::empty({4}, dtypes::float32, "CUDA").uop();
  try {
    create_schedule({UOp::make(Ops::ADD, dtypes::float32, {a, b})});
    FAIL() << "a kernel over CPU and CUDA buffers scheduled";
  } catch (const ScheduleError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("all buffers must be on the same device"), std::string::npos) << msg;
    EXPECT_NE(msg.find("on CPU"), std::string::npos) << msg;
    EXPECT_NE(msg.find("on CUDA"), std::string::npos) << msg;
  }
}

// A kernel reading a buffer runs before the kernel that assigns to it, whatever the output order.
TEST(Assign, ReadsOfTheTargetRunBeforeTheAssign) {
  Tensor a = Tensor::randn({6}, 3);
  const std::vector<double> before = Tensor(a).values<double>();
  const Tensor b = a + 1;
  a.assign(a * 2);
  const Schedule s = create_schedule({a.uop(), b.uop()});
  ASSERT_EQ(s.items.size(), 2u);  // tinygrad: 2
  BufferData data = deep_copy(a.buffers());
  run_schedule(s, data);
  const HostBuffer new_a = read_output(s.outputs[0], data), b_out = read_output(s.outputs[1], data);
  for (size_t k = 0; k < before.size(); k++) {
    EXPECT_FLOAT_EQ(new_a.get_float(static_cast<int64_t>(k)), static_cast<float>(2 * before[k]));
    EXPECT_FLOAT_EQ(b_out.get_float(static_cast<int64_t>(k)), static_cast<float>(before[k] + 1));
  }
}

}  // namespace
}  // namespace tunebed
