"""`tf.app.run`: parses `tf.flags.FLAGS`, calls main with the remaining arguments, exits with
its value; an unknown flag is absl's error naming it (run as programs in subprocesses,
since `FLAGS` is process-wide)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent("""
    import tensorweave as tf

    tf.app.flags.DEFINE_integer("steps", 3, "training steps")
    tf.flags.DEFINE_string("job_name", "", "ps or worker")
    FLAGS = tf.app.flags.FLAGS

    def main(argv):
        print("steps", FLAGS.steps, "job", FLAGS.job_name, "argv", argv[1:])
        return 7 if FLAGS.job_name == "fail" else 0

    if __name__ == "__main__":
        tf.app.run()
""")


def _run(tmp_path, *args, program=PROGRAM):
    path = tmp_path / "prog.py"
    path.write_text(program)
    return subprocess.run([sys.executable, str(path), *args], capture_output=True,
                          text=True, timeout=60)


def test_run_parses_flags_and_passes_the_rest(tmp_path):
    result = _run(tmp_path, "--steps=5", "--job_name", "worker", "extra")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "steps 5 job worker argv ['extra']"


def test_run_exits_with_mains_value(tmp_path):
    assert _run(tmp_path, "--job_name=fail").returncode == 7


def test_unknown_flag_names_the_flag(tmp_path):
    result = _run(tmp_path, "--stpes=5")
    assert result.returncode == 1
    assert "Unknown command line flag 'stpes'" in result.stderr


def test_run_with_explicit_main_and_argv(tmp_path):
    program = textwrap.dedent("""
        import tensorweave as tf
        tf.flags.DEFINE_integer("n", 1, "n")
        def go(argv):
            print(tf.flags.FLAGS.n, argv)
        tf.app.run(main=go, argv=["prog", "--n=4", "x"])
    """)
    result = _run(tmp_path, program=program)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "4 ['prog', 'x']"
