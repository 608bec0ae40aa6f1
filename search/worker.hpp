// The worker's side of candidate isolation: the loop a forked worker process runs.
//
// For each Job it reads, the worker opens the device (once per spec, in the worker, so the
// parent never holds a device), compiles the source and answers `compiled` with the compile
// time, then waits for `go`: the pool lets one worker at a time run and time, so compiles
// proceed in parallel while timings do not disturb one another. A job's JobData comes before it,
// once per kernel, and stays in device buffers of its own. On `go` it copies the data into them
// again (the output poisoned: check.hpp's poisoned()), runs once, verifies
// against the reference, and if correct times the kernel (measure_samples), reusing the verified
// run as the first warm-up, or as the first sample when it was long. A compile error answers
// `result` at once.
//
// Whatever the candidate does to the worker (a segfault, an endless loop) is the pool's to
// notice: the worker makes no attempt to survive its own candidates.
#pragma once

#include "search/job.hpp"

namespace tunebed::search {

// Serves jobs on FD until the parent closes it; returns then (the caller _exits). INHERITED: data
// the worker holds from its birth, as if sent (a replacement worker forked with the parent's
// memory has it already: sending it again cost a stopped candidate's replacement 60-80 ms of
// encoding, copying and decoding 7 MB for matmul 512); null for none.
void serve_jobs(int fd, std::shared_ptr<const JobData> inherited = nullptr);

}  // namespace tunebed::search
