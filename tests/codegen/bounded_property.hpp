// check_bounded_property: a RapidCheck property run inside a GoogleTest with at most `cases`
// successful cases (or RC_PARAMS's max_success, when smaller), for properties whose every case
// compiles a kernel with a slow compiler (PoCL, NVRTC). The seed comes from RC_PARAMS as for
// RC_GTEST_PROP and is printed on failure: RC_PARAMS="seed=N" reruns the same cases.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace tunebed::testing {

template <class Property>
void check_bounded_property(int cases, Property&& property) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::min(params.maxSuccess, cases);
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(std::forward<Property>(property)), metadata, params);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  if (!result.template is<rc::detail::SuccessResult>())
    ADD_FAILURE() << "seed " << params.seed << "\n" << message.str();
  else
    std::printf("%s\n", message.str().c_str());
}

}  // namespace tunebed::testing
