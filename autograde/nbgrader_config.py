# The course's nbgrader configuration. Instructors run nbgrader from this folder (`cd autograde && nbgrader ...`;
# COURSE_ROOT=dir for a course kept in another folder, as `make ... COURSE=dir`) or use the Makefile's targets.
from autograde.course import course_root
from autograde.nbgrader_settings import apply

apply(get_config(), course_root())  # noqa: F821 (nbgrader provides get_config)
