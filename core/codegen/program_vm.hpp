// The program VM: a linearized kernel (linearize's list of UOps) executed one uop at a time on
// host buffers, as tinygrad's PYTHON device (runtime/ops_python.py) executes its uops. It is
// tunebed's "python backend": no compiler between the uops and their result, so the graph a pass
// table leaves can be run as it is, and a wrong value is the table's and not the renderer's.
//
// Each uop in the list gets one value: the lanes of a number (ConstValue, so ALU ops, CAST and
// BITCAST are exec_alu's, exactly as the AST interpreter and the constant folder compute them),
// or for a pointer (DEFINE_GLOBAL, DEFINE_REG, INDEX) the memory it points into plus, for an
// INDEX, one element offset and one gate per address. What the ops mean:
//   RANGE ... ENDRANGE   a loop: the RANGE's value counts from 0 up to its bound; ENDRANGE jumps
//                        back while the count is below it. A loop of bound <= 0 is skipped.
//   INDEX(buf, idx[, gate])    addresses buf[idx], lane by lane (a vector idx is several).
//   LOAD(index, deps...)       reads each address; a gated-off one reads 0 (the C renderer's
//                              `gate ? *p : 0`). A LOAD wider than its index's addresses reads a
//                              contiguous run from each (a folded float4 load).
//   STORE(index, value, ...)   writes each address whose gate is on.
//   DEFINE_REG           an accumulator: fresh per run, all-ones bytes (NaN floats, -1 ints) so a
//                        read before its reset shows in the result.
//   SPECIAL core_id      the CPU THREAD split: the whole list runs once per core id, in order.
//   VECTORIZE, GEP       build and pick lanes; an ALU on vectors works lane by lane.
//   WMMA                 the CPU register-block tensor core only (K 1, one thread):
//                        C[i][j] += A[i] * B[j]; before the devectorizer, several side by side.
//   NOOP, SINK, UNROLL   statements with no effect (ordering edges, groups of STOREs: the
//                        expander's UNROLL of a STORE, which pm_render flattens into the SINK).
// Anything else (REDUCE, CONTRACT, an UNROLL of a value, DEFINE_LOCAL, BARRIER, GPU ids), a source
// used before it is computed, a load or store out of its buffer, or a STORE of a dtype the buffer
// does not hold throws ProgramVMError naming the op and its place in the list: bad input, never a
// crash.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"

namespace tunebed {

class ProgramVMError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the list (ending with its SINK) on bufs: bufs[i] is DEFINE_GLOBAL i (its dtype, and at
// least the pointer's size), var_values[i] the value of the i-th DEFINE_VAR by name (the order
// of ProgramSpec::vars). STOREs write into bufs.
void run_program(const std::vector<UOp>& uops, const std::vector<HostBuffer*>& bufs,
                 const std::vector<int32_t>& var_values = {});

}  // namespace tunebed
