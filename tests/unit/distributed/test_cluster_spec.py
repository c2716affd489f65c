"""Mirrors TF's server_lib_test.py ClusterSpecTest/ServerDefTest and parse_cluster_spec_test.py."""

from __future__ import annotations

import pytest
from google.protobuf import text_format

from tensorweave.distributed.cluster_spec import (
    ClusterSpec,
    cluster_spec_from_string,
    parse_cluster_spec,
)
from tensorweave.distributed.server_def import make_server_def
from tensorweave.protos import cluster_pb2, config_pb2, tensorflow_server_pb2


def _assert_proto_text(expected_text, message):
    """Like TF's assertProtoEquals: parses the expected text, compares printed forms."""
    expected = text_format.Parse(expected_text, type(message)())
    assert text_format.MessageToString(message) == text_format.MessageToString(expected)
    assert message == expected


# ---------------------------------------------------------------- ServerDefTest


def _server_def_case(cluster, job_name, task_index, expected_text):
    cluster_def = ClusterSpec(cluster).as_cluster_def()
    server_def = tensorflow_server_pb2.ServerDef(
        cluster=cluster_def, job_name=job_name, task_index=task_index, protocol="grpc"
    )
    _assert_proto_text(expected_text, server_def)
    # The same ServerDef through make_server_def.
    _assert_proto_text(expected_text, make_server_def(cluster, job_name, task_index, "grpc"))
    # Round trip ClusterDef -> ClusterSpec -> ClusterDef.
    assert ClusterSpec(cluster_def).as_cluster_def() == cluster_def
    assert text_format.MessageToString(ClusterSpec(cluster_def).as_cluster_def()) == (
        text_format.MessageToString(cluster_def)
    )


def test_server_def_local_server():
    _server_def_case(
        {"local": ["localhost:2222"]},
        "local",
        0,
        """
        cluster { job { name: 'local' tasks { key: 0 value: 'localhost:2222' } } }
        job_name: 'local' task_index: 0 protocol: 'grpc'
        """,
    )


def test_server_def_two_processes():
    _server_def_case(
        {"local": ["localhost:2222", "localhost:2223"]},
        "local",
        1,
        """
        cluster {
          job { name: 'local' tasks { key: 0 value: 'localhost:2222' }
                              tasks { key: 1 value: 'localhost:2223' } }
        }
        job_name: 'local' task_index: 1 protocol: 'grpc'
        """,
    )


def test_server_def_two_jobs():
    _server_def_case(
        {
            "ps": ["ps0:2222", "ps1:2222"],
            "worker": ["worker0:2222", "worker1:2222", "worker2:2222"],
        },
        "worker",
        2,
        """
        cluster {
          job { name: 'ps' tasks { key: 0 value: 'ps0:2222' }
                           tasks { key: 1 value: 'ps1:2222' } }
          job { name: 'worker' tasks { key: 0 value: 'worker0:2222' }
                               tasks { key: 1 value: 'worker1:2222' }
                               tasks { key: 2 value: 'worker2:2222' } }
        }
        job_name: 'worker' task_index: 2 protocol: 'grpc'
        """,
    )


def test_server_def_dense_and_sparse_jobs():
    _server_def_case(
        {"ps": ["ps0:2222", "ps1:2222"], "worker": {0: "worker0:2222", 2: "worker2:2222"}},
        "worker",
        2,
        """
        cluster {
          job { name: 'ps' tasks { key: 0 value: 'ps0:2222' }
                           tasks { key: 1 value: 'ps1:2222' } }
          job { name: 'worker' tasks { key: 0 value: 'worker0:2222' }
                               tasks { key: 2 value: 'worker2:2222' } }
        }
        job_name: 'worker' task_index: 2 protocol: 'grpc'
        """,
    )


def test_server_def_jobs_sorted_in_proto():
    # Insertion order is kept in `jobs`, the proto is sorted by job name.
    spec = ClusterSpec({"worker": ["w:1"], "ps": ["p:1"]})
    assert spec.jobs == ["worker", "ps"]
    assert [job.name for job in spec.as_cluster_def().job] == ["ps", "worker"]


# ---------------------------------------------------------------- make_server_def


def test_make_server_def_defaults():
    server_def = make_server_def({"local": ["localhost:0"]}, None, None, None, None)
    _assert_proto_text(
        """
        cluster { job { name: 'local' tasks { key: 0 value: 'localhost:0' } } }
        job_name: 'local' task_index: 0 protocol: 'grpc'
        """,
        server_def,
    )


