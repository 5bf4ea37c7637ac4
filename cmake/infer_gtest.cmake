# infer_gtest(<target> [PROPERTIES <prop> <value>...])
#
# Registers a GoogleTest executable with ctest. By default every test of it becomes a
# ctest test of its own (gtest_discover_tests): that is what a developer wants to run,
# filter and read. With INFER_TEST_PER_EXECUTABLE=ON the executable is one ctest test
# named after the target, running all its tests in one process: CI's sanitizer phases use
# it, since an ASan or TSan process takes a quarter of a second to start, which, paid once
# per test, was most of the ASan phase (417 s, 100 s as one process per executable). PROPERTIES go to the discovered tests or to the
# one test alike (a value holding a ';' would be split, as gtest_discover_tests does).
option(INFER_TEST_PER_EXECUTABLE
       "Register each GoogleTest executable as one ctest test (sanitizer CI phases)" OFF)

function(infer_gtest target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "PROPERTIES")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "infer_gtest(${target}): unexpected arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(INFER_TEST_PER_EXECUTABLE)
    add_test(NAME ${target} COMMAND ${target} --gtest_brief=1)
    if(arg_PROPERTIES)
      set_tests_properties(${target} PROPERTIES ${arg_PROPERTIES})
    endif()
  else()
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES ${arg_PROPERTIES})
  endif()
endfunction()
