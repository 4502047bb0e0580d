# The course's nbgrader configuration. Instructors run nbgrader from this folder
# (`cd autograde && nbgrader ...`) or use the Makefile targets `release` and `grade`.
from pathlib import Path

from autograde.course import apply

apply(get_config(), Path(__file__).resolve().parent.parent)  # noqa: F821 (nbgrader provides get_config)
