"""wire.read takes the kernel's answers as hostile files: whatever a rewritten agent writes, reading it costs little
more memory than the file's size, and anything `save` would not have written raises WireError saying what is wrong.

The issue: a 2 MB `.grading/<n>.out` that inflated to a 2 GiB array took a grader worker to 2.64 GiB.
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import tracemalloc
import zipfile

import numpy as np
import pytest

from autograde import wire

MiB = 2**20
ARRAY_TREE = {"t": "array", "i": 0}


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
    return buffer.getvalue()


def npy_header(shape, dtype) -> bytes:
    """A .npy header alone, claiming `shape` and `dtype`."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                                  "fortran_order": False, "shape": tuple(shape)})
    return buffer.getvalue()


def tree_member(tree) -> bytes:
    return npy(np.frombuffer(json.dumps(tree).encode(), dtype=np.uint8))


def archive(path, members: dict[str, bytes], compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as handle:
        for name, data in members.items():
            handle.writestr(name, data)
    return path


def refused(path, match: str, **limits) -> int:
    """Assert that reading `path` raises WireError matching `match`; return the peak bytes allocated meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireError, match=match):
            wire.read(path, **limits)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_value_of_every_kind_crosses_and_costs_about_twice_its_size(tmp_path):
    value = {"big": np.ones(4 * MiB), "scalar": np.float32(2.5), "text": np.array(["ab", "c"]), 7: [1.5, (2, None)],
             "more": 2**70, "scalars": [np.int64(i) for i in range(1000)]}
    wire.dump(tmp_path / "value.npz", value)
    size = os.path.getsize(tmp_path / "value.npz")
    tracemalloc.start()
    tree, arrays = wire.read(tmp_path / "value.npz")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    received = wire.Decoder(arrays).decode(tree)
    assert received.keys() == value.keys() and received[7] == [1.5, (2, None)] and received["more"] == 2**70
    np.testing.assert_array_equal(received["big"], value["big"])
    assert received["scalar"] == np.float32(2.5) and received["text"].tolist() == ["ab", "c"]
    assert received["scalars"][999] == 999 and received["big"].flags.writeable
    assert peak < 2.2 * size, (peak, size)


def test_an_array_written_in_fortran_order_is_read_as_written(tmp_path):
    array = np.arange(6).reshape(2, 3).T  # np.save writes it column by column
    path = archive(tmp_path / "value.npz", {"__tree__.npy": tree_member(ARRAY_TREE), "a0.npy": npy(array)})
    tree, arrays = wire.read(path)
    np.testing.assert_array_equal(wire.Decoder(arrays).decode(tree), array)


@pytest.mark.thorough
def test_a_compressed_member_is_refused_before_it_inflates(tmp_path):
    """256 MiB of zeros deflated to a quarter of a megabyte, as the kernel could write it."""
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("__tree__.npy", tree_member(ARRAY_TREE))
        with handle.open("a0.npy", "w", force_zip64=True) as member:
            member.write(npy_header((32 * MiB,), np.float64))
            for _ in range(256):
                member.write(bytes(MiB))
    assert os.path.getsize(path) < MiB
    assert refused(path, "compressed: only stored members are read") < 4 * MiB


def test_a_header_claiming_more_than_its_member_holds_is_refused_before_any_allocation(tmp_path):
    path = archive(tmp_path / "claims.npz", {"__tree__.npy": tree_member(ARRAY_TREE),
                                             "a0.npy": npy_header((2**28,), np.float64) + bytes(16)})
    assert refused(path, r"claims \(268435456,\) float64 \(2147483648 bytes\) but holds 16 bytes") < 4 * MiB


MALFORMED_MEMBERS = {
    "objects": (npy_header((1,), object) + bytes(8), "array of object"),
    "records": (npy_header((1,), "V8") + bytes(8), r"array of \|V8"),
    "items of no size": (npy_header((4,), "<U0"), "array of <U0"),
    "negative shape": (npy_header((-1, 4), np.float64), "claims the shape"),
    "cut short": (npy(np.zeros(2))[:-3], "holds 13 bytes"),
    "not .npy": (b"not an array " * 40, "unreadable result"),
}


@pytest.mark.parametrize(("member", "match"), MALFORMED_MEMBERS.values(), ids=MALFORMED_MEMBERS)
def test_a_malformed_array_member_is_refused(tmp_path, member, match):
    path = archive(tmp_path / "value.npz", {"__tree__.npy": tree_member(ARRAY_TREE), "a0.npy": member})
    refused(path, match)


def test_too_many_members_are_refused_before_zipfile_lists_them(tmp_path, monkeypatch):
    monkeypatch.setattr(wire, "MAX_ARRAYS", 10)
    path = tmp_path / "many.npz"
    wire.save(path, ARRAY_TREE, [np.zeros(1)] * 10)
    wire.read(path)  # as many as allowed
    members = {"__tree__.npy": tree_member(ARRAY_TREE), **{f"a{i}.npy": npy(np.zeros(1)) for i in range(11)}}
    refused(archive(tmp_path / "more.npz", members), "lists 12 members, more than 11")
    # The end record may say 1: zipfile would still read every entry the directory holds.
    data = bytearray((tmp_path / "more.npz").read_bytes())
    data[-14:-10] = struct.pack("<HH", 1, 1)
    (tmp_path / "lying.npz").write_bytes(data)
    refused(tmp_path / "lying.npz", r"directory takes \d+ bytes for 1 members")


ODD_MEMBERS = {
    "an array number skipped": ({"__tree__.npy": tree_member(ARRAY_TREE), "a1.npy": npy(np.zeros(1))},
                                "unexpected member 'a1.npy'"),
    "no tree": ({"a0.npy": npy(np.zeros(1))}, "unexpected member 'a0.npy'"),
    "a tree of floats": ({"__tree__.npy": npy(np.zeros(3))}, "the tree is stored as float64"),
    "a tree not JSON": ({"__tree__.npy": npy(np.frombuffer(b"{", dtype=np.uint8))}, "unreadable result"),
}


@pytest.mark.thorough
def test_a_directory_of_empty_members_is_refused_before_zipfile_lists_it(tmp_path):
    """zipfile makes a 550-byte object of each entry: 50,000 empty members would take 8 times the file's size."""
    path = tmp_path / "empty.npz"
    with zipfile.ZipFile(path, "w") as handle:
        handle.writestr("__tree__.npy", tree_member(None))
        for i in range(50_000):
            handle.writestr(f"a{i}.npy", b"")
    assert refused(path, "lists 50001 members in .* bytes, too few for their arrays") < 1.5 * os.path.getsize(path)


@pytest.mark.parametrize(("members", "match"), ODD_MEMBERS.values(), ids=ODD_MEMBERS)
def test_members_other_than_a_tree_and_numbered_arrays_are_refused(tmp_path, members, match):
    refused(archive(tmp_path / "value.npz", members), match)


def test_a_member_listed_twice_is_refused(tmp_path):
    path = tmp_path / "twice.npz"
    with zipfile.ZipFile(path, "w") as handle, pytest.warns(UserWarning, match="Duplicate name"):
        handle.writestr("__tree__.npy", tree_member(ARRAY_TREE))
        handle.writestr("a0.npy", npy(np.zeros(1)))
        handle.writestr("a0.npy", npy(np.zeros(2)))
    refused(path, "lists a member twice")


def test_a_huge_or_deep_tree_is_refused(tmp_path):
    huge = np.frombuffer(b"[" + b"0," * (4 * MiB + 1) + b"0]", dtype=np.uint8)
    path = archive(tmp_path / "huge.npz", {"__tree__.npy": npy(huge)})
    assert refused(path, "the tree is 8.0 MiB, more than 8 MiB") < 12 * MiB  # parsed, it would take 25 times that
    deep = np.frombuffer(b"[" * 100_000 + b"]" * 100_000, dtype=np.uint8)
    refused(archive(tmp_path / "deep.npz", {"__tree__.npy": npy(deep)}), "RecursionError")


def test_save_refuses_what_read_would_refuse(tmp_path):
    with pytest.raises(wire.WireError, match="the value's tree takes 9.5 MiB, more than 8 MiB"):
        wire.dump(tmp_path / "value.npz", ["x" * 20_000] * 500)
    with pytest.raises(wire.WireError, match="a key of 20001 characters"):
        wire.dump(tmp_path / "value.npz", {"k" * 20_001: 1})
    assert not (tmp_path / "value.npz").exists()


UNSENDABLE = {
    "a long list": ({"t": "list", "v": [0] * (wire.MAX_ITEMS + 1)}, "more than 200000 items"),
    "many short lists": ({"t": "list", "v": [{"t": "list", "v": [0] * 1000}] * 201}, "more than 200000 items"),
    "a dict of tuples": ({"t": "dict", "k": ["a"] * 150_000, "v": [{"t": "tuple", "v": [0]}] * 150_000},
                         "more than 200000 items"),
    "too deep": (json.loads('{"t": "list", "v": [' * 30 + "]}" * 30), "nested more than 24 levels deep"),
    "a long string": ("x" * 20_001, "a string of 20001 characters"),
    "a list as a key": ({"t": "dict", "k": [[1]], "v": [1]}, "malformed dict"),
    "more keys than values": ({"t": "dict", "k": ["a", "b"], "v": [1]}, "malformed dict"),
    "a long key": ({"t": "dict", "k": ["x" * 20_001], "v": [1]}, "a string of 20001 characters"),
    "a float of a list": ({"t": "float", "v": []}, "malformed float value"),
    "a float of words": ({"t": "float", "v": "one"}, "malformed float value 'one'"),
    "an int of 5000 digits": ({"t": "bigint", "v": "9" * 5000}, "malformed bigint value"),
    "a list without items": ({"t": "list"}, "malformed list value"),
    "an array named by text": ({"t": "array", "i": "0"}, "missing array"),
    "an array not sent": ({"t": "array", "i": 1}, "missing array"),
    "a handle named by text": ({"t": "handle", "id": "1"}, "malformed handle value"),
    "a kind not text": ({"t": ["list"]}, "malformed value"),
    "a bare float": (1.5, "malformed value"),
    "an unknown kind": ({"t": "code", "v": "print()"}, "unexpected value kind 'code'"),
}


@pytest.mark.parametrize(("tree", "match"), UNSENDABLE.values(), ids=UNSENDABLE)
def test_the_decoder_refuses_what_the_encoder_would_not_send(tree, match):
    with pytest.raises(wire.WireError, match=match):
        wire.Decoder([np.zeros(1)], handle=lambda key, kind: (key, kind)).decode(tree)


def test_a_link_a_pipe_or_a_file_past_the_limit_is_refused_without_waiting(tmp_path):
    wire.dump(tmp_path / "value.npz", {"x": np.zeros(MiB)})
    os.symlink(tmp_path / "value.npz", tmp_path / "link.npz")
    refused(tmp_path / "link.npz", "unreadable result")
    refused(tmp_path / "value.npz", "the result is 8.0 MiB, more than the 1 MiB allowed", limit=MiB)
    assert wire.MAX_RESULT_BYTES < wire.MAX_BYTES
    os.mkfifo(tmp_path / "pipe.npz")  # opening it to read would wait for a writer forever
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(refused(tmp_path / "pipe.npz", "not a regular file")),
                              daemon=True)
    reader.start()
    reader.join(10)
    assert outcome, "reading a pipe did not return"
