"""`tf.flags` / `tf.app.flags`: absl-py's flags under TensorFlow's names (cases follow
absl's and TensorFlow's flags tests). Each flag definition goes to a fresh `FlagValues`."""

from __future__ import annotations

import enum

import absl.flags
import pytest

import tensorweave as tf

flags = tf.flags


class Color(enum.Enum):
    RED = 1
    BLUE = 2


@pytest.fixture
def fv():
    return flags.FlagValues()


def test_namespaces_are_absl_flags():
    assert tf.app.flags is tf.flags
    assert flags.FLAGS is absl.flags.FLAGS
    for name in flags.__all__:
        assert getattr(flags, name) is getattr(absl.flags, name)


def test_define_scalar_flags_and_parse(fv):
    flags.DEFINE_string("name", "x", "a string", flag_values=fv)
    flags.DEFINE_integer("n", 1, "an int", lower_bound=0, flag_values=fv)
    flags.DEFINE_float("lr", 0.1, "a float", flag_values=fv)
    flags.DEFINE_bool("sync", False, "a bool", flag_values=fv)
    flags.DEFINE_boolean("verbose", True, "a bool", flag_values=fv)
    flags.DEFINE_enum("opt", "sgd", ["sgd", "adam"], "an enum", flag_values=fv)
    flags.DEFINE_enum_class("color", Color.RED, Color, "an enum class", flag_values=fv)
    rest = fv(["prog", "--name=y", "--n", "3", "--lr=0.5", "--sync", "--noverbose",
               "--opt=adam", "--color=blue", "extra"])
    assert rest == ["prog", "extra"]
    assert (fv.name, fv.n, fv.lr, fv.sync, fv.verbose, fv.opt, fv.color) == (
        "y", 3, 0.5, True, False, "adam", Color.BLUE)


def test_define_list_and_multi_flags(fv):
    flags.DEFINE_list("hosts", [], "csv", flag_values=fv)
    flags.DEFINE_spaceseplist("words", "a b", "spaces", flag_values=fv)
    flags.DEFINE_multi_string("s", [], "strings", flag_values=fv)
    flags.DEFINE_multi_integer("i", [], "ints", flag_values=fv)
    flags.DEFINE_multi_float("f", [], "floats", flag_values=fv)
    flags.DEFINE_multi_enum("e", [], ["a", "b"], "enums", flag_values=fv)
    flags.DEFINE_multi_enum_class("c", [], Color, "enum classes", flag_values=fv)
    fv(["prog", "--hosts=h1:1,h2:2", "--words=x y", "--s=a", "--s=b", "--i=1", "--i=2",
        "--f=0.5", "--e=b", "--c=red"])
    assert fv.hosts == ["h1:1", "h2:2"] and fv.words == ["x", "y"]
    assert fv.s == ["a", "b"] and fv.i == [1, 2] and fv.f == [0.5]
    assert fv.e == ["b"] and fv.c == [Color.RED]


def test_generic_define_with_parser_and_serializer(fv):
    flags.DEFINE(flags.IntegerParser(), "k", 2, "generic", flag_values=fv,
                 serializer=flags.ArgumentSerializer())
    flags.DEFINE_multi(flags.FloatParser(), flags.ArgumentSerializer(), "m", [1.0], "multi",
                       flag_values=fv)
    flags.DEFINE_flag(flags.Flag(flags.ArgumentParser(), flags.ArgumentSerializer(),
                                 "raw", "r", "a Flag"), flag_values=fv)
    flags.DEFINE_flag(flags.BooleanFlag("b", False, "bool flag"), flag_values=fv)
    flags.DEFINE_flag(flags.EnumFlag("en", "x", "enum flag", ["x", "y"]), flag_values=fv)
    flags.DEFINE_flag(flags.EnumClassFlag("ec", None, "enum class flag", Color),
                      flag_values=fv)
    flags.DEFINE_flag(flags.MultiFlag(flags.IntegerParser(), flags.ArgumentSerializer(),
                                      "mf", [], "multi flag"), flag_values=fv)
    flags.DEFINE_flag(flags.MultiEnumClassFlag("mec", [], "multi enum class", Color),
                      flag_values=fv)
    flags.DEFINE_alias("kk", "k", flag_values=fv)
    fv(["prog", "--kk=5", "--m=2.5", "--raw=q", "--b", "--en=y", "--ec=red", "--mf=4",
        "--mec=blue"])
    assert (fv.k, fv.m, fv.raw, fv.b, fv.en, fv.ec, fv.mf, fv.mec) == (
        5, [2.5], "q", True, "y", Color.RED, [4], [Color.BLUE])


