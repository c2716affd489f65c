"""tf.layers classes and the functional layers built on them: variable names and
collections as TensorFlow's, reuse, Layer base API (build/call/add_weight/losses/updates,
InputSpec errors), values against NumPy or the validated tf.nn ops on the same weights,
BatchNormalization training/inference and its moving-average updates in UPDATE_OPS,
smart_cond."""

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.smart_cond import smart_cond

RNG = np.random.RandomState(11)
X4 = RNG.randn(2, 6, 5, 3).astype(np.float32)
X3 = RNG.randn(2, 7, 3).astype(np.float32)
X5 = RNG.randn(2, 4, 5, 6, 2).astype(np.float32)
L = tf.layers


def _init_run(fetches):
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        return s.run(fetches)


def test_dense_names_reuse_regularizer_and_values():
    with tf.Graph().as_default():
        d = L.Dense(4, activation=tf.nn.relu, kernel_regularizer=lambda w: tf.reduce_sum(w * w))
        assert d.name == "dense" and not d.built
        y1 = d(X3)
        y2 = d(X3 * 2.0)
        y3 = L.Dense(3, use_bias=False)(X3)
        names = [v.op.name for v in tf.global_variables()]
        assert names == ["dense/kernel", "dense/bias", "dense_1/kernel"]
        assert [w.op.name for w in d.trainable_weights] == ["dense/kernel", "dense/bias"]
        assert (
            len(d.losses) == 1 and len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
        )
        assert y1.op.name.startswith("dense/") and y2.shape.as_list() == [2, 7, 4]
        assert d.count_params() == 16 and d.scope_name == "dense"
        k, b, o1, o2, reg = _init_run([d.kernel, d.bias, y1, y2, d.losses[0]])
        _ = y3
    np.testing.assert_allclose(o1, np.maximum(X3 @ k + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o2, np.maximum(2 * X3 @ k + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reg, np.sum(k * k), rtol=1e-5)


def test_dense_errors_and_input_spec():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="last dimension of the inputs to `Dense`"):
            L.Dense(2)(tf.placeholder(tf.float32, [None, None]))
        d = L.Dense(2)
        d(np.zeros((1, 3), np.float32))
        with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
            d(np.zeros((1, 4), np.float32))
        with pytest.raises(ValueError, match="expected min_ndim=2, found ndim=1"):
            L.Dense(2)(np.zeros(3, np.float32))
        with pytest.raises(TypeError, match="Keyword argument not understood"):
            L.Dense(2, bogus=1)


@pytest.mark.parametrize("cf", [False, True])
def test_conv_layers_match_nn_ops(cf):
    with tf.Graph().as_default():
        c1 = L.Conv1D(4, 3, strides=2, padding="same")
        c2 = L.Conv2D(
            4, (3, 2), dilation_rate=(1, 2), data_format="channels_first" if cf else "channels_last"
        )
        c3 = L.Conv3D(3, 2, strides=(1, 2, 1), padding="same")
        x4 = np.transpose(X4, [0, 3, 1, 2]) if cf else X4
        outs = [c1(X3), c2(x4), c3(X5)]
        refs = [
            tf.nn.conv1d(X3, c1.kernel, 2, "SAME") + c1.bias,
            tf.nn.conv2d(X4, c2.kernel, 1, "VALID", dilations=[1, 1, 2, 1]) + c2.bias,
            tf.nn.conv3d(X5, c3.kernel, [1, 1, 2, 1, 1], "SAME") + c3.bias,
        ]
        assert c2.kernel.op.name == "conv2d/kernel" and c2.kernel.shape.as_list() == [3, 2, 3, 4]
        got, want = _init_run([outs, refs])
    if cf:
        got[1] = np.transpose(got[1], [0, 2, 3, 1])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_separable_and_transposed_layers():
    with tf.Graph().as_default():
        s1 = L.SeparableConv1D(4, 3, depth_multiplier=2)
        s2 = L.SeparableConv2D(5, 3, padding="same", depth_multiplier=2)
        t2 = L.Conv2DTranspose(2, 3, strides=2, padding="valid")
        t3 = L.Conv3DTranspose(2, 2, strides=(2, 1, 1), padding="same")
        outs = [s1(X3), s2(X4), t2(X4), t3(X5)]
        assert [v.op.name for v in s2.weights] == [
            "separable_conv2d/depthwise_kernel",
            "separable_conv2d/pointwise_kernel",
            "separable_conv2d/bias",
        ]
        assert t2.kernel.shape.as_list() == [3, 3, 2, 3]
        assert outs[2].shape.as_list() == [2, 13, 11, 2]
        assert outs[3].shape.as_list() == [2, 8, 5, 6, 2]
        x3e = tf.expand_dims(X3, 1)
        refs = [
            tf.squeeze(
                tf.nn.separable_conv2d(
                    x3e,
                    tf.expand_dims(s1.depthwise_kernel, 0),
                    tf.expand_dims(s1.pointwise_kernel, 0),
                    [1, 1, 1, 1],
                    "VALID",
                ),
                [1],
            )
            + s1.bias,
            tf.nn.separable_conv2d(
                X4, s2.depthwise_kernel, s2.pointwise_kernel, [1, 1, 1, 1], "SAME"
            )
            + s2.bias,
            tf.nn.conv2d_transpose(X4, t2.kernel, [2, 13, 11, 2], 2, "VALID") + t2.bias,
            tf.nn.conv3d_transpose(X5, t3.kernel, [2, 8, 5, 6, 2], [1, 2, 1, 1, 1], "SAME")
            + t3.bias,
        ]
        got, want = _init_run([outs, refs])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_pooling_flatten_dropout():
    with tf.Graph().as_default():
        outs = [
            L.MaxPooling1D(2, 2)(X3),
            L.AveragePooling1D(3, 1, padding="same")(X3),
            L.MaxPooling2D(2, 1)(X4),
            L.AveragePooling2D(2, 2, padding="same")(X4),
            L.MaxPooling3D(2, 2)(X5),
            L.AveragePooling3D(2, 1)(X5),
            L.max_pooling1d(X3, 2, 2),
            L.average_pooling1d(X3, 2, 2),
            L.max_pooling3d(X5, 2, 2),
            L.average_pooling3d(X5, 2, 2),
            L.Flatten()(X4),
            L.Dropout(0.5)(X4, training=False),
            L.Dropout(0.5)(X4, training=True),
        ]
        refs = [
            tf.nn.max_pool1d(X3, 2, 2, "VALID"),
            tf.nn.avg_pool1d(X3, 3, 1, "SAME"),
            tf.nn.max_pool(X4, 2, 1, "VALID"),
            tf.nn.avg_pool(X4, 2, 2, "SAME"),
            tf.nn.max_pool3d(X5, 2, 2, "VALID"),
            tf.nn.avg_pool3d(X5, 2, 1, "VALID"),
            tf.nn.max_pool1d(X3, 2, 2, "VALID"),
            tf.nn.avg_pool1d(X3, 2, 2, "VALID"),
            tf.nn.max_pool3d(X5, 2, 2, "VALID"),
            tf.nn.avg_pool3d(X5, 2, 2, "VALID"),
            tf.reshape(X4, [2, 90]),
            tf.constant(X4),
        ]
        assert L.MaxPooling2D(2, 2).compute_output_shape([None, 6, 5, 3]).as_list() == [
            None,
            3,
            2,
            3,
        ]
        got, want = _init_run([outs, refs])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    dropped = got[-1]
    assert set(np.unique(np.round(dropped / X4, 4))) <= {0.0, 2.0}


def _bn_ref(x, gamma, beta, mean, var, eps=1e-3):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


@pytest.mark.parametrize("fused", [None, False])
def test_batch_normalization_training_inference_updates(fused):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 6, 5, 3])
        bn = L.BatchNormalization(momentum=0.9, fused=fused)
        train = bn(x, training=True)
        infer = bn(x, training=False)
        assert [v.op.name for v in bn.weights] == [
            "batch_normalization/gamma",
            "batch_normalization/beta",
            "batch_normalization/moving_mean",
            "batch_normalization/moving_variance",
        ]
        assert [v.op.name for v in tf.trainable_variables()] == [
            "batch_normalization/gamma",
            "batch_normalization/beta",
        ]
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2 and updates == bn.updates
        assert any(
            op.type == "FusedBatchNormV3" for op in tf.get_default_graph().get_operations()
        ) == (fused is None)  # noqa: E501
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(tf.assign(bn.gamma, [1.5, 0.5, 2.0]))
            s.run(tf.assign(bn.beta, [0.1, -0.2, 0.3]))
            y_train = s.run(train, {x: X4})
            s.run(updates, {x: X4})
            mm, mv = s.run([bn.moving_mean, bn.moving_variance])
            y_infer = s.run(infer, {x: X4})
    g, b = np.array([1.5, 0.5, 2.0]), np.array([0.1, -0.2, 0.3])
    m, v = X4.mean((0, 1, 2)), X4.var((0, 1, 2))
    np.testing.assert_allclose(y_train, _bn_ref(X4, g, b, m, v), rtol=1e-4, atol=1e-4)
    n = 60
    batch_var = v * n / (n - 1) if fused is None else v
    np.testing.assert_allclose(mm, 0.1 * m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mv, 0.9 + 0.1 * batch_var, rtol=1e-5)
    np.testing.assert_allclose(y_infer, _bn_ref(X4, g, b, mm, mv), rtol=1e-4, atol=1e-4)


