#!/usr/bin/python3
"""Generates the ONNX node test suite with Debian's python3-onnx and lists its cases.

usage: /usr/bin/python3 generate_node_tests.py OUT_DIR

Writes OUT_DIR/node/<case>/{model.onnx,test_data_set_N/*.pb} (ONNX's own generator) and
OUT_DIR/cases.txt: one line per case, "<case> tensor" for the cases whose graph inputs and
outputs are all numeric or bool tensors (the ones infer runs), or "<case> excluded <why>"
for sequence, optional, map and string cases. A stamp (OUT_DIR/stamp.txt, the onnx version)
makes a second run with the same onnx a no-op.

onnx 1.12's generators still use numpy aliases that numpy 1.24 removed (np.float, np.int,
np.bool, np.object); they are restored here, as the builtins they always stood for.
"""
import os
import shutil
import sys
import warnings


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate_node_tests.py OUT_DIR")
    out = sys.argv[1]
    try:
        import numpy as np
        import onnx
        from onnx.backend.test.cmd_tools import main as onnx_cmd_main
    except ImportError as e:
        sys.exit(f"generate_node_tests.py: {e}; install Debian's python3-onnx and python3-numpy "
                 "(tools/install-deps.sh does) and run with /usr/bin/python3")

    stamp_path = os.path.join(out, "stamp.txt")
    stamp = f"onnx {onnx.__version__} numpy {np.__version__}\n"
    if os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        print(f"generate_node_tests.py: {out} is up to date ({stamp.strip()})")
        return

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object)):
            if alias not in np.__dict__:
                setattr(np, alias, builtin)

    shutil.rmtree(os.path.join(out, "node"), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    saved_argv = sys.argv
    sys.argv = ["onnx", "generate-data", "-o", out]
    try:
        onnx_cmd_main()
    finally:
        sys.argv = saved_argv

    node_dir = os.path.join(out, "node")
    lines = []
    counts = {"tensor": 0, "excluded": 0}
    for case in sorted(os.listdir(node_dir)):
        model = onnx.load(os.path.join(node_dir, case, "model.onnx"), load_external_data=False)
        why = ""
        for v in list(model.graph.input) + list(model.graph.output):
            kind = v.type.WhichOneof("value")
            if kind != "tensor_type":
                why = f"{v.name} has type {kind.replace('_type', '')}"
                break
            if v.type.tensor_type.elem_type == onnx.TensorProto.STRING:
                why = f"{v.name} is a string tensor"
                break
        if why:
            lines.append(f"{case} excluded {why}")
            counts["excluded"] += 1
        else:
            lines.append(f"{case} tensor")
            counts["tensor"] += 1
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"generate_node_tests.py: {counts['tensor']} tensor-only cases, "
          f"{counts['excluded']} excluded (sequence/optional/string), in {node_dir}")


if __name__ == "__main__":
    main()
