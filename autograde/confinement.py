"""What a student's kernel may see and do while it is graded: an allow list of folders, an unprivileged user.

bubblewrap (bwrap) gives the kernel a root of its own, built from nothing but what is listed here:
- the system's programs and libraries (/usr, /etc, /sys and the links into /usr), read-only;
- Python with its packages (the interpreter's prefixes), read-only;
- the course's released material, read-only: `course_lib` as the student had it for the assignment being graded
  (autograde/kernel_view.py) and `notebooks/`;
- an empty /tmp and /dev/shm of its own, a minimal /dev and the /proc of its PID namespace;
- its working folder, the only one it may write to.
Nothing else is there, by construction: not the repository's other folders (the grader, its references, tests,
solutions, .git), not the grading state (submitted/, autograded/, feedback/, the gradebook, OUT/, other students'
folders), wherever they are kept. When the grader runs as root, the kernel runs as `nobody`, with no capabilities,
an empty bounding set and no_new_privs (setpriv), so it can neither mount, unmount, remount nor regain root through a
setuid program; run by another user, bwrap's user namespace leaves the kernel that user, without capabilities.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograde.course import RELEASE_DIRECTORY, REPO_ROOT

SYSTEM = ("/usr", "/etc", "/sys")  # read-only, whole
USR_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # links into /usr on merged-/usr systems


class SandboxUnavailable(RuntimeError):
    """bwrap (or setpriv, when grading as root) is missing or cannot create namespaces here."""


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if not path:
        raise SandboxUnavailable(
            "grading needs bubblewrap (bwrap) to sandbox the students' kernels: install it with "
            "`sudo apt-get install bubblewrap` (Debian, Ubuntu) or `sudo dnf install bubblewrap` (Fedora)")
    return path


def kernel_user() -> tuple[int, int] | None:
    """(uid, gid) the kernel is switched to when the grader is root; None when the grader is not root (the kernel
    then stays the grader's own unprivileged user)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def hand_over(path: Path) -> None:
    """Make `path` (a folder the kernel writes in) the kernel user's, with everything in it."""
    user = kernel_user()
    if user is None:
        return
    for folder, folders, files in os.walk(path):
        os.lchown(folder, *user)
        for name in folders + files:
            os.lchown(os.path.join(folder, name), *user)


def installed_course_lib() -> Path:
    """Where the kernel's interpreter imports `course_lib` from (the repository's folder for an editable install)."""
    spec = importlib.util.find_spec("course_lib")
    if spec is None or not spec.submodule_search_locations:
        raise SandboxUnavailable("course_lib is not installed for this Python: run `make install`")
    return Path(os.path.realpath(next(iter(spec.submodule_search_locations))))


def python_roots() -> list[Path]:
    """The interpreter's prefixes (a venv and the Python it was made from), outermost only."""
    found = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
                                                   Path(os.path.realpath(sys.executable)).parent.parent)}
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


def visible_roots() -> list[Path]:
    """Every folder the kernel can read (besides its own), for telling which installed modules it can import."""
    system = [Path(os.path.realpath(p)) for p in (*SYSTEM, *USR_LINKS) if os.path.exists(p)]
    return [*system, *python_roots(), installed_course_lib(), REPO_ROOT / RELEASE_DIRECTORY]


def sandbox_command(work: Path, command: list[str], env: dict[str, str], *, memory: int,
                    course_lib: Path | None = None, channels: list[Path] = ()) -> list[str]:
    """The argv that runs `command` confined, `work` its only writable folder with `channels` (folders it talks
    through, writable, in a read-only parent so that they cannot be replaced); `course_lib` is the folder shown to
    the kernel as the installed course_lib (the installed one when None)."""
    argv = ["prlimit", f"--as={int(memory)}", "--core=0", bwrap_path(),
            "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm",
            "--dev", "/dev", "--proc", "/proc"]
    for path in SYSTEM:
        if os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in USR_LINKS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    bound = [Path(p) for p in SYSTEM]  # what is below a bound folder exists already
    made = [Path("/tmp"), Path("/dev"), Path("/dev/shm"), Path("/proc")]
    binds = [(path, path) for path in python_roots()]
    release = REPO_ROOT / RELEASE_DIRECTORY
    if release.is_dir():
        binds.append((release, release))
    # Last, over whatever the prefixes hold at that place (a course_lib installed as a wheel is in site-packages).
    binds.append((Path(course_lib or installed_course_lib()), installed_course_lib()))
    for source, target in binds:
        argv += _folders_above(target, bound, made) + ["--ro-bind", str(source), str(target)]
        bound.append(target)
    for folder in channels:
        parent = Path(folder).parent
        if parent not in bound:
            argv += _folders_above(parent, bound, made) + ["--ro-bind", str(parent), str(parent)]
            bound.append(parent)
        argv += ["--bind", str(folder), str(folder)]
    argv += _folders_above(Path(work), bound, made)
    argv += ["--bind", str(work), str(work),
             "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
             "--die-with-parent", "--new-session", "--chdir", str(work), "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return argv + unprivileged(command)


def _folders_above(target: Path, bound: list[Path], made: list[Path]) -> list[str]:
    """Folders leading to `target` that the sandbox does not have yet, made traversable by the kernel user (bwrap
    would make them readable by root alone); `made` grows with them."""
    argv = []
    for folder in reversed(target.parents[:-1]):  # from the top down, "/" left out
        if folder not in made and not any(folder.is_relative_to(b) for b in bound):
            argv += ["--perms", "0755", "--dir", str(folder)]
            made.append(folder)
    return argv


def unprivileged(command: list[str]) -> list[str]:
    """`command` run as the kernel user with no capabilities and no way to gain any (as root); as is otherwise."""
    user = kernel_user()
    if user is None:
        return command
    setpriv = shutil.which("setpriv")
    if not setpriv:
        raise SandboxUnavailable("grading as root needs setpriv (Debian's util-linux) to run the students' kernels as "
                                 "an unprivileged user: install util-linux, or grade as another user")
    uid, gid = user
    return [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--", *command]


def sandbox_check() -> str | None:
    """None when a kernel can be confined here, else why not."""
    try:
        with tempfile.TemporaryDirectory(prefix="sandbox-check-") as tmp:
            work = Path(tmp) / "work"
            work.mkdir()
            hand_over(work)
            argv = sandbox_command(work, ["true"], {}, memory=2**30)
            probe = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except SandboxUnavailable as error:
        return str(error)
    if probe.returncode != 0:
        return (f"bwrap cannot create namespaces here ({probe.stderr.strip()[:200]}): allow unprivileged user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1) or grade as root")
    return None
