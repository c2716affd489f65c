"""tf.metrics: every metric over two batches, value and update_op, against the values
TensorFlow 2.21's `tf.compat.v1.metrics` gives for the same graph (recorded here), plus
variable names, collections, resets and bad input (cases ported from TF's
`metrics_test.py`)."""

import math

import numpy as np
import pytest

import tensorweave as tf

rng = np.random.RandomState(0)
labels_b = [
    np.array([1, 0, 1, 1, 0, 0, 1, 0], np.int64),
    np.array([0, 0, 1, 1, 1, 0, 1, 1], np.int64),
]
preds_b = [
    np.array([0.9, 0.1, 0.4, 0.8, 0.6, 0.2, 0.55, 0.3], np.float32),
    np.array([0.2, 0.35, 0.7, 0.9, 0.45, 0.05, 0.5, 0.65], np.float32),
]
w_b = [
    np.array([1, 2, 0, 1, 1, 3, 1, 0.5], np.float32),
    np.array([1, 1, 1, 2, 0, 1, 1, 1], np.float32),
]
cls_l = [np.array([0, 1, 2, 2, 1, 0]), np.array([2, 2, 1, 0, 0, 1])]
cls_p = [np.array([0, 2, 2, 1, 1, 0]), np.array([2, 0, 1, 0, 2, 1])]
logits = [rng.rand(4, 5).astype(np.float32), rng.rand(4, 5).astype(np.float32)]
mlab = [
    np.array([[0, 3], [1, 2], [4, 0], [2, 1]], np.int64),
    np.array([[1, 4], [0, 3], [2, 3], [4, 2]], np.int64),
]