def test_functional_batch_normalization_reuse_and_axis():
    with tf.Graph().as_default():
        y = L.batch_normalization(X3, axis=1, training=True, name="bn")
        y2 = L.batch_normalization(X3, axis=1, training=False, name="bn", reuse=True)
        assert [v.op.name for v in tf.global_variables()] == [
            "bn/gamma",
            "bn/beta",
            "bn/moving_mean",
            "bn/moving_variance",
        ]
        assert y.shape.as_list() == [2, 7, 3]
        got, got2 = _init_run([y, y2])
    m, v = X3.mean((0, 2), keepdims=True), X3.var((0, 2), keepdims=True)
    np.testing.assert_allclose(got, (X3 - m) / np.sqrt(v + 1e-3), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got2, X3 / np.sqrt(1 + 1e-3), rtol=1e-5)
    with tf.Graph().as_default():
        with pytest.raises(NotImplementedError, match="renorm"):
            L.BatchNormalization(renorm=True)
        with pytest.raises(ValueError, match="fused batch norm only supports axis"):
            L.BatchNormalization(axis=2, fused=True)(X4)


def test_functional_conv_layers_names():
    with tf.Graph().as_default():
        outs = [
            L.conv1d(X3, 2, 2, name="c1"),
            L.conv3d(X5, 2, 3, padding="same"),
            L.separable_conv1d(X3, 2, 2),
            L.separable_conv2d(X4, 2, 2),
            L.conv2d_transpose(X4, 2, 2, strides=2),
            L.conv3d_transpose(X5, 2, 2),
            L.conv1d(X3, 2, 2, name="c1", reuse=True),
        ]
        names = [v.op.name for v in tf.global_variables()]
        assert names[:2] == ["c1/kernel", "c1/bias"] and "c1_1/kernel" not in names
        assert "conv3d/kernel" in names and "conv2d_transpose/kernel" in names
        assert [o.shape.as_list() for o in outs[4:6]] == [[2, 12, 10, 2], [2, 5, 6, 7, 2]]
        got = _init_run(outs)
    np.testing.assert_allclose(got[0], got[6])


