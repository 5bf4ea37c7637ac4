"""Models exported by PyTorch's own exporter (torch.onnx.export). The reference outputs
are PyTorch's outputs for the same inputs, in eval mode, computed before the export.

Every model gets random weights from a fixed seed; nothing is downloaded.
"""

import io
import math

import onnx
import torch
import torchvision
from torch import nn

from model_writer import Run, write_model

# Tolerances, and why. A model's output is compared element-wise with
# |got - want| <= atol + rtol * |want|.
CNN_TOLERANCE = (1e-4, 1e-4)
CNN_NOTE = ("Logits are O(1). The CPU backend sums convolutions in a different order than "
            "PyTorch (im2col + blocked GEMM; PyTorch uses oneDNN, and the exporter has folded "
            "BatchNorm into the convolution weights), so each layer differs in the last bits "
            "of float32; 1e-4 leaves room for that to accumulate through the network and still "
            "catches any real error (a wrong pad, stride or bias moves logits by 1e-2 or more).")
DEEP_CNN_TOLERANCE = (2e-4, 2e-4)
DEEP_CNN_NOTE = ("As for ResNet-18, but ResNet-50 is 50 layers deep with convolutions summing "
                 "over up to 4608 products: float32 reassociation error grows with depth and "
                 "width: PyTorch's own float32 logits (up to 6) are 6e-5 away from a float64 "
                 "run of the same network, and the CPU backend's about 1e-4 away from PyTorch's. "
                 "The bound is twice as loose as ResNet-18's.")


class _Exported:
    """The exporter's bytes, written to model.onnx as they are (re-serialising ResNet-50's
    100 MB costs seconds), and the parsed model for the manifest checks."""

    def __init__(self, data):
        self.data = data
        self.proto = onnx.load_from_string(data)


def _onnx_from_export(module, args, opset, input_names, output_names, dynamic_axes=None,
                      fold=True):
    """Exports to memory (no temporary files). torch.onnx.export runs ONNX's checker on
    the result itself. fold=False keeps what the exporter would fold (BatchNormalization
    after a convolution), as other exporters write it, for infer's optimizer to fold."""
    buffer = io.BytesIO()
    # In EVAL mode the exporter folds BatchNorm into convolutions whatever
    # do_constant_folding says; PRESERVE on a module in eval mode keeps it (inference form).
    training = torch.onnx.TrainingMode.EVAL if fold else torch.onnx.TrainingMode.PRESERVE
    torch.onnx.export(module, args, buffer, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=fold,
                      training=training)
    return _Exported(buffer.getvalue())


def _as_list(outputs):
    return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]


def _reference(module, args, output_names):
    with torch.no_grad():
        outputs = _as_list(module(*args))
    return [(n, o.detach().numpy().copy()) for n, o in zip(output_names, outputs)]


def _calibrate_batchnorm(model, seed):
    """Gives every BatchNorm random affine parameters and the running statistics of one
    random image, so that activations stay normalised through the network as in a trained
    model. With the default statistics (mean 0, var 1) BatchNorm is the identity in eval
    mode and activations grow block after block to values in the hundreds. The image is
    112x112, a quarter of the test's pixels: the per-channel statistics of random images
    barely depend on the size, and the calibration pass costs a quarter as much."""
    generator = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=generator))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=generator))
            m.momentum = None  # cumulative average: the statistics of the calibration batch
            m.reset_running_stats()
    model.train()
    with torch.no_grad():
        model(torch.randn((1, 3, 112, 112), generator=generator))
    model.eval()


def _export_cnn(cache_dir, name, factory, tolerance, note, seed, fold=True):
    torch.manual_seed(seed)
    model = factory()
    _calibrate_batchnorm(model, seed + 1)
    image = torch.randn((1, 3, 224, 224), generator=torch.Generator().manual_seed(seed + 2))
    outputs = _reference(model, (image,), ["logits"])
    proto = _onnx_from_export(model, (image,), 13, ["image"], ["logits"], fold=fold)
    how = "" if fold else (", do_constant_folding=False, training=PRESERVE (BatchNormalization "
                           "and the exporter's Identity nodes kept)")
    write_model(cache_dir, name, proto, [Run([("image", image.numpy())], outputs)], *tolerance, note,
                f"torchvision.models.{factory.__name__}, random weights (seed {seed}), "
                f"torch.onnx.export opset 13{how}, batch 1, 224x224")


