"""Helpers shared by the visible checks (course_lib) and the hidden checks (autograde).

Every value is converted to a float array with an explicit shape before it is compared, so an
object whose ``__eq__`` always answers True cannot pass. Checks print to stdout only: nbgrader
scores a test cell that writes to stderr as 0, so learners' code runs with warnings silenced.
"""

from __future__ import annotations

import linecache
import re
import sys
import textwrap
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np


def wrap(text: str, width: int = 100) -> list[str]:
    """Lines of at most `width` characters, never breaking inside `code in backticks`."""
    keep = re.sub(r"`[^`]*`", lambda code: code.group(0).replace(" ", "\u00a0"), text)
    return [line.replace("\u00a0", " ")
            for line in textwrap.wrap(keep, width, break_long_words=False, break_on_hyphens=False)]


class CheckFailed(AssertionError):
    """A check found a problem; the message says what is wrong and, where it can, why."""

    def _render_traceback_(self) -> list[str]:
        """What Jupyter shows for a failed check (IPython's hook): the message, and for a crash in the
        learner's code the learner's own line, instead of a traceback through course_lib and the libraries."""
        red, bold, plain = "\x1b[31m", "\x1b[1m", "\x1b[0m"
        lines = [f"{red}{bold}Check failed{plain}"]
        lines += wrap(str(self)) or [""]
        where = learner_line(self.__cause__)
        if where:
            lines += ["", f"{bold}In your code{plain}, {where}"]
        return ["\n".join(lines)]


class NotImplementedYet(NotImplementedError):
    """The learner's function still raises NotImplementedError: unfinished, not wrong.

    A NotImplementedError, so code that treats an unfinished part specially (the grader, composite checks)
    keeps working; Jupyter shows one plain sentence instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        yellow, bold, plain = "\x1b[33m", "\x1b[1m", "\x1b[0m"
        lines = [f"{yellow}{bold}Not implemented yet{plain}"]
        lines += wrap(str(self))
        return ["\n".join(lines)]


class Pending:
    """Stands for what a cell makes from the learner's functions until that cell has run: a later cell that
    uses it raises NotImplementedYet naming what to finish, instead of a NameError about a missing variable."""

    def __init__(self, message: str):
        object.__setattr__(self, "_message", message)

    def _unfinished(self, *args, **kwargs):
        raise NotImplementedYet(object.__getattribute__(self, "_message"))

    def __getattr__(self, name: str):
        self._unfinished()

    __call__ = __getitem__ = __iter__ = __len__ = __array__ = __bool__ = _unfinished

    def __repr__(self) -> str:
        return f"<pending: {object.__getattribute__(self, '_message')}>"


def not_implemented_message(name: str) -> str:
    return (f"{name} is not implemented yet: it still raises NotImplementedError. Replace "
            f"`raise NotImplementedError()` with your code, run the cell that defines {name}, then run this "
            "check again.")


# Keras re-raises an error from a layer's call() with its arguments around the message, and TensorFlow
# prefixes an op's error with the function node it ran in; the learner needs only the message itself.
_KERAS_HEADER = re.compile(r"Exception encountered when calling [^\n]*\n\n(?:\x1b\[1m)?")
_KERAS_ARGUMENTS = re.compile(r"(?:\x1b\[0m)?\n\nArguments received by [^\n]*:(?:\n  \u2022 [^\n]*)*")
_TF_FUNCTION_NODE = re.compile(r"\{\{function_node [^}]*\}\}\s*")


def plain_message(error: BaseException | str) -> str:
    """An error's message without Keras's call context, TensorFlow's node names and terminal colours."""
    text = error if isinstance(error, str) else getattr(error, "message", None) or str(error)
    text = str(text)
    text = _KERAS_ARGUMENTS.sub("", _KERAS_HEADER.sub("", text))  # nested layers wrap it once each
    text = _TF_FUNCTION_NODE.sub("", text)
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    text = re.sub(r"\s*name: ?$", "", text.strip())  # TensorFlow ends op errors with an empty "name: "
    return text.strip()


def learner_line(error: BaseException | None) -> str:
    """"cell line N: <source>" for the last frame of `error` that ran in a notebook cell, or ""."""
    # Keras re-raises a layer's error as a new exception with a filtered traceback: the learner's frame is
    # then in the original, one step down the chain (__cause__ or __context__).
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    cells = []
    for link in reversed(chain):  # the deepest error is nearest to the learner's line
        cells = [frame for frame in traceback.extract_tb(link.__traceback__) if _is_notebook_cell(frame.filename)]
        if cells:
            break
    if not cells:
        return ""
    frame = cells[-1]
    source = (linecache.getline(frame.filename, frame.lineno) or frame.line or "").strip()
    return f"in {frame.name}, line {frame.lineno}: {source}" if source else f"in {frame.name}, line {frame.lineno}"


