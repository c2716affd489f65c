"""Copies each surveyed program into $SURVEY_DIR/run/<name>/ with only the edits the
survey allows (docs/program_survey.md): the import, the data source, step counts.

The originals are expected in $SURVEY_DIR/{tf,aymeric,other}/ (see README.md); the edits
per program are in programs.json. Writes $SURVEY_DIR/meta.json for the run scripts.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SURVEY = os.environ.get("SURVEY_DIR", "/tmp/survey")
COMMON = [
    ("import tensorflow as tf", "import tensorweave as tf"),
    ("from tensorflow.examples.tutorials.mnist import input_data", "import input_data"),
    ("from tensorflow.contrib import rnn", "from tensorweave.contrib import rnn"),
]


def prepare(name, spec):
    with open(os.path.join(SURVEY, spec["dir"], spec["file"])) as f:
        src = f.read()
    applied = []
    for old, new in COMMON + [tuple(e) for e in spec["edits"]]:
        if old in src:
            src = src.replace(old, new)
            applied.append((old, new))
        elif [old, new] in spec["edits"]:
            print("MISSING", name, old, file=sys.stderr)
    run_dir = os.path.join(SURVEY, "run", name)
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, spec["file"]), "w") as f:
        f.write(src)
    if "import mnist" in src:  # the tutorials' model module, import edited only
        with open(os.path.join(SURVEY, "tf", "mnist.py")) as f:
            model = f.read().replace("import tensorflow as tf", "import tensorweave as tf")
        with open(os.path.join(run_dir, "mnist.py"), "w") as f:
            f.write(model)
    return {**spec, "changes": applied}


def main():
    with open(os.path.join(HERE, "programs.json")) as f:
        programs = json.load(f)
    meta = {name: prepare(name, spec) for name, spec in programs.items()}
    with open(os.path.join(SURVEY, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
