"""`tf.gfile` on local paths (cases follow TensorFlow's file_io_test.py; errors as TF 2.21's
`tf.compat.v1.gfile` raises them)."""

from __future__ import annotations

import os
import pathlib

import pytest

import tensorweave as tf

gfile = tf.gfile


def test_gfile_write_read_text_and_bytes(tmp_path):
    path = str(tmp_path / "f.txt")
    with gfile.GFile(path, "w") as f:
        f.write("x\ny\n")
        f.write("z")
    with gfile.GFile(path) as f:
        assert f.name == path and f.mode == "r"
        assert f.read() == "x\ny\nz"
    with gfile.GFile(path, "rb") as f:
        assert f.read(3) == b"x\ny"
        assert f.tell() == 3
        f.seek(0)
        assert f.readline() == b"x\n"
        f.seek(position=4)
        assert f.read() == b"z"
        assert f.seekable()
    with gfile.GFile(path) as f:
        assert f.readlines() == ["x\n", "y\n", "z"]
    assert list(gfile.GFile(path)) == ["x\n", "y\n", "z"]
    it = gfile.GFile(path)
    assert it.next() == "x\n"
    it.close()
    it.close()
    assert gfile.GFile(path).size() == 5


def test_gfile_append_flush_and_aliases(tmp_path):
    path = tmp_path / "a.bin"
    with gfile.FastGFile(path, "wb") as f:
        f.write(b"ab")
        f.flush()
        assert f.size() == 2
    with gfile.Open(path, "ab") as f:
        f.write(b"c")
    assert path.read_bytes() == b"abc"
    assert gfile.FastGFile is gfile.GFile and gfile.Open is gfile.GFile


def test_gfile_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        gfile.GFile(str(tmp_path / "nope")).read()
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid mode"):
        gfile.GFile(str(tmp_path / "x"), "q")
    with pytest.raises(tf.errors.UnimplementedError, match="scheme 'gs'"):
        gfile.Exists("gs://bucket/x")
    with pytest.raises(tf.errors.FailedPreconditionError):
        gfile.GFile(str(tmp_path), "w").write("x")


def test_exists_isdirectory_stat(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"1234")
    assert gfile.Exists(str(path)) and gfile.Exists(f"file://{path}")
    assert not gfile.Exists(str(tmp_path / "nope"))
    assert gfile.IsDirectory(str(tmp_path)) and not gfile.IsDirectory(str(path))
    st = gfile.Stat(str(path))
    assert (st.length, st.is_directory) == (4, False)
    assert st.mtime_nsec == os.stat(path).st_mtime_ns
    assert gfile.Stat(str(tmp_path)).is_directory
    with pytest.raises(tf.errors.NotFoundError):
        gfile.Stat(str(tmp_path / "nope"))


def test_makedirs_mkdir(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    gfile.MakeDirs(str(deep))
    gfile.MakeDirs(str(deep))
    assert deep.is_dir()
    gfile.MkDir(str(tmp_path / "d"))
    gfile.MkDir(str(tmp_path / "d"))
    with pytest.raises(tf.errors.NotFoundError):
        gfile.MkDir(str(tmp_path / "q" / "r"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(tf.errors.FailedPreconditionError):
        gfile.MakeDirs(str(tmp_path / "file"))
    with pytest.raises(tf.errors.FailedPreconditionError):
        gfile.MkDir(str(tmp_path / "file"))


def test_listdirectory_glob_walk(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.log").write_text("b")
    (tmp_path / "sub" / "c.txt").write_text("c")
    assert sorted(gfile.ListDirectory(str(tmp_path))) == ["a.txt", "b.log", "sub"]
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory"):
        gfile.ListDirectory(str(tmp_path / "nope"))
    assert gfile.Glob(str(tmp_path / "*.txt")) == [str(tmp_path / "a.txt")]
    assert gfile.Glob([str(tmp_path / "*.log"), str(tmp_path / "sub" / "*")]) == [
        str(tmp_path / "b.log"), str(tmp_path / "sub" / "c.txt")]
    walked = [(d, sorted(s), sorted(f)) for d, s, f in gfile.Walk(str(tmp_path))]
    assert walked == [(str(tmp_path), ["sub"], ["a.txt", "b.log"]),
                      (str(tmp_path / "sub"), [], ["c.txt"])]
    bottom_up = [d for d, _, _ in gfile.Walk(str(tmp_path), in_order=False)]
    assert bottom_up == [str(tmp_path / "sub"), str(tmp_path)]
    assert list(gfile.Walk(str(tmp_path / "nope"))) == []


def test_remove_and_delete_recursively(tmp_path):
    (tmp_path / "f").write_text("x")
    gfile.Remove(str(tmp_path / "f"))
    assert not (tmp_path / "f").exists()
    with pytest.raises(tf.errors.NotFoundError):
        gfile.Remove(str(tmp_path / "f"))
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "g").write_text("x")
    gfile.DeleteRecursively(str(tmp_path / "d"))
    assert not (tmp_path / "d").exists()
    with pytest.raises(tf.errors.NotFoundError, match="not found"):
        gfile.DeleteRecursively(str(tmp_path / "d"))


def test_rename_and_copy(tmp_path):
    a, b, c = (str(tmp_path / n) for n in "abc")
    pathlib.Path(a).write_text("A")
    pathlib.Path(b).write_text("B")
    with pytest.raises(tf.errors.AlreadyExistsError, match="file already exists"):
        gfile.Copy(a, b)
    with pytest.raises(tf.errors.AlreadyExistsError):
        gfile.Rename(a, b)
    gfile.Copy(a, c)
    assert pathlib.Path(c).read_text() == "A"
    gfile.Copy(b, c, overwrite=True)
    assert pathlib.Path(c).read_text() == "B"
    gfile.Rename(a, b, overwrite=True)
    assert pathlib.Path(b).read_text() == "A" and not pathlib.Path(a).exists()
    with pytest.raises(tf.errors.NotFoundError):
        gfile.Rename(a, c)
    with pytest.raises(tf.errors.NotFoundError):
        gfile.Copy(a, c)
