"""The report, the memo and what each page shows, byte for byte against tests/fixtures/golden/.

A refactor must leave them unchanged; a deliberate change of a figure regenerates them with
``python scripts/golden.py`` and the diff shows what changed.
"""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import golden  # noqa: E402


@pytest.mark.parametrize("name", sorted(golden.LINKS))
def test_report_and_memo_match_the_golden_files(name):
    for ext, text in golden.outputs(golden.LINKS[name]).items():
        assert text == (golden.GOLDEN / f"{name}.{ext}").read_text(), f"{name}.{ext} differs"


def test_pages_show_the_golden_figures():
    import json
    want = json.loads((golden.GOLDEN / "pages.json").read_text())
    for name in golden.PAGE_LINKS:
        got = golden.page_figures(golden.LINKS[name])
        for page, shown in want[name].items():
            assert got[page] == shown, f"{name} / {page}"
