// The kernel runner's rules (core/engine/compiled_program.hpp): exact buffers, variables by name
// at their minimum when not given, within their range, and within the int32 the ABI passes.
#include "core/engine/compiled_program.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "core/opt/kernel.hpp"

namespace tunebed {
namespace {

// out[i] = in[i] for i < N, N in [2, 8], over buffers of 8 float32.
UOp symbolic_copy(int64_t n_max = 8) {
  UOp n = UOp::variable("N", 2, n_max);
  ShapeTracker st = ShapeTracker::from_shape({sint(n)});
  auto view = [&](int i) {
    UOp buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(8), {}, Arg(i));
    return UOp::make(Ops::VIEW, dtypes::float32.ptr_to(8), {buf}, st.to_arg());
  };
  UOp load = UOp::make(Ops::LOAD, dtypes::float32, {view(1)});
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {view(0), load})});
  return Kernel(sink, Renderer::cpu(1)).get_optimized_ast();
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

class Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    in = HostBuffer(dtypes::float32, 8);
    for (int i = 0; i < 8; i++) in.set_float(i, i + 1);
  }
  const CompiledProgram exe = compile_program(symbolic_copy(), open_device("cpu"));
  HostBuffer in;
  std::vector<double> copied(const VarVals& vars) {
    const std::vector<HostBuffer> out = exe.run_on_copies({HostBuffer(dtypes::float32, 8), in}, vars);
    std::vector<double> v;
    for (int i = 0; i < 8; i++) v.push_back(out[0].get_float(i));
    return v;
  }
};

TEST_F(Runner, AVariableTakesItsValueOrItsMinimumAsTheInterpreterDoes) {
  EXPECT_EQ(copied({{"N", 5}}), (std::vector<double>{1, 2, 3, 4, 5, 0, 0, 0}));
  EXPECT_EQ(copied({}), (std::vector<double>{1, 2, 0, 0, 0, 0, 0, 0}));
}

TEST_F(Runner, AValueOutsideItsRangeIsRefused) {
  EXPECT_EQ(refusal([&] { copied({{"N", 9}}); }), "variable N = 9 is outside [2, 8]");
}

TEST_F(Runner, BuffersMustBeExactlyTheKernelsDtypeAndSize) {
  EXPECT_EQ(refusal([&] { exe.run_on_copies({HostBuffer(dtypes::float32, 9), in}); }),
            "buffer 0 of kernel " + exe.spec.name + " must be 8 float32, not 9 float32");
  EXPECT_EQ(refusal([&] { exe.run_on_copies({HostBuffer(dtypes::int32, 8), in}); }),
            "buffer 0 of kernel " + exe.spec.name + " must be 8 float32, not 8 int32");
  EXPECT_EQ(refusal([&] { exe.run_on_copies({in}); }),
            "kernel " + exe.spec.name + " takes 2 buffers, not 1");
}

TEST(BindVars, ARangePastInt32IsRefusedBeforeAnyLaunch) {
  ProgramSpec spec;
  spec.name = "k";
  spec.vars = {UOp::variable("N", 1, int64_t{1} << 40)};
  EXPECT_EQ(refusal([&] { bind_vars(spec, {{"N", 3}}); }),
            "variable N of kernel k ranges over [1, 1099511627776], past the int32 the kernel takes");
  spec.vars = {UOp::variable("N", 1, 100)};
  EXPECT_EQ(bind_vars(spec, {{"N", 3}}), std::vector<int32_t>{3});
}

}  // namespace
}  // namespace tunebed
