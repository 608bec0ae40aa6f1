# tunebed_layer(NAME DEPS dep...): a static library from every .cpp in the current folder.
# The include root is the repository root, so code includes "core/ir/uop.hpp".
function(tunebed_layer name)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${L_DEPS})
  else()
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${L_DEPS})
  endif()
endfunction()

# tunebed_test(NAME DEPS dep...): one GoogleTest program from every .cpp in the current folder,
# each TEST registered with ctest. gtest_discover_tests gives each test the skip regex
# "\\[  SKIPPED \\]" (CMake 3.25's GoogleTestAddTests.cmake), so a GTEST_SKIP shows as Skipped in
# ctest, not Passed, and scripts/test counts it as skipped.
include(GoogleTest)
function(tunebed_test name)
  cmake_parse_arguments(T "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT srcs)
    return()
  endif()
  add_executable(${name} ${srcs})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main rapidcheck)
  # Test code is set-up and assertions; the work it checks is in the optimized libraries. At -O0
  # a test file compiles in a fifth of the time (LLVM's optimizer was two thirds of it), and
  # GoogleTest, RapidCheck and the standard headers are parsed once per program, not per file:
  # the test command builds every test twice.
  target_compile_options(${name} PRIVATE -O0)
  if(NOT TARGET tunebed_test_pch)
    file(WRITE ${PROJECT_BINARY_DIR}/tunebed_test_pch.cpp "")
    add_library(tunebed_test_pch OBJECT ${PROJECT_BINARY_DIR}/tunebed_test_pch.cpp)
    target_link_libraries(tunebed_test_pch PRIVATE GTest::gtest rapidcheck)
    target_compile_options(tunebed_test_pch PRIVATE -O0)
    target_precompile_headers(tunebed_test_pch PRIVATE
      <gtest/gtest.h> <rapidcheck.h> <rapidcheck/gtest.h> <algorithm> <cmath> <filesystem> <fstream>
      <functional> <map> <memory> <random> <sstream> <string> <vector>)
  endif()
  target_precompile_headers(${name} REUSE_FROM tunebed_test_pch)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "TUNEBED_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
