"""tf.train AdadeltaOptimizer, ProximalGradientDescentOptimizer, ProximalAdagradOptimizer,
AdagradDAOptimizer, FtrlOptimizer: three dense and three sparse (gather) steps on float32
variables against the variables, slot values and variable names TensorFlow 2.21 gives for
the same graph (recorded here, reference variables), and the ops they use."""

import numpy as np
import pytest

import tensorweave as tf

T = tf.train
CASES = {
    "adadelta": lambda gs: T.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-3),
    "pgd": lambda gs: T.ProximalGradientDescentOptimizer(0.1),
    "pgd_l1l2": lambda gs: T.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.3, l2_regularization_strength=0.2
    ),
    "padagrad": lambda gs: T.ProximalAdagradOptimizer(0.5, initial_accumulator_value=0.2),
    "padagrad_l1l2": lambda gs: T.ProximalAdagradOptimizer(
        0.5, l1_regularization_strength=0.1, l2_regularization_strength=0.4
    ),
    "da": lambda gs: T.AdagradDAOptimizer(0.5, gs),
    "da_l1l2": lambda gs: T.AdagradDAOptimizer(
        0.5, gs, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
    "ftrl": lambda gs: T.FtrlOptimizer(0.3),
    "ftrl_l1l2": lambda gs: T.FtrlOptimizer(
        0.3,
        learning_rate_power=-0.7,
        l1_regularization_strength=0.2,
        l2_regularization_strength=0.1,
    ),
    "ftrl_shrink": lambda gs: T.FtrlOptimizer(
        0.3, l1_regularization_strength=0.1, l2_shrinkage_regularization_strength=0.5, beta=0.2
    ),
    "ftrl_names": lambda gs: T.FtrlOptimizer(0.3, accum_name="acc", linear_name="lin"),
}