def _is_notebook_cell(filename: str) -> bool:
    # ipykernel compiles each cell to a file named like /tmp/ipykernel_<pid>/<hash>.py; plain IPython
    # uses <ipython-input-...>.
    return "ipykernel_" in filename or filename.startswith("<ipython-input")


def call_learner(fn, *args, **kwargs):
    """Call a learner's function; turn its crash into a failed check that names the error.

    `NotImplementedError` stays one (as `NotImplementedYet`): an unfinished exercise is not a wrong one.
    """
    name = getattr(fn, "__name__", None) or type(fn).__name__
    try:
        return fn(*args, **kwargs)
    except (NotImplementedYet, CheckFailed):
        raise
    except NotImplementedError:
        raise NotImplementedYet(not_implemented_message(name)) from None
    except Exception as error:
        raise CheckFailed(f"{name} raised {type(error).__name__}: {plain_message(error)}") from error


def matches(actual: np.ndarray, candidate, *, atol: float = 1e-6, rtol: float = 1e-5) -> bool:
    """Same shape and close values."""
    candidate = np.asarray(candidate, dtype=np.float64)
    return actual.shape == candidate.shape and bool(np.allclose(actual, candidate, atol=atol, rtol=rtol))


def shows_mistake(actual: np.ndarray, candidate, expected: np.ndarray, *, atol: float = 1e-6,
                  rtol: float = 1e-5) -> bool:
    """Whether `actual` is the named mistake's result `candidate` on inputs that show that mistake: the same values,
    and the mistake differs from `expected` somewhere, with values not all 0 there. Where they are all 0 (every
    sine at position 0), a result left blank (np.zeros, tf.zeros) fits the mistake by coincidence and naming it
    would mislead. That is for real numbers, compared within a tolerance: values compared exactly (atol = rtol = 0:
    token ids) are discrete, 0 one of them (the padding id, which the least probable token always is)."""
    candidate = np.asarray(candidate, dtype=np.float64)
    if not matches(actual, candidate, atol=atol, rtol=rtol):
        return False
    differs = ~np.isclose(candidate, expected, atol=atol, rtol=rtol)
    return bool(np.any(differs)) and (atol == rtol == 0 or bool(np.any(candidate[differs] != 0)))


def to_array(value, name: str, dtype=np.float64) -> np.ndarray:
    """Convert a tensor, array or nested list to a NumPy array, or fail naming `name`."""
    if value is None:
        raise CheckFailed(f"{name} is None: did you forget a `return`?")
    if hasattr(value, "numpy") and callable(value.numpy):
        value = value.numpy()
    try:
        array = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as error:
        raise CheckFailed(
            f"{name} could not be read as an array of numbers "
            f"(got {type(value).__name__}: {error})"
        ) from None
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
        raise CheckFailed(f"{name} contains NaN or infinite values")
    return array


def expect_tensor(value, name: str, dtype: str | None = None) -> None:
    """Fail unless `value` is a `tf.Tensor` (of `dtype`, when given)."""
    import tensorflow as tf

    if not tf.is_tensor(value):
        raise CheckFailed(
            f"{name} should be a tf.Tensor, got {type(value).__name__}; "
            "use TensorFlow operations or wrap the result with tf.constant / tf.convert_to_tensor"
        )
    if dtype is not None and value.dtype.name != dtype:
        raise CheckFailed(f"{name} should have dtype {dtype}, got {value.dtype.name}")


def expect_shape(array: np.ndarray, shape: Sequence[int], name: str) -> None:
    """Fail unless `array` has exactly `shape`."""
    if tuple(array.shape) != tuple(shape):
        raise CheckFailed(f"{name} has shape {tuple(array.shape)}, expected {tuple(shape)}")


def expect_close(
    actual,
    expected,
    name: str,
    *,
    atol: float = 1e-6,
    rtol: float = 1e-5,
    hint: str | None = None,
    mistakes: Sequence[tuple[object, str]] = (),
) -> np.ndarray:
    """Compare as float arrays: shape first, then values; report the worst mismatch.

    `mistakes` lists (wrong result, explanation) pairs: a result equal to one of them, on inputs that show
    that mistake (`shows_mistake`), is reported with its explanation. Returns the converted `actual` for
    further diagnostics.
    """
    expected = to_array(expected, "the expected value")
    actual = to_array(actual, name)
    expect_shape(actual, expected.shape, name)
    close = np.isclose(actual, expected, atol=atol, rtol=rtol)
    if not np.all(close):
        for candidate, explanation in mistakes:
            if shows_mistake(actual, candidate, expected, atol=atol, rtol=rtol):
                raise CheckFailed(f"{name} is wrong: {explanation}")
        difference = np.abs(actual - expected)
        worst = np.unravel_index(np.argmax(difference), difference.shape)
        message = (
            f"{name} has wrong values: {np.size(close) - np.count_nonzero(close)} of "
            f"{np.size(close)} entries differ; the largest difference is at index "
            f"{tuple(int(i) for i in worst)}: got {actual[worst]:.6g}, expected {expected[worst]:.6g}"
        )
        if hint:
            message += f". {hint}"
        raise CheckFailed(message)
    return actual


