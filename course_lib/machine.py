"""The machine a time was measured on, for the notebooks' estimates and every figure file.

The same fine-tuning took 10 min on one two-core machine and 22 min on another (AVX-512 against AVX2 only), so a
time means little without its machine. `describe()` reads what decides the speed of TensorFlow's CPU kernels: the
CPU model, the cores this process may use, and the vector instructions (AVX2, AVX-512, bf16). Figure files keep it
beside each figure (`require_machine` refuses one without it), and prose quotes a time with `label()`.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from pathlib import Path

KEYS = ("cpu", "cores", "avx2", "avx512", "bf16", "tensorflow")


def _cpu_flags_and_model() -> tuple[set[str], str]:
    """The CPU's feature flags and model name from /proc/cpuinfo (Linux); elsewhere no flags and platform's name."""
    flags: set[str] = set()
    model = ""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return flags, platform.processor() or platform.machine()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not model:
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return flags, model or platform.processor() or platform.machine()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use (a container may have fewer)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _tensorflow_version() -> str:
    try:
        from importlib.metadata import version

        return version("tensorflow")
    except Exception:  # noqa: BLE001  (a machine without TensorFlow still has a CPU to describe)
        return "not installed"


def describe() -> dict:
    """This machine: CPU model, cores, AVX2 / AVX-512 / bf16 (None where the system does not say), TensorFlow."""
    flags, model = _cpu_flags_and_model()
    known = bool(flags)
    return {
        "cpu": " ".join(model.split()),
        "cores": _cores(),
        "avx2": ("avx2" in flags) if known else None,
        "avx512": ("avx512f" in flags) if known else None,
        "bf16": bool({"avx512_bf16", "amx_bf16", "bf16"} & flags) if known else None,
        "tensorflow": _tensorflow_version(),
    }


def label(machine: Mapping | None = None) -> str:
    """A machine in words, as prose quotes a time: "a 2-core AMD EPYC with AVX2, without AVX-512"."""
    machine = describe() if machine is None else machine
    vector = []
    for key, name in (("avx2", "AVX2"), ("avx512", "AVX-512")):
        if machine.get(key) is not None:
            vector.append(("with " if machine[key] else "without ") + name)
    vector_text = f" {', '.join(vector)}" if vector else ""
    cpu = machine.get("cpu") or "CPU whose model was not recorded"
    return f"a {machine['cores']}-core {cpu}{',' if vector_text and not machine.get('cpu') else ''}{vector_text}"


def require_machine(figures: Mapping, where: str) -> None:
    """Every figure of a figure file ({name: {..., "machine": {...}}}) names its machine, or a ValueError names the
    figure and what is missing."""
    if not isinstance(figures, Mapping):
        raise ValueError(f"{where}: a figure file holds an object of named figures, not {type(figures).__name__}")
    for name, figure in figures.items():
        machine = figure.get("machine") if isinstance(figure, Mapping) else None
        if not isinstance(machine, Mapping):
            raise ValueError(f"{where}: figure {name!r} does not say which machine measured it (a 'machine' entry "
                             f"with {', '.join(KEYS)}: course_lib.machine.describe())")
        missing = [key for key in KEYS if key not in machine]
        if missing:
            raise ValueError(f"{where}: figure {name!r}'s machine lacks {', '.join(missing)}")


def same_kind(first: Mapping, second: Mapping) -> bool:
    """Whether two machines would time the same work alike: same CPU model, cores and vector instructions."""
    return all(first.get(key) == second.get(key) for key in ("cpu", "cores", "avx2", "avx512", "bf16"))


def kept_beside(previous: Mapping | None, measured: dict) -> dict:
    """A figure `measured` on this machine, with the measurements of the same figure on other kinds of machine kept
    beside it ("other_machines"), never written over; one of the same kind is replaced."""
    others = list(previous.get("other_machines", [])) if previous else []
    if previous and "machine" in previous:
        others.append({key: value for key, value in previous.items() if key != "other_machines"})
    others = [other for other in others if not same_kind(other.get("machine", {}), measured["machine"])]
    return {**measured, **({"other_machines": others} if others else {})}


def short_label(machine: Mapping) -> str:
    """A machine in a table cell: "2-core AMD EPYC, no AVX-512"."""
    cpu = machine.get("cpu") or "CPU of unrecorded model"
    vector = {True: ", AVX-512", False: ", no AVX-512"}.get(machine.get("avx512"), "")
    return f"{machine['cores']}-core {cpu}{vector}"
