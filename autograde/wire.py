"""The only format in which values cross between a student's kernel and the grader.

A value is a JSON tree plus NumPy arrays in one `.npz` file, read with `allow_pickle=False`: plain data
(None, booleans, numbers, strings, lists, tuples, dicts, arrays, tensors) travels by value; any other object
stays in the kernel and travels as a handle. Nothing the kernel sends can run code in the grader or compare
equal to everything.

This module is self-contained (standard library and NumPy) because its source is also executed inside the
sandboxed kernel, after the agent's and with the submission's folder out of reach of its imports
(kernel_agent.grader_imports), where the `autograde` package cannot be imported. It never imports anything later:
a tensor is recognised with the TensorFlow that made it.

The kernel is the student's and may rewrite the agent, so the grader reads its answers as hostile files: `read`
takes the file's bytes once, accepts only what `save` writes (stored members, a `.npy` header that matches the
member's size, a bounded number of members and size of tree) and checks each before allocating for it, so reading
takes a few times the file's size at most (its bytes, then its arrays; the parsed tree, at most 8 MiB of JSON, up to
25 times its size); `Decoder` counts items and depth as `Encoder` does.
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import struct
import sys
import zipfile

import numpy as np

MAX_DEPTH = 24
MAX_ITEMS = 200_000  # list, tuple and dict entries in one value
MAX_STRING = 20_000  # characters
MAX_BYTES = 512 * 2**20  # a file: a request may carry a checkpoint's weights (90 MB for the shipped BERT)
MAX_RESULT_BYTES = 64 * 2**20  # an answer, for the grader to pass to `read` (the hidden checks' largest: 0.7 MB)
MAX_TREE_BYTES = 8 * 2**20  # the JSON tree, which takes up to 25 times its size once parsed (largest seen: 0.7 MB)
MAX_ARRAYS = MAX_ITEMS + 1  # one per item at most, and the value itself
MAX_TYPE_NAME = 60
TREE = "__tree__.npy"
ARRAY_KINDS = "biufcU"  # what the encoder stores: booleans, numbers, text


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
            for key in keys:
                if type(key) is str and len(key) > MAX_STRING:
                    raise WireError(f"a key of {len(key)} characters is longer than {MAX_STRING}")
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
    """One file: the tree as JSON and the arrays, in a NumPy .npz archive (refused here if `read` would refuse it)."""
    text = json.dumps(tree).encode()
    if len(text) > MAX_TREE_BYTES:
        raise WireError(f"the value's tree takes {len(text) / 2**20:.1f} MiB, more than {MAX_TREE_BYTES // 2**20} MiB")
    if len(arrays) > MAX_ARRAYS:
        raise WireError(f"the value holds {len(arrays)} arrays, more than {MAX_ARRAYS}")
    size = len(text) + sum(array.nbytes for array in arrays)
    if size > MAX_BYTES:
        raise WireError(f"the value takes {size / 2**20:.1f} MiB, more than the {MAX_BYTES // 2**20} MiB allowed")
    # Never through a link, nor into a pipe: the folder is shared with the kernel, which may have left either there.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    with os.fdopen(descriptor, "wb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise WireError(f"{os.path.basename(path)} is not a regular file")
        np.savez(handle, __tree__=np.frombuffer(text, dtype=np.uint8),
                 **{f"a{i}": array for i, array in enumerate(arrays)})


def dump(path, value, handle_of=None) -> None:
    encoder = Encoder(handle_of)
    tree = encoder.encode(value)
    save(path, tree, encoder.arrays)


def read(path, limit: int = MAX_BYTES) -> tuple[object, list[np.ndarray]]:
    """(tree, arrays) from a file written by `save` of at most `limit` bytes; anything else raises WireError."""
    data = _snapshot(path, limit)
    try:
        _check_directory(data)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = _members(archive, len(data))
            tree = json.loads(_member_array(archive, members[0]).tobytes().decode())
            arrays = [_member_array(archive, info) for info in members[1:]]
    except WireError:
        raise
    except (OSError, KeyError, ValueError, EOFError, RecursionError, struct.error, zipfile.BadZipFile) as error:
        raise WireError(f"unreadable result ({type(error).__name__}: {str(error)[:200]})") from None
    return tree, arrays


def _snapshot(path, limit: int) -> bytes:
    """The file's bytes, read once (the kernel may rewrite it meanwhile): a regular file, not a link, pipe or device."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                raise WireError("the result is not a regular file")
            if status.st_size > limit:
                raise WireError(f"the result is {status.st_size / 2**20:.1f} MiB, more than the {limit / 2**20:g} "
                                "MiB allowed")
            data = handle.read(status.st_size + 1)  # read(n) allocates n bytes at once: never more than the file's
    except OSError as error:
        raise WireError(f"unreadable result ({type(error).__name__}: {error})") from None
    if len(data) != status.st_size:
        raise WireError("the result changed while it was read")
    return data


