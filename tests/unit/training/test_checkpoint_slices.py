"""Checkpoint slices (`SaveV2` with `shape_and_slices` specs): writing, assembling any
requested region, merging sharded parts, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.kernels import checkpoint_format as fmt

FULL = np.arange(15, dtype=np.float32).reshape(5, 3)


def _index(spec: str):
    return fmt.parse_shape_and_slice(spec)[1]


def test_write_slices_and_read_regions(tmp_path):
    prefix = str(tmp_path / "ck")
    fmt.write_checkpoint(
        prefix,
        ["m", "m", "w"],
        [FULL[3:], FULL[:3], np.array([1, 2], np.int32)],
        ["5 3 3,2:-", "5 3 0,3:0,3", ""],
    )
    reader = fmt.CheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"m": [5, 3], "w": [2]}
    assert reader.get_variable_to_dtype_map()["m"].name == "float32"
    np.testing.assert_array_equal(reader.get_tensor("m"), FULL)
    rows, cols, whole = reader.read_slices(
        ["m", "m", "w"], [_index("5 3 2,2:-"), _index("5 3 -:1,2"), None]
    )
    np.testing.assert_array_equal(rows, FULL[2:4])  # spans both saved slices
    np.testing.assert_array_equal(cols, FULL[:, 1:3])
    np.testing.assert_array_equal(whole, [1, 2])
    entry = fmt.read_index(prefix)["tensors"]["m"]
    assert sorted(s["slice"] for s in entry["slices"]) == ["0,3:0,3", "3,2:-"]
    # TF's EncodeTensorNameSlice: OrderedCode 0, the name, the rank, (start, length) per
    # dimension with -1 for a whole one.
    keys = {s["slice"]: s["key"].encode("latin-1") for s in entry["slices"]}
    assert keys["3,2:-"] == b"\x00m\x00\x01\x01\x02\x83\x82\x80\x7f"


def test_string_slices(tmp_path):
    prefix = str(tmp_path / "s")
    parts = [np.array([b"a", b"bc"], dtype=object), np.array([b"", b"d"], dtype=object)]
    fmt.write_checkpoint(prefix, ["s", "s"], parts, ["4 0,2", "4 2,2"])
    assert list(fmt.CheckpointReader(prefix).get_tensor("s")) == [b"a", b"bc", b"", b"d"]


@pytest.mark.parametrize(
    "names, values, specs, match",
    [
        (["m", "m"], [FULL[:2], FULL[:2]], ["5 3 0,2:-", "5 3 0,2:-"], "Duplicate slice"),
        (["m"], [FULL[:2]], ["5 3 0,3:-"], "does not match the shape"),
        (["m", "m"], [FULL, FULL[:2]], ["", "5 3 0,2:-"], "both whole and as slices"),
        (["m", "m"], [FULL[:2], FULL[:2]], ["5 3 0,2:-", "6 3 2,2:-"], "disagree"),
        (["m"], [FULL[:2]], ["5 3 4,2:-"], "shape_and_slice"),
    ],
)
def test_write_errors(tmp_path, names, values, specs, match):
    with pytest.raises(errors.InvalidArgumentError, match=match):
        fmt.write_checkpoint(str(tmp_path / "bad"), names, values, specs)
    assert not (tmp_path / "bad.index").exists()


def test_uncovered_region(tmp_path):
    prefix = str(tmp_path / "half")
    fmt.write_checkpoint(prefix, ["m"], [FULL[:2]], ["5 3 0,2:-"])
    reader = fmt.CheckpointReader(prefix)
    np.testing.assert_array_equal(reader.read_slices(["m"], [_index("5 3 1,1:-")])[0], FULL[1:2])
    with pytest.raises(errors.InvalidArgumentError, match="not fully covered"):
        reader.get_tensor("m")


def test_merge_sliced_parts(tmp_path):
    parts = [str(tmp_path / "tmp" / f"part-{i}") for i in range(2)]
    fmt.write_checkpoint(parts[0], ["m", "a"], [FULL[:2], np.ones(2)], ["5 3 0,2:-", ""])
    fmt.write_checkpoint(parts[1], ["m"], [FULL[2:]], ["5 3 2,3:-"])
    dest = str(tmp_path / "merged")
    fmt.merge_checkpoints(parts, dest, delete_old_dirs=True)
    reader = fmt.CheckpointReader(dest)
    np.testing.assert_array_equal(reader.get_tensor("m"), FULL)
    shards = {s["slice"]: s["shard"] for s in fmt.read_index(dest)["tensors"]["m"]["slices"]}
    assert shards == {"0,2:-": 0, "2,3:-": 1}
    again = [str(tmp_path / "tmp2" / f"part-{i}") for i in range(2)]
    for p in again:
        fmt.write_checkpoint(p, ["m"], [FULL[:2]], ["5 3 0,2:-"])
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate slice"):
        fmt.merge_checkpoints(again, str(tmp_path / "m2"), delete_old_dirs=True)
