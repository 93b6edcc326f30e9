"""Writes TVM 0.27's LegalizeOps output for a set of modules, as fixtures.

For each case below, `relax-core/tests/legalize_tvm/<name>.before.py` is the
module and `<name>.after.py` is what `tvm.relax.transform.LegalizeOps()`
makes of it, printed by TVM. The test `legalize_ops_matches_tvm` (in
relax-core's legalize tests) runs this project's LegalizeOps on each
`before` and compares the result with `after` structurally. Needs a venv with
apache-tvm 0.27:
    python3 -m venv .venv-tvm && .venv-tvm/bin/pip install "apache-tvm==0.27.*" numpy
    .venv-tvm/bin/python scripts/tvm_legalize_fixtures.py
"""

import os
import sys

import tvm
from tvm import relax
from tvm.script import from_source

HEADER = """# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main({params}) -> {ret}:
{decls}        gv: {ret_body} = {call}
        return gv
"""

# name: (params, return annotation, symbolic vars, call); the cases of TVM's
# test_transform_legalize_ops_*.py that the issue names, and a few more.
CASES = {
    "add_broadcast": ('x: R.Tensor((2, 1, 3), dtype="float32"), y: R.Tensor((4, 1), dtype="float32")',
                      'R.Tensor((2, 4, 3), dtype="float32")', [], "R.add(x, y)"),
    "add_symbolic": ('x: R.Tensor(("a", "b", "c"), dtype="float32"), y: R.Tensor(("c",), dtype="float32")',
                     'R.Tensor(("a", "b", "c"), dtype="float32")', ["a", "b", "c"], "R.add(x, y)"),
    "multiply": ('x: R.Tensor((4, 5), dtype="float32"), y: R.Tensor((4, 5), dtype="float32")',
                 'R.Tensor((4, 5), dtype="float32")', [], "R.multiply(x, y)"),
    "relu": ('x: R.Tensor((2, 3), dtype="float32")', 'R.Tensor((2, 3), dtype="float32")', [],
             "R.nn.relu(x)"),
    "exp": ('x: R.Tensor(("n", 3), dtype="float32")', 'R.Tensor(("n", 3), dtype="float32")', ["n"],
            "R.exp(x)"),
    "matmul": ('x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((3, 4), dtype="float32")',
               'R.Tensor((2, 4), dtype="float32")', [], "R.matmul(x, y)"),
    "matmul_symbolic_batch": ('x: R.Tensor(("b", 3, 4), dtype="float32"), y: R.Tensor((4, 5), dtype="float32")',
                              'R.Tensor(("b", 3, 5), dtype="float32")', ["b"], "R.matmul(x, y)"),
    "permute_dims_negative": ('x: R.Tensor((1, 2, 3, 4), dtype="float32")',
                              'R.Tensor((2, 4, 3, 1), dtype="float32")', [],
                              "R.permute_dims(x, axes=[1, -1, 2, -4])"),
    "transpose_default": ('x: R.Tensor((2, 3), dtype="float32")', 'R.Tensor((3, 2), dtype="float32")', [],
                          "R.permute_dims(x)"),
    "sum": ('x: R.Tensor((2, 3, 4), dtype="float32")', 'R.Tensor((2, 4), dtype="float32")', [],
            "R.sum(x, axis=[1])"),
    "reshape": ('x: R.Tensor((2, 3, 4), dtype="float32")', 'R.Tensor((6, 4), dtype="float32")', [],
                "R.reshape(x, R.shape([6, 4]))"),
    # A scalar constant operand becomes a literal in the PrimFunc (second
    # operand first), as `_try_convert_to_scalar_const` does.
    "add_scalar_const": ('x: R.Tensor((2, 3), dtype="float32")', 'R.Tensor((2, 3), dtype="float32")', [],
                         'R.add(x, R.const(1.5, "float32"))'),
    "subtract_scalar_const_first": ('x: R.Tensor((2, 3), dtype="float32")', 'R.Tensor((2, 3), dtype="float32")',
                                    [], 'R.subtract(R.const(1.0, "float32"), x)'),
    "multiply_scalar_const_int": ('x: R.Tensor(("n", 4), dtype="int32")', 'R.Tensor(("n", 4), dtype="int32")',
                                  ["n"], 'R.multiply(x, R.const(3, "int32"))'),
}
# Every unary op: TVM names the PrimFunc `tir_<op>`, its stage `compute`.
for _op in ("negative", "abs", "log", "sqrt", "rsqrt", "tanh", "sigmoid"):
    CASES[_op] = ('x: R.Tensor((2, 3), dtype="float32")', 'R.Tensor((2, 3), dtype="float32")', [],
                  f"R.{_op}(x)")


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name, (params, ret, syms, call) in CASES.items():
        decls = "".join(f"        {s} = T.int64()\n" for s in syms)
        ret_body = ret
        for s in syms:
            ret_body = ret_body.replace(f'"{s}"', s)
        before = HEADER.format(params=params, ret=ret, decls=decls, ret_body=ret_body, call=call)
        mod = from_source(before)
        after = relax.transform.LegalizeOps()(mod)
        with open(os.path.join(out_dir, f"{name}.before.py"), "w") as f:
            f.write(before)
        with open(os.path.join(out_dir, f"{name}.after.py"), "w") as f:
            f.write(after.script() + "\n")
        print(f"wrote {name}")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(here, "..", "relax-core", "tests", "legalize_tvm"))
