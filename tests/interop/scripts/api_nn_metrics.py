"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

import numpy as np

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
else:
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
res = {}
g = tf.Graph()
with g.as_default():
    L = tf.placeholder(tf.int64, [8])
    P = tf.placeholder(tf.float32, [8])
    W = tf.placeholder(tf.float32, [8])
    CL = tf.placeholder(tf.int64, [6])
    CP = tf.placeholder(tf.int64, [6])
    LG = tf.placeholder(tf.float32, [4, 5])
    ML = tf.placeholder(tf.int64, [4, 2])
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
    names = sorted(m)
    res["local_vars"] = sorted(v.op.name for v in tf.local_variables())
    with tf.Session() as s:
        s.run(tf.local_variables_initializer())
        for b in range(2):
            fd = {
                L: labels_b[b],
                P: preds_b[b],
                W: w_b[b],
                CL: cls_l[b],
                CP: cls_p[b],
                LG: logits[b],
                ML: mlab[b],
            }
            ups = s.run([m[n][1] for n in names], fd)
            for n, u in zip(names, ups):
                res[f"{n}/update{b}"] = np.asarray(u, np.float64).tolist()
        vals = s.run([m[n][0] for n in names])
        for n, v in zip(names, vals):
            res[f"{n}/value"] = np.asarray(v, np.float64).tolist()
print(json.dumps(res))
