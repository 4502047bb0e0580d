# nbgrader's configuration in the instructor's Lab (`make formgrader` puts this folder on JUPYTER_CONFIG_PATH,
# so the formgrader, the Lab's nbgrader panels and `nbgrader` in its terminals all read it): the course's
# settings (autograde/course.py, the same as autograde/nbgrader_config.py) with the repository as the course
# root, and an exchange folder for releasing and collecting on this machine.
import os
from pathlib import Path

from autograde.course import REPO_ROOT, apply, course_root

c = get_config()  # noqa: F821 (nbgrader provides get_config)
apply(c, course_root())  # the repository, or COURSE_ROOT (`make formgrader COURSE=dir`)

# Git-ignored; `make formgrader EXCHANGE=/srv/nbgrader/exchange` (COURSE_EXCHANGE) points at a shared one.
exchange = Path(os.environ.get("COURSE_EXCHANGE") or REPO_ROOT / ".nbgrader" / "exchange")
if not exchange.is_dir():
    exchange.mkdir(parents=True)
    exchange.chmod(0o777)  # what nbgrader's exchange requires (it would change it on the first release)
c.Exchange.root = str(exchange)
