"""Time the from-scratch multi-head attention layer of assignment 03 against keras.layers.MultiHeadAttention.

The from-scratch layer is the reference layer of autograde/reference/multi_head_attention/keras_layers.py
(the notebook's solution, with the same Dense projections), so the notebook is not needed. Both layers get
the same weights, are compiled with tf.function, warmed up, and timed on self-attention with a padding
mask; the table gives the median of the repeats. Keras is timed twice: returning the attention weights
too (what the from-scratch layer does) and returning only the output (then it may use a fused kernel).

    .venv/bin/python bench/attention_speed.py

prints the table and writes it to bench/results/attention_speed.txt. About half a minute on 2 cores.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from course_lib import env  # noqa: E402

SIZES = [  # (name, batch, seq, d_model, heads)
    ("small", 8, 32, 64, 4),
    ("medium", 8, 128, 256, 8),
    ("large", 4, 512, 512, 8),
]
WARMUP, REPEATS, MIN_SECONDS = 3, 15, 2.0


def median_ms(fn, *args) -> float:
    import numpy as np

    for _ in range(WARMUP):
        fn(*args)[0].numpy()
    times, start_all = [], time.perf_counter()
    while len(times) < REPEATS and (len(times) < 3 or time.perf_counter() - start_all < MIN_SECONDS):
        start = time.perf_counter()
        fn(*args)[0].numpy()  # .numpy() waits for the result
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def compiled(scratch, keras_layer):
    """tf.function versions of the three calls that are timed; each returns a tuple, output first."""
    import tensorflow as tf

    run_scratch = tf.function(lambda x, mask: scratch(x, x, x, mask))
    run_keras = tf.function(lambda x, mask: keras_layer(x, x, x, attention_mask=mask, return_attention_scores=True))
    run_keras_output = tf.function(lambda x, mask: (keras_layer(x, x, x, attention_mask=mask),))
    return run_scratch, run_keras, run_keras_output


def main() -> None:
    env.setup(verbose=False)
    import keras
    import numpy as np
    import tensorflow as tf

    from autograde.reference import multi_head_attention as ref

    print(f"TensorFlow {tf.__version__}, Keras {keras.__version__}, {os.cpu_count()} CPUs; "
          f"median of up to {REPEATS} calls after {WARMUP} warm-up calls, tf.function, padding mask")
    header = (f"{'size':<7} {'batch':>5} {'seq':>5} {'d_model':>7} {'heads':>5} | {'scratch ms':>10} "
              f"{'keras ms':>9} {'ratio':>6} | {'keras out-only ms':>17} {'ratio':>6}")
    lines = [header, "-" * len(header)]
    print(header)
    print(lines[1])
    rng = np.random.default_rng(0)
    for name, batch, seq, d_model, heads in SIZES:
        x = tf.constant(rng.standard_normal((batch, seq, d_model)), tf.float32)
        lengths = rng.integers(seq // 2, seq + 1, size=batch)
        mask = tf.constant((np.arange(seq)[None, :] < lengths[:, None])[:, None, :], tf.float32)  # (batch, 1, seq)

        keras_layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads)
        scratch = ref.reference_layer(d_model, heads)
        keras_layer(x, x)
        scratch(x, x, x)
        ref.copy_keras_weights(keras_layer, scratch)

        run_scratch, run_keras, run_keras_output = compiled(scratch, keras_layer)
        difference = float(tf.reduce_max(tf.abs(run_scratch(x, mask)[0] - run_keras(x, mask)[0])))
        assert difference <= 1e-4, f"{name}: the layers disagree by {difference}"

        t_scratch = median_ms(run_scratch, x, mask)
        t_keras = median_ms(run_keras, x, mask)
        t_output = median_ms(run_keras_output, x, mask)
        line = (f"{name:<7} {batch:>5} {seq:>5} {d_model:>7} {heads:>5} | {t_scratch:>10.2f} {t_keras:>9.2f} "
                f"{t_scratch / t_keras:>6.2f} | {t_output:>17.2f} {t_scratch / t_output:>6.2f}")
        lines.append(line)
        print(line, flush=True)
    note = "ratio = from-scratch time / Keras time (below 1: the from-scratch layer is faster)"
    print(note)
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "attention_speed.txt").write_text("\n".join([*lines, note]) + "\n")


if __name__ == "__main__":
    main()
