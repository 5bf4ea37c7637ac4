"""Calibration and evaluation inputs: a folder of .npy files, or generated inputs.

Folder layouts (the first that applies):

1. One sub-folder per sample, holding one file per model input named after the input:
   DIR/<sample>/<input>.npy (characters of the input name other than letters, digits,
   '.', '_' and '-' may be written as '_'). Every sub-folder must hold every input.
2. Plain .npy files directly in DIR:
   - a model with one input: every DIR/*.npy is one sample of that input;
   - a model with several inputs: DIR/<input>_<key>.npy, one file per input for every
     sample key (e.g. input_ids_0.npy + attention_mask_0.npy).

A model with one input may also be given a single .npy file instead of a folder.

Samples are taken in natural name order (sample_2 before sample_10). A file may hold a
batch: its first dimension is free where the model's is symbolic. Where the model's first
dimension is fixed (e.g. 1), a file with k times as many rows is split into k samples.
Each file's dtype must be the input's dtype and every fixed dimension must match.
"""

import os
import re
from dataclasses import dataclass

import numpy as np

from .errors import QuantizeError


@dataclass
class Sample:
    """One run's feeds: {input name: array}, and where they came from (for messages)."""
    label: str
    feeds: dict


def _natural_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def file_stem(input_name):
    """The file name stem an input may also be written under."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", input_name)


def _load_npy(path):
    try:
        return np.load(path, allow_pickle=False)
    except Exception as error:
        raise QuantizeError(f"{path}: not a readable .npy file ({type(error).__name__}: "
                            f"{str(error).splitlines()[0] if str(error) else 'no detail'})") from None


def check_array(path, spec, array):
    """Raises QuantizeError unless array fits the input spec; returns how many samples of
    the model's fixed first dimension it holds (1 unless it is split)."""
    if spec.dtype is None:
        raise QuantizeError(f"{path}: input {spec.describe()} has a type .npy files cannot hold")
    if array.dtype != spec.dtype:
        raise QuantizeError(f"{path}: input '{spec.name}' is {spec.dtype.name}, the file holds {array.dtype.name}")
    if spec.dims and array.ndim != len(spec.dims):
        raise QuantizeError(f"{path}: shape {tuple(array.shape)} does not fit input {spec.describe()} "
                            f"(rank {array.ndim}, wanted {len(spec.dims)})")
    parts = 1
    for axis, (want, have) in enumerate(zip(spec.dims, array.shape)):
        if not isinstance(want, int):
            continue
        if axis == 0 and want > 0 and have != want and have % want == 0 and have > 0:
            parts = have // want
            continue
        if have != want:
            raise QuantizeError(f"{path}: shape {tuple(array.shape)} does not fit input {spec.describe()} "
                                f"(dimension {axis} is {have}, wanted {want})")
    return parts


def _make_samples(label, files, specs):
    """Samples from {input name: path} for one sample key (split along a fixed first dim)."""
    arrays, parts = {}, set()
    for spec in specs:
        path = files[spec.name]
        array = _load_npy(path)
        parts.add(check_array(path, spec, array))
        arrays[spec.name] = array
    if len(parts) > 1:
        raise QuantizeError(f"{label}: the files hold different numbers of rows for the model's fixed first "
                            f"dimension ({', '.join(os.path.basename(files[s.name]) for s in specs)})")
    # a symbolic dimension named alike in several inputs must have one size per sample
    sizes = {}
    for spec in specs:
        for want, have in zip(spec.dims, arrays[spec.name].shape):
            if isinstance(want, str):
                if sizes.setdefault(want, (have, files[spec.name]))[0] != have:
                    other = sizes[want]
                    raise QuantizeError(f"{files[spec.name]}: dimension '{want}' is {have} here but {other[0]} "
                                        f"in {other[1]}")
    (count,) = parts
    if count == 1:
        return [Sample(label, arrays)]
    out = []
    for k in range(count):
        feeds = {}
        for spec in specs:
            rows = spec.dims[0]
            feeds[spec.name] = np.ascontiguousarray(arrays[spec.name][k * rows:(k + 1) * rows])
        out.append(Sample(f"{label}[{k}]", feeds))
    return out


