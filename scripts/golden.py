"""Write (or check) the golden outputs: the report JSON and the decision memo of a fixed set of links.

Refactors must leave these byte for byte; a deliberate change of a figure regenerates them:

    .venv/bin/python scripts/golden.py          # rewrite tests/fixtures/golden/
    .venv/bin/python scripts/golden.py --check  # exit 1 and name the files that differ
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc import load, report  # noqa: E402
from calc.memo import memo  # noqa: E402

GOLDEN = ROOT / "tests" / "fixtures" / "golden"
BASE_URL = "https://calc.example"

#: name -> link: the defaults, memory-capped, multi-card with KV copies, MoE with weights per part, MLA, windows,
#: an unpriced card, a latency target, a long-prompt API tier, a custom card and model.
LINKS = {
    "default": "",
    "seed-70b-h100": "model=custom&params_b=70&layers=80&heads=64&kv_heads=8&head_dim=128&card=h100-sxm&mem_gib=80"
                     "&weights=4&kv=fp16&ctx=8192&attn=0&overhead_gib=4&eff=0.7&usd_hr=2.5&engine=roofline",
    "70b-16-cards-bf16": "model=llama-3.1-70b&card=h100-sxm&gpus=16&weights=bf16&kv=bf16&ctx=32768&req_day=200000"
                         "&in_tok=1500&out_tok=300",
    "gpt-oss-120b": "model=gpt-oss-120b&card=h100-sxm&req_day=50000",
    "deepseek-h200": "model=deepseek-v3&card=h200-sxm&gpus=8&kv=fp8&req_day=1000000&tpot_ms=50",
    "gemma-window-l40s": "model=gemma-2-27b&card=l40s&weights=q4_k_m&ctx=8192&duty=0.6",
    "unpriced-mi300x": "model=llama-3.1-70b&card=mi300x&weights=fp8",
    "gemini-tier": "api=gemini/gemini-2.5-pro&in_tok=250000&out_tok=1000&req_day=1000",
    "custom-card": "model=custom&params_b=13&layers=40&heads=40&kv_heads=40&head_dim=128&card=custom&mem_gib=24"
                   "&bw_tbs=1&tflops=165&usd_hr=0.8&weights=q8_0&ctx=4096&req_day=3000",
    "does-not-fit": "model=llama-3.1-405b&weights=bf16&gpus=1",
}


def outputs(link: str) -> dict[str, str]:
    """The report (indented JSON) and the memo of ``link``."""
    return {"json": json.dumps(report(link), indent=2, allow_nan=False) + "\n",
            "md": memo(load(link), base_url=BASE_URL) + "\n"}


#: Links whose pages are drawn under AppTest and whose shown figures (metrics, alerts, captions) are kept.
PAGE_LINKS = ("default", "70b-16-cards-bf16", "gpt-oss-120b", "unpriced-mi300x")
PAGES = ("decision", "fit", "speed", "cost", "catalogue")


def page_figures(link: str) -> dict[str, list[str]]:
    """What each page shows of ``link``: metric labels and values, alerts and captions, in page order."""
    from urllib.parse import parse_qsl

    sys.path.insert(0, str(ROOT / "tests"))
    from apptest import open_app

    out = {}
    for page in PAGES:
        at = open_app(dict(parse_qsl(link)), f"pages/{page}.py")
        assert not at.exception, at.exception
        shown = [f"metric {m.label} = {m.value}" for m in at.metric]
        for kind in ("error", "warning", "info", "success", "caption"):
            shown += [f"{kind} {e.value}" for e in getattr(at, kind)]
        out[page] = shown
    return out


def all_outputs() -> dict[str, str]:
    """Every golden file's name and text."""
    files = {f"{name}.{ext}": text for name, link in LINKS.items() for ext, text in outputs(link).items()}
    pages = {name: page_figures(LINKS[name]) for name in PAGE_LINKS}
    files["pages.json"] = json.dumps(pages, indent=1, ensure_ascii=False) + "\n"
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    differ = []
    for name, text in all_outputs().items():
        path = GOLDEN / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                differ.append(path.name)
        else:
            path.write_text(text)
    if differ:
        print("differ from the golden outputs: " + ", ".join(differ))
        return 1
    print("golden outputs " + ("match" if args.check else f"written to {GOLDEN.relative_to(ROOT)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