# Recorded from TensorFlow 2.21 (tf.compat.v1, graph mode, reference variables).
EXPECTED = {
    "adadelta": {
        "w": [[0.7254124, -1.743232], [0.2243596, 0.3484525], [-0.5889487, 3.298705]],
        "vars": ["global_step", "w", "w/Adadelta", "w/Adadelta_1"],
        "slots": {
            "accum": [[3.712594, 1.514061], [1.258108, 0.3440984], [0.8760237, 3.909002]],
            "accum_update": [
                [0.002254143, 0.001979862],
                [0.002271494, 0.001863034],
                [0.002502357, 0.002684318],
            ],
        },
    },
    "adadelta_sparse": {
        "w": [[0.7075563, -2.280471], [0.5, 0.1], [-0.6039904, 2.697315]],
        "vars": ["global_step", "w", "w/Adadelta", "w/Adadelta_1"],
        "slots": {
            "accum": [[6.868506, 0.0291889], [0.0, 0.0], [0.2536408, 3.986721]],
            "accum_update": [[0.002565966, 0.002359051], [0.0, 0.0], [0.002789572, 0.002761525]],
        },
    },
    "da": {
        "w": [[0.006708969, -0.1003564], [-0.02730599, -0.02689098], [-0.1946433, 0.3797146]],
        "vars": ["global_step", "w", "w/AdagradDA", "w/AdagradDA_1"],
        "slots": {
            "gradient_accumulator": [
                [-0.07862914, 0.9727495],
                [0.1826423, 0.1407958],
                [0.8799915, -3.141132],
            ],
            "gradient_squared_accumulator": [
                [34.33962, 23.48831],
                [11.18476, 6.853397],
                [5.109968, 17.10795],
            ],
        },
    },
    "da_l1l2": {
        "w": [[-0.0, -0.08256834], [-0.01759254, -0.006490313], [-0.156183, 0.3478956]],
        "vars": ["global_step", "w", "w/AdagradDA", "w/AdagradDA_1"],
        "slots": {
            "gradient_accumulator": [
                [0.08741748, 0.9606937],
                [0.2713188, 0.1844553],
                [0.8999731, -3.126151],
            ],
            "gradient_squared_accumulator": [
                [33.41105, 22.65026],
                [10.87693, 6.271823],
                [5.066741, 17.03512],
            ],
        },
    },
    "da_l1l2_sparse": {
        "w": [[-0.3003649, -0.6626689], [0.5, 0.1], [-0.7413258, -0.5750186]],
        "vars": ["global_step", "w", "w/AdagradDA", "w/AdagradDA_1"],
        "slots": {
            "gradient_accumulator": [[3.649962, 2.10042], [0.0, 0.0], [2.892755, 4.940636]],
            "gradient_squared_accumulator": [
                [32.21905, 1.746731],
                [0.1, 0.1],
                [2.889654, 16.12534],
            ],
        },
    },
    "da_sparse": {
        "w": [[-0.3127175, -0.7955291], [0.5, 0.1], [-0.8507334, -0.6113142]],
        "vars": ["global_step", "w", "w/AdagradDA", "w/AdagradDA_1"],
        "slots": {
            "gradient_accumulator": [[3.559243, 2.041784], [0.0, 0.0], [2.882829, 4.904288]],
            "gradient_squared_accumulator": [[32.38552, 1.646825], [0.1, 0.1], [2.87072, 16.09026]],
        },
    },
    "ftrl": {
        "w": [[0.4533308, -1.475653], [-0.03066723, 0.404836], [-0.8261244, 3.393113]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[24.38701, 9.689998], [8.117327, 2.401594], [6.73128, 33.57668]],
            "linear": [[-7.462309, 15.31175], [0.2912459, -2.091258], [7.14452, -65.53841]],
        },
    },
    "ftrl_f32": {
        "w": [[0.6562929, -1.579312], [0.08584055, 0.4128813], [-0.6865131, 3.226032]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[33.4128, 12.02115], [10.47902, 2.784818], [8.676885, 38.06602]],
            "linear": [[-25.84155, 30.52884], [-1.698989, -3.10136], [10.72172, -138.2253]],
        },
    },
    "ftrl_l1l2": {
        "w": [[0.6562929, -1.579312], [0.08584055, 0.4128813], [-0.6865131, 3.226032]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[33.4128, 12.02115], [10.47902, 2.784818], [8.676885, 38.06602]],
            "linear": [[-25.84155, 30.52884], [-1.698989, -3.10136], [10.72172, -138.2253]],
        },
    },
    "ftrl_l1l2_sparse": {
        "w": [[0.6673987, -1.281555], [0.5, 0.1], [-0.7461167, 2.526227]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[70.81917, 1.163], [0.1, 0.1], [2.887373, 41.58909]],
            "linear": [[-44.22388, 5.204434], [0.0, 0.0], [5.573636, -115.1607]],
        },
    },
    "ftrl_names": {
        "w": [[0.4533308, -1.475653], [-0.03066723, 0.404836], [-0.8261244, 3.393113]],
        "vars": ["global_step", "w", "w/acc", "w/lin"],
        "slots": {
            "accum": [[24.38701, 9.689998], [8.117327, 2.401594], [6.73128, 33.57668]],
            "linear": [[-7.462309, 15.31175], [0.2912459, -2.091258], [7.14452, -65.53841]],
        },
    },
    "ftrl_names_sparse": {
        "w": [[0.3441837, -1.332021], [0.5, 0.1], [-0.8652563, 2.107471]],
        "vars": ["global_step", "w", "w/acc", "w/lin"],
        "slots": {
            "accum": [[55.21404, 1.131785], [0.1, 0.1], [2.866707, 37.62953]],
            "linear": [[-8.524988, 4.723584], [0.0, 0.0], [4.88332, -43.09281]],
        },
    },
    "ftrl_shrink": {
        "w": [[0.3297006, -1.058415], [-0.03145877, 0.2462792], [-0.5529364, 2.654616]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[23.02487, 9.786258], [7.343781, 2.418029], [5.876428, 26.94195]],
            "linear": [[-5.593278, 11.84241], [0.4051439, -1.540734], [4.936598, -47.79957]],
        },
    },
    "ftrl_shrink_sparse": {
        "w": [[0.2532035, -0.1990068], [0.5, 0.1], [-0.520017, 1.586449]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[50.1868, 2.340857], [0.1, 0.1], [2.934133, 32.83053]],
            "linear": [[-6.248005, 1.247596], [0.0, 0.0], [3.415855, -31.45771]],
        },
    },
    "ftrl_sparse": {
        "w": [[0.3441837, -1.332021], [0.5, 0.1], [-0.8652563, 2.107471]],
        "vars": ["global_step", "w", "w/Ftrl", "w/Ftrl_1"],
        "slots": {
            "accum": [[55.21404, 1.131785], [0.1, 0.1], [2.866707, 37.62953]],
            "linear": [[-8.524988, 4.723584], [0.0, 0.0], [4.88332, -43.09281]],
        },
    },
    "padagrad": {
        "w": [[0.4395612, -1.702538], [-0.1049411, 0.4473088], [-1.181342, 4.065531]],
        "vars": ["global_step", "w", "w/ProximalAdagrad"],
        "slots": {"accumulator": [[20.47668, 10.40734], [7.05383, 2.765953], [5.920858, 35.56999]]},
    },
    "padagrad_l1l2": {
        "w": [[0.3373871, -1.41875], [-0.06102188, 0.321878], [-0.8722075, 3.567813]],
        "vars": ["global_step", "w", "w/ProximalAdagrad"],
        "slots": {"accumulator": [[20.37427, 10.60461], [6.909764, 2.563293], [5.495598, 31.7599]]},
    },
    "padagrad_l1l2_sparse": {
        "w": [[0.05590883, -1.388346], [0.5, 0.1], [-0.9356173, 1.651332]],
        "vars": ["global_step", "w", "w/ProximalAdagrad"],
        "slots": {"accumulator": [[44.00928, 0.751258], [0.1, 0.1], [2.833942, 35.19824]]},
    },
    "padagrad_sparse": {
        "w": [[0.09084834, -2.666527], [0.5, 0.1], [-1.353424, 1.918995]],
        "vars": ["global_step", "w", "w/ProximalAdagrad"],
        "slots": {"accumulator": [[45.52808, 0.4345613], [0.2, 0.2], [2.869593, 37.45291]]},
    },
    "pgd": {
        "w": [[0.3173833, -1.656008], [0.03994322, 0.3661569], [-0.6869992, 4.062801]],
        "vars": ["global_step", "w"],
        "slots": {},
    },
    "pgd_l1l2": {
        "w": [[0.235682, -1.485488], [0.0, 0.277052], [-0.5457622, 3.725816]],
        "vars": ["global_step", "w"],
        "slots": {},
    },
    "pgd_l1l2_sparse": {
        "w": [[-0.01762896, -1.905012], [0.5, 0.1], [-0.4762485, 1.734803]],
        "vars": ["global_step", "w"],
        "slots": {},
    },
    "pgd_sparse": {
        "w": [[-0.018875, -2.104581], [0.5, 0.1], [-0.5904639, 1.930052]],
        "vars": ["global_step", "w"],
        "slots": {},
    },
}