def load_folder(folder, specs, option="--calibration"):
    """The samples of a folder (see the module's docstring for the layouts)."""
    if os.path.isfile(folder) and folder.endswith(".npy") and len(specs) == 1:
        return _make_samples(folder, {specs[0].name: folder}, specs)
    if not os.path.exists(folder):
        raise QuantizeError(f"{folder}: no such folder (given to {option})")
    if not os.path.isdir(folder):
        raise QuantizeError(f"{folder}: not a folder (given to {option})")
    entries = sorted(os.listdir(folder), key=_natural_key)
    subdirs = [e for e in entries if os.path.isdir(os.path.join(folder, e))]
    npys = [e for e in entries if e.endswith(".npy") and os.path.isfile(os.path.join(folder, e))]
    if subdirs and npys:
        raise QuantizeError(f"{folder}: holds both .npy files and sub-folders; use one layout "
                            f"(e.g. move {npys[0]} into a sample folder)")
    samples = []
    if subdirs:
        for sub in subdirs:
            path = os.path.join(folder, sub)
            names = sorted(e for e in os.listdir(path) if e.endswith(".npy"))
            files = {}
            for spec in specs:
                for candidate in (spec.name + ".npy", file_stem(spec.name) + ".npy"):
                    if candidate in names:
                        files[spec.name] = os.path.join(path, candidate)
                        break
                else:
                    raise QuantizeError(f"{path}: no file for input '{spec.name}' (wanted {file_stem(spec.name)}.npy)")
            extra = sorted(set(names) - {os.path.basename(p) for p in files.values()})
            if extra:
                raise QuantizeError(f"{os.path.join(path, extra[0])}: names no input of the model "
                                    f"(inputs: {', '.join(s.name for s in specs)})")
            samples += _make_samples(path, files, specs)
    elif len(specs) == 1:
        for name in npys:
            path = os.path.join(folder, name)
            samples += _make_samples(path, {specs[0].name: path}, specs)
    else:
        groups = {}
        stems = sorted(((file_stem(s.name), s.name) for s in specs), key=lambda t: -len(t[0]))
        for name in npys:
            base = name[:-4]
            for stem, input_name in stems:
                if base.startswith(stem + "_") and len(base) > len(stem) + 1:
                    groups.setdefault(base[len(stem) + 1:], {})[input_name] = os.path.join(folder, name)
                    break
            else:
                raise QuantizeError(f"{os.path.join(folder, name)}: names no input of the model; with several "
                                    f"inputs files are <input>_<key>.npy (inputs: {', '.join(s.name for s in specs)})")
        for key in sorted(groups, key=_natural_key):
            files = groups[key]
            for spec in specs:
                if spec.name not in files:
                    raise QuantizeError(f"{folder}: sample '{key}' has no file for input '{spec.name}' "
                                        f"(wanted {file_stem(spec.name)}_{key}.npy)")
            samples += _make_samples(os.path.join(folder, f"*_{key}.npy"), files, specs)
    if not samples:
        raise QuantizeError(f"{folder}: no .npy files (given to {option})")
    return samples


def generate(specs, count, seed=0):
    """count generated samples: float inputs standard normal, integer inputs uniform in
    [0, 10), booleans random; symbolic dimensions are 1."""
    rng = np.random.default_rng(seed)
    samples = []
    for k in range(count):
        feeds = {}
        for spec in specs:
            if spec.dtype is None:
                raise QuantizeError(f"input {spec.describe()}: cannot generate values of this type")
            shape = [d if isinstance(d, int) and d > 0 else 1 for d in spec.dims]
            if spec.dtype.kind == "f":
                feeds[spec.name] = rng.standard_normal(shape).astype(spec.dtype)
            elif spec.dtype.kind in "iu":
                feeds[spec.name] = rng.integers(0, 10, size=shape).astype(spec.dtype)
            elif spec.dtype.kind == "b":
                feeds[spec.name] = rng.random(shape) > 0.5
            else:
                raise QuantizeError(f"input {spec.describe()}: cannot generate values of this type")
        samples.append(Sample(f"generated sample {k}", feeds))
    return samples


def split_rows(samples, specs, batch_size):
    """Splits samples whose inputs all have a symbolic first dimension into runs of at most
    batch_size rows (0: as they are), to bound the memory a calibration run takes."""
    if batch_size <= 0 or not specs or not all(spec.dims and not isinstance(spec.dims[0], int) for spec in specs):
        return samples
    out = []
    for sample in samples:
        rows = {a.shape[0] for a in sample.feeds.values()}
        if len(rows) != 1 or next(iter(rows)) <= batch_size:
            out.append(sample)
            continue
        n = next(iter(rows))
        for start in range(0, n, batch_size):
            out.append(Sample(f"{sample.label}[{start}:{min(n, start + batch_size)}]",
                              {k: np.ascontiguousarray(v[start:start + batch_size]) for k, v in sample.feeds.items()}))
    return out
