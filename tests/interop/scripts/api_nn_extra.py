"""Run as `python <script> tf|tw`: builds the same graph with TensorFlow (tf.compat.v1) or
tensorweave and prints the fetched values as JSON (used by tests/interop)."""

import json
import sys

import numpy as np

if sys.argv[1] == "tf":
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
else:
    import tensorweave as tf
rng = np.random.RandomState(5)
x4 = rng.randn(2, 3, 4, 5).astype(np.float32)
sc = rng.rand(5).astype(np.float32) + 0.5
of = rng.randn(5).astype(np.float32)
mu = rng.randn(5).astype(np.float32)
va = rng.rand(5).astype(np.float32) + 0.1
w = rng.randn(10, 4).astype(np.float32)
b = rng.randn(10).astype(np.float32)
inp = rng.randn(3, 4).astype(np.float32)
lab = np.array([[1, 7], [3, 2], [9, 0]], np.int64)
samp = (
    np.array([2, 5, 7, 4], np.int64),
    rng.rand(3, 2).astype(np.float32) + 0.1,
    rng.rand(4).astype(np.float32) + 0.1,
)
res = {}
g = tf.Graph()
with g.as_default():
    X = tf.constant(x4)
    y, bm, bv = tf.nn.fused_batch_norm(X, sc, of)
    yi, _, _ = tf.nn.fused_batch_norm(X, sc, of, mu, va, is_training=False)
    ye, bme, bve = tf.nn.fused_batch_norm(X, sc, of, mu, va, exponential_avg_factor=0.3)
    ync, _, _ = tf.nn.fused_batch_norm(tf.transpose(X, [0, 3, 1, 2]), sc, of, data_format="NCHW")
    out = {
        "fbn_y": y,
        "fbn_m": bm,
        "fbn_v": bv,
        "fbn_inf": yi,
        "fbn_e_m": bme,
        "fbn_e_v": bve,
        "fbn_e_y": ye,
        "fbn_nchw": ync,
        "bn": tf.nn.batch_normalization(X, mu, va, of, sc, 0.01),
        "bn_none": tf.nn.batch_normalization(X, mu, va, None, None, 0.01),
        "bngn": tf.nn.batch_norm_with_global_normalization(X, mu, va, of, sc, 0.01, True),
        "lrn": tf.nn.lrn(X, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75),
        "lrn_def": tf.nn.local_response_normalization(X),
        "selu": tf.nn.selu(X),
        "crelu": tf.nn.crelu(X),
        "swish": tf.nn.swish(X),
        "lpl": tf.nn.log_poisson_loss(
            tf.constant([0.0, 0.5, 1.0, 2.0, 5.0]), tf.constant([0.1, -0.3, 0.5, 1.2, 1.7])
        ),
        "lpl_full": tf.nn.log_poisson_loss(
            tf.constant([0.0, 0.5, 1.0, 2.0, 5.0]),
            tf.constant([0.1, -0.3, 0.5, 1.2, 1.7]),
            compute_full_loss=True,
        ),
        "cal": tf.nn.compute_average_loss(
            tf.constant([1.0, 2.0, 4.0]), sample_weight=tf.constant([1.0, 0.5, 2.0])
        ),
        "cal_gbs": tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 4.0]), global_batch_size=8),
        "srl": tf.nn.scale_regularization_loss(tf.constant([1.0, 2.0])),
        "nce": tf.nn.nce_loss(w, b, lab, inp, 4, 10, num_true=2, sampled_values=samp),
        "nce_rah": tf.nn.nce_loss(
            w, b, lab, inp, 4, 10, num_true=2, sampled_values=samp, remove_accidental_hits=True
        ),
        "ssl": tf.nn.sampled_softmax_loss(
            w, b, lab[:, :1], inp, 4, 10, sampled_values=(samp[0], samp[1][:, :1], samp[2])
        ),
        "ssl2": tf.nn.sampled_softmax_loss(
            [w[:5], w[5:]],
            b,
            lab,
            inp,
            4,
            10,
            num_true=2,
            sampled_values=samp,
            partition_strategy="div",
        ),
        "hits_i": tf.nn.compute_accidental_hits(lab, [2, 5, 7, 2, 9], 2)[0],
        "hits_id": tf.nn.compute_accidental_hits(lab, [2, 5, 7, 2, 9], 2)[1],
        "hits_w": tf.nn.compute_accidental_hits(lab, [2, 5, 7, 2, 9], 2)[2],
        "all": tf.nn.all_candidate_sampler(lab, 2, 10, True)[0],
        "all_te": tf.nn.all_candidate_sampler(lab, 2, 10, True)[1],
        "uni_te": tf.nn.uniform_candidate_sampler(lab, 2, 4, False, 10)[1],
        "uni_se": tf.nn.uniform_candidate_sampler(lab, 2, 4, False, 10)[2],
        "log_te": tf.nn.log_uniform_candidate_sampler(lab, 2, 4, False, 10)[1],
        "fix_te": tf.nn.fixed_unigram_candidate_sampler(
            lab, 2, 4, False, 10, unigrams=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], distortion=0.5
        )[1],
        "fix_res_te": tf.nn.fixed_unigram_candidate_sampler(
            lab, 2, 4, False, 10, unigrams=[1, 2, 3, 4, 5, 6, 7, 8], num_reserved_ids=2
        )[1],
        "lrn_te": tf.nn.learned_unigram_candidate_sampler(lab, 2, 4, False, 10)[1],
    }
    mom = tf.nn.sufficient_statistics(X, [0, 1, 2], shift=0.5)
    out["ss_c"], out["ss_m"], out["ss_v"] = mom[0], mom[1], mom[2]
    out["nm_m"], out["nm_v"] = tf.nn.normalize_moments(mom[0], mom[1], mom[2], mom[3])
    out["wm_m"], out["wm_v"] = tf.nn.weighted_moments(
        X, [1, 2], tf.constant(rng.rand(2, 3, 4, 1).astype(np.float32))
    )
    out["wm_mk"], _ = tf.nn.weighted_moments(X, [0], 2.0, keepdims=True)
    gx = {}
    for k in ["fbn_y", "fbn_inf", "fbn_nchw", "lrn", "selu", "crelu", "swish"]:
        wt = tf.constant(rng.randn(*out[k].shape.as_list()).astype(np.float32))
        gx[k] = tf.gradients(tf.reduce_sum(out[k] * wt), [X])[0]
    gx["fbn_scale"] = tf.gradients(tf.reduce_sum(y * y), [y.op.inputs[1]])[0]
    gx["nce_inp"] = (
        tf.gradients(tf.reduce_sum(out["nce_rah"]), [out["nce_rah"].op.inputs[0]])[0]
        if False
        else tf.constant(0.0)
    )
    with tf.Session() as s:
        for k, v in s.run(out).items():
            res[k] = np.asarray(v, np.float64).tolist()
        for k, v in s.run(gx).items():
            res["grad/" + k] = np.asarray(v, np.float64).tolist()
print(json.dumps(res))
