"""Summary ops and the tf.summary namespace (mirrors TF's summary_ops_test.py,
summary_test.py and text_summary_test.py)."""

from __future__ import annotations

import bisect
import sys

import numpy as np
import pytest

import tensorweave as tf
import tensorweave.kernels.summary_kernels  # registers them (until wired in kernels/__init__)
from tensorweave import summary
from tensorweave.framework import tensor_util
from tensorweave.ops import summary_ops
from tensorweave.protos import summary_pb2

DBL_MAX = sys.float_info.max


def _reference_limits():
    """TensorFlow's histogram.cc bucket limits, written independently of the kernel."""
    pos, v = [], 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    pos.append(DBL_MAX)
    return [-x for x in reversed(pos)] + [0.0] + pos


def _reference_histogram(values):
    """(min, max, num, sum, sum_squares, limits, counts) with collapsed empty runs."""
    limits = _reference_limits()
    counts = [0.0] * len(limits)
    for x in values:
        counts[bisect.bisect_right(limits, x)] += 1
    out_limits, out_counts, i = [], [], 0
    while i < len(counts):
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:
            while i < len(counts) and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        out_limits.append(end)
        out_counts.append(count)
    values = [float(x) for x in values]
    lo = min(values) if values else DBL_MAX
    hi = max(values) if values else -DBL_MAX
    stats = (lo, hi, float(len(values)), sum(values), sum(x * x for x in values))
    return stats, out_limits, out_counts


def _run(fetch, feed=None, graph=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetch, feed)


def _parse(serialized):
    assert isinstance(serialized, bytes)
    return summary_pb2.Summary.FromString(serialized)


# ------------------------------------------------------------------- scalar
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8])
def test_scalar_value_and_tag(dtype):
    g = tf.Graph()
    with g.as_default():
        s = summary.scalar("loss", tf.constant(3, dtype=dtype))
    assert s.op.type == "ScalarSummary"
    assert s.dtype == tf.string and s.shape.as_list() == []
    value = _parse(_run(s, graph=g)).value
    assert len(value) == 1
    assert value[0].tag == "loss"
    assert value[0].simple_value == 3.0


def test_scalar_from_placeholder_is_float32_rounded():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float64, [])
        s = summary.scalar("lr", x)
        out = _run(s, {x: 0.1}, graph=g)
    assert _parse(out).value[0].simple_value == np.float32(0.1)


def test_scalar_of_a_vector_fails_at_run_time():
    g = tf.Graph()
    with g.as_default():
        s = summary.scalar("v", tf.constant([1.0, 2.0]))
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"tags and values not the same "
        r"shape: \[\] != \[2\] \(tag 'v'\)",
    ):
        _run(s, graph=g)


def test_raw_scalar_summary_pairs_tags_and_values():
    g = tf.Graph()
    with g.as_default():
        s = summary_ops.scalar_summary(["a", "b"], tf.constant([1.0, 2.0]))
        bad = summary_ops.scalar_summary(["a", "b"], tf.constant([1.0, 2.0, 3.0]))
    values = _parse(_run(s, graph=g)).value
    assert [(v.tag, v.simple_value) for v in values] == [("a", 1.0), ("b", 2.0)]
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"tags and values not the same shape: \[2\] != \[3\]"
    ) as info:
        _run(bad, graph=g)
    assert "(tag " not in str(info.value)  # the tag is named only when there is one


def test_scalar_rejects_strings_while_building():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            summary.scalar("s", tf.constant("text"))


# ------------------------------------------------------------- name scoping
def test_tags_follow_name_scopes_and_are_uniquified():
    g = tf.Graph()
    with g.as_default():
        with tf.name_scope("train"):
            a = summary.scalar("loss", tf.constant(1.0))
            b = summary.scalar("loss", tf.constant(2.0))
        c = summary.histogram("weights", tf.constant([1.0]))
    assert [a.op.name, b.op.name, c.op.name] == ["train/loss", "train/loss_1", "weights"]
    tags = [_parse(v).value[0].tag for v in _run([a, b, c], graph=g)]
    assert tags == ["train/loss", "train/loss_1", "weights"]


def test_family_prefixes_op_name_and_tag():
    g = tf.Graph()
    with g.as_default():
        s = summary.scalar("loss", tf.constant(1.0), family="fam")
        with tf.name_scope("tower"):
            t = summary.scalar("loss", tf.constant(1.0), family="fam")
    assert s.op.name == "fam/loss"
    assert t.op.name == "tower/fam/loss"
    tags = [_parse(v).value[0].tag for v in _run([s, t], graph=g)]
    assert tags == ["fam/fam/loss", "fam/tower/fam/loss"]


def test_illegal_characters_are_replaced():
    g = tf.Graph()
    with g.as_default():
        s = summary.scalar("my loss (avg)", tf.constant(1.0))
    assert s.op.name == "my_loss__avg_"
    assert _parse(_run(s, graph=g)).value[0].tag == "my_loss__avg_"


