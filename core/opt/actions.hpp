// The action space of search, and random legal opt sequences drawn from it.
//
// The actions are tinygrad's (opt/search.py at the seed): UPCAST, UNROLL, LOCAL, GROUPTOP,
// GROUP, PADTO, TC and SWAP over small axes and the amounts that search tries, plus NOLOCALS
// (tinygrad's NOLOCALS=1 list) and tunebed's THREAD with every amount up to 32.
// kernel_actions keeps those that apply legally to a kernel and stay within tinygrad's beam
// limits (at most 256 upcast elements and 1024 local threads); random_opts walks them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/opt/kernel.hpp"

namespace tunebed {

const std::vector<Opt>& search_actions();

// Each legal action with the kernel it leads to, in the order of search_actions(). As
// tinygrad's get_kernel_actions, an action whose amount equals its whole axis is skipped when
// the same action with amount 0 is in the list (the two are the same kernel).
std::vector<std::pair<Opt, Kernel>> kernel_actions(const Kernel& k);

// The kernel's upcast elements (UPCAST and UNROLL extents multiplied) and local threads (LOCAL
// and GROUP_REDUCE; a symbolic size at its maximum), as tinygrad's get_kernel_actions counts them
// against its limits.
struct UpcastAndLocal {
  int64_t upcast = 1, local = 1;
};
UpcastAndLocal upcast_and_local(const Kernel& k);

// A random legal sequence of at most max_opts opts for k, the same for the same seed: at each
// step, stop with probability 1/(legal actions + 1), else apply a random legal action.
// Re-applying the result in order to k succeeds.
std::vector<Opt> random_opts(const Kernel& k, uint64_t seed, int max_opts = 8);

}  // namespace tunebed
