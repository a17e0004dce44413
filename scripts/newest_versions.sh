#!/usr/bin/env bash
# The test suite on the newest versions pyproject.toml's ranges allow, instead of the lock
# (constraints.txt), in a fresh virtual environment. Run it before each change of the lock
# and record the result in docs/testing.md ("Newest versions"). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
python -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
# constraints.in holds only the CPU build of PyTorch; everything else resolves afresh
"$work/venv/bin/python" -m pip install --quiet -c constraints.in -e ".[test]"
"$work/venv/bin/python" - constraints.txt <<'PY'
import re
import sys
from importlib.metadata import distributions

def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()

locked = {norm(m[1]): m[2] for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)",
                                                 open(sys.argv[1]).read(), re.M)}
newer = sorted(f"{n} {locked[n]} -> {d.version}" for d in distributions()
               if (n := norm(d.metadata["Name"])) in locked and locked[n] != d.version)
print("versions that differ from the lock:", ", ".join(newer) or "none")
PY
"$work/venv/bin/python" -m pytest -p no:cacheprovider "$@"
