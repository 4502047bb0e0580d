"""What students install: the course's requirements.txt less what only instructors and CI use, and a
pyproject.toml that installs `course_lib` alone."""

from __future__ import annotations

import json
import re
import tomllib

from autograde.student_kit.errors import KitError

# Packages of requirements.txt that only instructors and CI use, and why. A student package that needs one
# of them (tqdm by datasets, psutil by ipykernel, pyyaml by jupyter) keeps its pin instead, so that students
# get the version the course was tested with; tests/test_student_kit.py checks that none of these is needed.
INSTRUCTORS_ONLY = {
    "dask": "make grade on several processes or a cluster",
    "distributed": "make grade on several processes or a cluster",
    "jupyter-server-mathjax": "the offline equations of the grader's feedback pages",
    "pytest": "the course's tests",
    "pytest-xdist": "the course's tests",
    "nbval": "the course's tests",
    "ruff": "linting",
    "playwright": "the course's browser tests",
}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*==")


def requirement_name(line: str) -> str | None:
    match = PIN.match(line.strip())
    return re.sub(r"[-_.]+", "-", match[1]).lower() if match else None


def student_requirements(text: str) -> str:
    """The course's requirements.txt less INSTRUCTORS_ONLY: kept lines unchanged, each with the comments
    just above it; the course's own header replaced by one that says where the file comes from."""
    out = ["# The course's pinned packages for students, generated from its requirements.txt by\n",
           "# autograde/student_kit/requirements.py, less what only instructors and the tests use\n",
           f"# ({', '.join(sorted(INSTRUCTORS_ONLY))}).\n",
           "# A line marked `no-deps` is installed with `pip install --no-deps`; `make lab` installs this file.\n"]
    comments: list[str] = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(line)
        elif not stripped:
            comments = []  # a comment paragraph of its own (the header) belongs to no package
            if out[-1].strip():
                out.append("\n")
        else:
            name = requirement_name(line)
            if name is None:
                raise KitError(f"requirements.txt: not a pinned requirement: {line.strip()!r}")
            if name not in INSTRUCTORS_ONLY:
                out += comments + [line if line.endswith("\n") else line + "\n"]
            comments = []
    while out[-1] == "\n":
        out.pop()
    return "".join(out)


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def student_pyproject(text: str) -> str:
    """A pyproject.toml that installs `course_lib` alone, with the course's name, version and licence."""
    project = tomllib.loads(text)["project"]
    licence = project.get("license", {})
    licence_line = f"license = {{ text = {_toml_string(licence['text'])} }}\n" if "text" in licence else ""
    return (
        "# Installs the course's package, course_lib (`make lab` runs pip install -e .); the pinned packages it\n"
        "# needs are in requirements.txt.\n"
        "[build-system]\n"
        'requires = ["setuptools>=68"]\n'
        'build-backend = "setuptools.build_meta"\n'
        "\n"
        "[project]\n"
        f"name = {_toml_string(project['name'] + '-kit')}\n"
        f"version = {_toml_string(project['version'])}\n"
        'description = "Transformers, from attention to BERT: the notebooks\' helpers and checks"\n'
        f"requires-python = {_toml_string(project['requires-python'])}\n"
        f"{licence_line}"
        "dependencies = []\n"
        "\n"
        "[tool.setuptools.packages.find]\n"
        'include = ["course_lib*"]\n'
        "\n"
        "[tool.setuptools.package-data]\n"
        'course_lib = ["expected/*.json"]\n'
    )