def test_summaries_go_to_the_summaries_collection_unless_told_otherwise():
    g = tf.Graph()
    with g.as_default():
        a = summary.scalar("a", tf.constant(1.0))
        b = summary.histogram("b", tf.constant([1.0]), collections=["mine"])
        c = summary.text("c", tf.constant("hello"), collections=[])
    assert g.get_collection(tf.GraphKeys.SUMMARIES) == [a]
    assert g.get_collection("mine") == [b]
    assert c not in g.get_collection(tf.GraphKeys.SUMMARIES)


# ---------------------------------------------------------------- histogram
@pytest.mark.parametrize(
    "values",
    [
        [0.0, 1.0, -2.0, 1e-13, 3.0],
        np.linspace(-5, 5, 101),
        np.random.RandomState(0).standard_normal((7, 13)) * 100,
        [1e-15, -1e-15, 1e25, -1e25],
    ],
)
def test_histogram_matches_reference(values):
    g = tf.Graph()
    with g.as_default():
        h = summary.histogram("h", tf.constant(np.asarray(values, np.float64)))
    histo = _parse(_run(h, graph=g)).value[0].histo
    flat = np.asarray(values, np.float64).reshape(-1).tolist()
    (lo, hi, num, total, squares), limits, counts = _reference_histogram(flat)
    assert (histo.min, histo.max, histo.num) == (lo, hi, num)
    # Summation order differs from TensorFlow's sequential loop: allow rounding.
    np.testing.assert_allclose(histo.sum, total, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(histo.sum_squares, squares, rtol=1e-12)
    assert list(histo.bucket_limit) == limits
    assert list(histo.bucket) == counts
    assert sum(histo.bucket) == len(flat)


def test_histogram_bucket_edges():
    g = tf.Graph()
    with g.as_default():
        h = summary.histogram("h", tf.constant([0.0, 1e-12, 1e-12], dtype=tf.float64))
    histo = _parse(_run(h, graph=g)).value[0].histo
    # 0.0 falls in [0, 1e-12), 1e-12 in [1e-12, 1.1e-12): upper_bound semantics.
    nonempty = {lim: n for lim, n in zip(histo.bucket_limit, histo.bucket) if n}
    assert nonempty == {1e-12: 1.0, 1e-12 * 1.1: 2.0}


@pytest.mark.parametrize("dtype", [tf.int32, tf.float16, tf.uint8])
def test_histogram_other_dtypes(dtype):
    g = tf.Graph()
    with g.as_default():
        h = summary.histogram("h", tf.constant([1, 2, 2, 3], dtype=dtype))
    assert h.op.get_attr("T") == dtype
    histo = _parse(_run(h, graph=g)).value[0].histo
    assert (histo.min, histo.max, histo.num, histo.sum) == (1.0, 3.0, 4.0, 8.0)


def test_empty_histogram():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None])
        h = summary.histogram("empty", x)
        out = _run(h, {x: np.zeros([0], np.float32)}, graph=g)
    histo = _parse(out).value[0].histo
    assert (histo.min, histo.max, histo.num, histo.sum) == (DBL_MAX, -DBL_MAX, 0.0, 0.0)
    assert list(histo.bucket_limit) == [DBL_MAX]
    assert list(histo.bucket) == [0.0]


def test_histogram_nan_and_inf_are_invalid_argument():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.name_scope("train"):
            h = summary.histogram("w", x)
    with tf.Session(graph=g) as sess:
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="Nan in summary histogram for: train/w"
        ):
            sess.run(h, {x: [1.0, np.nan, np.inf]})
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: train/w"
        ):
            sess.run(h, {x: [1.0, -np.inf]})