def passed(message: str) -> None:
    """Print a success line (stdout, so nbgrader never mistakes it for an error)."""
    print(f"\N{CHECK MARK} {message}")


_MISSING = object()


@contextmanager
def parts_replaced(fn, **references) -> Iterator[None]:
    """Within the block, `fn`'s global names (notebook variables) point at `references`: a composite is
    checked with reference parts or test doubles, so a mistake in a part never costs its composite."""
    namespace = getattr(fn, "__globals__", None)
    if namespace is None:  # not a plain Python function: nothing to isolate
        yield
        return
    saved = {name: namespace.get(name, _MISSING) for name in references}
    namespace.update(references)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is _MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = value


# ----------------------------------------------------------------------------------------------
# Running learners' code quietly, and Keras layers


@contextmanager
def quiet() -> Iterator[None]:
    """Silence Python warnings: nbgrader scores a test cell that writes to stderr as 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def quietly(fn: Callable, *args, **kwargs):
    """`call_learner(fn, *args, **kwargs)` with Python warnings silenced."""
    with quiet():
        return call_learner(fn, *args, **kwargs)


def to_tensor(value, dtype: str = "float32"):
    """`value` (array, nested list) as a `tf.constant` of `dtype`; None stays None (an absent mask)."""
    if value is None:
        return None
    import tensorflow as tf

    return tf.constant(np.asarray(value).astype(dtype))


KEYWORD_HINT = (
    "Keras 3 accepts only tensors as positional arguments: pass the others by keyword, "
    "e.g. layer(x, training=training, mask=mask)"
)


def call_layer(layer, *args, hint: str = "", **kwargs):
    """Call a learner's Keras layer quietly; add a hint to a crash (Keras's positional-argument rule, shapes).

    Keras's own warnings about the layer (an unused sublayer, say) are silenced: the check says more."""
    try:
        return quietly(layer, *args, **kwargs)
    except CheckFailed as error:
        message = str(error)
        if "positional arguments" in message:
            message += f". {KEYWORD_HINT}"
        elif hint:
            message += f". {hint}"
        raise CheckFailed(message) from error


def make_layer(cls, *args, **kwargs):
    """Construct the learner's layer (its __init__ is given, so this only fails if it was changed), to be built
    by its first call (`build_on_first_call`)."""
    layer = quietly(cls, *args, **kwargs)
    build_on_first_call(layer)
    return layer


def build_on_first_call(layer) -> None:
    """Let the first call of a Keras layer create its weights as it runs, without a symbolic trace first.

    Keras builds a layer that has no build() of its own by tracing its call() on symbolic inputs, once per new
    layer; for a check's small stacks that trace costs more than the check's computations. Where the trace fails,
    Keras itself leaves the building to the first eager call: marking such layers (the learner's and its sublayers)
    as built takes that path at once. Layers with a build() of their own (Dense, MultiHeadAttention, ...) still
    build from the shapes of their first call, as always. Anything else (an object in the learner's kernel, seen
    from the grader) is left alone."""
    keras = sys.modules.get("keras")
    if keras is None or not isinstance(layer, keras.layers.Layer):
        return
    for sublayer in layer._flatten_layers(include_self=True, recursive=True):  # Keras's walk over its sublayers
        # Keras marks its default build() `_is_default` (keras.src.utils.python_utils.default)
        if not sublayer.built and getattr(sublayer.build, "_is_default", False):
            sublayer.built = True


DROPOUT_ADVICE = "Pass training=training to the dropout (never training=True)"


def expect_deterministic(first, second, name: str, *, advice: str = DROPOUT_ADVICE) -> None:
    """Two calls with training=False must agree: dropout is off at inference."""
    if not np.allclose(to_array(first, name), to_array(second, name), atol=1e-6):
        raise CheckFailed(f"{name} changes between two calls with training=False: dropout is active at "
                          f"inference. {advice}")


def expect_dropout_in_training(inference, training, name: str) -> None:
    """A call with training=True must differ from inference when the dropout rate is above 0."""
    if np.allclose(to_array(inference, name), to_array(training, name), atol=1e-6):
        raise CheckFailed(f"{name} is the same with training=True as with training=False: dropout never acts. "
                          "Apply the dropout layers with training=training")


def stored_mistakes(entries: Mapping[str, Mapping]) -> list[tuple[np.ndarray, str]]:
    """(wrong result, message) pairs from a generated file's {"name": {"value": ..., "message": ...}}."""
    return [(np.asarray(entry["value"]), entry["message"]) for entry in entries.values()]
