// Importing tinygrad's kernel ASTs (the published dataset, process-replay captures) as tunebed
// kernel ASTs.
//
// The dataset (extra/datasets/sops.gz) was captured by a tinygrad older than the seed commit
// 7b16fadd, and its ASTs differ from what the seed's fix_kernel_ast produces in two ways:
//
//   dataset                                    seed (and tunebed)
//   CONST c (VIEW st), st masked (padding)     WHERE(VALID(VIEW st), CONST c (VIEW z), CONST 0 (VIEW z))
//   SINK arg=KernelInfo(global_dims=...,       SINK arg=None; the opts tinygrad applied are kept
//        applied_opts=(Opt(...),...), ...)     apart, as "LOCAL:0:3,UPCAST:0:0"
//
// z is st's shape with all strides 0: the constant is the same everywhere, and VALID carries the
// mask, so the padding reads 0 as the older tinygrad's lowerer made it. A constant over an
// unmasked view is already in the seed's form (CONST c (VIEW z): merge_views folds the view in),
// and so is the dataset's newer WHERE(VALID) form, whose CONSTs are unmasked. The KernelInfo goes
// because it is tuning state, not the kernel: two captures of the same kernel with different opts
// must give the same canonical text and so the same hash, the key of the tuning database.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/ir/uop.hpp"
#include "core/rewrite/pattern_matcher.hpp"

namespace tunebed::imports {

// A parsed AST that is not a kernel tunebed can take; the message says what is wrong with it.
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ImportedKernel {
  UOp ast;                    // SINK (arg None) of STOREs, in the seed's kernel-AST form
  std::string tinygrad_opts;  // KernelInfo.applied_opts in tunebed's opts text; "" for none
  bool from_tinygrad = true;  // false for a kernel read from tunebed's canonical text
};

// The rules from the dataset's form to the seed's, run by graph_rewrite.
const PatternMatcher& tinygrad_to_tunebed();

// Maps a UOp parsed from tinygrad's text (either KernelInfo field set) onto a tunebed kernel AST
// and checks that it is one: the SINK's arg None, and every rule of kernel_ast_spec
// (core/spec/verify_kernel_ast.hpp). Throws ImportError with the broken rule's message.
ImportedKernel from_tinygrad(const UOp& parsed);
// parse_tinygrad_uop and from_tinygrad: throws ParseError or ImportError.
ImportedKernel parse_tinygrad_kernel(std::string_view text);
// A kernel in either text form: tinygrad's (it starts with "UOp(") or tunebed's canonical one
// (core/ir/text.hpp), checked against kernel_ast_spec either way. Throws ParseError or ImportError.
ImportedKernel parse_kernel_text(std::string_view text);

// tinygrad's Opt records, `(Opt(op=OptOps.LOCAL, axis=0, arg=3), ...)`, as "LOCAL:0:3,..." (the
// text core/opt's parse_opts reads). Throws ImportError for something that is not an Opt.
std::string opts_text(const Arg& applied_opts);


}  // namespace tunebed::imports
