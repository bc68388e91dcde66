"""The report, the memo and what each page shows, against tests/fixtures/golden/.

The report's figures (every number of ``<name>.json``) are compared within a relative 1e-9, so a refactor that
changes the last bit of a float does not fail; its words (the warnings, notes and every other text of the
report) and the memo's prose (``<name>.md``) are compared exactly, and a failure says which of the two moved. A
deliberate change regenerates them with ``python scripts/golden.py`` and the diff shows what changed.
"""

import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import golden  # noqa: E402

#: How far a golden figure may move: float rounding of a refactor, never a change of the model.
REL_TOL = 1e-9


def _leaves(value, path=""):
    """Every leaf of a JSON value with its path ("a.b[2]")."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compare_report(got: dict, want: dict) -> tuple[list[str], list[str]]:
    """(figures that moved, words that changed) between two reports; the same shape is part of the words."""
    a, b = dict(_leaves(got)), dict(_leaves(want))
    figures, words = [], []
    for path in sorted(set(a) | set(b)):
        x, y = a.get(path, "<absent>"), b.get(path, "<absent>")
        if _is_number(x) and _is_number(y):
            if not math.isclose(x, y, rel_tol=REL_TOL, abs_tol=1e-12):
                figures.append(f"{path}: {x!r} (golden {y!r})")
        elif x != y:
            words.append(f"{path}: {x!r} (golden {y!r})")
    return figures, words


@pytest.mark.parametrize("name", sorted(golden.LINKS))
def test_report_figures_and_words_match_the_golden_file(name):
    got = json.loads(golden.outputs(golden.LINKS[name])["json"])
    want = json.loads((golden.GOLDEN / f"{name}.json").read_text())
    figures, words = compare_report(got, want)
    assert not figures, f"{name}.json: figures moved:\n" + "\n".join(figures[:20])
    assert not words, f"{name}.json: words changed:\n" + "\n".join(words[:20])


@pytest.mark.parametrize("name", sorted(golden.LINKS))
def test_memo_prose_matches_the_golden_file(name):
    assert golden.outputs(golden.LINKS[name])["md"] == (golden.GOLDEN / f"{name}.md").read_text(), \
        f"{name}.md: the memo's prose differs"


def test_a_figure_within_rounding_passes_and_a_moved_one_fails():
    want = {"monthly_usd": 1000.0, "warnings": ["a"], "n": [1, 2]}
    assert compare_report({"monthly_usd": 1000.0 * (1 + 1e-12), "warnings": ["a"], "n": [1, 2]}, want) == ([], [])
    figures, words = compare_report({"monthly_usd": 1001.0, "warnings": ["b"], "n": [1]}, want)
    assert figures == ["monthly_usd: 1001.0 (golden 1000.0)"]
    assert words == ["n[1]: '<absent>' (golden 2)", "warnings[0]: 'b' (golden 'a')"]


def test_pages_show_the_golden_figures():
    want = json.loads((golden.GOLDEN / "pages.json").read_text())
    for name in golden.PAGE_LINKS:
        got = golden.page_figures(golden.LINKS[name])
        for page, shown in want[name].items():
            assert got[page] == shown, f"{name} / {page}"
