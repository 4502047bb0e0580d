# nbgrader's configuration in the instructor's Lab (`make formgrader` puts this folder on JUPYTER_CONFIG_PATH,
# so the formgrader, the Lab's nbgrader panels and `nbgrader` in its terminals all read it): the course's
# settings (autograde/nbgrader_settings.py, the same as autograde/nbgrader_config.py) with the course root, its
# exchange folder (.nbgrader/exchange in the course root, or COURSE_EXCHANGE from `make formgrader EXCHANGE=dir`).
# The formgrader's equations: data/nbconvert/templates/base/mathjax.html.j2, on JUPYTER_PATH.
from autograde.course import course_root
from autograde.nbgrader_settings import apply

c = get_config()  # noqa: F821 (nbgrader provides get_config)
apply(c, course_root())  # the repository, or COURSE_ROOT (`make formgrader COURSE=dir`)
