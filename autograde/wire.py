"""The only format in which values cross between a student's kernel and the grader.

A value is a JSON tree plus NumPy arrays in one `.npz` file, read with `allow_pickle=False`: plain data
(None, booleans, numbers, strings, lists, tuples, dicts, arrays, tensors) travels by value; any other object
stays in the kernel and travels as a handle. Nothing the kernel sends can run code in the grader or compare
equal to everything.

This module is self-contained (standard library and NumPy) because its source is also executed inside the
sandboxed kernel, after the agent's and with the submission's folder out of reach of its imports
(kernel_agent.grader_imports), where the `autograde` package cannot be imported. It never imports anything later:
a tensor is recognised with the TensorFlow that made it.
"""

from __future__ import annotations

import json
import os
import sys
import zipfile

import numpy as np

MAX_DEPTH = 24
MAX_ITEMS = 200_000  # list, tuple and dict entries in one value
MAX_STRING = 20_000  # characters
MAX_BYTES = 512 * 2**20  # a result file the grader is willing to read
MAX_TYPE_NAME = 60


class WireError(ValueError):
    """A value that cannot be sent or read back: too large, too deep, or malformed."""


class Encoder:
    """Turns a value into (tree, arrays); `handle_of(obj)` names objects that stay where they are."""

    def __init__(self, handle_of=None):
        self.arrays: list[np.ndarray] = []
        self.handle_of = handle_of
        self.items = 0

    def encode(self, value, depth: int = 0):
        if depth > MAX_DEPTH:
            raise WireError(f"the value is nested more than {MAX_DEPTH} levels deep")
        if value is None or isinstance(value, bool):
            return value
        if type(value) is int:
            return value if abs(value) < 2**63 else {"t": "bigint", "v": str(value)}
        if type(value) is float:
            return {"t": "float", "v": repr(value)}  # keeps nan, inf and every bit of the number
        if type(value) is str:
            if len(value) > MAX_STRING:
                raise WireError(f"a string of {len(value)} characters is longer than {MAX_STRING}")
            return value
        if type(value) in (list, tuple) or _is_keras_list(value):
            self._count(len(value))
            kind = "tuple" if type(value) is tuple else "list"
            return {"t": kind, "v": [self.encode(item, depth + 1) for item in value]}
        if type(value) is dict:
            self._count(len(value))
            keys = list(value)
            if not all(type(key) in (str, int) for key in keys):
                return self._other(value)
            return {"t": "dict", "k": keys, "v": [self.encode(value[key], depth + 1) for key in keys]}
        if type(value) is np.ndarray and value.dtype.kind in "biufcU" and not value.dtype.hasobject:
            return {"t": "array", "i": self._store(value)}
        if isinstance(value, np.generic) and type(value).__module__ == "numpy" and value.dtype.kind in "biufc":
            return {"t": "scalar", "i": self._store(np.asarray(value))}
        if type(value).__name__ == "TensorShape" and hasattr(value, "as_list"):
            dims = value.as_list() if value.rank is not None else []
            return {"t": "tuple", "v": [self.encode(d, depth + 1) for d in dims]}
        if _is_plain_tensor(value):
            array = np.asarray(value.numpy())
            if array.dtype.kind in "biufc":
                return {"t": "tensor", "i": self._store(array)}
        return self._other(value)

    def _count(self, n: int) -> None:
        self.items += n
        if self.items > MAX_ITEMS:
            raise WireError(f"the value has more than {MAX_ITEMS} items")

    def _store(self, array: np.ndarray) -> int:
        # np.ascontiguousarray would make a 0-d array (a scalar tensor's value) 1-d; asarray keeps its shape.
        self.arrays.append(np.asarray(array, order="C"))
        return len(self.arrays) - 1

    def _other(self, value):
        if self.handle_of is None:
            raise WireError(f"a {type(value).__name__} cannot be sent, only plain data")
        return {"t": "handle", "id": self.handle_of(value), "type": type_name(value)}


