"""How long fine-tuning will take on this machine, and how much training fits in the minutes a learner has.

Shared by notebooks 06, 07 and 08 (Keras and PyTorch alike: nothing here imports either).

- `parse_budget`: a named budget of fixed size ("default", "longer": reproducible figures) or minutes, "10 min".
- `time_steps` runs a few real training steps and `StepCost.fit` turns their times into a cost per step: a
  fixed part plus a part proportional to the positions the step computes (windows x width), and a start-up cost
  paid once (building the step's graph). Batches of similar lengths make the widths vary from step to step; fitting
  on positions is what lets a few steps predict a whole run.
- `largest_within`: the largest amount of training (questions, steps) whose predicted time fits the minutes.
- `estimate_table`: the estimates printed before a long training cell.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

MINUTES_FORM = re.compile(r"^\s*(\d+)\s*min\s*$")
# A measurement's limits: enough steps to see several widths, about 20 s at most on a slow laptop.
PROBE_STEPS = 10
PROBE_SECONDS = 20.0
# Steps whose time includes building the graph for new shapes; the fit leaves them out and StepCost.start keeps
# what they cost beyond an ordinary step.
START_STEPS = 2


@dataclass(frozen=True)
class Budget:
    """A named budget (fixed sizes) or a number of minutes."""

    name: str | None = None
    minutes: int | None = None

    @property
    def seconds(self) -> float | None:
        return None if self.minutes is None else 60.0 * self.minutes

    def __str__(self) -> str:
        return self.name if self.name is not None else f"{self.minutes} min"


def parse_budget(value, named: Iterable[str]) -> Budget:
    """`value` as a Budget: one of `named`, or a whole number of minutes written "10 min"; else a ValueError that
    names the forms allowed."""
    named = tuple(named)
    if isinstance(value, str):
        if value in named:
            return Budget(name=value)
        match = MINUTES_FORM.match(value)
        if match and int(match.group(1)) >= 1:
            return Budget(minutes=int(match.group(1)))
    forms = ", ".join(repr(name) for name in named)
    raise ValueError(f"BUDGET = {value!r} is not a budget: write one of {forms} (fixed sizes), or a whole number of "
                     f"minutes, at least 1, as \"10 min\"")


@dataclass
class StepCost:
    """Seconds per training step = per_step + per_position * positions (windows x width), plus `start` once."""

    per_step: float
    per_position: float
    start: float
    samples: list[tuple[int, float]] = field(default_factory=list)

    @classmethod
    def fit(cls, samples: Sequence[tuple[int, float]], *, start_steps: int = START_STEPS) -> StepCost:
        """Fit on measured (positions, seconds) steps, the first `start_steps` of which include building graphs."""
        samples = [(int(p), float(s)) for p, s in samples]
        steady = samples[start_steps:]
        if len(steady) < 2:
            raise ValueError(f"need at least {start_steps + 2} timed steps to fit a step's cost, got {len(samples)}")
        positions = np.array([p for p, _ in steady], float)
        seconds = np.array([s for _, s in steady], float)
        per_step, per_position = 0.0, float(seconds.sum() / positions.sum())  # through the origin: one rate
        if np.ptp(positions) > 0.2 * positions.mean():  # widths vary enough to tell the two parts apart
            slope, intercept = np.polyfit(positions, seconds, 1)
            if slope > 0 and intercept >= 0:
                per_step, per_position = float(intercept), float(slope)
        cost = cls(per_step, per_position, 0.0, samples)
        cost.start = sum(max(0.0, s - cost.step_seconds(p)) for p, s in samples[:start_steps])
        return cost

    def step_seconds(self, positions: float) -> float:
        return self.per_step + self.per_position * positions

    def run_seconds(self, step_positions: Iterable[int], *, built: bool = False) -> float:
        """Predicted seconds of a run whose steps compute these positions, with the start-up unless the step's
        graph is `built` already (a run that keeps the measurement's compiled step)."""
        return (0.0 if built else self.start) + sum(self.step_seconds(p) for p in step_positions)

    @property
    def measured_seconds(self) -> float:
        return sum(s for _, s in self.samples)


def time_steps(run_step: Callable, batches: Iterable[tuple[int, object]], *, steps: int = PROBE_STEPS,
               seconds: float = PROBE_SECONDS,
               clock: Callable[[], float] = time.perf_counter) -> list[tuple[int, float]]:
    """Run `run_step(batch)` on (positions, batch) pairs and time each; stop after `steps` steps or, once
    START_STEPS + 2 have run, after `seconds`. Returns (positions, seconds) per step."""
    samples: list[tuple[int, float]] = []
    began = clock()
    for positions, batch in batches:
        started = clock()
        run_step(batch)
        samples.append((int(positions), clock() - started))
        if len(samples) >= steps or (len(samples) >= START_STEPS + 2 and clock() - began >= seconds):
            break
    return samples


def spread_over_widths(plan: Sequence[tuple[Sequence[int], int]], count: int) -> list[int]:
    """Indices of `count` batches of a plan of (rows, width) chosen across its widths (narrowest to widest, evenly
    by rank), so that a few timed steps see the widths the run will see."""
    order = sorted(range(len(plan)), key=lambda i: (plan[i][1], len(plan[i][0])))
    if len(order) <= count:
        return order
    picks = np.linspace(0, len(order) - 1, count).round().astype(int)
    chosen = sorted((order[i] for i in picks), key=lambda i: -plan[i][1])
    # The widest, then the narrowest: Keras builds the step's graph for the first width and once more, for any
    # width, at the second, so both builds fall in the first START_STEPS steps, which the fit sets apart.
    return chosen[:1] + chosen[-1:] + chosen[1:-1]


def largest_within(seconds_for: Callable[[int], float], budget_seconds: float, *, high: int, low: int = 1) -> int:
    """The largest n in [low, high] with seconds_for(n) <= budget_seconds (seconds_for increasing); `low` when
    even that does not fit."""
    if seconds_for(high) <= budget_seconds:
        return high
    lo, hi = low, high  # seconds_for(hi) > budget; find the last n that fits
    if seconds_for(lo) > budget_seconds:
        return low
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if seconds_for(middle) <= budget_seconds:
            lo = middle
        else:
            hi = middle
    return lo


def duration(seconds: float) -> str:
    """A duration as the notebooks write it: "45 s", "4 min 50 s", "52 min"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds >= 600:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 60} min {seconds % 60} s"


def estimate_table(rows: Sequence[tuple[str, str, float]], *, chosen: str, unit: str) -> str:
    """Lines of (budget, amount of training, predicted seconds), the chosen budget marked."""
    width = max(len(budget) for budget, _, _ in rows)
    amount_width = max(len(unit), *(len(amount) for _, amount, _ in rows))
    lines = [f"  {'budget':{width}s}  {unit:>{amount_width}s}  expected fine-tuning"]
    for budget, amount, seconds in rows:
        mark = "  <- this run" if budget == chosen else ""
        lines.append(f"  {budget:{width}s}  {amount:>{amount_width}s}  {duration(seconds)}{mark}")
    return "\n".join(lines)


def measured_line(cost: StepCost, what: str) -> str:
    """One sentence on the measurement: how many steps, how long, which machine."""
    from course_lib import machine

    return (f"Measured {len(cost.samples)} training steps of {what} in {cost.measured_seconds:.0f} s on this machine "
            f"({machine.label()}).")