# Recorded from TensorFlow 2.21 (tf.compat.v1, graph mode) on the graph built by _build().
EXPECTED = {
    "accuracy/update0": 0.75,
    "accuracy/update1": 0.75,
    "accuracy/value": 0.75,
    "accuracy_w/update0": 0.89473683,
    "accuracy_w/update1": 0.88571429,
    "accuracy_w/value": 0.88571429,
    "ap_2_w/update0": 0.19444444,
    "ap_2_w/update1": 0.22222222,
    "ap_2_w/value": 0.22222222,
    "ap_3/update0": 0.22916667,
    "ap_3/update1": 0.32291667,
    "ap_3/value": 0.32291667,
    "auc/update0": 0.87499982,
    "auc/update1": 0.93650782,
    "auc/value": 0.93650782,
    "auc_maj/update0": 0.87499982,
    "auc_maj/update1": 0.93650782,
    "auc_maj/value": 0.93650782,
    "auc_min/update0": 0.87499982,
    "auc_min/update1": 0.93650782,
    "auc_min/value": 0.93650782,
    "auc_pr/update0": 0.87083316,
    "auc_pr/update1": 0.9430775,
    "auc_pr/value": 0.9430775,
    "auc_pr_ci/update0": 0.87229359,
    "auc_pr_ci/update1": 0.94324154,
    "auc_pr_ci/value": 0.94324154,
    "auc_thr/update0": 0.90624982,
    "auc_thr/update1": 0.90476179,
    "auc_thr/value": 0.90476179,
    "auc_w/update0": 0.94871783,
    "auc_w/update1": 0.97368407,
    "auc_w/value": 0.97368407,
    "fn/update0": 0.0,
    "fn/update1": 1.0,
    "fn/value": 1.0,
    "fn_t/update0": [0.0, 1.0, 2.0],
    "fn_t/update1": [0.0, 3.0, 6.0],
    "fn_t/value": [0.0, 3.0, 6.0],
    "fp/update0": 1.0,
    "fp/update1": 1.0,
    "fp/value": 1.0,
    "fp_t/update0": [1.5, 1.0, 0.0],
    "fp_t/update1": [2.5, 1.0, 0.0],
    "fp_t/value": [2.5, 1.0, 0.0],
    "iou/update0": [[2.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]],
    "iou/update1": [[3.0, 0.0, 1.0], [0.0, 3.0, 1.0], [1.0, 1.0, 2.0]],
    "iou/value": 0.51111114,
    "iou_w/update0": [
        [2.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 2.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ],
    "iou_w/update1": [
        [2.0, 0.0, 1.0, 0.0],
        [0.0, 3.0, 2.0, 0.0],
        [2.0, 0.0, 2.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ],
    "iou_w/value": 0.42857143,
    "mae/update0": 0.24210529,
    "mae/update1": 0.24285714,
    "mae/value": 0.24285714,
    "mcd/update0": 0.22362339,
    "mcd/update1": 0.21925795,
    "mcd/value": 0.21925795,
    "mean/update0": 0.48125002,
    "mean/update1": 0.47812501,
    "mean/value": 0.47812501,
    "mean_tensor/update0": [
        [0.89999998, 0.1, 0.0, 0.80000001],
        [0.60000002, 0.2, 0.55000001, 0.30000001],
    ],
    "mean_tensor/update1": [
        [0.55000001, 0.18333334, 0.69999999, 0.86666662],
        [0.60000002, 0.16250001, 0.52499998, 0.5333333],
    ],
    "mean_tensor/value": [
        [0.55000001, 0.18333334, 0.69999999, 0.86666662],
        [0.60000002, 0.16250001, 0.52499998, 0.5333333],
    ],
    "mean_w/update0": 0.40000001,
    "mean_w/update1": 0.46000001,
    "mean_w/value": 0.46000001,
    "mpca/update0": [1.0, 0.5, 0.5],
    "mpca/update1": [0.75, 0.75, 0.5],
    "mpca/value": 0.66666669,
    "mre/update0": 0.16874999,
    "mre/update1": 0.19687501,
    "mre/value": 0.19687501,
    "mse/update0": 0.13906249,
    "mse/update1": 0.12828125,
    "mse/value": 0.12828125,
    "p_at_1_c2/update0": math.nan,
    "p_at_1_c2/update1": 0.0,
    "p_at_1_c2/value": 0.0,
    "p_at_2/update0": 0.375,
    "p_at_2/update1": 0.4375,
    "p_at_2/value": 0.4375,
    "p_top/update0": 0.33333333,
    "p_top/update1": 0.41666667,
    "p_top/value": 0.41666667,
    "pb/update0": 0.57894737,
    "pb/update1": 0.48571429,
    "pb/value": 0.48571429,
    "prec_t/update0": [0.66666669, 0.75, 1.0],
    "prec_t/update1": [0.75, 0.85714287, 1.0],
    "prec_t/value": [0.75, 0.85714287, 1.0],
    "precision/update0": 0.75,
    "precision/update1": 0.875,
    "precision/value": 0.875,
    "r_at_2/update0": 0.375,
    "r_at_2/update1": 0.4375,
    "r_at_2/value": 0.4375,
    "r_at_3_c4/update0": 0.0,
    "r_at_3_c4/update1": 0.33333333,
    "r_at_3_c4/value": 0.33333333,
    "r_top/update0": 0.5,
    "r_top/update1": 0.625,
    "r_top/value": 0.625,
    "rec_t/update0": [1.0, 1.0, 0.66666669],
    "rec_t/update1": [1.0, 0.875, 0.5],
    "rec_t/value": [1.0, 0.875, 0.5],
    "recall/update0": 0.75,
    "recall/update1": 0.66666669,
    "recall/value": 0.66666669,
    "rmse/update0": 0.28973672,
    "rmse/update1": 0.28735244,
    "rmse/value": 0.28735244,
    "sens/update0": 1.0,
    "sens/update1": 1.0,
    "sens/value": 1.0,
    "sp_at_1/update0": 0.0,
    "sp_at_1/update1": 0.0,
    "sp_at_1/value": 0.0,
    "spec/update0": 1.0,
    "spec/update1": 1.0,
    "spec/value": 1.0,
    "spec_w/update0": 1.0,
    "spec_w/update1": 1.0,
    "spec_w/value": 1.0,
    "tn/update0": 3.0,
    "tn/update1": 6.0,
    "tn/value": 6.0,
    "tn_t/update0": [2.0, 3.0, 4.0],
    "tn_t/update1": [4.0, 6.0, 7.0],
    "tn_t/value": [4.0, 6.0, 7.0],
    "tp/update0": 3.0,
    "tp/update1": 7.0,
    "tp/value": 7.0,
    "tp_t/update0": [4.0, 3.0, 2.0],
    "tp_t/update1": [9.0, 6.0, 3.0],
    "tp_t/value": [9.0, 6.0, 3.0],
}


def _build():
    L = tf.placeholder(tf.int64, [8])
    P = tf.placeholder(tf.float32, [8])
    W = tf.placeholder(tf.float32, [8])  # noqa: E501, E702
    CL = tf.placeholder(tf.int64, [6])
    CP = tf.placeholder(tf.int64, [6])  # noqa: E702
    LG = tf.placeholder(tf.float32, [4, 5])
    ML = tf.placeholder(tf.int64, [4, 2])  # noqa: E702
    Pb = tf.cast(tf.greater(P, 0.5), tf.int64)
    m = {
        "accuracy": tf.metrics.accuracy(L, Pb),
        "accuracy_w": tf.metrics.accuracy(L, Pb, weights=W),
        "mean": tf.metrics.mean(P),
        "mean_w": tf.metrics.mean(P, weights=W),
        "mae": tf.metrics.mean_absolute_error(tf.cast(L, tf.float32), P, weights=W),
        "mse": tf.metrics.mean_squared_error(tf.cast(L, tf.float32), P),
        "rmse": tf.metrics.root_mean_squared_error(tf.cast(L, tf.float32), P, weights=W),
        "mre": tf.metrics.mean_relative_error(
            tf.cast(L, tf.float32), P, normalizer=tf.cast(L, tf.float32)
        ),
        "mean_tensor": tf.metrics.mean_tensor(tf.reshape(P, [2, 4]), weights=tf.reshape(W, [2, 4])),
        "pb": tf.metrics.percentage_below(P, 0.5, weights=W),
        "tp": tf.metrics.true_positives(L, Pb, weights=W),
        "fp": tf.metrics.false_positives(L, Pb),
        "tn": tf.metrics.true_negatives(L, Pb),
        "fn": tf.metrics.false_negatives(L, Pb, weights=W),
        "precision": tf.metrics.precision(L, Pb, weights=W),
        "recall": tf.metrics.recall(L, Pb),
        "auc": tf.metrics.auc(L, P, num_thresholds=20),
        "auc_w": tf.metrics.auc(L, P, weights=W, num_thresholds=50),
        "auc_pr": tf.metrics.auc(L, P, curve="PR", num_thresholds=30),
        "auc_pr_ci": tf.metrics.auc(
            L, P, curve="PR", num_thresholds=30, summation_method="careful_interpolation"
        ),
        "auc_min": tf.metrics.auc(L, P, num_thresholds=25, summation_method="minoring"),
        "auc_maj": tf.metrics.auc(L, P, num_thresholds=25, summation_method="majoring"),
        "auc_thr": tf.metrics.auc(L, P, thresholds=[0.3, 0.5, 0.7]),
        "tp_t": tf.metrics.true_positives_at_thresholds(L, P, [0.25, 0.5, 0.75]),
        "fp_t": tf.metrics.false_positives_at_thresholds(L, P, [0.25, 0.5, 0.75], weights=W),
        "tn_t": tf.metrics.true_negatives_at_thresholds(L, P, [0.25, 0.5, 0.75]),
        "fn_t": tf.metrics.false_negatives_at_thresholds(L, P, [0.25, 0.5, 0.75]),
        "prec_t": tf.metrics.precision_at_thresholds(L, P, [0.25, 0.5, 0.75]),
        "rec_t": tf.metrics.recall_at_thresholds(L, P, [0.25, 0.5, 0.75], weights=W),
        "sens": tf.metrics.sensitivity_at_specificity(L, P, 0.7, num_thresholds=30),
        "spec": tf.metrics.specificity_at_sensitivity(L, P, 0.6, num_thresholds=30),
        "spec_w": tf.metrics.specificity_at_sensitivity(L, P, 0.4, weights=W),
        "iou": tf.metrics.mean_iou(CL, CP, 3),
        "iou_w": tf.metrics.mean_iou(
            CL, CP, 4, weights=tf.constant([1.0, 2.0, 1.0, 0.0, 1.0, 1.0])
        ),
        "mpca": tf.metrics.mean_per_class_accuracy(CL, CP, 3),
        "mcd": tf.metrics.mean_cosine_distance(
            tf.nn.l2_normalize(tf.reshape(P, [4, 2]), 1),
            tf.nn.l2_normalize(tf.reshape(W + 0.1, [4, 2]), 1),
            dim=1,
        ),
        "p_at_2": tf.metrics.precision_at_k(ML, LG, 2),
        "p_at_1_c2": tf.metrics.precision_at_k(ML, LG, 1, class_id=2),
        "r_at_2": tf.metrics.recall_at_k(ML, LG, 2),
        "r_at_3_c4": tf.metrics.recall_at_k(ML, LG, 3, class_id=4),
        "p_top": tf.metrics.precision_at_top_k(ML, tf.nn.top_k(LG, 3)[1]),
        "r_top": tf.metrics.recall_at_top_k(
            ML, tf.nn.top_k(LG, 3)[1], weights=tf.constant([1.0, 0.0, 2.0, 1.0])
        ),
        "sp_at_1": tf.metrics.sparse_precision_at_k(ML[:, 0], LG, 1),
        "ap_3": tf.metrics.average_precision_at_k(ML, LG, 3),
        "ap_2_w": tf.metrics.sparse_average_precision_at_k(
            ML, LG, 2, weights=tf.constant([1.0, 0.5, 2.0, 1.0])
        ),
    }
    return m, (L, P, W, CL, CP, LG, ML)


def _feed(ph, b):
    data = (labels_b, preds_b, w_b, cls_l, cls_p, logits, mlab)
    return {p: d[b] for p, d in zip(ph, data)}


def _close(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_every_metric_matches_tensorflow():
    g = tf.Graph()
    with g.as_default():
        m, ph = _build()
        names = sorted(m)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            for b in range(2):
                ups = s.run([m[n][1] for n in names], _feed(ph, b))
                for n, u in zip(names, ups):
                    _close(u, EXPECTED[f"{n}/update{b}"])
            vals = s.run([m[n][0] for n in names])
            for n, v in zip(names, vals):
                _close(v, EXPECTED[f"{n}/value"])


def test_state_is_local_metric_variables_named_as_tensorflow():
    g = tf.Graph()
    with g.as_default():
        p = tf.constant([1.0, 2.0])
        tf.metrics.mean(p)
        tf.metrics.accuracy(tf.constant([1, 0]), tf.constant([1, 1]))
        tf.metrics.precision(tf.constant([1, 0]), tf.constant([1, 1]))
        tf.metrics.auc(tf.constant([1, 0]), tf.constant([0.3, 0.6]), num_thresholds=5)
        tf.metrics.mean_iou(tf.constant([1, 0]), tf.constant([1, 1]), 2)
        names = [v.op.name for v in tf.local_variables()]
        assert names == [
            "mean/total", "mean/count", "accuracy/total", "accuracy/count",
            "precision/true_positives/count", "precision/false_positives/count",
            "auc/true_positives", "auc/false_negatives", "auc/true_negatives",
            "auc/false_positives", "mean_iou/total_confusion_matrix",
        ]  # fmt: skip
        assert [v.op.name for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)] == names
        assert not tf.trainable_variables() and not tf.global_variables()


def test_collections_receive_value_and_update():
    g = tf.Graph()
    with g.as_default():
        value, update = tf.metrics.mean(
            tf.constant([1.0, 3.0]), metrics_collections=["m"], updates_collections=["u"]
        )
        assert tf.get_collection("m") == [value]
        assert tf.get_collection("u") == [update]


def test_local_variables_initializer_resets_the_state():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None])
        value, update = tf.metrics.mean(x)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            assert s.run(value) == 0.0  # nothing counted: 0, not NaN
            s.run(update, {x: [1.0, 2.0]})
            assert s.run(update, {x: [6.0]}) == 3.0
            s.run(tf.local_variables_initializer())
            assert s.run(update, {x: [5.0, 7.0]}) == 6.0


