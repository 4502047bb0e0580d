"""A stand-in for BERT in the checks of train_step and evaluate: small enough to differentiate by hand.

`StandInBackbone` is called like keras-hub's `BertBackbone` (a dict of token_ids, segment_ids and padding_mask;
`training=`) and returns its two outputs, computed by a network the grader can follow in NumPy:

    h = tanh(E_token[token_ids] + E_segment[segment_ids]) * padding_mask,   dropout on h in training.

`StandInQAModel` puts start and end weights on it (logits = h K + c, K of shape (hidden, 2)): a model for the
visible checks, which must not hold the solution's QAModel. Every call of the backbone records whether gradients
were being recorded and whether it was in training mode, so a check can say what an evaluation loop forgot.
Weights travel as plain arrays under four names (`WEIGHT_NAMES`), whichever model holds them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

WEIGHT_NAMES = ("token_embedding", "segment_embedding", "kernel", "bias")


class StandInBackbone(torch.nn.Module):
    """BertBackbone's call and outputs on a one-layer network: embeddings, tanh, padding zeroed, dropout."""

    def __init__(self, vocabulary_size: int, hidden_dim: int, num_segments: int = 2, dropout: float = 0.0):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.token_embedding = torch.nn.Embedding(vocabulary_size, hidden_dim)
        self.segment_embedding = torch.nn.Embedding(num_segments, hidden_dim)
        self.rate = dropout
        self.calls: list[dict] = []  # one entry per call: {"grad_enabled", "training"}

    def forward(self, inputs: Mapping, training=None):
        training = self.training if training is None else bool(training)
        self.calls.append({"grad_enabled": torch.is_grad_enabled(), "training": training})
        token_ids = torch.as_tensor(inputs["token_ids"]).long()
        segment_ids = torch.as_tensor(inputs["segment_ids"]).long()
        mask = torch.as_tensor(inputs["padding_mask"]).to(torch.float32)
        vectors = torch.tanh(self.token_embedding(token_ids) + self.segment_embedding(segment_ids)) * mask[..., None]
        vectors = torch.nn.functional.dropout(vectors, self.rate, training=training)
        return {"sequence_output": vectors, "pooled_output": torch.tanh(vectors[:, 0])}


class StandInQAModel(torch.nn.Module):
    """Start and end weights on a StandInBackbone: forward(token_ids, segment_ids, padding_mask) -> (start, end)."""

    def __init__(self, backbone: StandInBackbone):
        super().__init__()
        self.backbone = backbone
        self.span_kernel = torch.nn.Parameter(torch.zeros(backbone.hidden_dim, 2))
        self.span_bias = torch.nn.Parameter(torch.zeros(2))

    def forward(self, token_ids, segment_ids, padding_mask):
        vectors = self.backbone(dict(token_ids=token_ids, segment_ids=segment_ids, padding_mask=padding_mask),
                                training=self.training)["sequence_output"]
        start = vectors @ self.span_kernel[:, 0] + self.span_bias[0]
        end = vectors @ self.span_kernel[:, 1] + self.span_bias[1]
        return start, end


def _head(model):
    """(kernel, bias) parameters of either model, the kernel as (hidden, 2) or, for a Linear, its transpose."""
    linear = getattr(model, "qa_outputs", None)
    if isinstance(linear, torch.nn.Linear):
        return linear.weight, linear.bias, True
    return model.span_kernel, model.span_bias, False


def _as_stored(model, values: Mapping[str, np.ndarray]) -> list[tuple]:
    """(parameter, float32 tensor laid out as the parameter is) for each of WEIGHT_NAMES."""
    kernel, bias, transposed = _head(model)
    parameters = {"token_embedding": model.backbone.token_embedding.weight,
                  "segment_embedding": model.backbone.segment_embedding.weight, "kernel": kernel, "bias": bias}
    pairs = []
    for name, parameter in parameters.items():
        value = np.asarray(values[name], np.float32)
        if name == "kernel" and transposed:
            value = value.T
        pairs.append((parameter, torch.from_numpy(np.ascontiguousarray(value))))
    return pairs


def set_weights(model, weights: Mapping[str, np.ndarray]) -> None:
    """Give a stand-in model (or the reference QAModel on a StandInBackbone) these weights, by WEIGHT_NAMES."""
    with torch.no_grad():
        for parameter, value in _as_stored(model, weights):
            parameter.copy_(value)


def set_gradients(model, gradients: Mapping[str, np.ndarray]) -> None:
    """Leave these gradients in every parameter's .grad, as a backward pass that nobody cleared would."""
    for parameter, value in _as_stored(model, gradients):
        parameter.grad = value.clone()


def get_weights(model) -> dict[str, np.ndarray]:
    """The model's weights by WEIGHT_NAMES, as float64 arrays (the kernel as (hidden, 2))."""
    kernel, bias, transposed = _head(model)
    kernel = kernel.detach().cpu().numpy()
    return {"token_embedding": model.backbone.token_embedding.weight.detach().cpu().numpy().astype(np.float64),
            "segment_embedding": model.backbone.segment_embedding.weight.detach().cpu().numpy().astype(np.float64),
            "kernel": (kernel.T if transposed else kernel).astype(np.float64),
            "bias": bias.detach().cpu().numpy().astype(np.float64)}


def build(model_class, config: Mapping, weights: Mapping[str, np.ndarray], *, dropout: float = 0.0):
    """`model_class(StandInBackbone(...))` with `weights`; config holds vocabulary_size, hidden_dim and
    num_segments."""
    backbone = StandInBackbone(config["vocabulary_size"], config["hidden_dim"], config.get("num_segments", 2),
                               dropout=dropout)
    model = model_class(backbone)
    set_weights(model, weights)
    return model


def stand_in_loss(start_logits, end_logits, start_positions, end_positions):
    """The loss the visible checks give train_step and evaluate in place of yours (any loss does to check a training
    step): the mean over the batch of ((1 - start logit at the answer's start)^2 + (1 - end logit at its end)^2) / 2."""
    rows = torch.arange(start_logits.shape[0], device=start_logits.device)
    start = start_logits[rows, torch.as_tensor(start_positions).long()]
    end = end_logits[rows, torch.as_tensor(end_positions).long()]
    return (((1.0 - start) ** 2 + (1.0 - end) ** 2) / 2.0).mean()
