"""Examples per second of assignment 08's fine-tuning step, TensorFlow against PyTorch, at full size; and how far
apart the two frameworks' logits are for the same saved weights.

    .venv/bin/python bench/qa_throughput.py [--batch-size 16] [--steps 10] [--warmup 2] [--width 256] [--threads 2]

The data are notebook 08's: the course's training questions, encoded into windows of 256 tokens by assignment 07's
make_windows (course_lib.layers), the first batch_size * (warmup + steps) windows cut to --width tokens (0: to the
longest of them). Both frameworks get exactly these arrays (course_lib.qa_pytorch.throughput.timing_windows), each
in a process of its own with Keras on its backend:

- TensorFlow: the pretrained BertBackbone with a Dense(2) head, assignment 07's span loss, AdamW with
  global_clipnorm=1.0, Keras's train_on_batch (compiled once, as fit compiles it);
- PyTorch: the same backbone on Keras's PyTorch backend in the reference QAModel, the reference train_step
  (zero_grad, forward, qa_loss, backward, clip_grad_norm_ at 1.0, AdamW, LambdaLR), as the notebook times the
  learner's.

Both get --threads CPU threads (OMP_NUM_THREADS for PyTorch, TF_NUM_INTRAOP_THREADS for TensorFlow; default: every
core this process may use). The first --warmup steps are not timed; the median of the others gives seconds per step.
Other work on the machine skews such figures badly, PyTorch's most: its threads meet at the end of every
operation, and a thread that has lost its core to another process holds the others up, which costs little on a big
matrix product and a lot on BERT's many small operations (with two threads on two busy cores, a step took 17 times
as long as with one). So each part first waits (up to --wait-idle seconds) for the cores to be quiet, and the report
gives the load average before it and the share of the cores other processes used while it ran; a part they
disturbed more than --max-others is run again (--retries), the least disturbed attempt is kept, and the report says
whether it was quiet: quote figures only from a quiet run, or compare at --threads 1. Then the logits of a model
saved from TensorFlow (pretrained backbone, seeded head) are computed on both backends for --compare windows of the
test split and their largest difference is reported.
Writes bench/results/qa_throughput_<threads>_threads.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: bench's modules and course_lib import from the repository

from bench.quiet import OthersMeter, least_disturbed, wait_for_quiet  # noqa: E402

RESULTS = REPO / "bench" / "results"
MODULE = "autograde.reference.qa_pytorch.model:QAModel"
TRAIN_STEP = "autograde.reference.qa_pytorch.training:train_step"


def windows(split: str, count: int | None) -> object:
    from course_lib.layers import make_windows
    from course_lib.pretrained import load_tokenizer
    from course_lib.qa import corpus
    from course_lib.qa.features import encode_examples

    examples = corpus.load_splits()[split][:count]
    return encode_examples(load_tokenizer(), examples, make_windows, max_length=256, stride=64)


def timed_once(backend: str, function: str, arrays: dict, args, **extra) -> dict:
    """One run of the child; the share of the cores other processes used meanwhile (all busy time less the
    child's own)."""
    from course_lib.qa_pytorch.backends import run_in_backend

    quiet = wait_for_quiet(args.wait_idle, args.idle_threshold)
    meter, started = OthersMeter(children=True), time.perf_counter()  # the part runs in a child process
    meter.start()
    rate = run_in_backend(backend, function, arrays=arrays, batch_size=args.batch_size, steps=args.steps,
                          warmup=args.warmup, threads=args.threads, **extra)
    others, wall = meter.stop(), time.perf_counter() - started
    result = {key: (value.item() if hasattr(value, "item") else value) for key, value in rate.items()}
    result.update(quiet, others_cpu_share=round(others, 3), process_seconds=round(wall, 1))
    print(f"  {result['framework']:<10} {result['examples_per_second']:6.2f} examples/s "
          f"({result['seconds_per_step']:.2f} s per step; load average before {quiet['load_average_before'][0]:.2f}, "
          f"other processes {100 * result['others_cpu_share']:.0f}% of the cores meanwhile)", flush=True)
    return result


def timed(backend: str, function: str, arrays: dict, args, **extra) -> dict:
    """timed_once, again (up to --retries times) while other processes used more than --max-others of the cores;
    the least disturbed attempt, with the rates of all."""
    best = least_disturbed(lambda: timed_once(backend, function, arrays, args, **extra), args.retries,
                           args.max_others, kept=("examples_per_second", "others_cpu_share"))
    best["quiet"] = best["others_cpu_share"] <= args.max_others
    return best


def logit_difference(count: int) -> dict:
    import numpy as np

    from course_lib.qa_pytorch.backends import run_in_backend

    test = windows("test", None)
    inputs = {name: np.asarray(test.arrays[name])[:count] for name in ("token_ids", "segment_ids", "padding_mask")}
    with tempfile.TemporaryDirectory(prefix="qa-bench-") as tmp:
        folder = str(Path(tmp) / "qa_model")
        run_in_backend("tensorflow", "course_lib.qa_pytorch.backends:make_tensorflow_weights", folder=folder, seed=0)
        in_tensorflow = run_in_backend("tensorflow", "course_lib.qa_pytorch.backends:tensorflow_logits",
                                       arrays=inputs, folder=folder)
        in_torch = run_in_backend("torch", "course_lib.qa_pytorch.backends:torch_logits", arrays=inputs,
                                  folder=folder, module=MODULE)
    difference = max(float(np.max(np.abs(in_torch[key] - in_tensorflow[key])))
                     for key in ("start_logits", "end_logits"))
    print(f"  largest difference between the backends' logits on {len(inputs['token_ids'])} test windows: "
          f"{difference:.2e}", flush=True)
    return {"windows": len(inputs["token_ids"]), "max_abs_difference": difference}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10, help="timed steps per framework")
    parser.add_argument("--warmup", type=int, default=2, help="steps before the timed ones")
    parser.add_argument("--width", type=int, default=256, help="tokens per window (0: the longest window)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="CPU threads of each framework (default: every core this process may use)")
    parser.add_argument("--compare", type=int, default=64, help="test windows whose logits are compared")
    parser.add_argument("--wait-idle", type=float, default=300.0, help="seconds to wait for a quiet machine")
    parser.add_argument("--idle-threshold", type=float, default=0.15, help="busy share of the cores deemed quiet")
    parser.add_argument("--max-others", type=float, default=0.1,
                        help="share of the cores other processes may use while a part runs before it is timed again")
    parser.add_argument("--retries", type=int, default=2, help="extra attempts of a disturbed part")
    args = parser.parse_args(argv)

    from course_lib.env import quiet_tensorflow

    quiet_tensorflow()
    from course_lib.qa_pytorch.throughput import timing_windows

    train = windows("train", None)
    arrays = timing_windows(train.arrays, args.batch_size, args.warmup + args.steps, width=args.width or None)
    width = arrays["token_ids"].shape[1]
    print(f"batches of {args.batch_size} windows of {width} tokens; {args.warmup} warm-up and {args.steps} timed "
          f"steps per framework, {args.threads} CPU threads each", flush=True)
    rates = {"TensorFlow": timed("tensorflow", "course_lib.qa_pytorch.throughput:tensorflow_rate", arrays, args),
             "PyTorch": timed("torch", "course_lib.qa_pytorch.throughput:torch_rate_child", arrays, args,
                              module=MODULE, train_step=TRAIN_STEP)}
    ratio = rates["TensorFlow"]["examples_per_second"] / rates["PyTorch"]["examples_per_second"]
    print(f"  TensorFlow / PyTorch: {ratio:.2f}", flush=True)
    report = {"date": dt.datetime.now().isoformat(timespec="seconds"), "cores": len(os.sched_getaffinity(0)),
              "threads": args.threads, "batch_size": args.batch_size, "width": int(width), "warmup": args.warmup,
              "steps": args.steps,
              "rates": rates, "tensorflow_over_pytorch": ratio, "logits": logit_difference(args.compare)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"qa_throughput_{args.threads}_threads.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {RESULTS / f'qa_throughput_{args.threads}_threads.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
