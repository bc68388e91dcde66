"""calc.scenario: one row per key, for real.

A key whose default comes from a preset is its row in the key table (calc/scenario/keys.py) plus the data column:
the test adds a synthetic card figure to a copy of the project, with nothing else changed, and checks that the link,
the command line's help, the sidebar, the memo's inputs table and the independent reference model all see it.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from calc import catalogue, parse, rules, with_change
from calc.scenario import CARD_FIGURES, DEPENDENTS, KEY_TABLE, KEYS, MODEL_FIGURES, SOURCES

ROOT = Path(__file__).resolve().parent.parent

#: The synthetic key's row, as a developer would write it beside the other card figures.
FAN_ROW = '''
    _K("fan_w", "float", "Fan power per card (W)",
       "Power the card's own fans draw under load; default: the card preset's figure.", "hardware",
       lo=0, hi=1e4, unit="W", step=1.0, fmt="%g", empty=UNKNOWN,
       preset="card", custom=None),'''
FAN_H100_W = 41.5


def _copy_with_fan_key(dest: Path) -> Path:
    """The project copied to ``dest`` with the key's row and the cards' data column added, nothing else."""
    for name in ("app.py", "calc", "pages", "assets", ".streamlit", "docs"):
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, dest / name)
    (dest / "tests").mkdir()
    for name in ("reference_model.py", "apptest.py"):
        shutil.copy2(ROOT / "tests" / name, dest / "tests" / name)
    keys = dest / "calc" / "scenario" / "keys.py"
    text = keys.read_text()
    start = text.index('_K("power_w"')
    end = text.index("),", start) + 2
    keys.write_text(text[:end] + FAN_ROW + text[end:])
    cards = dest / "calc" / "data" / "cards.csv"
    with cards.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    header = [*rows[0].keys(), "fan_w", "fan_w_source"]
    for row in rows:
        h100 = row["id"] == "h100-sxm"
        row["fan_w"] = f"{FAN_H100_W:g}" if h100 else ""
        row["fan_w_source"] = "a test figure, not a datasheet's" if h100 else ""
    with cards.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    return dest


CHECK = textwrap.dedent(f'''
    import subprocess, sys
    sys.path.insert(0, "tests")
    from calc import memo, parse, with_change
    from calc.scenario import DEPENDENTS
    import reference_model
    from apptest import open_app

    # the link: the preset's figure, the link's own, none for a custom card, a bad value named
    assert parse("card=h100-sxm").scenario.fan_w == {FAN_H100_W}, "preset"
    assert "fan_w={FAN_H100_W:g}" in parse("").scenario.to_query(), "printed link"
    assert parse("fan_w=12").scenario.fan_w == 12, "link value"
    assert parse("card=custom").scenario.fan_w is None, "custom card"
    assert parse("card=l40s").scenario.fan_w is None, "card without the figure"
    bad = parse("fan_w=-3")
    assert [e.key for e in bad.errors] == ["fan_w"] and "0 to 10000" in bad.errors[0].message, bad.errors
    # the app's edits: another card drops it
    assert "fan_w" in DEPENDENTS["card"]
    assert "fan_w" not in with_change({{"card": "h100-sxm", "fan_w": 3}}, "card", "l40s")
    # the command line's help and the memo's inputs table
    help_text = subprocess.run([sys.executable, "-m", "calc", "--help"], capture_output=True, text=True).stdout
    assert "fan_w" in help_text and "Fan power per card (W)" in help_text, "help"
    memo_text = memo.memo(parse(""))
    assert "| Fan power per card (W) | {FAN_H100_W:g} W | `fan_w` |" in memo_text, "memo"
    # the reference model
    ref = reference_model.reference_report({{"card": "h100-sxm"}})
    assert ref["scenario"]["fan_w"] == {FAN_H100_W}, "reference model"
    assert reference_model.reference_report({{"fan_w": "7"}})["scenario"]["fan_w"] == 7
    # the sidebar
    at = open_app({{}})
    assert not at.exception, at.exception
    boxes = [w for w in at.sidebar.number_input if w.key == "fan_w"] + \\
            [w for w in at.sidebar.select_slider if w.key == "fan_w"]
    assert boxes and boxes[0].label == "Fan power per card (W)", "sidebar"
    assert float(boxes[0].value) == {FAN_H100_W}, boxes[0].value
    print("ok")
''')


@pytest.mark.slow
def test_a_card_figure_key_needs_only_its_row_and_the_data_column(tmp_path):
    project = _copy_with_fan_key(tmp_path)
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=project, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout[-2000:] + done.stderr[-4000:]


def test_a_figure_column_without_its_source_is_refused(tmp_path):
    cards = tmp_path / "cards.csv"
    with (ROOT / "calc" / "data" / "cards.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with cards.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=[*rows[0].keys(), "fan_w"])
        writer.writeheader()
        writer.writerows({**r, "fan_w": "40"} for r in rows)
    with pytest.raises(catalogue.CatalogueError, match="fan_w"):
        catalogue.load_cards(cards)


def test_every_preset_key_names_a_source_and_a_field_the_preset_has():
    rows = {"model": next(iter(catalogue.models().values())), "card": catalogue.cards()["h100-sxm"],
            "api": next(iter(catalogue.apis().values()))}
    from calc.engines import profile
    rows["engine"] = profile("vllm")
    for k in KEY_TABLE:
        if k.preset:
            assert k.preset in SOURCES, k.key
            if k.derive is None:
                assert (k.field or k.key) in rows[k.preset], f"{k.key}: {k.preset} has no {k.field or k.key}"


def test_dependents_come_from_the_rows():
    assert set(DEPENDENTS["model"]) >= set(MODEL_FIGURES) | {"api"}
    assert set(DEPENDENTS["card"]) >= set(CARD_FIGURES) | {"usd_hr", "card_usd", "power_w", "link_gbs"}
    assert set(DEPENDENTS["api"]) == {"api_in", "api_out", "api_cached"}
    assert set(DEPENDENTS["weights"]) == {"weights_experts", "weights_attn", "weights_embed", "layers_full"}
    assert "weights" not in DEPENDENTS["model"]  # a model change keeps the format unless a checkpoint brings one
    assert MODEL_FIGURES[:3] == ("params_b", "active_b", "layers") and CARD_FIGURES == (
        "mem_gib", "torch_gib", "bw_tbs", "tflops", "clock_ghz")


def test_a_change_of_card_drops_its_figures_and_keeps_the_rest():
    changed = with_change({"card": "h100-sxm", "power_w": 300, "bw_tbs": 9, "upkeep": 10}, "card", "l40s")
    assert changed == {"card": "l40s", "upkeep": 10}


@pytest.mark.parametrize("link, key, value", [
    ("model=custom", "hidden", 8192),                       # heads x head_dim of the default shape
    ("model=custom&kv_heads=4", "heads", 4),                # a custom model given only its KV heads
    ("model=custom&embed_b=1&hidden=4096", "vocab", 244141),  # the untied table's rows
    ("card=custom", "link_gbs", 64.0),                      # PCIe 5.0 x16
    ("card=custom", "usd_hr", 2.5),                         # the default card's rent
    ("card=custom", "power_w", None),                       # a custom card has no board power
    ("eff=0.5&engine=vllm", "eff_kv", 0.5),                 # the link's eff stands in for the efficiencies
    ("in_tok=100&out_tok=28", "ctx", 128),                  # ctx follows the traffic
    ("profile=flat&peak=7", "peak", 1.0),                   # a profile sets the peak factor
])
def test_each_derivation_gives_what_docs_method_says(link, key, value):
    assert getattr(parse(link).scenario, key) == pytest.approx(value) if value is not None else \
        getattr(parse(link).scenario, key) is None


def test_the_catalogue_and_the_parser_apply_the_same_rules(tmp_path):
    """A preset row that breaks a rule is refused by the loader with the rule's own words, and a link that breaks
    it is refused by the parser with the same words."""
    models = tmp_path / "models.csv"
    with (ROOT / "calc" / "data" / "models.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    row = next(r for r in rows if r["id"] == "llama-3.1-8b")
    row["kv_heads"] = str(int(row["heads"]) * 2)
    with models.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(catalogue.CatalogueError) as caught:
        catalogue.load_models(models)
    reason = f"kv_heads ({int(row['heads']) * 2}) must not exceed heads ({row['heads']})"
    assert reason in str(caught.value)
    parsed = parse(f"model=llama-3.1-8b&kv_heads={int(row['heads']) * 2}")
    assert [e.key for e in parsed.errors] == ["kv_heads"] and reason in parsed.errors[0].message
    assert any(r.keys == ("kv_heads", "heads") for r in rules.RULES)


def test_every_key_has_exactly_one_row():
    assert len(KEYS) == len(KEY_TABLE)


def test_many_unknown_keys_are_one_note_and_a_few_are_named_each():
    many = parse("&".join(f"k{i}=v" for i in range(45)) + "&model=llama-3.1-8b")
    notes = [w for w in many.warnings if w.startswith("unknown key")]
    assert notes == ["unknown keys ignored (45): 'k0', 'k1', 'k2', 'k3', 'k4' and 40 more"]
    few = parse("colour=blue&x=1&colour=red")
    assert [w for w in few.warnings if w.startswith("unknown key")] == ["unknown key 'colour' ignored",
                                                                        "unknown key 'x' ignored"]
    # A misspelt key is named with the key it most likely meant.
    assert "unknown key 'bacth' (did you mean 'batch'?) ignored" in parse("bacth=4").warnings
    assert "unknown key 'GPU' (did you mean 'gpus'?) ignored" in parse("GPU=2").warnings


def test_a_format_the_engine_cannot_load_is_refused_with_the_formats_it_can():
    """The range a refused weight format's message gives is the engine's, not the whole key's: it does not list the
    refused format among those accepted."""
    (err,) = parse("engine=llamacpp&weights=fp8").errors
    assert err.key == "weights" and "with them, weights takes one of" in err.message
    taken = err.message.split("with them, weights takes ")[1]
    assert "q4_k_m" in taken and "fp8" not in taken.replace("q8_0", "")
    (err,) = parse("engine=trtllm&weights=q4_k_m").errors
    taken = err.message.split("with them, weights takes ")[1]
    assert "fp8" in taken and "q4_k_m" not in taken


def test_a_custom_card_says_which_figures_it_borrowed():
    """card=custom takes the default card's figures where the link gives none, and says so with their values."""
    (note,) = [w for w in parse("card=custom&bw_tbs=1").warnings if w.startswith("card=custom")]
    assert "H100 SXM 80 GB's figures" in note and "tflops=989 TFLOP/s" in note and "bw_tbs" not in note
    assert "torch_gib (the total CUDA reports) is the card's whole memory" in note
    full = "card=custom&mem_gib=24&bw_tbs=1&tflops=100&usd_hr=1&torch_gib=23"
    assert not [w for w in parse(full).warnings if w.startswith("card=custom")]


