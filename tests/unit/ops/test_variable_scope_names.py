"""`tf.variable_scope` names and reuse (mirrors TF's variable_scope_test.py, graph mode):
scope and name-scope names, default-name uniquification, re-entering scopes, scope objects,
reuse inheritance and `AUTO_REUSE`, argument validation.
"""

from __future__ import annotations

import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


# ------------------------------------------------------------------------ names, reuse
def test_var_scope_names_and_name_scopes():
    with tf.variable_scope("tower4") as tower:
        assert tower.name == "tower4"
        with tf.name_scope("scope") as sc:
            assert sc == "tower4/scope/"
    with tf.variable_scope("tower5"):
        with tf.variable_scope("bar") as bar:
            assert bar.name == "tower5/bar"
            with tf.name_scope("scope") as sc:
                assert sc == "tower5/bar/scope/"
    with tf.variable_scope("tower6"):
        with tf.variable_scope(tower, reuse=True) as tower_shared:
            assert tower_shared.name == "tower4"
            with tf.name_scope("scope") as sc:
                assert sc == "tower6/tower4/scope/"


def test_var_scope_name_scope_uniquification():
    with tf.name_scope("s1"):
        with tf.variable_scope("tower") as tower:
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "s1/tower/scope2/"
        with tf.variable_scope(tower):
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "s1/tower_1/scope2/"
        with tf.variable_scope("tower"):
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "s1/tower_2/scope2/"
    root = tf.get_variable_scope()
    with tf.name_scope("s3"):
        with tf.variable_scope(root):
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "s3/scope2/"


def test_ops_inside_scope_get_scope_names_but_variables_do_not():
    with tf.variable_scope("foo"):
        v = tf.get_variable("v", [1])
        c = tf.constant(1.0, name="c")
    with tf.variable_scope("foo", reuse=True):
        v2 = tf.get_variable("v", [1])
        c2 = tf.constant(1.0, name="c")
    assert v2 is v
    assert v.name == "foo/v:0"
    assert (c.name, c2.name) == ("foo/c:0", "foo_1/c:0")


def test_original_name_scope():
    with tf.name_scope("scope1"):
        with tf.variable_scope("tower") as tower:
            assert tower.original_name_scope == "scope1/tower/"
    with tf.name_scope("scope2"):
        with tf.variable_scope(tower) as tower1:
            assert tower1.original_name_scope == "scope1/tower/"
            with tf.name_scope("foo") as sc2:
                assert sc2 == "scope2/tower/foo/"
        with tf.name_scope(tower.original_name_scope):
            with tf.name_scope("bar") as sc3:
                assert sc3 == "scope1/tower/bar/"


def test_scope_object_reuse():
    with tf.variable_scope("jump", reuse=True) as scope:
        vs = scope
    with tf.variable_scope(vs) as jump:
        assert jump.reuse
    with tf.variable_scope(vs, reuse=False) as jump_no_reuse:
        assert jump_no_reuse.reuse  # inherited, cannot be undone
    with tf.variable_scope("jump", reuse=False) as scope:
        vs = scope
    with tf.variable_scope(vs) as jump:
        assert not jump.reuse
    with tf.variable_scope(vs, reuse=True) as jump_reuse:
        assert jump_reuse.reuse


def test_reuse_is_inherited_and_auto_reuse():
    with tf.variable_scope("outer"):
        w = tf.get_variable("w", [])
        with tf.variable_scope("inner"):
            x = tf.get_variable("x", [])
    with tf.variable_scope("outer", reuse=True):
        with tf.variable_scope("inner") as inner:
            assert inner.reuse is True
            assert tf.get_variable("x", []) is x
        with tf.variable_scope("inner", reuse=False):
            assert tf.get_variable("x", []) is x
    for _ in range(3):
        with tf.variable_scope("outer", reuse=tf.AUTO_REUSE):
            assert tf.get_variable("w", []) is w
            a = tf.get_variable("auto", [2])
    with tf.variable_scope("outer", reuse=True):
        assert tf.get_variable("auto", [2]) is a


def test_var_scope_get_var():
    with tf.variable_scope("root"):
        with tf.variable_scope("towerA") as tower_a:
            va = tf.get_variable("v", [1])
            assert va.name == "root/towerA/v:0"
        with tf.variable_scope(tower_a, reuse=True):
            assert tf.get_variable("v", [1]) is va
        with tf.variable_scope("towerB"):
            assert tf.get_variable("v", [1]).name == "root/towerB/v:0"
        with pytest.raises(ValueError), tf.variable_scope("towerA"):
            tf.get_variable("v", [1])
        with tf.variable_scope("towerA", reuse=True):
            assert tf.get_variable("v", [1]) is va
        with tf.variable_scope("foo"):
            with tf.variable_scope("bar"):
                assert tf.get_variable("v", [1]).name == "root/foo/bar/v:0"
                with tf.variable_scope(tower_a, reuse=True):
                    assert tf.get_variable("v", [1]) is va
        with pytest.raises(ValueError):
            with tf.variable_scope(tower_a, reuse=True), tf.variable_scope("baz"):
                tf.get_variable("v", [1])
        with pytest.raises(ValueError, match="shape"), tf.variable_scope(tower_a, reuse=True):
            tf.get_variable("v", [2])
        with pytest.raises(ValueError, match="dtype"), tf.variable_scope(tower_a, reuse=True):
            tf.get_variable("v", [1], dtype=tf.int32)
        assert tf.get_variable("ref", [1], dtype=va.dtype).dtype == va.dtype