def _check_directory(data: bytes) -> None:
    """Refuse an archive whose directory lists too many members before zipfile reads it: zipfile makes a 550-byte
    object of each 46-byte entry it finds, however many the end record says there are. `save` writes no comment,
    so the end record is the last 22 bytes, and a ZIP64 one (over 65,535 members) lies right before it; each entry
    of its directory takes at most 58 bytes, each member at least 200 of the file."""
    if len(data) < 22 or data[-22:-18] != b"PK\x05\x06" or data[-2:] != b"\0\0":
        raise WireError("the result is not an archive written by save (no end record where it belongs)")
    entries, size = struct.unpack("<HL", data[-12:-6])
    if data[-42:-38] == b"PK\x06\x07" and data[-98:-94] == b"PK\x06\x06":  # what zipfile reads then
        entries, size = struct.unpack("<QQ", data[-66:-50])
    if entries > MAX_ARRAYS + 1:
        raise WireError(f"the archive lists {entries} members, more than {MAX_ARRAYS + 1}")
    if size > 64 * entries:
        raise WireError(f"the archive's directory takes {size} bytes for {entries} members")
    if 200 * entries > len(data):
        raise WireError(f"the archive lists {entries} members in {len(data)} bytes, too few for their arrays")


def _members(archive: zipfile.ZipFile, size: int) -> list[zipfile.ZipInfo]:
    """The tree's member, then the arrays' in order: stored (np.savez compresses nothing), each once."""
    infos = archive.infolist()
    names = [info.filename for info in infos]
    expected = [TREE, *(f"a{i}.npy" for i in range(len(infos) - 1))]
    if len(infos) > MAX_ARRAYS + 1:
        raise WireError(f"the archive holds {len(infos)} members, more than {MAX_ARRAYS + 1}")
    if len(set(names)) != len(names):
        raise WireError("the archive lists a member twice")
    unexpected = sorted(set(names) - set(expected))
    if unexpected:
        raise WireError(f"the archive holds an unexpected member {unexpected[0][:40]!r}")
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
            raise WireError(f"member {info.filename} is compressed: only stored members are read")
        if info.flag_bits & 0x1:
            raise WireError(f"member {info.filename} is encrypted")
    if sum(info.file_size for info in infos) > size:
        raise WireError("the archive's members claim more bytes than the file has")
    by_name = {info.filename: info for info in infos}
    return [by_name[name] for name in expected]