@pytest.mark.parametrize("key, given, hint", [
    ("req_day", "1,000", "without separators: req_day=1000 if the comma groups thousands"),
    ("ctx", "8,192", "without separators: ctx=8192 if"),
    ("req_day", "1,000,000.5", "req_day=1000000.5 if"),
    ("usd_hr", "2,50", "a decimal point: usd_hr=2.50 if the comma is one"),  # never read as 250
    ("req_day", "20_000", "without separators: req_day=20000"),  # Python's float() would read it as 20000
    ("gpus", "1_0", "gpus takes an integer"),
    ("eff", "0.7_0", "eff takes"),
])
def test_a_number_with_a_comma_or_an_underscore_is_refused_with_the_number_a_link_writes(key, given, hint):
    parsed = parse({key: given})
    (err,) = parsed.errors
    assert err.key == key
    assert hint in err.message
    assert getattr(parsed.scenario, key) == getattr(parse({}).scenario, key)  # the default stays in use


def test_a_word_with_a_comma_gets_no_number_suggested():
    for given in ("a,b", "1,2,3,4"):
        (err,) = parse({"gpus": given}).errors
        assert "separators" not in err.message and "decimal point" not in err.message


@pytest.mark.parametrize("given, value", [("2", 2), ("2.0", 2), ("2e0", 2), (" 2 ", 2), ("4E0", 4)])
def test_every_spelling_of_a_whole_number_reads_alike(given, value):
    parsed = parse({"gpus": given, "in_tok": "1e3", "batch": "3.0"})
    assert not parsed.errors
    assert (parsed.scenario.gpus, parsed.scenario.in_tok, parsed.scenario.batch) == (value, 1000, 3)