def test_make_server_def_sparse_job_infers_index_37():
    server_def = make_server_def({"local": {37: "localhost:0"}}, None, None, None, None)
    assert (server_def.job_name, server_def.task_index) == ("local", 37)


def test_make_server_def_from_cluster_def_and_spec():
    spec = ClusterSpec({"ps": ["p:1"], "worker": ["w0:1", "w1:1"]})
    for source in (spec, spec.as_cluster_def(), spec.as_dict()):
        server_def = make_server_def(source, "worker", 1, "grpc+verbs", None)
        assert server_def.cluster == spec.as_cluster_def()
        assert (server_def.job_name, server_def.task_index) == ("worker", 1)
        assert server_def.protocol == "grpc+verbs"


def test_make_server_def_errors():
    with pytest.raises(TypeError) as info:
        make_server_def("not a cluster", None, None, None, None)
    assert str(info.value) == (
        "Could not convert `server_or_cluster_def` to a `tf.train.ServerDef` or "
        "`tf.train.ClusterSpec`."
    )
    with pytest.raises(TypeError, match="Could not convert"):
        make_server_def({"worker": "w0:1"}, None, None, None, None)
    two_jobs = {"ps": ["p:1"], "worker": ["w:1"]}
    with pytest.raises(ValueError) as info:
        make_server_def(two_jobs, None, 0, None, None)
    assert str(info.value) == "Must specify an explicit `job_name`."
    with pytest.raises(ValueError) as info:
        make_server_def({"worker": ["a:1", "b:1"]}, None, None, None, None)
    assert str(info.value) == "Must specify an explicit `task_index`."
    with pytest.raises(ValueError, match="No such job in cluster"):
        make_server_def(two_jobs, "chief", None, None, None)


def test_make_server_def_copies_server_def_and_merges_config():
    # testSetConfiguration: the config ends up in default_session_config.
    config = config_pb2.ConfigProto(
        gpu_options=config_pb2.GPUOptions(per_process_gpu_memory_fraction=0.1)
    )
    server_def = make_server_def({"local": ["localhost:0"]}, None, None, None, config)
    assert server_def.default_session_config.gpu_options.per_process_gpu_memory_fraction == 0.1

    original = make_server_def({"ps": ["p:1"], "worker": ["w0:1", "w1:1"]}, "worker", 0, None, None)
    copied = make_server_def(original, None, None, None, config)
    assert copied is not original
    assert copied.default_session_config.gpu_options.per_process_gpu_memory_fraction == 0.1
    assert not original.HasField("default_session_config")
    assert (copied.job_name, copied.task_index, copied.protocol) == ("worker", 0, "grpc")
    overridden = make_server_def(original, "ps", 0, "grpc+mpi", None)
    assert (overridden.job_name, overridden.task_index, overridden.protocol) == (
        "ps",
        0,
        "grpc+mpi",
    )
    assert overridden.cluster == original.cluster


# ---------------------------------------------------------------- ClusterSpecTest


def test_string_conversion():
    cluster_spec = ClusterSpec({"ps": ["ps0:1111"], "worker": ["worker0:3333", "worker1:4444"]})
    expected = "ClusterSpec({'ps': ['ps0:1111'], 'worker': ['worker0:3333', 'worker1:4444']})"
    assert str(cluster_spec) == expected
    assert repr(cluster_spec) == expected
    assert (
        repr(ClusterSpec({"w": {3: "a:1"}, "a": []})) == "ClusterSpec({'a': {}, 'w': {3: 'a:1'}})"
    )


def _assert_four_forms(cluster_spec, expected_text):
    spec = ClusterSpec(cluster_spec)
    for form in (
        spec,
        ClusterSpec(spec),
        ClusterSpec(spec.as_cluster_def()),
        ClusterSpec(spec.as_dict()),
    ):
        _assert_proto_text(expected_text, form.as_cluster_def())


def test_proto_dict_def_equivalences():
    _assert_four_forms(
        {
            "ps": ["ps0:2222", "ps1:2222"],
            "worker": ["worker0:2222", "worker1:2222", "worker2:2222"],
        },
        """
        job { name: 'ps' tasks { key: 0 value: 'ps0:2222' } tasks { key: 1 value: 'ps1:2222' } }
        job { name: 'worker' tasks { key: 0 value: 'worker0:2222' }
                             tasks { key: 1 value: 'worker1:2222' }
                             tasks { key: 2 value: 'worker2:2222' } }
        """,
    )


