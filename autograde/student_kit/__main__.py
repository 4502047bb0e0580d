"""`python -m autograde.student_kit`: see autograde/student_kit/cli.py."""

import sys

from autograde.student_kit.cli import main

sys.exit(main())