@pytest.mark.parametrize("given", ["2.5", "1e400", "nan", "inf", "0x2", "1e-3"])
def test_a_count_that_is_not_a_whole_number_is_refused_by_name(given):
    (err,) = parse({"gpus": given}).errors
    assert err.key == "gpus" and "integer" in err.accepted


def test_a_custom_card_over_several_cards_says_its_link_is_pcie():
    (note,) = [w for w in parse("card=custom&gpus=2").warnings if w.startswith("card=custom")]
    assert "link_gbs=64 GB/s is PCIe 5.0 x16, not the H100 SXM 80 GB's 450 GB/s NVLink" in note
    assert not [w for w in parse("card=custom&gpus=2&link_gbs=450").warnings if "PCIe 5.0" in w]
    assert not [w for w in parse("card=custom").warnings if "PCIe 5.0" in w]  # one card: no all-reduce


@pytest.mark.parametrize("key, given, listed", [("model", "nonexistent", "models"), ("card", "zzzz", "cards"),
                                                ("api", "qqqq", "apis")])
def test_an_id_near_no_preset_points_to_where_the_ids_are_listed(key, given, listed):
    (err,) = parse({key: given}).errors
    assert f"python -m calc --list {listed}" in err.message and "did you mean" not in err.message


def test_an_empty_rent_is_named_as_falling_back_to_the_card_preset_not_silently():
    """usd_hr= (empty): the card's reference rent stands, and the link is told so (as for any other empty key)."""
    from calc import parse
    p = parse("usd_hr=")
    assert p.scenario.usd_hr == parse("").scenario.usd_hr == 2.5
    assert "key 'usd_hr' is empty: the card preset's figure is used (none where the preset has none)" in p.warnings
    unpriced = parse("card=mi325x&usd_hr=")
    assert unpriced.scenario.usd_hr is None and any("'usd_hr' is empty" in w for w in unpriced.warnings)