def test_default_name_uniquification():
    with tf.name_scope("ns"):
        with tf.variable_scope(None, "default", []):
            assert tf.get_variable("w", []).name == "default/w:0"
            with tf.name_scope("inner") as sc:
                assert sc == "ns/default/inner/"
        with tf.variable_scope(None, "default", []):
            assert tf.get_variable("w", []).name == "default_1/w:0"
            with tf.name_scope("inner") as sc:
                assert sc == "ns/default_1/inner/"
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, "default", reuse=True):
            pass


def test_default_name_interleaved_substrings():
    names = []
    for prefix in ("defaultScope1", "defaultScope1", "defaultScope", "defaultScope1"):
        with tf.variable_scope(None, prefix), tf.variable_scope(None, "layer"):
            names.append(tf.get_variable("w", []).name)
    assert names == [
        "defaultScope1/layer/w:0",
        "defaultScope1_1/layer/w:0",
        "defaultScope/layer/w:0",
        "defaultScope1_2/layer/w:0",
    ]


def test_default_name_counters_reset_when_parent_is_reentered():
    with tf.variable_scope("foo") as vs:
        with tf.variable_scope(None, default_name="bar"):
            assert tf.get_variable("a", [1]).name == "foo/bar/a:0"
        with tf.variable_scope(None, default_name="bar"):
            assert tf.get_variable("b", [1]).name == "foo/bar_1/b:0"
    with tf.variable_scope(vs):
        with tf.variable_scope(None, default_name="bar"):
            assert tf.get_variable("c", [1]).name == "foo/bar/c:0"
    with tf.variable_scope("default") as default:
        for _ in range(2):
            with tf.variable_scope(None, "layer"):
                tf.get_variable("w", [])
        with tf.variable_scope(default):
            pass
        with tf.variable_scope(None, "layer"):
            assert tf.get_variable("w", []).name == "default/layer_2/w:0"


def test_outer_scope_reentry():
    with tf.variable_scope("outer") as outer:
        pass
    with tf.variable_scope(outer):
        assert tf.get_variable("w", []).name == "outer/w:0"
        with tf.name_scope("scope2") as sc2:
            assert sc2 == "outer_1/scope2/"
        with tf.variable_scope("default"):
            assert tf.get_variable("w", []).name == "outer/default/w:0"
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "outer_1/default/scope2/"
    with tf.variable_scope(outer, reuse=True):
        assert tf.get_variable("w", []).name == "outer/w:0"
        with tf.name_scope("scope2") as sc2:
            assert sc2 == "outer_2/scope2/"
    with tf.variable_scope("outer2") as outer2:
        with tf.variable_scope(outer2):
            with tf.name_scope("scope2") as sc2:
                assert sc2 == "outer2/outer2/scope2/"


def test_auxiliary_name_scope_false():
    with tf.variable_scope("scope", auxiliary_name_scope=False) as scope:
        assert scope.original_name_scope == ""
        assert tf.get_variable("w", []).name == "scope/w:0"
        assert tf.constant([], name="c").name == "c:0"
    with tf.variable_scope(scope, auxiliary_name_scope=False):
        assert tf.get_variable("w1", []).name == "scope/w1:0"
        assert tf.constant([], name="c1").name == "c1:0"
    with tf.name_scope("scope"):
        assert tf.constant([], name="c").name == "scope/c:0"
    with tf.variable_scope("outer"):
        with tf.variable_scope("inner", auxiliary_name_scope=False) as inner:
            assert inner.original_name_scope == "outer/"
            assert tf.get_variable("w", []).name == "outer/inner/w:0"
            assert tf.constant([], name="c").name == "outer/c:0"
    root = tf.get_variable_scope()
    with tf.variable_scope("outer2"):
        with tf.variable_scope(root, auxiliary_name_scope=False) as r:
            assert r.original_name_scope == ""
            assert tf.get_variable("w9", []).name == "w9:0"
            assert tf.constant([], name="c1").name == "outer2/c1:0"
    with pytest.raises(TypeError, match="auxiliary_name_scope"):
        with tf.variable_scope("scope", auxiliary_name_scope="invalid"):
            pass


def test_argument_validation():
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope"):
        tf.variable_scope(None)
    with pytest.raises(ValueError, match="The reuse parameter must be True or False or None"):
        tf.variable_scope("a", reuse=1)
    with pytest.raises(TypeError, match="name_or_scope must be a string or VariableScope"):
        with tf.variable_scope(3):
            pass
    with pytest.raises(ValueError, match="'_' is not a valid scope name"):
        with tf.variable_scope("_"):
            pass


def test_nesting_error():
    with tf.variable_scope("aa"):
        scope = tf.variable_scope("bb")
        scope.__enter__()
        with tf.variable_scope("cc"):
            with pytest.raises(RuntimeError, match="Improper nesting of variable_scope"):
                scope.__exit__(None, None, None)
        scope.__exit__(None, None, None)
    assert tf.get_variable_scope().name == ""


def test_values_select_graph():
    g2 = tf.Graph()
    with g2.as_default():
        x = tf.constant(1.0)
    with tf.variable_scope("s", values=[x]):
        assert tf.get_default_graph() is g2
        v = tf.get_variable("v", [])
    assert v.graph is g2