def test_proto_dict_def_equivalences_with_string_task_index():
    expected = "job { name: 'worker' tasks { key: 1 value: 'worker1:2222' } }"
    _assert_four_forms({"worker": {"1": "worker1:2222"}}, expected)
    _assert_four_forms({"worker": {1: "worker1:2222"}}, expected)
    assert ClusterSpec({"worker": {"1": "w:1"}}) == ClusterSpec({"worker": {1: "w:1"}})


def test_proto_dict_def_equivalences_with_zero_worker():
    _assert_four_forms(
        {"ps": ["ps0:2222", "ps1:2222"], "worker": []},
        """
        job { name: 'ps' tasks { key: 0 value: 'ps0:2222' } tasks { key: 1 value: 'ps1:2222' } }
        job { name: 'worker' }
        """,
    )


def test_cluster_spec_accessors():
    original_dict = {
        "ps": ["ps0:2222", "ps1:2222"],
        "worker": ["worker0:2222", "worker1:2222", "worker2:2222"],
        "sparse": {0: "sparse0:2222", 3: "sparse3:2222"},
    }
    cluster_spec = ClusterSpec(original_dict)
    assert cluster_spec.as_dict() == original_dict
    assert cluster_spec.jobs == ["ps", "worker", "sparse"]
    assert cluster_spec.num_tasks("ps") == 2
    assert cluster_spec.num_tasks("worker") == 3
    assert cluster_spec.num_tasks("sparse") == 2
    with pytest.raises(ValueError, match="No such job in cluster: 'unknown'"):
        cluster_spec.num_tasks("unknown")
    assert cluster_spec.task_address("ps", 0) == "ps0:2222"
    assert cluster_spec.task_address("sparse", 0) == "sparse0:2222"
    with pytest.raises(ValueError, match="No such job in cluster"):
        cluster_spec.task_address("unknown", 0)
    with pytest.raises(ValueError, match="No task with index 2 in job 'sparse'"):
        cluster_spec.task_address("sparse", 2)
    assert cluster_spec.task_indices("ps") == [0, 1]
    assert cluster_spec.task_indices("worker") == [0, 1, 2]
    assert cluster_spec.task_indices("sparse") == [0, 3]
    with pytest.raises(ValueError):
        cluster_spec.task_indices("unknown")
    assert cluster_spec.job_tasks("ps") == ["ps0:2222", "ps1:2222"]
    assert cluster_spec.job_tasks("worker") == ["worker0:2222", "worker1:2222", "worker2:2222"]
    assert cluster_spec.job_tasks("sparse") == ["sparse0:2222", None, None, "sparse3:2222"]
    with pytest.raises(ValueError):
        cluster_spec.job_tasks("unknown")


def test_empty_job_accessors():
    spec = ClusterSpec({"worker": []})
    assert spec.num_tasks("worker") == 0
    assert spec.task_indices("worker") == []
    assert spec.job_tasks("worker") == []
    assert spec.as_dict() == {"worker": {}}
    assert bool(spec)


def test_empty_cluster_spec_is_false():
    assert not ClusterSpec({})


def test_non_empty_cluster_spec_is_true():
    assert ClusterSpec({"job": ["host:port"]})


def test_eq():
    assert ClusterSpec({}) == ClusterSpec({})
    assert ClusterSpec({"job": ["host:2222"]}) == ClusterSpec({"job": ["host:2222"]})
    assert ClusterSpec({"job": {0: "host:2222"}}) == ClusterSpec({"job": ["host:2222"]})
    assert not (ClusterSpec({"job": ["host:2222"]}) != ClusterSpec({"job": ["host:2222"]}))


def test_ne():
    assert ClusterSpec({}) != ClusterSpec({"job": ["host:2223"]})
    assert ClusterSpec({"job1": ["host:2222"]}) != ClusterSpec({"job2": ["host:2222"]})
    assert ClusterSpec({"job": ["host:2222"]}) != ClusterSpec({"job": ["host:2223"]})
    assert ClusterSpec({"job": ["host:2222", "host:2223"]}) != ClusterSpec(
        {"job": ["host:2223", "host:2222"]}
    )
    assert ClusterSpec({}) != {}


