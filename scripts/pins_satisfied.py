"""Exit 0 when every `name==version` pin of the given requirements files is installed in the
running interpreter at exactly that version, else 1. Used by the setup scripts to skip pip."""
import sys
from importlib.metadata import PackageNotFoundError, version

ok = True
for path in sys.argv[1:]:
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, want = line.split("==")
        try:
            ok &= version(name) == want
        except PackageNotFoundError:
            ok = False
sys.exit(0 if ok else 1)