def export_resnet18(cache_dir):
    # Exported without the exporter's folding, so that the model has its 20 BatchNorms and
    # infer's optimizer (conv_bn_folding) folds them.
    _export_cnn(cache_dir, "resnet18", torchvision.models.resnet18, CNN_TOLERANCE, CNN_NOTE, 18,
                fold=False)


def export_resnet50(cache_dir):
    _export_cnn(cache_dir, "resnet50", torchvision.models.resnet50, DEEP_CNN_TOLERANCE, DEEP_CNN_NOTE, 50)


def export_mobilenet_v2(cache_dir):
    _export_cnn(cache_dir, "mobilenet_v2", torchvision.models.mobilenet_v2, CNN_TOLERANCE,
                CNN_NOTE + " MobileNetV2 adds depthwise convolutions and Clip (ReLU6).", 2)


class _BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.gelu = nn.GELU()  # the exact form, 0.5 x (1 + erf(x / sqrt 2)), as in BERT
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def _split_heads(self, x):
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden, mask_bias):
        q = self._split_heads(self.query(hidden))
        k = self._split_heads(self.key(hidden))
        v = self._split_heads(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        batch, _, seq, _ = context.shape
        context = context.transpose(1, 2).reshape(batch, seq, self.heads * self.head_dim)
        hidden = self.attention_norm(hidden + self.attention_out(context))
        return self.output_norm(hidden + self.output(self.gelu(self.intermediate(hidden))))


class _BertEncoder(nn.Module):
    """A 2-layer BERT-style encoder: word + position + token-type embeddings, LayerNorm,
    self-attention with an additive padding mask, GELU feed-forward, and the tanh pooler."""

    def __init__(self, vocab=120, hidden=64, heads=4, intermediate=128, layers=2, max_positions=32):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_positions, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([_BertLayer(hidden, heads, intermediate) for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, token_type_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        hidden = self.norm(self.word(input_ids) + self.position(positions) + self.token_type(token_type_ids))
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            hidden = layer(hidden, mask_bias)
        return hidden, torch.tanh(self.pooler(hidden[:, 0]))


def _bert_inputs(generator, batch, seq, vocab, valid_lengths):
    ids = torch.randint(1, vocab, (batch, seq), generator=generator)
    types = torch.zeros((batch, seq), dtype=torch.long)
    mask = torch.zeros((batch, seq), dtype=torch.long)
    for b, length in enumerate(valid_lengths):
        mask[b, :length] = 1
        types[b, length // 2:length] = 1
        ids[b, length:] = 0  # padding token
    return ids, types, mask


def export_bert(cache_dir, name="bert_tiny", opset=17):
    torch.manual_seed(17)
    model = _BertEncoder().eval()
    # Embedding tables initialise as N(0, 1); BERT's are N(0, 0.02). The larger values are
    # kept: LayerNorm normalises them and they make the test more sensitive.
    names_in = ["input_ids", "token_type_ids", "attention_mask"]
    names_out = ["last_hidden_state", "pooler_output"]
    generator = torch.Generator().manual_seed(170)
    shapes = [(2, 12, [12, 7]), (1, 5, [4])]  # two concrete shapes for the symbolic dims
    runs = []
    for batch, seq, lengths in shapes:
        inputs = _bert_inputs(generator, batch, seq, 120, lengths)
        runs.append(Run([(n, t.numpy()) for n, t in zip(names_in, inputs)], _reference(model, inputs, names_out)))
    dynamic = {n: {0: "batch", 1: "sequence"} for n in names_in}
    dynamic["last_hidden_state"] = {0: "batch", 1: "sequence"}
    dynamic["pooler_output"] = {0: "batch"}
    example = _bert_inputs(generator, 2, 12, 120, [12, 7])
    proto = _onnx_from_export(model, example, opset, names_in, names_out, dynamic_axes=dynamic)
    layer_norm = ("LayerNormalization" if opset >= 17 else
                  "LayerNorm written out as ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add")
    write_model(cache_dir, name, proto, runs, 1e-4, 1e-4,
                "Hidden states are LayerNorm outputs, O(1). Softmax, erf-GELU and LayerNorm "
                "are computed in float32 in a different order than PyTorch; errors stay near "
                "1e-6, so 1e-4 is a safe bound.",
                "2-layer BERT-style encoder (hidden 64, 4 heads), random weights (seed 17), "
                f"torch.onnx.export opset {opset} ({layer_norm}), dynamic batch and sequence, "
                "run at [2,12] and [1,5]")


def export_bert_opset13(cache_dir):
    export_bert(cache_dir, "bert_tiny_opset13", 13)


class _SequenceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=10, hidden_size=16, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(32, 5)

    def forward(self, features):
        sequence, (h_n, c_n) = self.lstm(features)
        return self.head(sequence), h_n, c_n


def export_lstm(cache_dir):
    torch.manual_seed(14)
    model = _SequenceModel().eval()
    features = torch.randn((3, 7, 10), generator=torch.Generator().manual_seed(140))
    names_out = ["logits", "h_n", "c_n"]
    outputs = _reference(model, (features,), names_out)
    proto = _onnx_from_export(model, (features,), 14, ["features"], names_out)
    write_model(cache_dir, "lstm_bidirectional", proto, [Run([("features", features.numpy())], outputs)],
                1e-4, 1e-4,
                "Gates go through sigmoid/tanh, which bound the state; 7 time steps of float32 "
                "reassociation stay far below 1e-4.",
                "nn.LSTM(10, 16, num_layers=2, bidirectional=True, batch_first=True) + Linear, "
                "random weights (seed 14), torch.onnx.export opset 14, batch 3, 7 steps")


class _ControlFlow(nn.Module):
    """Branches on a tensor's value and loops a data-dependent number of times, so the
    scripted export has If and Loop nodes (a trip-count loop and a while loop)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x, steps):
        if x.sum() > 0:
            y = self.linear(x)
        else:
            y = -0.5 * self.linear(x)
        for _ in range(int(steps.item())):
            y = torch.tanh(self.linear(y)) + 0.1 * y
        halvings = 0
        while bool(y.abs().max() > 0.25) and halvings < 10:
            y = y * 0.5
            halvings += 1
        return y, torch.tensor(halvings)


def export_control_flow(cache_dir):
    torch.manual_seed(16)
    model = torch.jit.script(_ControlFlow().eval())
    generator = torch.Generator().manual_seed(160)
    x_pos = torch.randn((2, 8), generator=generator).abs() + 0.5  # sum > 0: first branch
    x_neg = -torch.randn((2, 8), generator=generator).abs() - 0.5  # sum < 0: second branch
    names_in = ["x", "steps"]
    names_out = ["y", "halvings"]
    runs = []
    for x, steps in [(x_pos, 3), (x_neg, 1), (x_pos, 0)]:
        args = (x, torch.tensor(steps, dtype=torch.long))
        runs.append(Run([(n, a.numpy()) for n, a in zip(names_in, args)], _reference(model, args, names_out)))
    proto = _onnx_from_export(model, (x_pos, torch.tensor(3, dtype=torch.long)), 13, names_in, names_out)
    ops = {n.op_type for n in proto.proto.graph.node}
    if not {"If", "Loop"} <= ops:
        raise RuntimeError(f"control_flow: the export has no If/Loop (ops: {sorted(ops)})")
    write_model(cache_dir, "control_flow", proto, runs, 1e-5, 1e-5,
                "A few small matrix products and tanh; float32 results agree to about 1e-7, and "
                "halvings (int64) must be equal.",
                "torch.jit.script module with an if on a tensor value, a loop of steps.item() "
                "iterations and a while loop on a tensor condition (If + Loop), seed 16, opset 13; "
                "three runs: both branches, 3, 1 and 0 iterations")


EXPORTERS = [
    ("resnet18", export_resnet18),
    ("resnet50", export_resnet50),
    ("mobilenet_v2", export_mobilenet_v2),
    ("bert_tiny", export_bert),
    ("bert_tiny_opset13", export_bert_opset13),
    ("lstm_bidirectional", export_lstm),
    ("control_flow", export_control_flow),
]