def test_a_change_of_engine_keeps_a_card_count_the_new_engine_accepts():
    """llama.cpp's row split of a 70B over 6 cards, then vLLM: vLLM splits the 64 heads over the cards and refuses 6,
    so the change takes the nearest count it accepts, 8 (the next larger: it holds what 6 held), and says why; the
    set-up was falling back to 1 card, which cannot hold it."""
    from calc.scenario import set_aside_by_change
    before = parse("engine=llamacpp-2024&split=row&gpus=6&model=llama-3.1-70b&card=rtx-4090&weights=q4_k_m")
    params = before.scenario.to_params()
    after = parse(with_change(params, "engine", "vllm"))
    assert not after.errors and after.scenario.gpus == 8
    said = {e.key: e.message for e in set_aside_by_change(params, "engine", "vllm")}
    assert "refuses 6 of them for this model; it takes the nearest count it accepts, 8" in said["gpus"]
    # A count the new engine accepts stays; with no larger one the nearest smaller is taken.
    assert with_change({"engine": "llamacpp", "gpus": "4"}, "engine", "vllm")["gpus"] == "4"
    assert with_change({"engine": "llamacpp", "gpus": "63", "model": "llama-3.1-70b"}, "engine", "trtllm")["gpus"] == 64


def test_a_refused_choice_moves_nothing_else():
    """llama.cpp on a Gaudi card is refused: the weights it would have converted to a GGUF type stay as they were
    (they moved to q4_k_m, and the figures were vLLM's on GGUF weights), and nothing is said moved."""
    from calc.scenario import change
    params = parse("card=gaudi-3").scenario.to_params()
    changed, moved = change(params, "engine", "llamacpp")
    after = parse(changed)
    assert [e.key for e in after.errors] == ["engine"] and moved == []
    assert after.scenario.weights == "int4-g128" and after.scenario.engine == "vllm"
    # Accepted, the same change converts them, and says so.
    changed, moved = change(parse("").scenario.to_params(), "engine", "llamacpp")
    assert parse(changed).scenario.weights == "q4_k_m" and [e.key for e in moved] == ["weights"]


def test_a_change_of_card_or_engine_keeps_the_bits_where_it_can():
    """TensorRT-LLM's FP8 on an H100, then an A100 (no FP8 units): the weights move to INT8 (the same bits, weight-only),
    the cache to the default, each said once (the checkpoint's parts are not listed apart); leaving llama.cpp, q8_0
    becomes FP8 where the card has FP8 units and INT8 where it has not, not the 4-bit default."""
    from calc.scenario import change
    params = parse("engine=trtllm&weights=fp8&kv=fp8&compute=fp8").scenario.to_params()
    changed, moved = change(params, "card", "a100-80gb")
    after = parse(changed)
    assert not after.errors and (after.scenario.weights, after.scenario.kv, after.scenario.compute) == \
        ("int8", "fp16", "bf16")
    said = {e.key: e.message for e in moved}
    assert set(said) == {"weights", "kv", "compute"} and "it takes int8 instead" in said["weights"]
    for card, want in (("h100-sxm", "fp8"), ("a100-80gb", "int8")):
        llama = parse(f"engine=llamacpp&weights=q8_0&card={card}").scenario.to_params()
        assert parse(change(llama, "engine", "trtllm")[0]).scenario.weights == want
