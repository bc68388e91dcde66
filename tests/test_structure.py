"""The shape of the code: one table of link keys drives every model and input, `import calc` stays light,
and the package never reaches up into the app."""

from __future__ import annotations

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
    for path in (ROOT / "calc").glob("*.py"):
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
    for path in sorted((Path(__file__).resolve().parent.parent / "pages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "calc":
                names = {a.name for a in node.names}
                assert not names & {"model", "traffic", "memory"}, (path.name, names)
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module not in ("calc.model", "calc.traffic", "calc.memory"), (path.name, node.module)
            if isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & {"calc.model", "calc.traffic", "calc.memory"}, path.name