def test_cluster_def_is_stored_by_reference_and_spec_copy_is_deep():
    cluster_def = cluster_pb2.ClusterDef()
    job = cluster_def.job.add()
    job.name = "worker"
    job.tasks[0] = "w0:1"
    spec = ClusterSpec(cluster_def)
    assert spec.as_cluster_def() is cluster_def
    assert spec.as_cluster_def() is spec.as_cluster_def()
    copy = ClusterSpec(spec)
    assert copy.as_cluster_def() is not cluster_def
    cluster_def.job[0].tasks[1] = "w1:1"
    assert copy.as_cluster_def().job[0].tasks == {0: "w0:1"}
    assert copy == ClusterSpec({"worker": ["w0:1"]})


def test_type_errors():
    with pytest.raises(TypeError) as info:
        ClusterSpec(["worker"])
    assert str(info.value) == (
        "`cluster` must be a dictionary mapping one or more job names to lists of network "
        "addresses, or a `ClusterDef` protocol buffer"
    )
    with pytest.raises(TypeError) as info:
        ClusterSpec({"worker": "w0:1"})
    assert str(info.value) == (
        "The tasks for job 'worker' must be a list or a dictionary from integers to strings."
    )
    with pytest.raises(TypeError, match="Job name 3 must be bytes or unicode"):
        ClusterSpec({3: ["w0:1"]})
    with pytest.raises(TypeError, match="Task address 2222 must be bytes or unicode"):
        ClusterSpec({"worker": [2222]})
    with pytest.raises(ValueError, match="invalid literal for int"):
        ClusterSpec({"worker": {"one": "w:1"}})


def test_bytes_are_decoded():
    spec = ClusterSpec({b"worker": [b"w0:1"]})
    assert spec.jobs == ["worker"]
    assert spec.task_address("worker", 0) == "w0:1"


# ---------------------------------------------------------------- parse_cluster_spec


def test_parse_valid_cluster_spec():
    spec = parse_cluster_spec("worker|worker0:2220;worker1:2221,ps|ps0:3330;ps1:3331")
    assert spec.as_dict() == {
        "worker": ["worker0:2220", "worker1:2221"],
        "ps": ["ps0:3330", "ps1:3331"],
    }
    _assert_proto_text(
        """
        job { name: 'ps' tasks { key: 0 value: 'ps0:3330' } tasks { key: 1 value: 'ps1:3331' } }
        job { name: 'worker' tasks { key: 0 value: 'worker0:2220' }
                             tasks { key: 1 value: 'worker1:2221' } }
        """,
        spec.as_cluster_def(),
    )
    assert parse_cluster_spec(" worker | a:1 ; b:2 , ps|c:3 ").as_dict() == {
        "worker": ["a:1", "b:2"],
        "ps": ["c:3"],
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "Empty cluster spec string"),
        ("   ", "Empty cluster spec string"),
        ("worker|a:1,b:2", "job spec 'b:2' has no '|'; separate the tasks of one job with ';'"),
        ("a:1", "job spec 'a:1' has no '|'"),
        ("worker|a:1;ps|b:2", "task 'ps|b:2' of job 'worker' contains '|'; separate jobs with ','"),
        ("|a:1", "Empty job name in job spec '|a:1'"),
        ("worker|a:1,|b:2", "Empty job name"),
        ("worker|a:1;;b:2", "Empty task at position 1 of job 'worker'"),
        ("worker|", "Empty task at position 0 of job 'worker'"),
        ("worker|a:1;", "Empty task at position 1"),
        ("worker|a:1,", "Empty job spec at position 1"),
        ("worker|a:1,worker|b:2", "Duplicate job name 'worker'"),
    ],
)
def test_parse_cluster_spec_errors(text, message):
    with pytest.raises(ValueError) as info:
        parse_cluster_spec(text)
    assert message in str(info.value)


def test_cluster_spec_from_string():
    assert cluster_spec_from_string("worker|a:1;b:2,ps|c:3") == ClusterSpec(
        {"worker": ["a:1", "b:2"], "ps": ["c:3"]}
    )
    spec = cluster_spec_from_string('{"ps": ["p:1"], "worker": {"1": "w1:1"}}')
    assert spec == ClusterSpec({"ps": ["p:1"], "worker": {1: "w1:1"}})
    assert cluster_spec_from_string("  {}  ") == ClusterSpec({})
    with pytest.raises(ValueError, match="Invalid JSON cluster spec"):
        cluster_spec_from_string('{"ps": [')
    with pytest.raises(ValueError, match="Invalid JSON cluster spec"):
        cluster_spec_from_string('{"ps": "p:1"}')
    with pytest.raises(ValueError, match="Empty cluster spec string"):
        cluster_spec_from_string("")