def _run(make, sparse):
    g = tf.Graph()
    with g.as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable(np.array([[1.0, -2.0], [0.5, 0.1], [-0.3, 3.0]], np.float32), name="w")
        x = tf.constant(np.array([[0.2, -0.7], [1.5, 0.4]], np.float32))
        if sparse:
            rows = tf.gather(v, [2, 0])
            loss = tf.reduce_sum(tf.square(rows * x) + rows)
        else:
            loss = tf.reduce_sum(tf.square(tf.matmul(x, v[:2]))) + tf.reduce_sum(v * v[::-1])
        opt = make(gs)
        train = opt.minimize(loss, global_step=gs)
        names = sorted(vv.op.name for vv in tf.global_variables())
        types = {op.type for op in g.get_operations()}
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                s.run(train)
            slots = {n: s.run(opt.get_slot(v, n)) for n in opt.get_slot_names()}
            return s.run(v), names, slots, types


_OP_TYPES = {
    "adadelta": "ApplyAdadelta",
    "pgd": "ApplyProximalGradientDescent",
    "padagrad": "ApplyProximalAdagrad",
    "da": "ApplyAdagradDA",
    "ftrl": "ApplyFtrl",
    "ftrl_shrink": "ApplyFtrlV2",
}


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(case, sparse):
    want = EXPECTED[case + ("_sparse" if sparse else "")]
    w, names, slots, types = _run(CASES[case], sparse)
    np.testing.assert_allclose(w, want["w"], rtol=2e-5, atol=1e-6)
    assert names == want["vars"]
    assert sorted(slots) == sorted(want["slots"])
    for n, value in want["slots"].items():
        np.testing.assert_allclose(slots[n], value, rtol=2e-5, atol=1e-6)
    base = case.replace("_l1l2", "").replace("_names", "")
    if base in _OP_TYPES:
        assert ("Sparse" if sparse else "") + _OP_TYPES[base] in types


def test_bad_hyper_parameters():
    with pytest.raises(ValueError, match="learning_rate_power 0.500000 needs to be negative"):
        T.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="initial_accumulator_value -1.000000 needs to be"):
        T.FtrlOptimizer(0.1, initial_accumulator_value=-1.0)
    with pytest.raises(ValueError, match="l1_regularization_strength -0.100000 needs to be"):
        T.FtrlOptimizer(0.1, l1_regularization_strength=-0.1)
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        T.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="must be positive"):
        T.AdagradDAOptimizer(0.1, None, initial_gradient_squared_accumulator_value=0.0)
