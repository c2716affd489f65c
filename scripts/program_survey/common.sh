# Sourced by the run scripts: SURVEY (scratch dir), HERE (these scripts), PY, TW (the
# tensorweave tree put first on PYTHONPATH), and meta_field NAME FIELD (from meta.json).
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SURVEY=${SURVEY_DIR:-/tmp/survey}
PY=${PY:-/work/main/.venv/bin/python}
TW=${TW:-$(cd "$HERE/../.." && pwd)}
meta_field() {
  "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]]; print(v if isinstance(v,str) else " ".join(v or []))' "$SURVEY/meta.json" "$1" "$2"
}