def _member_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """A member's array, its `.npy` header checked against the bytes the member holds before any is allocated."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version not in ((1, 0), (2, 0)):
            raise WireError(f"member {info.filename} has .npy version {version}, not 1.0 or 2.0")
        header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = header(member)
        held = info.file_size - member.tell()
        if info.filename == TREE and (dtype != np.uint8 or len(shape) != 1):
            raise WireError(f"the tree is stored as {dtype} of shape {shape}, not bytes")
        if dtype.hasobject or dtype.kind not in ARRAY_KINDS or dtype.itemsize == 0:
            raise WireError(f"member {info.filename} is an array of {dtype}, which is not accepted")
        if any(n < 0 for n in shape):
            raise WireError(f"member {info.filename} claims the shape {shape}")
        claimed = math.prod(shape) * dtype.itemsize
        if claimed != held:
            raise WireError(f"member {info.filename} claims {shape} {dtype} ({claimed} bytes) but holds {held} bytes")
        if info.filename == TREE and claimed > MAX_TREE_BYTES:
            raise WireError(f"the tree is {claimed / 2**20:.1f} MiB, more than {MAX_TREE_BYTES // 2**20} MiB")
        flat = np.empty(math.prod(shape), dtype=dtype)
        target = flat.view(np.uint8)
        done = 0
        while done < claimed:  # in pieces: a whole member read at once would be a second copy of it
            piece = member.read(min(2**20, claimed - done))
            if not piece:
                raise WireError(f"member {info.filename} ends early")
            target[done:done + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
            done += len(piece)
    return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)


class Decoder:
    """Turns (tree, arrays) back into values; `tensor(array)` and `handle(id, type)` build the special ones.
    Refuses what `Encoder` would not have sent: too deep, too many items, too long a string, malformed."""

    def __init__(self, arrays, *, tensor=None, handle=None):
        self.arrays, self.tensor, self.handle = arrays, tensor, handle
        self.items = 0

    def decode(self, node, depth: int = 0):
        if depth > MAX_DEPTH:
            raise WireError(f"the value is nested more than {MAX_DEPTH} levels deep")
        if node is None or type(node) in (bool, int):
            return node
        if type(node) is str:
            return self._text(node)
        if type(node) is not dict or type(node.get("t")) is not str:
            raise WireError(f"malformed value {str(node)[:80]!r}")
        kind = node["t"]
        if kind in ("float", "bigint"):
            text = self._field(node, "v", str)
            try:
                return float(text) if kind == "float" else int(text)
            except ValueError:
                raise WireError(f"malformed {kind} value {text[:40]!r}") from None
        if kind in ("list", "tuple"):
            entries = self._field(node, "v", list)
            self._count(len(entries))
            items = [self.decode(item, depth + 1) for item in entries]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            keys, entries = self._field(node, "k", list), self._field(node, "v", list)
            if len(keys) != len(entries) or not all(type(key) is int or type(key) is str for key in keys):
                raise WireError("malformed dict: its keys must be as many as its values, strings or integers")
            self._count(len(keys))
            return {self._text(key) if type(key) is str else key: self.decode(item, depth + 1)
                    for key, item in zip(keys, entries, strict=True)}
        if kind in ("array", "scalar", "tensor"):
            array = self._array(node.get("i"))
            if kind == "scalar":
                return array[()]
            if kind == "tensor":
                return self.tensor(array) if self.tensor else array
            return array
        if kind == "handle" and self.handle is not None:
            return self.handle(self._field(node, "id", int), str(node.get("type", "object"))[:MAX_TYPE_NAME])
        if kind == "ref" and self.handle is not None:
            return self.handle(self._field(node, "id", int), "")
        raise WireError(f"unexpected value kind {kind[:40]!r}")

    def _count(self, n: int) -> None:
        self.items += n
        if self.items > MAX_ITEMS:
            raise WireError(f"the value has more than {MAX_ITEMS} items")

    @staticmethod
    def _text(text: str) -> str:
        if len(text) > MAX_STRING:
            raise WireError(f"a string of {len(text)} characters is longer than {MAX_STRING}")
        return text

    def _field(self, node: dict, key: str, kind: type):
        value = node.get(key)
        if type(value) is not kind:
            raise WireError(f"malformed {node['t'][:40]} value: its {key!r} is not a {kind.__name__}")
        return self._text(value) if kind is str else value

    def _array(self, index) -> np.ndarray:
        if type(index) is not int or not 0 <= index < len(self.arrays):
            raise WireError("a value refers to a missing array")
        array = self.arrays[index]
        if array.dtype.hasobject:
            raise WireError("object arrays are not accepted")
        return array
