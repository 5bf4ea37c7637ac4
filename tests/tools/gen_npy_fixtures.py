#!/usr/bin/python3
"""Writes the .npy fixtures of tests/tools/data/ with numpy itself, so the C++ reader and
writer are checked against the reference implementation of the format, not against
themselves.

Run from anywhere with Debian's python (the first python3 on PATH may lack numpy):
    /usr/bin/python3 tests/tools/gen_npy_fixtures.py
Re-running rewrites the same files byte for byte with Debian 12's numpy 1.24 (the
writer test compares infer's output to these files, including numpy's header padding).

The values of every array follow simple formulas that npy_test.cpp restates by hand:
    numeric (2, 3) arrays: arange(6) * 0.5 - 1 for floats, arange(6) - 2 for signed
    integers, arange(6) + 250 wrapped to the type for unsigned, bool [T, F, T, T, F, F].
"""
import io
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def save(name, array):
    np.save(os.path.join(DATA, name), array, allow_pickle=False)


def raw(name, data):
    with open(os.path.join(DATA, name), "wb") as f:
        f.write(data)


def npy_bytes(array, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, array, version=version, allow_pickle=False)
    return buf.getvalue()


def padded_header_file(array, min_header_len):
    """A version 2.0 file whose header is padded with spaces past 64 KiB (more than a
    version 1.0 length field can express), which the format allows and np.load reads."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (array.dtype.str, array.shape)
    header += " " * (min_header_len - len(header))
    prefix_len = 6 + 2 + 4
    header += " " * ((64 - (prefix_len + len(header) + 1) % 64) % 64) + "\n"
    data = b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header.encode("latin1") + array.tobytes()
    assert np.array_equal(np.load(io.BytesIO(data), max_header_size=1 << 20), array)
    return data


def main():
    os.makedirs(DATA, exist_ok=True)

    # One (2, 3) array per dtype numpy and infer share.
    for dt in ["float16", "float32", "float64", "complex64", "complex128"]:
        a = (np.arange(6, dtype=np.float64) * 0.5 - 1).astype(dt).reshape(2, 3)
        if dt.startswith("complex"):
            a = a + 1j * (np.arange(6).reshape(2, 3) * 0.25).astype(dt)
        save(f"{dt}_2x3.npy", a)
    for dt in ["int8", "int16", "int32", "int64"]:
        save(f"{dt}_2x3.npy", (np.arange(6) - 2).astype(dt).reshape(2, 3))
    for dt in ["uint8", "uint16", "uint32", "uint64"]:
        # 250..255: the top of uint8's range, plain values for the wider types.
        save(f"{dt}_2x3.npy", (np.arange(6) + 250).astype(dt).reshape(2, 3))
    save("bool_2x3.npy", np.array([[True, False, True], [True, False, False]]))

    # Special float16 values, checked bit for bit: 1, -2, 0.5, 65504 (max), 2**-14
    # (smallest normal), 2**-24 (smallest subnormal), inf, -0.
    save("float16_special.npy", np.array([1, -2, 0.5, 65504, 2.0**-14, 2.0**-24, np.inf, -0.0], dtype=np.float16))

    # Shapes: a scalar, zero-size arrays, a 1-D array and a rank-5 one.
    save("float32_scalar.npy", np.array(3.5, dtype=np.float32))
    save("float32_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    save("int64_empty.npy", np.zeros((0,), dtype=np.int64))
    save("int32_1d.npy", np.array([7, -1, 123456], dtype=np.int32))
    save("float32_rank5.npy", np.arange(2 * 1 * 3 * 1 * 2, dtype=np.float32).reshape(2, 1, 3, 1, 2))

    # Format versions 2.0 and 3.0 (4-byte header length), and a version 1.0 file whose
    # header is long because the array has numpy's maximum of 32 dims.
    raw("float32_v2.npy", npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3), version=(2, 0)))
    raw("float32_v3.npy", npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3), version=(3, 0)))
    save("float32_32dims.npy", np.full((1,) * 31 + (2,), 1.25, dtype=np.float32))
    raw("float32_bigheader.npy", padded_header_file(np.arange(6, dtype=np.float32).reshape(2, 3), 70000))

    # Inputs the digits model must refuse at run time: wrong dtype, wrong shape.
    save("int64_1x1x8x8.npy", np.arange(64, dtype=np.int64).reshape(1, 1, 8, 8))
    save("float32_1x1x7x7.npy", np.zeros((1, 1, 7, 7), dtype=np.float32))

    # Files the reader must refuse.
    save("fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save("bigendian_2x3.npy", np.arange(6, dtype=">f4").reshape(2, 3))
    save("structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    save("unicode.npy", np.array(["ab", "cd"]))
    good = npy_bytes(np.arange(6, dtype=np.float32).reshape(2, 3))
    raw("truncated_data.npy", good[:-5])        # the last element is cut short
    raw("truncated_header.npy", good[:40])      # ends inside the header
    raw("trailing_bytes.npy", good + b"\0\0\0\0")
    raw("bad_magic.npy", b"NOTNUMPY" + good[8:])
    raw("empty_file.npy", b"")


if __name__ == "__main__":
    main()