def test_parsers_and_serializers():
    assert flags.BooleanParser().parse("true") is True
    assert flags.IntegerParser(lower_bound=1).parse("7") == 7
    assert flags.FloatParser().parse("1.5") == 1.5
    assert flags.EnumParser(["a", "b"]).parse("b") == "b"
    assert flags.EnumClassParser(Color).parse("RED") is Color.RED
    assert flags.ListParser().parse("a,b") == ["a", "b"]
    assert flags.WhitespaceSeparatedListParser().parse("a  b") == ["a", "b"]
    assert flags.BaseListParser(",", "comma").parse("x,y") == ["x", "y"]
    assert flags.ListSerializer(";").serialize(["a", "b"]) == "a;b"
    assert flags.CsvListSerializer(",").serialize(["a", "b"]) == "a,b"
    assert flags.EnumClassSerializer(lowercase=True).serialize(Color.RED) == "red"
    assert flags.EnumClassListSerializer(",", lowercase=False).serialize(
        [Color.RED, Color.BLUE]) == "RED,BLUE"
    with pytest.raises(ValueError):
        flags.IntegerParser(lower_bound=1).parse("0")


def test_unknown_flag_is_absl_error_naming_it(fv):
    flags.DEFINE_integer("n", 1, "an int", flag_values=fv)
    with pytest.raises(flags.UnrecognizedFlagError, match="nonexistent"):
        fv(["prog", "--nonexistent=3"])
    assert issubclass(flags.UnrecognizedFlagError, flags.Error)


def test_flag_errors(fv):
    flags.DEFINE_integer("n", 1, "an int", lower_bound=0, flag_values=fv)
    with pytest.raises(flags.UnparsedFlagAccessError):
        _ = fv.n
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog", "--n=-1"])
    with pytest.raises(flags.DuplicateFlagError):
        flags.DEFINE_integer("n", 2, "again", flag_values=fv)
    with pytest.raises(flags.FlagNameConflictsWithMethodError):
        flags.DEFINE_integer("is_parsed", 2, "a method name", flag_values=fv)
    with pytest.raises(flags.CantOpenFlagFileError):
        flags.FlagValues().read_flags_from_files(["--flagfile=/nonexistent/flags.txt"])
    assert issubclass(flags.ValidationError, flags.Error)


def test_validators_and_required(fv):
    flags.DEFINE_integer("a", None, "a", flag_values=fv)
    flags.DEFINE_integer("b", None, "b", flag_values=fv)
    flags.DEFINE_integer("c", 1, "c", flag_values=fv)
    flags.DEFINE_bool("x", False, "x", flag_values=fv)
    flags.DEFINE_bool("y", False, "y", flag_values=fv)
    flags.DEFINE_string("s", None, "s", flag_values=fv)
    flags.DEFINE_string("t", None, "t", flag_values=fv)
    flags.mark_flag_as_required("a", flag_values=fv)
    flags.mark_flags_as_required(["b"], flag_values=fv)
    flags.register_validator("c", lambda v: v > 0, "c must be positive", flag_values=fv)
    flags.mark_bool_flags_as_mutual_exclusive(["x", "y"], flag_values=fv)
    flags.mark_flags_as_mutual_exclusive(["s", "t"], flag_values=fv)
    flags.register_multi_flags_validator(["a", "b"], lambda d: d["a"] <= d["b"],
                                         "a <= b", flag_values=fv)

    @flags.validator("c", message="c < 100", flag_values=fv)
    def _small(value):
        return value < 100

    @flags.multi_flags_validator(["a", "c"], message="a != c", flag_values=fv)
    def _differ(d):
        return d["a"] != d["c"]

    with pytest.raises(flags.IllegalFlagValueError, match="a"):
        fv(["prog", "--b=1"])
    fv.unparse_flags()
    with pytest.raises(flags.IllegalFlagValueError, match="positive"):
        fv(["prog", "--a=1", "--b=2", "--c=0"])
    fv.unparse_flags()
    with pytest.raises(flags.IllegalFlagValueError):
        fv(["prog", "--a=1", "--b=2", "--x", "--y"])
    fv.unparse_flags()
    fv(["prog", "--a=1", "--b=2", "--c=5"])
    assert (fv.a, fv.b, fv.c) == (1, 2, 5)


def test_defaults_overrides_and_holders(fv):
    holder = flags.DEFINE_integer("n", 1, "an int", flag_values=fv)
    assert isinstance(holder, flags.FlagHolder)
    flags.set_default(holder, 4)
    fv(["prog"])
    assert holder.value == 4
    flags.override_value(holder, 9)
    assert fv.n == 9


def test_key_flags_and_help_helpers(fv):
    flags.DEFINE_integer("n", 1, "an int", flag_values=fv)
    flags.declare_key_flag("n", flag_values=fv)
    flags.adopt_module_key_flags(absl.flags, flag_values=fv)
    flags.disclaim_key_flags()
    assert flags.flag_dict_to_args({"a": 1, "b": True, "c": None}) is not None
    assert list(flags.flag_dict_to_args({"a": 1, "b": True})) == ["--a=1", "--b"]
    assert flags.doc_to_help("  one\n  two  ") == "one two"
    assert flags.text_wrap("aaa bbb ccc", length=7) == "aaa bbb\nccc"
    assert flags.get_help_width() > 0
