// Everything of the test-support library in one include.
#pragma once

#include "infer/test_support/graph_builder.hpp"
#include "infer/test_support/host_tensor.hpp"
#include "infer/test_support/op_case.hpp"
#include "infer/test_support/plugin_handle.hpp"
#include "infer/test_support/runner.hpp"
#include "infer/test_support/test_host.hpp"