def _is_keras_list(value) -> bool:
    """Keras keeps a layer's sublayers (`enc_layers`) in a list subclass of its own: sent as a list."""
    return isinstance(value, list) and (type(value).__module__ or "").startswith("keras")


def _is_plain_tensor(value) -> bool:
    """An eager tf.Tensor (not a Variable, which is state and travels as a handle)."""
    module = type(value).__module__ or ""
    tf = sys.modules.get("tensorflow")  # loaded, if the value is really TensorFlow's
    if not module.startswith("tensorflow") or tf is None:
        return False
    return tf.is_tensor(value) and not isinstance(value, tf.Variable) and hasattr(value, "numpy")


def type_name(value) -> str:
    """The type's name as a short identifier (it may be quoted in a message)."""
    name = getattr(type(value), "__name__", "object")
    cleaned = "".join(c for c in str(name) if c.isalnum() or c == "_")[:MAX_TYPE_NAME]
    return cleaned or "object"


def save(path, tree, arrays) -> None:
    """One file: the tree as JSON and the arrays, in a NumPy .npz archive."""
    with open(path, "wb") as handle:
        np.savez(handle, __tree__=np.frombuffer(json.dumps(tree).encode(), dtype=np.uint8),
                 **{f"a{i}": array for i, array in enumerate(arrays)})


def dump(path, value, handle_of=None) -> None:
    encoder = Encoder(handle_of)
    tree = encoder.encode(value)
    save(path, tree, encoder.arrays)


def read(path) -> tuple[object, list[np.ndarray]]:
    """(tree, arrays) from a file written by `save`, refusing oversized or malformed files."""
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        raise WireError(f"the result is {size / 2**20:.0f} MiB, more than the {MAX_BYTES // 2**20} MiB allowed")
    try:
        with np.load(path, allow_pickle=False) as archive:
            tree = json.loads(bytes(archive["__tree__"]).decode())
            count = sum(1 for name in archive.files if name != "__tree__")
            arrays = [archive[f"a{i}"] for i in range(count)]
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise WireError(f"unreadable result ({type(error).__name__}: {error})") from None
    return tree, arrays


class Decoder:
    """Turns (tree, arrays) back into values; `tensor(array)` and `handle(id, type)` build the special ones."""

    def __init__(self, arrays, *, tensor=None, handle=None):
        self.arrays, self.tensor, self.handle = arrays, tensor, handle

    def decode(self, node, depth: int = 0):
        if depth > MAX_DEPTH:
            raise WireError("nested too deeply")
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if not isinstance(node, dict) or "t" not in node:
            raise WireError(f"malformed value {str(node)[:80]!r}")
        kind = node["t"]
        if kind == "float":
            return float(node["v"])
        if kind == "bigint":
            return int(node["v"])
        if kind in ("list", "tuple"):
            items = [self.decode(item, depth + 1) for item in node["v"]]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            return {key: self.decode(item, depth + 1) for key, item in zip(node["k"], node["v"], strict=True)}
        if kind in ("array", "scalar", "tensor"):
            array = self._array(node["i"])
            if kind == "scalar":
                return array[()]
            if kind == "tensor":
                return self.tensor(array) if self.tensor else array
            return array
        if kind == "handle" and self.handle is not None:
            return self.handle(int(node["id"]), str(node.get("type", "object"))[:MAX_TYPE_NAME])
        if kind == "ref" and self.handle is not None:
            return self.handle(int(node["id"]), "")
        raise WireError(f"unexpected value kind {kind!r}")

    def _array(self, index) -> np.ndarray:
        if not isinstance(index, int) or not 0 <= index < len(self.arrays):
            raise WireError("a value refers to a missing array")
        array = self.arrays[index]
        if array.dtype.hasobject:
            raise WireError("object arrays are not accepted")
        return array
