"""A stand-in for a student's kernel in the tests: the grader's Remote talks to a real kernel Agent served in
the test's own process, so hidden checks run through the real wire protocol without starting a kernel."""

from __future__ import annotations

import re

from autograde import kernel_agent
from autograde.sandbox import Outcome


class InProcessKernel:
    """Answers the Remote's requests with a real Agent in this process (only `serve` calls are expected),
    counting them."""

    def __init__(self, work, namespace: dict):
        self.work, self.grading_folder = work, work / ".grading"
        self.grading_folder.mkdir(exist_ok=True)
        self.agent = kernel_agent.Agent(namespace, str(self.grading_folder))
        self.requests = 0

    def run(self, code: str, timeout: float) -> Outcome:
        number = re.fullmatch(r"\w+\.serve\((\d+)\)", code)
        assert number, f"unexpected code for the kernel: {code!r}"
        self.requests += 1
        self.agent.serve(int(number[1]))
        return Outcome("ok")
