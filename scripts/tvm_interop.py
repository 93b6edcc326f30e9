"""Checks TVMScript interop with TVM, both ways, for every given text.

For each file (a module as this project prints or reads it):
1. this project prints it (canonical text, `examples/tvmscript print`);
2. TVM parses that text (`tvm.script.from_source`, which checks well-formedness)
   and prints it back;
3. this project parses TVM's text and compares it structurally with its own
   (`examples/tvmscript compare`).
Prints one line per file and a summary; the exit status is 1 if any failed.
Run through scripts/tvm_interop.sh, which makes the venv and builds the tool.
"""

import os
import subprocess
import sys
import tempfile

import tvm
from tvm.script import from_source


def main(tool, files):
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            name = os.path.basename(path)
            ours = subprocess.run([tool, "print", path], capture_output=True, text=True)
            if ours.returncode != 0:
                failed.append((name, "ours", ours.stderr.strip()))
                continue
            try:
                theirs = from_source(ours.stdout).script()
            except Exception as e:  # TVM raises many kinds of errors
                failed.append((name, "tvm parses ours", str(e).splitlines()[0:3]))
                continue
            ours_path = os.path.join(tmp, "ours_" + name)
            theirs_path = os.path.join(tmp, "tvm_" + name)
            with open(ours_path, "w") as f:
                f.write(ours.stdout)
            with open(theirs_path, "w") as f:
                f.write(theirs)
            cmp = subprocess.run([tool, "compare", ours_path, theirs_path],
                                 capture_output=True, text=True)
            if cmp.returncode != 0:
                failed.append((name, "ours parses tvm's", cmp.stderr.strip().splitlines()[-3:]))
                continue
            print(f"ok    {name}")
    for name, step, why in failed:
        print(f"FAIL  {name} ({step}): {why}")
    print(f"tvm {tvm.__version__}: {len(files) - len(failed)} of {len(files)} texts "
          f"round-trip both ways")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
