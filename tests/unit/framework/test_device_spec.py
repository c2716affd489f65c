"""Mirrors TF's device_spec_test.py and device_test.py (reference section 3.4)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorweave.framework import device_spec
from tensorweave.framework.device_spec import DeviceSpec


def test_empty():
    d = DeviceSpec()
    assert d.to_string() == ""
    d.parse_from_string("")
    assert d.to_string() == ""
    assert DeviceSpec.from_string("").to_string() == ""
    assert DeviceSpec.from_string(None).to_string() == ""


def test_constructor():
    d = DeviceSpec(job="j", replica=0, task=1, device_type="CPU", device_index=2)
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == ("j", 0, 1, "CPU", 2)
    assert d.to_string() == "/job:j/replica:0/task:1/device:CPU:2"
    d = DeviceSpec(device_type="GPU", device_index=0)
    assert d.to_string() == "/device:GPU:0"


def test_constructor_coerces():
    d = DeviceSpec(job="j", replica="3", task="4", device_type="gpu", device_index="1")
    assert (d.replica, d.task, d.device_type, d.device_index) == (3, 4, "GPU", 1)
    with pytest.raises(ValueError, match="invalid literal for int"):
        DeviceSpec(task="x")


def test_to_string_legacy():
    d = DeviceSpec()
    d.job = "foo"
    assert d.to_string() == "/job:foo"
    d.task = 3
    assert d.to_string() == "/job:foo/task:3"
    d.device_type = "CPU"
    d.device_index = 0
    assert d.to_string() == "/job:foo/task:3/device:CPU:0"
    d.task = None
    d.replica = 12
    assert d.to_string() == "/job:foo/replica:12/device:CPU:0"
    d.device_type = "GPU"
    d.device_index = 2
    assert d.to_string() == "/job:foo/replica:12/device:GPU:2"
    d.device_type = "CPU"
    d.device_index = 1
    assert d.to_string() == "/job:foo/replica:12/device:CPU:1"
    d.device_type = None
    d.device_index = None
    assert d.to_string() == "/job:foo/replica:12"

    d = DeviceSpec(job="foo", replica=12, task=3, device_type="GPU")
    assert d.to_string() == "/job:foo/replica:12/task:3/device:GPU:*"


def test_replace():
    d = DeviceSpec()
    d = d.replace(job="foo")
    assert d.to_string() == "/job:foo"
    d = d.replace(task=3)
    assert d.to_string() == "/job:foo/task:3"
    d = d.replace(device_type="CPU", device_index=0)
    assert d.to_string() == "/job:foo/task:3/device:CPU:0"
    d = d.replace(task=None, replica=12)
    assert d.to_string() == "/job:foo/replica:12/device:CPU:0"
    d = d.replace(device_type="GPU", device_index=2)
    assert d.to_string() == "/job:foo/replica:12/device:GPU:2"
    d = d.replace(device_type="CPU", device_index=1)
    assert d.to_string() == "/job:foo/replica:12/device:CPU:1"
    d = d.replace(device_type=None, device_index=None)
    assert d.to_string() == "/job:foo/replica:12"

    d = DeviceSpec(job="foo", replica=12, task=3)
    assert d.replace(device_type="GPU").to_string() == "/job:foo/replica:12/task:3/device:GPU:*"
    # replace() returns a copy.
    assert d.to_string() == "/job:foo/replica:12/task:3"
    with pytest.raises(TypeError):
        d.replace(bogus=1)


def test_to_string():
    cases = [
        (dict(job="foo"), "/job:foo"),
        (dict(job="foo", task=3), "/job:foo/task:3"),
        (
            dict(job="foo", task=3, device_type="cpu", device_index=0),
            "/job:foo/task:3/device:CPU:0",
        ),
        (
            dict(job="foo", replica=12, device_type="cpu", device_index=0),
            "/job:foo/replica:12/device:CPU:0",
        ),
        (
            dict(job="foo", replica=12, device_type="gpu", device_index=2),
            "/job:foo/replica:12/device:GPU:2",
        ),
        (dict(job="foo", replica=12), "/job:foo/replica:12"),
        (
            dict(job="foo", replica=12, task=3, device_type="GPU"),
            "/job:foo/replica:12/task:3/device:GPU:*",
        ),
        # An index without a type is not printed.
        (dict(job="foo", device_index=3), "/job:foo"),
    ]
    for kwargs, expected in cases:
        assert DeviceSpec(**kwargs).to_string() == expected


def test_parse_legacy():
    d = DeviceSpec()
    d.parse_from_string("/job:foo/replica:0")
    assert d.to_string() == "/job:foo/replica:0"
    d.parse_from_string("/replica:1/task:0/cpu:0")
    assert d.to_string() == "/replica:1/task:0/device:CPU:0"
    d.parse_from_string("/replica:1/task:0/device:CPU:0")
    assert d.to_string() == "/replica:1/task:0/device:CPU:0"
    d.parse_from_string("/job:muu/device:GPU:2")
    assert d.to_string() == "/job:muu/device:GPU:2"
    with pytest.raises(ValueError, match="Cannot specify multiple"):
        d.parse_from_string("/job:muu/device:GPU:2/cpu:0")
    # A failed parse leaves the spec unchanged.
    assert d.to_string() == "/job:muu/device:GPU:2"


def test_parse_legacy_variants():
    assert DeviceSpec.from_string("/GPU:1").to_string() == "/device:GPU:1"
    assert DeviceSpec.from_string("/Cpu").to_string() == "/device:CPU:*"
    assert DeviceSpec.from_string("/gpu:*").to_string() == "/device:GPU:*"
    assert DeviceSpec.from_string("job:a//task:2/").to_string() == "/job:a/task:2"
    assert DeviceSpec.from_string("/device:MyFunnyDevice:*").to_string() == (
        "/device:MyFunnyDevice:*"
    )
    # parse_from_string resets fields that the new string does not set.
    d = DeviceSpec.from_string("/job:a/task:1/cpu:0")
    d.parse_from_string("/replica:2")
    assert d.to_string() == "/replica:2"


def test_to_from_string():
    d = DeviceSpec.from_string("/job:foo/replica:0")
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == (
        "foo",
        0,
        None,
        None,
        None,
    )
    d = DeviceSpec.from_string("/replica:1/task:0/cpu:0")
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == (None, 1, 0, "CPU", 0)
    d = DeviceSpec.from_string("/job:muu/device:GPU:2")
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == (
        "muu",
        None,
        None,
        "GPU",
        2,
    )
    with pytest.raises(ValueError, match="Cannot specify multiple"):
        DeviceSpec.from_string("/job:muu/device:GPU:2/cpu:0")


def test_merge_legacy():
    d = DeviceSpec.from_string("/job:foo/replica:0")
    assert d.to_string() == "/job:foo/replica:0"
    d.merge_from(DeviceSpec.from_string("/task:1/device:GPU:2"))
    assert d.to_string() == "/job:foo/replica:0/task:1/device:GPU:2"

    d = DeviceSpec()
    d.merge_from(DeviceSpec.from_string("/task:1/cpu:0"))
    assert d.to_string() == "/task:1/device:CPU:0"
    d.merge_from(DeviceSpec.from_string("/job:boo/device:GPU:0"))
    assert d.to_string() == "/job:boo/task:1/device:GPU:0"
    d.merge_from(DeviceSpec.from_string("/job:muu/cpu:2"))
    assert d.to_string() == "/job:muu/task:1/device:CPU:2"
    d.merge_from(DeviceSpec.from_string("/job:muu/device:MyFunnyDevice:2"))
    assert d.to_string() == "/job:muu/task:1/device:MyFunnyDevice:2"


def test_combine():
    d = DeviceSpec.from_string("/job:foo/replica:0")
    assert d.to_string() == "/job:foo/replica:0"
    d = d.make_merged_spec(DeviceSpec.from_string("/task:1/device:GPU:2"))
    assert d.to_string() == "/job:foo/replica:0/task:1/device:GPU:2"

    d = DeviceSpec()
    d = d.make_merged_spec(DeviceSpec.from_string("/task:1/cpu:0"))
    assert d.to_string() == "/task:1/device:CPU:0"
    d = d.make_merged_spec(DeviceSpec.from_string("/job:boo/device:GPU:0"))
    assert d.to_string() == "/job:boo/task:1/device:GPU:0"
    d = d.make_merged_spec(DeviceSpec.from_string("/job:muu/cpu:2"))
    assert d.to_string() == "/job:muu/task:1/device:CPU:2"
    d = d.make_merged_spec(DeviceSpec.from_string("/job:muu/device:MyFunnyDevice:2"))
    assert d.to_string() == "/job:muu/task:1/device:MyFunnyDevice:2"


def test_make_merged_spec_does_not_mutate_and_accepts_strings():
    base = DeviceSpec.from_string("/job:foo")
    merged = base.make_merged_spec("/task:2/device:GPU:1")
    assert merged.to_string() == "/job:foo/task:2/device:GPU:1"
    assert base.to_string() == "/job:foo"
    # Fields merge independently, including the index (TF behaviour).
    assert DeviceSpec.from_string("/device:GPU:2").make_merged_spec("/cpu:*").to_string() == (
        "/device:CPU:2"
    )


def test_eq_hash_repr():
    a = DeviceSpec.from_string("/task:0/job:ps")
    b = DeviceSpec(job="ps", task=0)
    assert a == b
    assert hash(a) == hash(b)
    assert a != DeviceSpec(job="ps", task=1)
    assert a != "/job:ps/task:0"
    assert len({a, b}) == 1
    assert repr(b) == (
        "<DeviceSpec(job=ps, replica=None, task=0, device_type=None, device_index=None)>"
    )


def test_merge_device_chain():
    # device_test.testMerge: scopes GPU:0 -> /job:worker -> CPU:0 -> /job:ps, each op's
    # device built by applying the active device functions innermost-first.
    scopes = [
        device_spec.merge_device("/device:GPU:0"),
        device_spec.merge_device("/job:worker"),
        device_spec.merge_device("/device:CPU:0"),
        device_spec.merge_device("/job:ps"),
    ]

    def place(depth):
        device = ""
        for fn in reversed(scopes[:depth]):
            device = device_spec.canonical_name(fn(_FakeOp(device)))
        return device

    assert place(1) == "/device:GPU:0"
    assert place(2) == "/job:worker/device:GPU:0"
    assert place(3) == "/job:worker/device:CPU:0"
    assert place(4) == "/job:ps/device:CPU:0"


class _FakeOp:
    def __init__(self, device):
        self.device = device


def test_merge_device_details():
    fn = device_spec.merge_device("/job:ps/task:0")
    assert device_spec.merge_device(fn) is fn
    assert not fn.is_null_merge
    assert device_spec.merge_device(None).is_null_merge
    assert device_spec.merge_device("").is_null_merge
    # The op's own fields win; accepts objects, strings and None.
    assert fn(_FakeOp("/task:3/cpu:0")).to_string() == "/job:ps/task:3/device:CPU:0"
    assert fn("/job:worker").to_string() == "/job:worker/task:0"
    assert fn(None).to_string() == "/job:ps/task:0"
    # The spec is copied at construction time.
    spec = DeviceSpec(job="a")
    fn = device_spec.merge_device(spec)
    spec.job = "b"
    assert fn(_FakeOp("")).to_string() == "/job:a"
    with pytest.raises(ValueError, match="Unknown attribute"):
        device_spec.merge_device("/bogus:1")


def test_canonical_name():
    assert device_spec.canonical_name("/job:foo/replica:0") == "/job:foo/replica:0"
    assert device_spec.canonical_name("/replica:0/job:foo") == "/job:foo/replica:0"
    assert device_spec.canonical_name("/job:foo/replica:0/task:0/cpu:0") == (
        "/job:foo/replica:0/task:0/device:CPU:0"
    )
    assert device_spec.canonical_name("/device:GPU:0/task:0/replica:0/job:foo") == (
        "/job:foo/replica:0/task:0/device:GPU:0"
    )
    assert device_spec.canonical_name(DeviceSpec(job="foo", replica=0)) == "/job:foo/replica:0"
    assert device_spec.canonical_name(None) == ""
    assert device_spec.canonical_name("") == ""


def test_check_valid():
    device_spec.check_valid("/job:foo/replica:0")
    with pytest.raises(ValueError, match="invalid literal for int"):
        device_spec.check_valid("/job:j/replica:foo")
    with pytest.raises(ValueError, match="invalid literal for int"):
        device_spec.check_valid("/job:j/task:bar")
    with pytest.raises(ValueError, match="Unknown attribute: 'bar'"):
        device_spec.check_valid("/bar:muu/baz:2")
    with pytest.raises(ValueError, match="Cannot specify multiple device"):
        device_spec.check_valid("/cpu:0/device:GPU:2")
    with pytest.raises(ValueError, match="Unknown attribute: 'device' in '/device:CPU'"):
        device_spec.check_valid("/device:CPU")
    with pytest.raises(ValueError, match="invalid literal for int"):
        device_spec.check_valid("/gpu:x")


def test_unknown_attribute_wins_over_bad_int():
    # TF converts replica/task only after the whole string is scanned.
    with pytest.raises(ValueError, match="Unknown attribute: 'bar'"):
        device_spec.check_valid("/replica:foo/bar:1")


def test_is_compatible():
    assert device_spec.is_compatible("/job:ps", "/job:ps/replica:0/task:1/device:CPU:0")
    assert device_spec.is_compatible("", "/job:ps/task:1")
    assert device_spec.is_compatible(None, "/job:ps")
    assert device_spec.is_compatible("/device:CPU:*", "/device:CPU:3")
    assert device_spec.is_compatible("/job:ps/task:0", DeviceSpec(job="ps", device_type="GPU"))
    assert not device_spec.is_compatible("/job:ps", "/job:worker")
    assert not device_spec.is_compatible("/cpu:0", "/gpu:0")
    assert not device_spec.is_compatible("/task:0", "/task:1/cpu:0")


def test_full_device_name():
    assert device_spec.full_device_name("ps", 0, 1) == "/job:ps/replica:0/task:1/device:CPU:0"
    assert device_spec.full_device_name("worker", 0, 2, "GPU", 3) == (
        "/job:worker/replica:0/task:2/device:GPU:3"
    )


_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC_0123456789-", min_size=1, max_size=8)
_device_types = st.one_of(st.sampled_from(["CPU", "GPU", "TPU", "MyFunnyDevice"]), _names)
_ints = st.integers(min_value=0, max_value=10**6)


@given(
    job=st.one_of(st.none(), _names),
    replica=st.one_of(st.none(), _ints),
    task=st.one_of(st.none(), _ints),
    device_type=st.one_of(st.none(), _device_types),
    device_index=st.one_of(st.none(), _ints),
)
def test_round_trip(job, replica, task, device_type, device_index):
    if device_type is None:
        # An index without a type is not representable in the string form.
        device_index = None
    spec = DeviceSpec(job, replica, task, device_type, device_index)
    parsed = DeviceSpec.from_string(spec.to_string())
    assert parsed == spec
    assert (parsed.job, parsed.replica, parsed.task, parsed.device_index) == (
        job,
        replica,
        task,
        device_index,
    )
    assert device_spec.canonical_name(spec.to_string()) == spec.to_string()