def test_mean_tensor_against_numpy():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 2])
        value, update = tf.metrics.mean_tensor(x)
        batches = [np.array([[1, 2], [3, 4]]), np.array([[0, 4], [1, -2]])]
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            for b in batches:
                s.run(update, {x: b})
            np.testing.assert_array_equal(s.run(value), np.mean(batches, axis=0))


def test_precision_and_recall_are_zero_without_positives():
    g = tf.Graph()
    with g.as_default():
        p, p_up = tf.metrics.precision(tf.constant([1, 1]), tf.constant([0, 0]))
        r, r_up = tf.metrics.recall(tf.constant([0, 0]), tf.constant([1, 1]))
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            assert s.run([p_up, r_up]) == [0.0, 0.0]


def test_precision_at_top_k_is_nan_before_updates():
    g = tf.Graph()
    with g.as_default():
        value, _ = tf.metrics.precision_at_top_k(
            tf.constant([[1]], tf.int64), tf.constant([[1, 0]], tf.int64)
        )
        assert value.op.name == "precision_at_k"
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            assert math.isnan(s.run(value))


def test_bad_input():
    g = tf.Graph()
    with g.as_default():
        labels, preds = tf.constant([1, 0]), tf.constant([0.2, 0.4])
        with pytest.raises(ValueError, match="curve must be either ROC or PR"):
            tf.metrics.auc(labels, preds, curve="XY")
        with pytest.raises(ValueError, match="summation_method"):
            tf.metrics.auc(labels, preds, summation_method="simpson")
        with pytest.raises(ValueError, match=r"`specificity` must be in the range \[0, 1\]"):
            tf.metrics.sensitivity_at_specificity(labels, preds, 1.5)
        with pytest.raises(ValueError, match=r"`sensitivity` must be in the range \[0, 1\]"):
            tf.metrics.specificity_at_sensitivity(labels, preds, -0.1)
        with pytest.raises(ValueError, match="weights can not be broadcast"):
            tf.metrics.mean(tf.constant([1.0, 2.0]), weights=tf.constant([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError):
            tf.metrics.accuracy(tf.constant([1, 0]), tf.constant([1, 0, 1]))
        with pytest.raises(ValueError, match="Invalid k"):
            tf.metrics.average_precision_at_k(labels, tf.constant([[0.1, 0.2]]), 0)


# ----------------------------------------------- cases ported from TF's metrics_test.py
def _stream(metric_fn, batches, placeholders):
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(dt, shape) for dt, shape in placeholders]
        value, update = metric_fn(*phs)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            for batch in batches:
                s.run(update, dict(zip(phs, batch)))
            return s.run(value)


def test_mean_basic_multiple_updates():
    values = [[0, 1], [-4.2, 9.1], [6.5, 0], [-3.2, 4.0]]
    got = _stream(tf.metrics.mean, [([v],) for v in values], [(tf.float32, [1, 2])])
    np.testing.assert_allclose(got, 1.65, rtol=1e-6)


def test_accuracy_effectively_equivalent_sizes():
    got = _stream(
        lambda p, lab: tf.metrics.accuracy(lab, p),
        [(np.ones((40, 1)), np.ones(40))],
        [(tf.float32, [40, 1]), (tf.float32, [40])],
    )
    assert got == 1.0


def test_auc_all_correct_all_incorrect_and_zero_positives():
    rng = np.random.RandomState(3)
    inputs = rng.randint(0, 2, size=(100, 1)).astype(np.float32)
    for curve in ("ROC", "PR"):
        got = _stream(lambda p, lab, c=curve: tf.metrics.auc(lab, p, curve=c), [(inputs, inputs)],
                      [(tf.float32, [100, 1]), (tf.float32, [100, 1])])  # fmt: skip
        np.testing.assert_allclose(got, 1.0, atol=1e-5)
    got = _stream(lambda p, lab: tf.metrics.auc(lab, p), [(inputs, 1 - inputs)],
                  [(tf.float32, [100, 1]), (tf.float32, [100, 1])])  # fmt: skip
    np.testing.assert_allclose(got, 0.0, atol=1e-5)
    got = _stream(lambda p, lab: tf.metrics.auc(lab, p), [(np.zeros(4), np.zeros(4))],
                  [(tf.float32, [4]), (tf.float32, [4])])  # fmt: skip
    np.testing.assert_allclose(got, 1.0, atol=1e-5)  # no positives: TF gives 1


def test_mean_iou_multiple_updates():
    labels = [0, 1, 1, 2, 2, 2, 0]
    preds = [0, 1, 2, 2, 1, 2, 1]
    got = _stream(
        lambda p, lab: tf.metrics.mean_iou(lab, p, 3),
        [([p], [lab]) for p, lab in zip(preds, labels)],
        [(tf.int32, [1]), (tf.int32, [1])],
    )
    # Confusion matrix rows (labels) x columns (predictions): [[1,1,0],[0,1,1],[0,1,2]].
    cm = np.array([[1, 1, 0], [0, 1, 1], [0, 1, 2]], float)
    iou = np.diag(cm) / (cm.sum(0) + cm.sum(1) - np.diag(cm))
    np.testing.assert_allclose(got, iou.mean(), rtol=1e-6)


def test_precision_recall_all_correct_and_weighted():
    preds = np.array([[1, 0, 1, 0]], np.float32)
    got = _stream(lambda p, lab: tf.metrics.precision(lab, p), [(preds, preds)],
                  [(tf.float32, [1, 4]), (tf.float32, [1, 4])])  # fmt: skip
    assert got == 1.0
    weighted = _stream(
        lambda p, lab, w: tf.metrics.precision(lab, p, weights=w),
        [(preds, np.array([[0, 1, 1, 0]]), np.array([[1, 2, 3, 4]]))],
        [(tf.float32, [1, 4]), (tf.float32, [1, 4]), (tf.float32, [1, 4])],
    )
    np.testing.assert_allclose(weighted, 3.0 / 4.0)
    recall = _stream(
        lambda p, lab, w: tf.metrics.recall(lab, p, weights=w),
        [(preds, np.array([[0, 1, 1, 0]]), np.array([[1, 2, 3, 4]]))],
        [(tf.float32, [1, 4]), (tf.float32, [1, 4]), (tf.float32, [1, 4])],
    )
    np.testing.assert_allclose(recall, 3.0 / 5.0)
