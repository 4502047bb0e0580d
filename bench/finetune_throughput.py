"""Examples per second of assignment 06's NER fine-tuning step against Hugging Face transformers on PyTorch.

    make bench [BENCH_ARGS="--steps 60 --warmup 5 --batch-size 16"]
    .venv/bin/python bench/finetune_throughput.py [--steps 60] [--warmup 5] [--batch-size 16]   (after make bench
                                                                                               installed its packages)

Ours is the course's own path, called as notebook 06 calls it: `training.fine_tune` (AdamW without decay on
biases and layer-norm weights, WarmupLinearDecay, `model.fit` on its batch source) on the reference head
`build_token_classifier` and loss `masked_token_loss` (autograde/reference/ner/model.py), for one epoch of exactly
warm-up + timed steps; a callback reads the clock at the end of each step. Theirs is
`transformers.BertForTokenClassification.from_pretrained` on the same checkpoint folder
(course_lib.pretrained.find_checkpoint(), offline), torch.optim.AdamW (the same parameters undecayed; fused, the
Trainer's default), get_linear_schedule_with_warmup over the same steps, train mode, `loss.backward();
optimizer.step(); scheduler.step(); optimizer.zero_grad()` (no gradient clipping: the course does none either).

Both see identical batches of the course corpus's training split (a random sample of warm-up + timed batches of
sentences), built once with the course's encoding and batch plan (NumPy): the same token ids, labels (-100 where the
loss ignores a token) and padding; the Keras part checks that fit received exactly these. Two settings: every batch
padded to 128 tokens (fine_tune's `bucket=128`), and each batch cut to its longest sentence rounded up to 16, as the
course trains. After `--warmup` steps (tracing, allocation) `--steps` steps are timed. Sanity check that both train:
the training loss of the last 10 steps, and the loss on the same validation batches (eval mode) before and after.

The data, the Keras part and the PyTorch part each run in their own process, one after the other, so neither
framework's thread pools disturb the other; PyTorch gets as many threads as the cores this process may use (what
TensorFlow uses). Other work on the machine skews such figures badly (PyTorch's threads suffer most), so each
setting waits (up to --wait-idle seconds) for the machine to be quiet, records the load average, measures the
share of the cores that other processes used during its timed steps, and is timed again (--retries) when that
share is above --max-others; the least disturbed attempt is kept, and the report flags a run that never was quiet.
The packages of the PyTorch side live in .venv/bench-site/ (bench/requirements.txt, installed by `make bench`),
which only that process reads. This file is the driver and the report; the parts are bench/finetune_data.py,
finetune_keras.py and finetune_torch.py (their shared settings and timing in finetune_common.py, the quiet-machine
measures in quiet.py).
Writes bench/results/finetune_throughput.json. About 6 minutes on 2 cores with the defaults.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # run as a script: bench's modules and course_lib import from the repository

from bench.finetune_common import (  # noqa: E402
    FRAMEWORKS,
    PEAK_LEARNING_RATE,
    SETTINGS,
    WARMUP_FRACTION,
    WEIGHT_DECAY,
)
from bench.finetune_torch import BENCH_SITE  # noqa: E402
from bench.quiet import cores  # noqa: E402

RESULTS = REPO / "bench" / "results"


# ---------------------------------------------------------------------------------------------------------
# The driver: one process per part


def run_part(part: str, args) -> tuple[dict, dict]:
    """Run one part in a fresh interpreter; (its results, the load average before it and its wall time)."""
    load_before = os.getloadavg()
    out = Path(args.work_dir) / f"{part}.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--part", part, "--part-output", str(out),
               "--data-file", args.data_file, "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--batch-size", str(args.batch_size), "--eval-batches", str(args.eval_batches),
               "--wait-idle", str(args.wait_idle), "--idle-threshold", str(args.idle_threshold),
               "--max-others", str(args.max_others), "--retries", str(args.retries)]
    started = time.perf_counter()
    completed = subprocess.run(command, cwd=REPO)
    if completed.returncode != 0:
        raise SystemExit(f"the {part} part failed (exit code {completed.returncode})")
    load = {"load_average_before": [round(x, 2) for x in load_before],
            "wall_seconds": round(time.perf_counter() - started, 1)}
    return json.loads(out.read_text()), load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60, help="timed training steps per setting (default 60)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first (tracing, allocation; default 5)")
    parser.add_argument("--batch-size", type=int, default=16, help="sentences per batch (default 16)")
    parser.add_argument("--eval-batches", type=int, default=4,
                        help="validation batches whose loss is compared before and after (default 4)")
    parser.add_argument("--wait-idle", type=float, default=300.0,
                        help="seconds to wait at most for a quiet machine before each timing (default 300)")
    parser.add_argument("--idle-threshold", type=float, default=0.15,
                        help="busy share of all cores under which the machine counts as quiet (default 0.15)")
    parser.add_argument("--max-others", type=float, default=0.05,
                        help="share of the cores other processes may use during the timed steps before a setting "
                             "is timed again (default 0.05)")
    parser.add_argument("--retries", type=int, default=2,
                        help="times a disturbed setting is timed again; the least disturbed attempt counts (default 2)")
    parser.add_argument("--part", choices=("data", "ours", "theirs"), help=argparse.SUPPRESS)
    parser.add_argument("--part-output", help=argparse.SUPPRESS)
    parser.add_argument("--data-file", help=argparse.SUPPRESS)
    parser.add_argument("--work-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.warmup < 1 or args.steps < 1:
        parser.error("--warmup and --steps must be at least 1 (the first step traces the Keras training step)")

    if args.part:
        # Each part's module is imported in its own process only: TensorFlow and PyTorch never share one.
        module, function = {"data": ("bench.finetune_data", "build_data"), "ours": ("bench.finetune_keras", "run_ours"),
                            "theirs": ("bench.finetune_torch", "run_theirs")}[args.part]
        result = getattr(importlib.import_module(module), function)(args)
        Path(args.part_output).write_text(json.dumps(result))
        return 0

    if not BENCH_SITE.is_dir():
        print(f"{BENCH_SITE} is missing: run `make bench` (it installs bench/requirements.txt there)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="finetune_throughput_") as work_dir:
        args.work_dir, args.data_file = work_dir, str(Path(work_dir) / "batches.npz")
        data, _ = run_part("data", args)
        parts, loads = {}, {}
        for part in ("ours", "theirs"):
            print(f"{FRAMEWORKS[part]} (load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}):", flush=True)
            parts[part], loads[part] = run_part(part, args)
    return report(args, data, parts, loads)


def report(args, data: dict, parts: dict, loads: dict) -> int:
    ours, theirs = parts["ours"], parts["theirs"]
    versions = {**ours["versions"], **theirs["versions"]}
    widths = data["timed_batch_widths"]
    intro = [
        f"{', '.join(f'{name} {version}' for name, version in versions.items())}; {cores()} cores "
        f"(TensorFlow threads: {ours['threads']['intra_op']}; PyTorch: {theirs['threads']['intra_op']})",
        f"all-MiniLM-L6-v2 + token head, course NER corpus (training split {data['train_sentences']} sentences); "
        f"batch {args.batch_size}, {args.steps} timed steps after {args.warmup}",
        f"per batch: the timed batches are {min(widths)}-{max(widths)} tokens wide "
        f"(mean {data['mean_timed_width']:.1f}); real tokens are {100 * data['real_token_share_per_batch']:.0f}% "
        f"of the positions there, {100 * data['real_token_share_fixed']:.0f}% at fixed 128",
    ]
    speed = [f"{'setting':<10} | {'ours ex/s':>9} {'theirs ex/s':>11} {'ours/theirs':>11} | "
             f"{'load avg before: ours':>21} {'theirs':>6} | {'others while timed: ours':>24} {'theirs':>6}"]
    speed.append("-" * len(speed[0]))
    sanity = [f"{'setting':<10} | {'train loss, last 10 steps':>25} | {'validation loss before -> after':>35}",
              f"{'':<10} | {'ours':>12} {'theirs':>12} | {'ours':>17} {'theirs':>17}"]
    sanity.append("-" * len(sanity[0]))
    rows, quiet = [], True
    for setting in SETTINGS:
        a, b = ours[setting], theirs[setting]
        ratio = a["examples_per_second"] / b["examples_per_second"]
        speed.append(f"{setting:<10} | {a['examples_per_second']:>9.1f} {b['examples_per_second']:>11.1f} "
                     f"{ratio:>11.2f} | {a['load_average_before'][0]:>21.2f} {b['load_average_before'][0]:>6.2f} | "
                     f"{100 * a['others_cpu_share']:>23.0f}% {100 * b['others_cpu_share']:>5.0f}%")
        sanity.append(f"{setting:<10} | {a['train_loss_last_steps']:>12.3f} {b['train_loss_last_steps']:>12.3f} | "
                      f"{a['eval_loss_before']:>8.3f} -> {a['eval_loss_after']:.3f} "
                      f"{b['eval_loss_before']:>8.3f} -> {b['eval_loss_after']:.3f}")
        rows.append({"setting": setting, "ours_examples_per_second": a["examples_per_second"],
                     "theirs_examples_per_second": b["examples_per_second"], "ratio_ours_over_theirs": ratio,
                     "ours": a, "theirs": b})
        quiet &= max(a["others_cpu_share"], b["others_cpu_share"]) <= args.max_others
    notes = [
        "ratio = ours / theirs in examples per second (1 or more: the course's step is at least as fast); "
        "load avg = 1-minute load average just before the setting was timed (our own previous setting counts in it); "
        "others = the share of the cores other processes used during the timed steps",
        f"batches given to fit: {', '.join(sorted({ours[s]['batches_checked'] for s in SETTINGS}))} to PyTorch's; "
        f"load average before each part: ours {', '.join(f'{x:.2f}' for x in loads['ours']['load_average_before'])}"
        f", theirs {', '.join(f'{x:.2f}' for x in loads['theirs']['load_average_before'])}",
    ]
    if not quiet:
        notes.append(f"NOT quiet: other processes used more than {100 * args.max_others:.0f}% of the cores while a "
                     "setting was timed, in every attempt; re-run when the machine is idle")
    print()
    for line in [*intro, "", *speed, "", *sanity, "", *notes]:
        print(line)

    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    output = RESULTS / "finetune_throughput.json"
    output.write_text(json.dumps({
        "finished_utc": stamp, "machine": {"cores": cores(), "cpu_count": os.cpu_count(),
                                           "processor": platform.processor() or platform.machine()},
        "settings": {"batch_size": args.batch_size, "steps": args.steps, "warmup": args.warmup,
                     "eval_batches": args.eval_batches, "peak_learning_rate": PEAK_LEARNING_RATE,
                     "warmup_fraction": WARMUP_FRACTION, "weight_decay": WEIGHT_DECAY,
                     "max_others": args.max_others, "retries": args.retries},
        "versions": versions, "threads": {"ours": ours["threads"], "theirs": theirs["threads"]},
        "data": data, "rows": rows, "parts": loads, "quiet": quiet,
        "report": [*intro, *speed, *sanity, *notes]}, indent=2))
    print(f"results: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
