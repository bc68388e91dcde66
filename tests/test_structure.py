"""The shape of the code: one table of link keys drives every model and input, `import calc` stays light,
and the package never reaches up into the app."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from calc import KEYS, Scenario
from calc.__main__ import _keys_help
from calc.scenario import KEY_TABLE, RANGES, LinkInputs

ROOT = Path(__file__).resolve().parent.parent


def test_import_calc_loads_no_pandas_streamlit_or_altair():
    code = "import sys, calc; calc.report(''); print(sorted(m for m in ('pandas', 'streamlit', 'altair') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_calc_never_imports_the_app():
    for path in (ROOT / "calc").rglob("*.py"):
        text = path.read_text()
        assert "import streamlit" not in text and "from streamlit" not in text, path.name
        assert "from pages" not in text and "import pages" not in text, path.name


def test_the_key_table_makes_the_models_the_ranges_and_the_help():
    keys = [k.key for k in KEY_TABLE]
    assert list(KEYS) == keys
    assert list(LinkInputs.model_fields) == keys
    assert [f for f in Scenario.model_fields if f != "follows_traffic"] == keys
    assert set(RANGES) == {k.key for k in KEY_TABLE if k.kind in ("float", "int", "batch")}
    for k in KEY_TABLE:
        assert k.label and k.help and k.accepted and k.group, k.key
        if k.kind in ("float", "int"):
            assert k.lo is not None and k.hi is not None and k.lo <= k.hi and k.step, k.key
    helptext = _keys_help()
    for k in KEY_TABLE:
        assert f"  {k.key} " in helptext, k.key


def test_every_key_has_one_sidebar_input():
    from pages._ui import GROUPS, PAGE_KEYS
    # the Decision page's reasons and the quantization lab's experiment have their inputs on their pages
    assert PAGE_KEYS == ["why", "lab_n", "lab_group", "lab_outliers", "lab_scale"]
    listed = [key for _, keys in GROUPS for key in keys] + PAGE_KEYS
    assert sorted(listed) == sorted(KEYS) and len(listed) == len(set(listed))


def test_pages_read_the_typed_chain_and_never_the_model():
    """Pages read reports, tables and decisions; the formulas (calc.model, calc.traffic, calc.memory) stay behind
    them, so no page can work a figure out a second way."""
    import ast
    from pathlib import Path
    for path in sorted((Path(__file__).resolve().parent.parent / "pages").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "calc":
                names = {a.name for a in node.names}
                assert not names & {"model", "traffic", "memory"}, (path.name, names)
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module not in ("calc.model", "calc.traffic", "calc.memory"), (path.name, node.module)
            if isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & {"calc.model", "calc.traffic", "calc.memory"}, path.name


#: Names that hold figures on the pages: the scenario, the report, the decision and the evaluation.
FIGURE_NAMES = {"s", "scenario", "r", "report", "d", "ev", "mem", "cap"}
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


def _reads_a_figure(node) -> bool:
    """An operand that is a figure: ``s.ctx``, ``r["max_batch"]``, ``table["gib"]`` (a column), ``d.cap.n``."""
    if isinstance(node, ast.Attribute):
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in FIGURE_NAMES
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and isinstance(key.value, str)
    return False


def _joins_lists_or_text(node) -> bool:
    """``a + b`` where one side is a list, a tuple or text: joining, not arithmetic."""
    sides = (node.left, node.right)
    return any(isinstance(x, (ast.List, ast.ListComp, ast.Tuple, ast.JoinedStr)) or
               (isinstance(x, ast.Constant) and isinstance(x.value, str)) or
               (isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id in ("list", "tuple", "str"))
               for x in sides)


def test_no_page_does_arithmetic_on_figures():
    """A figure a page shows is worked out in calc; a page only formats it. Chart layout (an axis's headroom) is
    marked on its line with ``# layout``."""
    offenders = []
    for path in sorted((ROOT / "pages").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC) and \
                    (_reads_a_figure(node.left) or _reads_a_figure(node.right)) and \
                    not _joins_lists_or_text(node) and not lines[node.end_lineno - 1].rstrip().endswith("# layout"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not offenders, "\n".join(offenders)


def test_the_arithmetic_check_finds_a_sum_of_figures():
    tree = ast.parse("x = s.in_tok + s.out_tok")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.BinOp))
    assert _reads_a_figure(node.left) and _reads_a_figure(node.right)


def test_hypothesis_runs_derandomised():
    from hypothesis import settings
    assert settings.default.derandomize and settings.default.database is None


def test_every_calc_module_has_a_test_module_of_its_name():
    """tests/ mirrors the package: calc/<name>.py (and the calc/scenario package) has tests/test_<name>.py; the
    command line (__main__) has tests/test_cli.py. Concerns that cross modules (the app, the browser, golden
    files, fuzzing) have modules of their own beside these."""
    names = {p.stem for p in (ROOT / "calc").glob("*.py") if p.stem != "__init__"} | {"scenario"}
    names = {"cli" if n == "__main__" else n for n in names}
    missing = sorted(n for n in names if not (ROOT / "tests" / f"test_{n}.py").exists())
    assert not missing, missing


def _early_stops(text: str) -> list[int]:
    """Lines of ``st.stop()`` calls a session's first draw can reach before the page's details begin: neither after
    the page's own top-level ``ui.details()`` nor directly behind one in their block."""
    def is_call(node, owner, name):
        return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and ast.unparse(node.value.func) == f"{owner}.{name}")
    tree = ast.parse(text)
    top = next((n.lineno for n in tree.body if is_call(n, "ui", "details")), None)
    early = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if is_call(stmt, "st", "stop") and not (top is not None and stmt.lineno > top) \
                        and not (i > 0 and is_call(block[i - 1], "ui", "details")):
                    early.append(stmt.lineno)
    return early


def test_no_page_stops_before_its_first_draw_asks_for_the_rest():
    """A session's first run of a page ends at ``ui.details()``, which asks the browser for the run that completes
    the link and draws the sidebar's folded groups; a page that stops earlier (Speed on a set-up that holds no
    sequence did) leaves the short link in the address bar and half the inputs missing."""
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in sorted((ROOT / "pages").glob("*.py"))
                 for line in _early_stops(path.read_text(encoding="utf-8"))]
    assert not offenders, offenders


def test_the_early_stop_check_finds_a_stop_before_the_details():
    assert _early_stops("if x:\n    st.stop()\nui.details()\n") == [2]
    assert _early_stops("if x:\n    ui.details()\n    st.stop()\nui.details()\n") == []
    assert _early_stops("ui.details()\nif x:\n    st.stop()\n") == []
