"""ONNX's node test suite, written out and scored for relax-rs and
onnxruntime on the same machine.

The onnx wheel generates the suite (`onnx.backend.test.case.node.
collect_testcases`): one small model per case with its inputs and expected
outputs. This script writes every case in the backend-test layout that
`relax-onnx`'s `onnx_backend` example and `relax run` read:

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_<k>/{input,output}_<i>.pb

then scores onnxruntime on them (a case passes when a session can be made
and every output matches with the case's own tolerances), and, given the
`onnx_backend` binary, relax-rs on LLVM and on the interpreter, and prints
the pass counts, the cases onnxruntime passes and relax-rs fails (by name,
with the error), and relax-rs's failures grouped by cause:

    cargo build --release -p relax-onnx --example onnx_backend
    python3 scripts/onnx_node_suite.py OUT --relax target/release/examples/onnx_backend

(venv: onnx, onnxruntime, numpy). `--subset DIR` also copies the first
passing case of each op type, at most 64 KiB each, into DIR: the subset that
`cargo test` checks without Python (relax-onnx/tests/data/node).
"""

import collections
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def write_cases(out):
    from onnx.backend.test.case.node import collect_testcases

    cases = collect_testcases("")
    names = []
    for case in cases:
        folder = os.path.join(out, case.name)
        try:
            write_case(case, folder)
        except Exception as e:
            # A value the layout cannot hold (a sequence of tensors, an
            # optional): the case is left out, and counts as a failure.
            shutil.rmtree(folder, ignore_errors=True)
            print(f"{case.name}: not written ({type(e).__name__})")
        names.append((case.name, case.rtol, case.atol))
    return names, {c.name: c for c in cases}


def write_case(case, folder):
    os.makedirs(folder, exist_ok=True)
    onnx.save(case.model, os.path.join(folder, "model.onnx"))
    for k, (inputs, outputs) in enumerate(case.data_sets):
        data = os.path.join(folder, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        graph = case.model.graph
        for kind, values, infos in (
            ("input", inputs, graph.input),
            ("output", outputs, graph.output),
        ):
            for i, v in enumerate(values):
                name = infos[i].name if i < len(infos) else f"{kind}_{i}"
                path = os.path.join(data, f"{kind}_{i}.pb")
                with open(path, "wb") as f:
                    f.write(serialize(v, name))


def serialize(v, name):
    if isinstance(v, onnx.TensorProto):
        v.name = name
        return v.SerializeToString()
    if isinstance(v, np.ndarray) or np.isscalar(v):
        return numpy_helper.from_array(np.asarray(v), name).SerializeToString()
    if isinstance(v, list):
        return numpy_helper.from_list(v, name).SerializeToString()
    if v is None:
        return numpy_helper.from_optional(None, name).SerializeToString()
    return numpy_helper.from_array(np.asarray(v), name).SerializeToString()


def ort_passes(case):
    import onnxruntime as ort

    ort.set_default_logger_severity(3)

    try:
        sess = ort.InferenceSession(
            case.model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        for inputs, outputs in case.data_sets:
            feed = {i.name: v for i, v in zip(sess.get_inputs(), inputs)}
            got = sess.run(None, feed)
            for g, w in zip(got, outputs):
                np.testing.assert_allclose(
                    np.asarray(g, dtype=np.asarray(w).dtype)
                    if np.asarray(w).dtype != object
                    else g,
                    w,
                    rtol=case.rtol,
                    atol=case.atol,
                )
        return True
    except Exception:
        return False


def run_relax(binary, out, extra):
    proc = subprocess.run(
        [binary, out] + extra, capture_output=True, text=True, check=False
    )
    results = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"(ok|FAIL)\s+(\S+?)(?::\s*(.*))?$", line)
        if m:
            results[m.group(2)] = (m.group(1) == "ok", m.group(3) or "")
    return results


def cause(message):
    """A failure's cause: its message without the names that vary per case."""
    m = re.search(r"the (\w+) node making `[^`]*`: (.*)", message) or re.search(
        r"\((\w+)\): (.*)", message
    )
    if m:
        op, what = m.groups()
        what = re.sub(r"`[^`]*`", "`…`", what)
        what = re.sub(r"\d+", "N", what)
        return f"{op}: {what[:110]}"
    return re.sub(r"\d+", "N", message)[:120]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    binary = args[args.index("--relax") + 1] if "--relax" in args else None
    subset = args[args.index("--subset") + 1] if "--subset" in args else None
    names, cases = write_cases(out)
    print(f"{len(names)} cases written to {out}")
    ort = {n: ort_passes(cases[n]) for n, _, _ in names}
    print(f"onnxruntime: {sum(ort.values())} of {len(names)} pass")
    if not binary:
        return
    for label, extra in (("relax-rs (LLVM)", []), ("relax-rs (interpreter)", ["--interp"])):
        results = run_relax(binary, out, extra)
        passed = sum(1 for ok, _ in results.values() if ok)
        both = sum(1 for n in ort if ort[n] and results.get(n, (False,))[0])
        print(f"{label}: {passed} of {len(names)} pass ({both} of onnxruntime's {sum(ort.values())})")
        # The cases onnxruntime passes and relax-rs does not, by name: the
        # gap that counts (issue 25 asks for every float16, bfloat16 and
        # quantization case among them).
        for n in sorted(n for n in ort if ort[n] and not results.get(n, (False,))[0]):
            print(f"  onnxruntime only: {n}: {results.get(n, (False, 'no result'))[1][:150]}")
        if extra:
            continue
        causes = collections.Counter(
            cause(msg) for ok, msg in results.values() if not ok
        )
        print("failures by cause:")
        for c, n in causes.most_common():
            print(f"  {n:4d}  {c}")
        if subset:
            seen = set()
            os.makedirs(subset, exist_ok=True)
            for name in sorted(results):
                ok, _ = results[name]
                op = cases[name].model.graph.node[0].op_type
                folder = os.path.join(out, name)
                size = sum(
                    os.path.getsize(os.path.join(d, f))
                    for d, _, fs in os.walk(folder)
                    for f in fs
                )
                if ok and op not in seen and size <= 64 * 1024:
                    seen.add(op)
                    shutil.copytree(folder, os.path.join(subset, name), dirs_exist_ok=True)
            print(f"subset: {len(seen)} cases (one per op type) in {subset}")


if __name__ == "__main__":
    main()
