"""A quiet machine for the benchmarks: other processes sharing the cores skew their figures badly (PyTorch's
most: its threads meet at the end of every operation, and one that has lost its core holds the others up). So a
benchmark waits for the cores to be quiet, measures the share of the cores other processes used while it timed, and
times again what they disturbed, keeping the least disturbed attempt.

Used by bench/finetune_throughput.py and bench/qa_throughput.py.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable


def cores() -> int:
    """The cores this process may use (what TensorFlow uses by default)."""
    return len(os.sched_getaffinity(0))


def busy_share(seconds: float) -> float:
    """Share of all cores busy (any process) over the next `seconds`."""
    import psutil

    return psutil.cpu_percent(interval=seconds) / 100


def wait_for_quiet(limit: float, threshold: float) -> dict:
    """Wait up to `limit` seconds for the cores' busy share over 3 s to drop below `threshold`: that share, the
    seconds waited and the load averages (1, 5, 15 minutes) when the wait ended."""
    started = time.perf_counter()
    while True:
        busy = busy_share(3.0)
        waited = time.perf_counter() - started
        if busy < threshold or waited >= limit:
            return {"busy_share_before": round(busy, 3), "waited_seconds": round(waited, 1),
                    "load_average_before": [round(x, 2) for x in os.getloadavg()]}


def system_busy_seconds() -> float:
    """CPU seconds all processes have spent busy since boot, over all cores."""
    import psutil

    t = psutil.cpu_times()
    return t.user + t.nice + t.system + t.irq + t.softirq + t.steal


class OthersMeter:
    """The share of all cores that other processes used between start() and stop(): all busy time less this
    process's own (with `children`, less its finished children's instead, for a part run in a child process)."""

    def __init__(self, *, children: bool = False):
        self.children = children

    def start(self) -> None:
        self.system, self.own, self.clock = system_busy_seconds(), self._own(), time.perf_counter()

    def stop(self) -> float:
        wall = time.perf_counter() - self.clock
        others = (system_busy_seconds() - self.system) - (self._own() - self.own)
        return max(0.0, others / (wall * (os.cpu_count() or 1)))

    def _own(self) -> float:
        t = os.times()
        return t.children_user + t.children_system if self.children else t.user + t.system


def least_disturbed(run_once: Callable[[], dict], retries: int, max_others: float, kept: Iterable[str]) -> dict:
    """run_once() (which waits for quiet and reports itself), again up to `retries` times while other processes
    used more than `max_others` of the cores during it (its "others_cpu_share"); the least disturbed attempt, with
    the `kept` keys of every attempt under "attempts"."""
    tries = []
    for _ in range(1 + retries):
        tries.append(run_once())
        if tries[-1]["others_cpu_share"] <= max_others:
            break
    best = dict(min(tries, key=lambda result: result["others_cpu_share"]))
    best["attempts"] = [{key: result[key] for key in kept} for result in tries]
    return best
