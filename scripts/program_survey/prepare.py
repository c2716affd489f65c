"""Copies each surveyed program into $SURVEY_DIR/run/<name>/ with only the edits the
survey allows (docs/program_survey.md): the import, the data source, step counts.

The originals are expected in $SURVEY_DIR/{tf,aymeric,other,golbin,nlintz}/ (see
README.md); the edits per program are in programs.json: `edits` (old, new) for the
program, `modules` (its own modules, copied with the import edits only) and `extras`
(data files or folders, copied as they are). Writes $SURVEY_DIR/meta.json for the run
scripts.
"""

import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SURVEY = os.environ.get("SURVEY_DIR", "/tmp/survey")
COMMON = [
    ("import tensorflow as tf", "import tensorweave as tf"),
    ("from tensorflow.examples.tutorials.mnist import input_data", "import input_data"),
    ("from tensorflow.contrib import rnn", "from tensorweave.contrib import rnn"),
]


def _edit(text, edits, applied):
    for old, new in edits:
        if old in text:
            text = text.replace(old, new)
            applied.append((old, new))
    return text


def prepare(name, spec):
    edits = COMMON + [tuple(e) for e in spec["edits"]]
    applied = []
    with open(os.path.join(SURVEY, spec["dir"], spec["file"])) as f:
        src = _edit(f.read(), edits, applied)
    modules = {}
    for module in spec.get("modules", []):
        with open(os.path.join(SURVEY, spec["dir"], module)) as f:
            modules[module] = _edit(f.read(), edits, applied)
    for old, new in spec["edits"]:
        if (old, new) not in applied:
            print("MISSING", name, old, file=sys.stderr)
    run_dir = os.path.join(SURVEY, "run", name)
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, spec["file"]), "w") as f:
        f.write(src)
    for module, text in modules.items():
        with open(os.path.join(run_dir, module), "w") as f:
            f.write(text)
    for extra in spec.get("extras", []):
        src_path, dst_path = os.path.join(SURVEY, spec["dir"], extra), os.path.join(run_dir, extra)
        if os.path.isdir(src_path):
            shutil.copytree(src_path, dst_path, dirs_exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst_path), exist_ok=True)
            shutil.copyfile(src_path, dst_path)
    if "import mnist" in src:  # the tutorials' model module, import edited only
        with open(os.path.join(SURVEY, "tf", "mnist.py")) as f:
            model = f.read().replace("import tensorflow as tf", "import tensorweave as tf")
        with open(os.path.join(run_dir, "mnist.py"), "w") as f:
            f.write(model)
    return {**spec, "changes": list(dict.fromkeys(applied))}


def main():
    with open(os.path.join(HERE, "programs.json")) as f:
        programs = json.load(f)
    meta = {name: prepare(name, spec) for name, spec in programs.items()}
    with open(os.path.join(SURVEY, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
