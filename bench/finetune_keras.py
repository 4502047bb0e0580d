"""The course's side of bench/finetune_throughput.py, in a process of its own: notebook 06's fine-tuning call
(`training.fine_tune` on the reference head and loss), timed from the end of the warm-up steps."""

from __future__ import annotations

import time

from bench.finetune_common import (
    BUCKETS,
    PEAK_LEARNING_RATE,
    SETTINGS,
    WARMUP_FRACTION,
    WEIGHT_DECAY,
    attempts,
)
from bench.finetune_data import encoded_samples, load_batches, same_batches
from bench.quiet import OthersMeter


def run_ours(args) -> dict:
    from course_lib import env

    env.setup(verbose=False)
    import keras
    import numpy as np
    import tensorflow as tf

    from autograde.reference.ner.model import build_token_classifier, masked_token_loss
    from course_lib import finetuning
    from course_lib.ner import LABELS, training
    from course_lib.pretrained import load_bert

    expected = load_batches(args.data_file)
    samples = encoded_samples(args)
    results = {"versions": {"tensorflow": tf.__version__, "keras": keras.__version__},
               "threads": {"intra_op": tf.config.threading.get_intra_op_parallelism_threads() or "default (all cores)",
                           "inter_op": tf.config.threading.get_inter_op_parallelism_threads() or "default"}}

    class StepTimer(keras.callbacks.Callback):
        """The clock at the end of every training step (after its loss is known); the other processes' CPU share
        over the timed steps."""

        def __init__(self):
            super().__init__()
            self.ends, self.meter, self.others = [], OthersMeter(), None

        def on_train_batch_end(self, batch, logs=None):
            float((logs or {}).get("loss", 0.0))  # the step has finished
            self.ends.append(time.perf_counter())
            if len(self.ends) == args.warmup:
                self.meter.start()
            elif len(self.ends) == args.warmup + args.steps:
                self.others = self.meter.stop()

    # What fit receives, to check it is what the PyTorch side gets: the course's batch source, watched.
    source = getattr(finetuning, "_Batches", None)
    seen: list = []
    if source is not None:
        make = source.__call__

        def watched(self):
            for batch in make(self):
                seen.append(batch)
                yield batch

        source.__call__ = watched

    def eval_loss(model):
        total, counted = 0.0, 0
        for inputs, labels in expected["eval"]:
            count = int((labels != -100).sum())
            total += float(masked_token_loss(labels, model(inputs, training=False))) * count
            counted += count
        return total / counted

    def once(setting):
        keras.utils.set_random_seed(0)
        model = build_token_classifier(load_bert().backbone, num_labels=len(LABELS))
        before = eval_loss(model)
        timer, seen[:] = StepTimer(), []
        history = training.fine_tune(model, masked_token_loss, samples["train"], None, epochs=1,
                                     batch_size=args.batch_size, peak_learning_rate=PEAK_LEARNING_RATE,
                                     warmup_fraction=WARMUP_FRACTION, weight_decay=WEIGHT_DECAY, seed=0,
                                     bucket=BUCKETS[setting], verbose=0, callbacks=[timer])
        if len(timer.ends) != args.warmup + args.steps:
            raise SystemExit(f"fit ran {len(timer.ends)} steps, not {args.warmup + args.steps}")
        seconds = timer.ends[-1] - timer.ends[args.warmup - 1]
        losses = history.steps["loss"]
        checked = ("identical" if source is not None and same_batches(seen, expected[setting])
                   else "NOT identical" if source is not None else "not checked (no finetuning._Batches)")
        if checked == "NOT identical":
            raise SystemExit(f"{setting}: fit did not receive the batches the PyTorch side gets; has "
                             "course_lib.finetuning's batch plan changed? (bench/finetune_data.py, plan)")
        result = {"seconds": seconds, "examples_per_second": args.steps * args.batch_size / seconds,
                  "others_cpu_share": timer.others,
                  "train_loss_first_timed_steps": float(np.mean(losses[args.warmup:args.warmup + 10])),
                  "train_loss_last_steps": float(np.mean(losses[-10:])),
                  "eval_loss_before": before, "eval_loss_after": eval_loss(model),
                  "optimizer_steps": int(model.optimizer.iterations.numpy()), "batches_checked": checked}
        del model
        keras.backend.clear_session()
        return result

    for setting in SETTINGS:
        results[setting] = attempts(args, "ours", setting, lambda: once(setting))  # noqa: B023
    return results
