#include "search/kernel_target.hpp"

#include <algorithm>
#include <thread>

#include "core/codegen/codegen.hpp"
#include "core/engine/compiled_program.hpp"
#include "core/ir/text.hpp"
#include "core/opt/cost.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/schedule/ast_interpreter.hpp"

namespace tunebed::search {

UOp strip_info(const UOp& ast) { return ast.arg().is_none() ? ast : ast.with_arg(Arg()); }

std::string shape_summary(const UOp& ast) {
  Kernel k(ast, Renderer::cpu(1));
  std::string s;
  for (const sint& d : k.full_shape()) s += (s.empty() ? "" : "x") + to_string(d);
  const UOp& store = ast.src(0);
  return s + " " + std::string(scalar_name(store.src(1).dtype().scalar));
}

KernelTarget::KernelTarget(const UOp& ast, const std::string& source, const std::string& device,
                           ActionSpaceOptions options, int64_t check_iterations)
    : ast_(strip_info(ast)) {
  Renderer renderer = Renderer::for_device(device);
  root_ = std::make_unique<Kernel>(ast_, renderer);
  space_ = std::make_unique<KernelSpace>(*root_, std::move(options));
  std::string text = print_uop(ast_);
  KernelCost cost = kernel_cost(ast_);
  target_.kernel =
      results::Kernel{0, kernel_hash(ast_), text, shape_summary(ast_), cost.flops, cost.bytes, source};
  target_.space = space_.get();
  target_.action_space_version = space_->version();
  target_.render = [this, renderer](const Path& state) {
    ProgramSpec p = get_program(space_->kernel(state).get_optimized_ast(), renderer);
    return KernelSource{p.source, p.name, p.launch_dims(target_.vars)};
  };
  target_.parse = [this](const std::string& opts) { return space_->parse(opts); };
  target_.baseline = space_->parse(default_opts());
  // The workers launch what is bound here, under the kernel runner's rules (compiled_program.hpp).
  ProgramSpec plain = get_program(root_->get_optimized_ast(), renderer);
  target_.buffers = make_buffers(plain);
  // A symbolic kernel is tuned at its variables' largest values, as tinygrad's BEAM does: the
  // buffers are sized for them, and that is the case worth being fast for.
  VarVals at_max;
  for (const UOp& v : plain.vars) at_max[v.arg().as_tuple().at(0).as_string()] = v.vmax();
  target_.vars = bind_vars(plain, at_max);
  target_.output = 0;
  // On every core: nothing is timed while the check runs (tune.hpp, step 1).
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  target_.expect = [this, at_max, check_iterations, threads](const std::vector<HostBuffer>& bufs) {
    return expect_kernel_ast(ast_, bufs, at_max, check_iterations, threads).at(static_cast<size_t>(target_.output));
  };
}

KernelTarget::~KernelTarget() = default;

std::string KernelTarget::default_opts() const { return to_string(tunebed::default_opts(*root_)); }

}  // namespace tunebed::search
