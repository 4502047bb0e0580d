"""Training-mode checks of assignment 04's layers: every dropout acts when `training=True`, and nowhere else.

Dropout draws a new random mask at each call, so its result cannot be compared with the reference. Instead,
each dropout site is tested alone: the weights that carry the other sites' noise are set to zero (an
attention's output kernel, the feed-forward block's last Dense), so those sites cannot change the output,
and a call in training mode must then differ from a call at inference. A composite's parts are replaced by
probes (autograde/checks/transformer/probes.py) that output their `training` flag, which says whether the
composite runs them in training mode.
"""

from __future__ import annotations

import numpy as np

from autograde.checks.weights import assign
from course_lib.checking import CheckFailed, to_array

NOTHING_ACTS = "is the same with training=True as with training=False: no dropout acts in training. {advice}"
ON_THE_OUTPUT = ("has {share:.0%} exact zeros with training=True and none at inference: a dropout is applied to "
                 "the {what}'s result. {advice}")
# Where the dropouts go, for the two messages above
BLOCK_ADVICE = ("Call the attention with training=training, and apply self.dropout_ffn to the feed-forward block's "
                "output (before the residual) with training=training")
STACK_ADVICE = ("Apply self.dropout to the scaled embeddings plus the positional encoding (before the layers) with "
                "training=training, and call each layer with training=training")


def attention_silenced(prefix: str) -> tuple[str, ...]:
    """The weights that, at zero, make an attention's output a constant (its output bias), dropout or not."""
    return (f"{prefix}output_dense.kernel",)


def feed_forward_silenced(prefix: str) -> tuple[str, ...]:
    """The weights that, at zero, make the feed-forward block output zeros, which dropout leaves unchanged."""
    return (f"{prefix}ffn.layers[1].kernel", f"{prefix}ffn.layers[1].bias")


def block_sites(prefix: str, *, decoder: bool) -> dict[str, tuple[str, ...]]:
    """A block's dropout sites (its attentions, its dropout_ffn), each with the weights that silence it."""
    names = ("mha1", "mha2") if decoder else ("mha",)
    sites = {name: attention_silenced(f"{prefix}{name}.") for name in names}
    sites["dropout_ffn"] = feed_forward_silenced(prefix)
    return sites


SITE_ADVICE = {
    "mha": "the self-attention's dropout (set in __init__) never acts in training: call self.mha with "
           "training=training",
    "mha1": "the self-attention's dropout (set in __init__) never acts in training: call self.mha1 with "
            "training=training",
    "mha2": "the cross-attention's dropout (set in __init__) never acts in training: call self.mha2 with "
            "training=training",
    "dropout_ffn": "self.dropout_ffn never acts in training: apply it to the feed-forward block's output, before "
                   "the residual, with training=training",
}


def expect_dropout_acts(inference, training, name: str, *, what: str, advice: str) -> None:
    """A call in training mode differs from inference, and not by zeroing the result itself (`what`: "layer")."""
    inference, training = to_array(inference, name), to_array(training, name)
    if inference.shape != training.shape or np.allclose(inference, training, atol=1e-6):
        raise CheckFailed(f"{name} {NOTHING_ACTS.format(advice=advice)}")
    share = float(np.mean(training == 0.0))
    if share > 0.2 and not np.any(inference == 0.0):
        raise CheckFailed(f"{name} {ON_THE_OUTPUT.format(share=share, what=what, advice=advice)}")


def expect_each_site_acts(variables: dict, weights: dict, run, sites: dict, name: str, advice: dict) -> None:
    """Each dropout site named in `advice`, alone (the weights of the other `sites` at zero), changes the output
    in training mode. `run(training)` calls the learner's layer; `weights` are the values set in `variables`."""
    for site, message in advice.items():
        others = [key for other, keys in sites.items() if other != site for key in keys]
        try:
            assign(variables, {key: np.zeros(weights[key].shape) for key in others})
            inference, training = run(False), run(True)
        finally:
            assign(variables, {key: weights[key] for key in others})
        if np.allclose(to_array(inference, name), to_array(training, name), atol=1e-6):
            raise CheckFailed(f"{name}: {message}")


def expect_probe_flags(output, name: str, parts: str, advice: str) -> None:
    """The output of a composite built with probes, called in training mode, must be all ones."""
    if not np.allclose(to_array(output, name), 1.0):
        raise CheckFailed(f"{name}: the {parts} never run in training mode, though the call has training=True. "
                          f"{advice}")
