"""Writes TVM 0.27's FuseOps, FuseTIR and CanonicalizeBindings output on
TVM's own test cases, as fixtures.

For every test function of TVM's
`tests/python/relax/test_transform_{fuse_ops,fuse_tir,canonicalize_bindings}.py`,
the pass is wrapped so that each time the test applies it, the module it is
given and the module TVM makes of it are recorded. Each application becomes
`relax-core/tests/tvm_passes/<pass>/<test>[_<k>].before.py` and
`<...>.after.py`, both printed by TVM (`mod.script()`). For FuseOps the
recorded input is the one FuseOps itself sees (after the test's
LegalizeOps / AnnotateTIROpPattern), so it carries `op_pattern`.

A test that fails under TVM 0.27, needs pytest fixtures, or never calls the
pass directly (it builds a `Sequential`, say) records nothing and is listed as
skipped with the reason; so is a case whose modules are larger than
`MAX_CHARS`. The tests of relax-core (`fuse_ops_matches_tvm_0_27`,
`fuse_tir_matches_tvm_0_27`, `canonicalize_bindings_matches_tvm_0_27`) run
this project's pass on each `before` and compare with `after`.

Needs a venv with apache-tvm 0.27 and the three test files of an apache/tvm
checkout (the fixtures were made from commit 5d4dc87213, TVM 0.27's tests):
    python3 -m venv .venv-tvm && .venv-tvm/bin/pip install "apache-tvm==0.27.*" numpy pytest
    .venv-tvm/bin/python scripts/tvm_pass_fixtures.py TVM_CHECKOUT/tests/python/relax
"""

import importlib.util
import inspect
import os
import sys
import traceback

import tvm
from tvm import relax

PASSES = {
    "fuse_ops": "FuseOps",
    "fuse_tir": "FuseTIR",
    "canonicalize_bindings": "CanonicalizeBindings",
}
MAX_CHARS = 40_000


def wrap(name, records):
    """`relax.transform.<name>` replaced by a callable recording each use."""
    original = getattr(relax.transform, name)

    class Recording:
        def __init__(self, *args, **kwargs):
            self.args = args
            self.kwargs = kwargs
            self.inner = original(*args, **kwargs)

        def __call__(self, mod):
            out = self.inner(mod)
            records.append((mod, out, bool(self.args or self.kwargs)))
            return out

    return original, Recording


def tests_of(module):
    """The test functions of `module`: `(name, function)`, classes' `test_`
    methods included as `Class_method`."""
    for name, obj in vars(module).items():
        if name.startswith("test_") and inspect.isfunction(obj):
            yield name, obj
        elif name.startswith("Test") and inspect.isclass(obj):
            for m, f in vars(obj).items():
                if m.startswith("test_") and inspect.isfunction(f):
                    yield f"{name}_{m}", (lambda o=obj, m=m: getattr(o(), m)())


def main(tests_dir, out_root):
    skipped = []
    for short, pass_name in PASSES.items():
        path = os.path.join(tests_dir, f"test_transform_{short}.py")
        spec = importlib.util.spec_from_file_location(f"tvm_test_{short}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # TVMScript reads the source through it
        records = []
        original, recording = wrap(pass_name, records)
        setattr(relax.transform, pass_name, recording)
        setattr(relax.transform.transform, pass_name, recording)
        try:
            spec.loader.exec_module(module)
            out_dir = os.path.join(out_root, short)
            os.makedirs(out_dir, exist_ok=True)
            for old in os.listdir(out_dir):
                os.remove(os.path.join(out_dir, old))
            for test, fn in tests_of(module):
                records.clear()
                if inspect.isfunction(fn) and inspect.signature(fn).parameters:
                    skipped.append((short, test, "needs pytest fixtures"))
                    continue
                try:
                    fn()
                except Exception as e:  # the test fails under TVM 0.27
                    msg = str(e).strip().splitlines()
                    skipped.append((short, test, f"fails under TVM 0.27: {type(e).__name__}: {msg[0] if msg else ''}"))
                    continue
                if not records:
                    skipped.append((short, test, "does not call the pass directly"))
                    continue
                for k, (before, after, with_options) in enumerate(records):
                    case = test if len(records) == 1 else f"{test}_{k}"
                    if with_options:
                        skipped.append((short, case, "the pass with options"))
                        continue
                    b, a = before.script(), after.script()
                    if len(b) + len(a) > MAX_CHARS:
                        skipped.append((short, case, "larger than MAX_CHARS"))
                        continue
                    with open(os.path.join(out_dir, f"{case}.before.py"), "w") as f:
                        f.write(b + "\n")
                    with open(os.path.join(out_dir, f"{case}.after.py"), "w") as f:
                        f.write(a + "\n")
                    print(f"wrote {short}/{case}")
        finally:
            setattr(relax.transform, pass_name, original)
            setattr(relax.transform.transform, pass_name, original)
    for short, case, why in skipped:
        print(f"skipped {short}/{case}: {why}")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else
         os.path.join(here, "..", "relax-core", "tests", "tvm_passes"))