def test_histogram_rejects_non_scalar_tag():
    g = tf.Graph()
    with g.as_default():
        h = summary_ops.histogram_summary(["a", "b"], tf.constant([1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="tags must be scalar"):
        _run(h, graph=g)


# --------------------------------------------------------------------- text
def test_text_summary_has_text_plugin_metadata():
    g = tf.Graph()
    with g.as_default():
        with tf.name_scope("notes"):
            t = summary.text("greeting", tf.constant([["hello", "wörld"], ["a", "b"]]))
    assert t.op.type == "TensorSummaryV2"
    value = _parse(_run(t, graph=g)).value[0]
    assert value.tag == "notes/greeting"
    assert value.metadata.plugin_data.plugin_name == "text"
    assert value.metadata.plugin_data.content == b""
    assert value.tensor.dtype == tf.string.as_datatype_enum
    array = tensor_util.make_ndarray(value.tensor)
    assert array.shape == (2, 2)
    assert array.tolist() == [[b"hello", "wörld".encode()], [b"a", b"b"]]


def test_text_accepts_python_strings_and_rejects_numbers():
    g = tf.Graph()
    with g.as_default():
        t = summary.text("s", "just a string")
        with pytest.raises(ValueError, match="to have dtype string"):
            summary.text("n", tf.constant(1.0))
    value = _parse(_run(t, graph=g)).value[0]
    assert list(value.tensor.string_val) == [b"just a string"]


def test_tensor_summary_of_numbers_uses_tensor_content():
    g = tf.Graph()
    with g.as_default():
        data = np.arange(6, dtype=np.int32).reshape(2, 3)
        t = summary.tensor_summary(
            "t", tf.constant(data), summary_description="desc", display_name="shown"
        )
    value = _parse(_run(t, graph=g)).value[0]
    assert value.tensor.tensor_content
    np.testing.assert_array_equal(tensor_util.make_ndarray(value.tensor), data)
    assert value.metadata.summary_description == "desc"
    assert value.metadata.display_name == "shown"


# -------------------------------------------------------------------- merge
def test_merge_concatenates_values_in_order():
    g = tf.Graph()
    with g.as_default():
        a = summary.scalar("a", tf.constant(1.0))
        b = summary.histogram("b", tf.constant([1.0, 2.0]))
        m = summary.merge([a, b])
    assert m.op.name == "Merge/MergeSummary"
    assert m not in g.get_collection(tf.GraphKeys.SUMMARIES)
    merged = _parse(_run(m, graph=g))
    assert [v.tag for v in merged.value] == ["a", "b"]
    assert merged.value[1].histo.num == 2


def test_merge_name_and_collections():
    g = tf.Graph()
    with g.as_default():
        a = summary.scalar("a", tf.constant(1.0))
        m = summary.merge([a], collections=["merged"], name="all")
    assert m.op.name == "all/all"
    assert g.get_collection("merged") == [m]


def test_merge_duplicate_tags_is_invalid_argument():
    g = tf.Graph()
    with g.as_default():
        a = summary_ops.scalar_summary("loss", tf.constant(1.0))
        b = summary_ops.scalar_summary("loss", tf.constant(2.0))
        m = summary.merge([a, b])
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="Duplicate tag loss found in summary inputs"
    ):
        _run(m, graph=g)


def test_merge_accepts_string_tensors_of_any_shape():
    first = summary_pb2.Summary()
    first.value.add(tag="x", simple_value=1.0)
    second = summary_pb2.Summary()
    second.value.add(tag="y", simple_value=2.0)
    g = tf.Graph()
    with g.as_default():
        batch = tf.constant([first.SerializeToString(), second.SerializeToString()])
        m = summary_ops.merge_summary([batch])
        bad = summary_ops.merge_summary([tf.constant(b"\xff\xff not a proto")])
    assert [v.tag for v in _parse(_run(m, graph=g)).value] == ["x", "y"]
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="Could not parse one of the summary inputs"
    ):
        _run(bad, graph=g)


def test_merge_of_nothing_is_an_error():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            summary.merge([])


def test_merge_all():
    g = tf.Graph()
    with g.as_default():
        assert summary.merge_all() is None
        with tf.name_scope("train"):
            a = summary.scalar("loss", tf.constant(1.0))
        with tf.name_scope("eval"):
            b = summary.scalar("loss", tf.constant(2.0))
        summary.scalar("other", tf.constant(3.0), collections=["elsewhere"])
        everything = summary.merge_all()
        only_eval = summary.merge_all(scope="eval")
        elsewhere = summary.merge_all(key="elsewhere", name="merge_elsewhere")
    assert [t.name for t in everything.op.inputs] == [a.name, b.name]
    assert [t.name for t in only_eval.op.inputs] == [b.name]
    assert elsewhere.op.name == "merge_elsewhere/merge_elsewhere"
    out = _run([everything, only_eval, elsewhere], graph=g)
    assert [[v.tag for v in _parse(o).value] for o in out] == [
        ["train/loss", "eval/loss"],
        ["eval/loss"],
        ["other"],
    ]


def test_merge_all_uses_the_default_graph():
    g = tf.Graph()
    with g.as_default():
        summary.scalar("a", tf.constant(1.0))
        merged = summary.merge_all()
    assert merged.graph is g
    with tf.Graph().as_default():
        assert summary.merge_all() is None


def test_namespace_exports_protos():
    assert summary.Summary is summary_pb2.Summary
    event = summary.Event(summary=summary.Summary(value=[summary.Summary.Value(tag="t")]))
    assert event.summary.value[0].tag == "t"
    assert summary.SessionLog.START == 1
    for name in summary.__all__:
        assert hasattr(summary, name)


def test_summary_ops_are_not_differentiable():
    from tensorweave.ops.gradients_impl import get_gradient_function

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        ops = [
            summary.scalar("s", tf.constant(1.0)).op,
            summary.histogram("h", x).op,
            summary.text("t", "hello").op,
        ]
        ops.append(summary.merge([o.outputs[0] for o in ops]).op)
        for op in ops:
            assert get_gradient_function(op) is None
