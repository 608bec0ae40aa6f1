# Fails if a source in DIR includes a header from a project folder it does not link: the layers'
# link lines (tunebed_layer DEPS) are the rule, and this checks the includes against them.
# Run as: cmake -DROOT=<repo> -DDIR=<folder> -DALLOWED="a|b" -DFOLDERS="a|b|c" -P check_includes.cmake
# ALLOWED: the folders DIR may include from (itself and what it links); FOLDERS: every project
# folder whose headers are checked (tests/ always counts as one).
string(REPLACE "|" ";" allowed "${ALLOWED}")
string(REPLACE "|" ";" folders "${FOLDERS}")
file(GLOB sources ${ROOT}/${DIR}/*.hpp ${ROOT}/${DIR}/*.cpp)
set(found "")
foreach(src IN LISTS sources)
  file(STRINGS ${src} lines REGEX "^#include \"[^\"]+/[^\"]+\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)/[^/\"]+\".*" "\\1" folder "${line}")
    string(REGEX MATCH "^tests(/|$)" in_tests "${folder}")
    list(FIND folders "${folder}" known)
    list(FIND allowed "${folder}" ok)
    if((in_tests OR known GREATER -1) AND ok EQUAL -1)
      file(RELATIVE_PATH rel ${ROOT} ${src})
      list(APPEND found "${rel}: ${line}")
    endif()
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " lines)
  list(JOIN allowed ", " allowed_text)
  message(FATAL_ERROR "${DIR} may include only from ${allowed_text}; found:\n  ${lines}")
endif()
message(STATUS "${DIR} includes only what it links")