class _Scale(L.Layer):
    def build(self, input_shape):
        self.w = self.add_weight(
            "w", shape=[input_shape.as_list()[-1]], initializer=tf.ones_initializer()
        )
        self.counter = self.add_weight(
            "counter", shape=[], trainable=False, initializer=tf.zeros_initializer()
        )
        super().build(input_shape)

    def call(self, inputs):
        self.add_update(tf.assign_add(self.counter, 1.0))
        self.add_loss(tf.reduce_sum(self.w))
        return inputs * self.w


def test_custom_layer_base_api():
    with tf.Graph().as_default():
        layer = _Scale(name="scale")
        y = layer(X3)
        assert layer.built and layer.dtype == "float32"
        assert [v.op.name for v in layer.trainable_weights] == ["scale/w"]
        assert [v.op.name for v in layer.non_trainable_weights] == ["scale/counter"]
        assert len(layer.losses) == 1 and len(layer.updates) == 1
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == layer.updates
        assert layer.apply(X3).shape.as_list() == [2, 7, 3]
        frozen = _Scale(trainable=False)
        frozen(X3)
        assert frozen.trainable_weights == [] and len(frozen.non_trainable_weights) == 2
        spec = L.InputSpec(ndim=3, axes={-1: 3})
        assert "ndim=3" in repr(spec)
        np.testing.assert_allclose(_init_run(y), X3)


def test_smart_cond():
    with tf.Graph().as_default():
        assert smart_cond(True, lambda: 1, lambda: 2) == 1
        assert smart_cond(tf.constant(False), lambda: 1, lambda: 2) == 2
        pred = tf.placeholder(tf.bool, [])
        out = smart_cond(pred, lambda: tf.constant(1), lambda: tf.constant(2))
        with tf.Session() as sess:
            assert [sess.run(out, {pred: v}) for v in (True, False)] == [1, 2]
        with pytest.raises(TypeError, match="must be callable"):
            smart_cond(True, 1, lambda: 2)


def test_dropout_and_batch_norm_branch_on_a_training_tensor():
    """`training=<bool tensor>` builds a `tf.cond` (TF's smart_cond) in both layers."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 3])
        training = tf.placeholder(tf.bool, [])
        dropped = L.dropout(x, rate=0.5, training=training, seed=1)
        normed = L.batch_normalization(x, training=training)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        ones = np.ones((4, 3), np.float32)
        data = np.arange(12, dtype=np.float32).reshape(4, 3)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(dropped, {x: ones, training: False}), ones)
            kept = sess.run(dropped, {x: ones, training: True})
            assert set(np.unique(kept)) <= {0.0, 2.0} and 0 < kept.sum() < 24
            got = sess.run(normed, {x: data, training: True})
            np.testing.assert_allclose(got.mean(axis=0), 0.0, atol=1e-5)
            # Inference uses the moving statistics (initially mean 0, variance 1).
            np.testing.assert_allclose(sess.run(normed, {x: data, training: False}),
                                       data / np.sqrt(1 + 1e-3), rtol=1e-5)
            sess.run(updates, {x: data, training: True})
