"""A pytest process that grows past its memory limit fails the test it is running, by name, instead of being killed.

Without it, a test that runs away with memory (student code run in-process, a kernel flooding its output) grows
its pytest-xdist worker until the machine's OOM killer ends the worker. xdist then gives what that worker held to a
new one, which can grow again, and its loadgroup scheduler may wait forever after such a crash (pytest-xdist issue
1378): a CI run once lost two workers at 22 GiB each and was stopped by its 90-minute limit, with no test named.

Here a thread reads the process's resident memory a few times a second. Past the limit it raises MemoryError in the
main thread, where tests run: the test fails with the figures and frees what it held. If the process is still over
the limit GRACE seconds later (the test swallowed the error, or is stuck in native code where Python cannot raise),
or reaches half as much again as the limit meanwhile (native code that keeps allocating would meet the OOM killer
first), every thread's stack goes to stderr and the process exits: xdist then names the test its worker crashed on,
and `make test` (--max-worker-restart=0) stops. COURSE_TEST_MEMORY_GIB sets the limit (default 8 GiB; a worker
needs about 3), COURSE_TEST_MEMORY_GRACE the seconds (default 60). tests/conftest.py loads this file as a plugin.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import sys
import threading
import time

LIMIT_ENV, GRACE_ENV = "COURSE_TEST_MEMORY_GIB", "COURSE_TEST_MEMORY_GRACE"
DEFAULTS = {LIMIT_ENV: 8.0, GRACE_ENV: 60.0}  # GiB; seconds a process may stay over the limit once told
PERIOD = 0.2  # seconds between two readings
_SIGNAL = signal.SIGUSR2

_state = {"test": "no test yet", "peak": 0, "config": None, "limit": 0}


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def setting(name: str) -> float:
    text = os.environ.get(name, "").strip()
    try:
        return float(text) if text else DEFAULTS[name]
    except ValueError:
        raise SystemExit(f"{name}={text!r}: expected a number, e.g. {DEFAULTS[name]:g}") from None


def limit_bytes() -> int:
    return int(setting(LIMIT_ENV) * 2**30)


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f} GiB"


def _raise_in_main(signum, frame):
    raise MemoryError(f"{_state['test']} grew this pytest process to {_gib(_state['peak'])}, past its limit of "
                      f"{_gib(_state['limit'])} ({LIMIT_ENV}): tests/memory_guard.py stopped it")


def _give_back() -> None:
    """Ask glibc to return freed memory to the system, so that what a failed test let go counts as gone."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _end(size: int, since: float) -> None:
    """Every thread's stack on the real stderr (pytest sends it to a file while a test runs), then exit."""
    capture = _state["config"].pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=False)
    os.write(2, (f"\ntests/memory_guard.py: {_state['test']} still holds {_gib(size)}, {since:.0f} s after "
                 f"MemoryError was raised in it (limit {_gib(_state['limit'])}); every thread's stack follows, then "
                 "this process exits\n").encode())
    faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)
    os._exit(70)


def _watch(limit: int, grace: float) -> None:
    told_at = None
    while True:
        time.sleep(PERIOD)
        if resident_bytes() > limit:
            _give_back()
        size = resident_bytes()
        if size <= limit:
            told_at = None
            continue
        _state["peak"] = max(_state["peak"], size)
        if told_at is None:
            told_at = time.monotonic()
            os.kill(os.getpid(), _SIGNAL)  # Python runs the handler in the main thread
        elif time.monotonic() - told_at > grace or size > 1.5 * limit:
            _end(size, time.monotonic() - told_at)


def pytest_configure(config):
    """Watch this process: pytest's own, or an xdist worker (each runs this hook)."""
    limit, grace = limit_bytes(), setting(GRACE_ENV)
    _state.update(config=config, limit=limit)
    signal.signal(_SIGNAL, _raise_in_main)
    threading.Thread(target=_watch, args=(limit, grace), name="memory-guard", daemon=True).start()


def pytest_runtest_logstart(nodeid, location):
    _state["test"] = nodeid
    _state["peak"] = 0
