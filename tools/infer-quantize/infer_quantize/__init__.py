"""infer_quantize: post-training quantization of float ONNX models, run with infer.

The `infer-quantize` command (tools/infer-quantize/infer-quantize) is a thin front end
over these modules:

- errors:    QuantizeError, the one-line user error;
- model:     loading and checking the float model, its inputs and tensor types;
- data:      calibration and evaluation inputs (.npy folders, or generated inputs);
- runner:    running a model with infer (the Python module, or the infer-run binary);
- params:    scales and zero points (activations, per-channel weights, int32 bias);
- calibrate: activation ranges by min-max, percentile or entropy (KL divergence);
- qdq:       the static QDQ graph, in ONNX Runtime's conventions;
- dynamic:   the dynamic form (DynamicQuantizeLinear + MatMulInteger);
- report:    the accuracy report against the float model;
- progress:  the text progress bar on stderr;
- cli:       argument parsing and the command's main().
"""

__all__ = ["QuantizeError"]

from .errors import QuantizeError  # noqa: E402
