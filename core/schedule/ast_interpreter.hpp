// The AST interpreter: runs one kernel AST directly on host buffers, with no code generation.
// It separates scheduler bugs from codegen bugs: if the schedule run here matches the reference
// interpreter, a wrong compiled kernel is codegen's fault.
//
// A kernel iterates its full shape (the largest extent of every axis over the AST's views). Each
// STORE visits the indices of its own view's shape; values are computed per index: a LOAD reads
// its buffer at the position its ShapeTracker gives (0 where a mask hides it), a REDUCE_AXIS loops
// over its axes (its terms 64 at a time along the innermost: the values a loop of one term at a
// time computes, with its dispatch paid once per block) and ALU ops follow exec_alu (core/ir).
// Positions come straight from the views (IntTracker, core/shape), not from the index expressions
// codegen lowers, so a wrong index expression cannot agree with itself here; a tracker with
// variables in its shape goes through to_indexed_uops, evaluated exactly with the variables bound.
//
// Besides the seed's form (LOAD(VIEW(DEFINE_GLOBAL)), STORE(VIEW(DEFINE_GLOBAL), x)) it runs
// tinygrad's older dataset form: LOAD(DEFINE_GLOBAL, VIEW), STORE(DEFINE_GLOBAL, VIEW, x),
// CONST(VIEW), VALID(VIEW), DEFINE_VAR in shapes (bound to given values, else their minimum: a
// dataset kernel's buffers were sized for the values it ran with, which the minimum never exceeds).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/error_bound.hpp"
#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"
#include "core/ir/var_vals.hpp"
#include "core/schedule/schedule.hpp"

namespace tunebed {

// An AST the interpreter cannot run: the message names the op and what was wrong.
class AstInterpreterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs `ast` (a SINK of STOREs). bufs[i] is the buffer of DEFINE_GLOBAL i; STOREs write into it.
void run_kernel_ast(const UOp& ast, const std::vector<HostBuffer*>& bufs, const VarVals& vars = {});

// The exact run of `ast` (core/ir/error_bound.hpp): floats in float64, each value with its error
// bound. VALUES[i] is buffer i (floats as float64: widened()), BOUNDS[i] a float64 buffer of the
// same length with the bound of each of its elements; STOREs write both. With SAMPLE_STRIDE k > 1
// each STORE computes every k-th element of its index space only; the others get a NaN bound
// (unknown: check_output counts them unverified). With THREADS > 1 the STOREs' index spaces are
// split among that many threads where that cannot change the result (exact_run_splits); otherwise,
// and by default, it runs on the calling thread.
void run_kernel_ast_exact(const UOp& ast, const std::vector<HostBuffer*>& values,
                          const std::vector<HostBuffer*>& bounds, const VarVals& vars = {},
                          int64_t sample_stride = 1, int threads = 1);

// Whether run_kernel_ast_exact may split AST's STOREs over threads: every STORE writes each
// position from one index only (no two parts write one element, and none depends on which wrote
// last), and no LOAD reads a buffer a STORE writes (no part reads what another writes). BUFS as
// run_kernel_ast's.
bool exact_run_splits(const UOp& ast, const std::vector<HostBuffer*>& bufs, const VarVals& vars = {});

// The exact run's budget where a check has to stay interactive (the tuner's independent check,
// `tunebed run --check`): about 2.5-4 s of the interpreter on one of this project's 2 cores (a 512³
// matmul, bench/bench_interpreter: 40-60 ns an iteration), 1.2-1.7 s split over both.
inline constexpr int64_t kExactRunBudget = int64_t{1} << 26;

// The odd stride that keeps an exact run of ITERATIONS near MAX_ITERATIONS (1: all of it); odd, so
// that it meets every column of a power-of-two row over the rows.
int64_t sample_stride(int64_t iterations, int64_t max_iterations);

// The iterations of AST's full shape (the product of its largest extents): the interpreter's work.
int64_t ast_iterations(const UOp& ast, const VarVals& vars = {});

// What a correct kernel leaves in each of its buffers when run on BUFS (inputs are exact): the
// exact run above on copies. An element the kernel does not store keeps its input value. A kernel
// of more than MAX_ITERATIONS is sampled (an odd stride that keeps the work about that size), on
// THREADS threads where the kernel allows (run_kernel_ast_exact).
std::vector<Expected> expect_kernel_ast(const UOp& ast, const std::vector<HostBuffer>& bufs,
                                        const VarVals& vars = {}, int64_t max_iterations = INT64_MAX,
                                        int threads = 1);

// The buffers an AST's DEFINE_GLOBALs need, by arg: (element dtype, size in elements).
std::vector<std::pair<DType, int64_t>> ast_buffer_specs(const UOp& ast);

// Runs one kernel item: bufs[i] is the buffer of the item's DEFINE_GLOBAL i.
using KernelRunner = std::function<void(const ScheduleItem& item, const std::vector<HostBuffer*>& bufs)>;

// Runs a schedule item by item: COPY items copy, kernels go to `run_kernel` (the AST interpreter
// unless a compiled backend passes its own). `buffers` holds the data of the graph's input
// BUFFERs (by UNIQUE id); buffers the schedule creates are added, zero-filled before their kernel
// runs.
void run_schedule(const Schedule& schedule, BufferData& buffers, const KernelRunner& run_kernel = {});

// The elements (C order) of one of Schedule::outputs after run_schedule.
HostBuffer read_output(const UOp& output, const BufferData& buffers);

// run_schedule's exact run: VALUES holds the input buffers widened, BOUNDS their bounds (a
// missing one is 0); the buffers the schedule creates are added to both. read_expected is
// read_output's twin. The last kernel is sampled past MAX_ITERATIONS (expect_kernel_ast); an
// earlier one past it throws AstInterpreterError, as the kernels after it would read unknowns.
// Each kernel runs on THREADS threads where it allows (run_kernel_ast_exact).
void run_schedule_exact(const Schedule& schedule, BufferData& values, BufferData& bounds,
                        int64_t max_iterations = INT64_MAX, int threads = 1);
Expected read_expected(const UOp& output, const BufferData& values, const BufferData& bounds);

// What a correct run of SCHEDULE on BUFFERS (exact inputs, left untouched) leaves in its output
// OUTPUT: the exact run on widened copies.
Expected expect_output(const Schedule& schedule, const BufferData& buffers, size_t output = 0,
                       int64_t max_iterations = INT64_MAX, int threads = 1);

}  // namespace tunebed
