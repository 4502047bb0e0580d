"""Helpers for the notebooks of *Transformers, from attention to BERT*.

Plotting, data and the visible checks that learners run. No solution cell's code lives here, with one
exception: `course_lib.layers` holds the building blocks that later notebooks use (answers to 01, 02, 04 and 07),
stubbed in the students' kit until their assignment is handed out; the truth that grades them is the independent
references in `autograde/reference/` (CONTRIBUTING.md, "Where an answer lives").
"""

__version__ = "0.1.0"
