#!/usr/bin/python3
"""Tests of the benchmark harness' own logic (tools/bench): FLOP counting against hand
counts on tiny ONNX models, and the table arithmetic and rendering. Needs only Debian's
python3-onnx; no ONNX Runtime, npm or network. Run by ctest (test_tools_bench), or:

    /usr/bin/python3 tests/tools/bench/test_bench_harness.py
"""

import os
import sys
import unittest

sys.dont_write_bytecode = True
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "tools", "bench"))

import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import bench_table  # noqa: E402
import flops  # noqa: E402


def init(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def make_model(nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


class FlopCountTest(unittest.TestCase):
    def test_conv_depthwise_gemm_matmul_relu(self):
        nodes = [
            # [1,3,8,8] * W[4,3,3,3], pad 1 -> [1,4,8,8]: 256 outputs x 27 products = 6912 MACs.
            helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r1"]),
            # Depthwise, stride 2: [1,4,4,4] = 64 outputs x 9 products = 576 MACs.
            helper.make_node("Conv", ["r1", "w2"], ["c2"], group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Flatten", ["c2"], ["f"]),
            # [1,64] x [64,10] (B stored [10,64], transB): 10 outputs x 64 = 640 MACs.
            helper.make_node("Gemm", ["f", "w3", "b3"], ["logits"], transB=1),
            # [2,3,4,5] x [5,6] -> [2,3,4,6]: 144 outputs x 5 = 720 MACs.
            helper.make_node("MatMul", ["m", "w4"], ["mm"]),
        ]
        model = make_model(nodes, [vi("x", [1, 3, 8, 8]), vi("m", [2, 3, 4, 5])],
                           [vi("logits", [1, 10]), vi("mm", [2, 3, 4, 6])],
                           [init("w1", [4, 3, 3, 3]), init("w2", [4, 1, 3, 3]), init("w3", [10, 64]),
                            init("b3", [10]), init("w4", [5, 6])])
        total, per_op = flops.model_flops(model)
        self.assertEqual(per_op, {"Conv": 2 * (6912 + 576), "Gemm": 2 * 640, "MatMul": 2 * 720})
        self.assertEqual(total, 17696)

    def test_integer_forms_count_like_their_float_ops(self):
        # MatMulInteger [2, 3] x [3, 4]: 2 * 4 outputs of 3 products; QLinearConv with a
        # [5, 2, 3, 3] weight over a [1, 2, 6, 6] input, pads 1: 5 * 36 outputs of 18.
        i8 = lambda name, dims: helper.make_tensor_value_info(name, TensorProto.INT8, dims)
        u8 = lambda name, dims: helper.make_tensor_value_info(name, TensorProto.UINT8, dims)
        scalar = lambda name, value, t=TensorProto.FLOAT: helper.make_tensor(name, t, [], [value])
        nodes = [helper.make_node("MatMulInteger", ["a", "b"], ["mm"]),
                 helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                                  pads=[1, 1, 1, 1])]
        graph = helper.make_graph(
            nodes, "g", [u8("a", [2, 3]), i8("b", [3, 4]), u8("x", [1, 2, 6, 6])],
            [helper.make_tensor_value_info("mm", TensorProto.INT32, None), u8("y", None)],
            [scalar("xs", 0.5), scalar("xz", 0, TensorProto.UINT8),
             helper.make_tensor("w", TensorProto.INT8, [5, 2, 3, 3], [1] * 90), scalar("ws", 0.5),
             scalar("wz", 0, TensorProto.INT8), scalar("ys", 0.5), scalar("yz", 0, TensorProto.UINT8)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        total, per_op = flops.model_flops(model)
        self.assertEqual(per_op, {"MatMulInteger": 2 * 24, "QLinearConv": 2 * 5 * 36 * 18})
        self.assertEqual(total, 2 * 24 + 2 * 3240)

    def test_gemm_trans_a_takes_k_from_the_rows(self):
        # A is stored [7,3] and used transposed: (3x7) x (7x5) = [3,5], 15 outputs x 7 = 105 MACs.
        model = make_model([helper.make_node("Gemm", ["a", "b"], ["y"], transA=1)], [vi("a", [7, 3])],
                           [vi("y", [3, 5])], [init("b", [7, 5])])
        self.assertEqual(flops.model_flops(model)[0], 210)

    def test_uncounted_ops_give_zero(self):
        model = make_model([helper.make_node("Relu", ["a"], ["y"])], [vi("a", [4, 4])], [vi("y", [4, 4])], [])
        self.assertEqual(flops.model_flops(model), (0, {}))

    def test_symbolic_shape_is_refused_with_the_node_named(self):
        model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"], name="proj")], [vi("a", ["n", 5])],
                           [vi("y", ["n", 6])], [init("b", [5, 6])])
        with self.assertRaisesRegex(flops.FlopError, "proj.*MatMul.*unknown"):
            flops.model_flops(model)


class TableMathTest(unittest.TestCase):
    def test_round_summary_is_median_and_range(self):
        self.assertEqual(bench_table.summarize_rounds([3.0, 1.0, 2.0]), (2.0, 1.0, 3.0))
        self.assertEqual(bench_table.summarize_rounds([4.0, 1.0, 2.0, 3.0]), (2.5, 1.0, 4.0))

    def test_ratio_gflops_and_fraction(self):
        self.assertAlmostEqual(bench_table.ratio(30.0, 40.0), 0.75)
        # 8.18 GFLOP in 40 ms = 204.5 GFLOP/s, of a 234 GFLOP/s peak = 87.4 %.
        g = bench_table.gflops_per_s(8.18e9, 40.0)
        self.assertAlmostEqual(g, 204.5)
        self.assertAlmostEqual(bench_table.fraction_of_peak(g, 234.0), 204.5 / 234.0)
        self.assertIsNone(bench_table.gflops_per_s(0, 40.0))
        with self.assertRaises(ValueError):
            bench_table.ratio(1.0, 0.0)

    def test_geometric_mean_of_ratios(self):
        # 2x and 0.5x cancel; the mean of 4x and 1x is sqrt(4 * 1) = 2x.
        self.assertAlmostEqual(bench_table.geometric_mean([2.0, 0.5]), 1.0)
        self.assertAlmostEqual(bench_table.geometric_mean([4.0, 1.0]), 2.0)
        self.assertAlmostEqual(bench_table.geometric_mean([0.8]), 0.8)
        with self.assertRaises(ValueError):
            bench_table.geometric_mean([])
        with self.assertRaises(ValueError):
            bench_table.geometric_mean([1.0, 0.0])

    def test_peak_is_the_best_isa_at_the_run_thread_count(self):
        results = [{"isa": "avx512", "threads": 1, "gflops": 110.0}, {"isa": "avx512", "threads": 2, "gflops": 220.0},
                   {"isa": "avx2", "threads": 2, "gflops": 230.0}, {"isa": "scalar", "threads": 2, "gflops": 15.0}]
        self.assertEqual(bench_table.peak_for_threads(results, 2), 230.0)
        self.assertEqual(bench_table.peak_for_threads(results, 1), 110.0)
        self.assertEqual(bench_table.peak_for_threads(results, 8), 230.0)  # more threads than measured
        # With 2 physical cores the 2-thread peak is at least 2 x the best 1-thread figure.
        self.assertEqual(bench_table.peak_for_threads(results, 2, cores=2), 230.0)
        loaded = [{"isa": "avx512", "threads": 1, "gflops": 200.0}, {"isa": "avx512", "threads": 2, "gflops": 240.0}]
        self.assertEqual(bench_table.peak_for_threads(loaded, 2, cores=2), 400.0)
        self.assertEqual(bench_table.peak_for_threads(loaded, 4, cores=2), 400.0)
        self.assertEqual(bench_table.peak_for_threads(loaded, 1, cores=2), 200.0)

    def test_row_cells(self):
        row = {"name": "resnet50_b1", "flops": 8.18e9, "infer": (50.0, 48.0, 52.5), "ort": (40.0, 39.0, 41.0),
               "infer_rss_mb": 180.4, "ort_rss_mb": 250.6, "max_abs_diff": 1.5e-5}
        self.assertEqual(bench_table.row_cells(row, 234.0),
                         ["resnet50_b1", "8.18", "50.0 (48.0–52.5)", "40.0 (39.0–41.0)", "1.25×",
                          "163.6 (70%)", "204.5 (87%)", "180", "251", "1.5e-05"])

    def test_row_without_ort_or_flops(self):
        row = {"name": "x", "flops": 0, "infer": (0.04, 0.035, 0.05), "ort": None}
        self.assertEqual(bench_table.row_cells(row, None),
                         ["x", "—", "0.040 (0.035–0.050)", "—", "—", "—", "—", "—", "—", "—"])

    def test_markdown_and_plain_rendering(self):
        md = bench_table.render_table(["a", "bb"], [["1", "2"], ["333", "4"]], True)
        self.assertEqual(md, "| a | bb |\n|---|---|\n| 1 | 2 |\n| 333 | 4 |")
        plain = bench_table.render_table(["a", "bb"], [["1", "2"], ["333", "4"]], False)
        self.assertEqual(plain, "a    bb\n---  --\n1    2\n333  4")


if __name__ == "__main__":
    unittest.main(verbosity=2)
