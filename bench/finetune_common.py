"""What the parts of bench/finetune_throughput.py share: the settings of the run, and how each part times a
setting (after a quiet wait, again while other processes disturbed it)."""

from __future__ import annotations

from bench.quiet import least_disturbed, wait_for_quiet

FIXED_LENGTH = 128  # the course's max_length: [CLS] and [SEP] included
SETTINGS = ("fixed 128", "per batch")
BUCKETS = {"fixed 128": FIXED_LENGTH, "per batch": 16}  # training.fine_tune's `bucket`: 128 pads every batch to 128
FRAMEWORKS = {"ours": "course Keras (TF)", "theirs": "HF transformers (torch)"}
PEAK_LEARNING_RATE, WARMUP_FRACTION, WEIGHT_DECAY = 1e-4, 0.1, 0.01  # the notebook's CONFIG
INPUTS = ("token_ids", "segment_ids", "padding_mask")


def attempts(args, side: str, setting: str, run_once) -> dict:
    """run_once() after waiting for a quiet machine, again (up to --retries times) while other processes used more
    than --max-others of the cores during its timed steps; the attempt they disturbed least, with all of them."""

    def attempt() -> dict:
        quiet = wait_for_quiet(args.wait_idle, args.idle_threshold)
        result = run_once()
        result.update(load_average_before=quiet["load_average_before"], busy_share_before=quiet["busy_share_before"],
                      waited_for_quiet_seconds=quiet["waited_seconds"])
        print(f"  {side:<6} {setting:<10} {result['examples_per_second']:6.1f} examples/s  (load average before "
              f"{quiet['load_average_before'][0]:.2f}; other processes {100 * result['others_cpu_share']:.0f}% of the "
              "cores while timed)", flush=True)
        return result

    return least_disturbed(attempt, args.retries, args.max_others,
                           kept=("examples_per_second", "others_cpu_share", "load_average_before"))
