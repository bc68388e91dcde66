"""Tests of the preset catalogue (calc.catalogue) and its data files."""

import copy
import csv
import datetime
import json
import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from calc import catalogue as cat

DATA = Path(cat.__file__).resolve().parent / "data"
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

CONTRACT_MODELS = {
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b",
    "mistral-7b-v0.3", "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-7b", "qwen2.5-32b",
    "qwen2.5-72b", "qwen3-8b", "gemma-2-9b", "gemma-2-27b", "phi-3-mini-4k", "deepseek-v3",
    "gpt-oss-20b", "gpt-oss-120b",
    # 2026: quantized releases, Qwen3 (hybrids included), DeepSeek-V3.1, Llama 4, Gemma 3, Mistral Small, Kimi, GLM
    "llama-3.1-405b-fp8", "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-14b", "qwen3-32b", "qwen3-30b-a3b",
    "qwen3-235b-a22b", "qwen3-next-80b-a3b", "qwen3.5-35b-a3b", "deepseek-v3.1", "llama-4-scout",
    "llama-4-maverick", "gemma-3-4b", "gemma-3-12b", "gemma-3-27b", "mistral-small-3.2", "kimi-k2", "glm-4.5",
}
CONTRACT_CARDS = {
    "h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "a100-40gb", "a100-80gb", "a100-80gb-pcie",
    "l40s", "l4", "a10", "rtx-4090", "rtx-6000-ada", "mi300x", "mi325x", "b200", "gb200", "gaudi-3",
    "rtx-5090", "rtx-pro-6000", "h20",
}

# kv_bytes_per_token_bf16 as published in the shared reference table (models.csv there).
KV_BYTES_BF16 = {
    "llama-3.1-8b": 131072, "llama-3.1-70b": 327680, "llama-3.1-405b": 516096,
    "llama-3.2-1b": 32768, "llama-3.2-3b": 114688, "mistral-7b-v0.3": 131072,
    "mixtral-8x7b": 131072, "mixtral-8x22b": 229376, "qwen2.5-7b": 57344,
    "qwen2.5-32b": 262144, "qwen2.5-72b": 327680, "gemma-2-9b": 344064,
    "gemma-2-27b": 376832, "phi-3-mini-4k": 393216, "qwen3-8b": 147456,
    "gpt-oss-20b": 49152, "gpt-oss-120b": 73728, "deepseek-v3": 70272,
}
SHARED_NAMES = {
    "Llama-3.1-8B": "llama-3.1-8b", "Llama-3.1-70B": "llama-3.1-70b",
    "Llama-3.1-405B": "llama-3.1-405b", "Llama-3.2-1B": "llama-3.2-1b",
    "Llama-3.2-3B": "llama-3.2-3b", "Mistral-7B-v0.3": "mistral-7b-v0.3",
    "Mixtral-8x7B": "mixtral-8x7b", "Mixtral-8x22B": "mixtral-8x22b",
    "Qwen2.5-7B": "qwen2.5-7b", "Qwen2.5-32B": "qwen2.5-32b", "Qwen2.5-72B": "qwen2.5-72b",
    "Gemma-2-9B": "gemma-2-9b", "Gemma-2-27B": "gemma-2-27b",
    "Phi-3-mini-4k-instruct": "phi-3-mini-4k", "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
}


def _shared_data_dir():
    """The shared reference data folder beside the repository, when it is present."""
    root = Path(__file__).resolve().parents[1]
    for cand in (root.parent / "shared" / "data", Path("/work/shared/data")):
        if (cand / "models.csv").is_file():
            return cand
    return None


# --------------------------------------------------------------------------- presence


def test_contract_ids_present():
    assert set(cat.models()) == CONTRACT_MODELS
    assert set(cat.cards()) == CONTRACT_CARDS


@pytest.mark.parametrize("table", ["models", "cards"])
def test_every_row_has_source_and_read_on(table):
    rows = getattr(cat, table)()
    for key, row in rows.items():
        assert row["source"].strip(), key
        assert DATE_RE.match(row["read_on"]), (key, row["read_on"])
        datetime.date.fromisoformat(row["read_on"])


def test_every_api_row_has_source_and_read_on():
    for key, row in cat.apis().items():
        assert row["source"].strip(), key
        assert DATE_RE.match(row["read_on"]), key
        assert row["kind"] in ("open-weight", "closed")


# --------------------------------------------------------------------------- cards


def test_h100_sxm_contract_figures():
    c = cat.cards()["h100-sxm"]
    # docs/method.md section 8: the driver's figure (nvidia-smi 81559 MiB), not the "80 GB" of docs/method.md section 1's label.
    assert c["mem_mib"] == 81559 and c["mem_gib"] == 81559 / 1024 == pytest.approx(79.65, abs=0.005)
    assert "80 GB" in c["name"]
    assert c["bw_tbs"] == 3.35
    assert c["peaks"]["bf16"] == 989
    assert c["usd_hr"] == 2.50
    assert "reference preset" in c["usd_hr_source"]
    assert c["link_gbs"] == 450  # NVLink 4: 900 GB/s total both directions


def test_a100_80gb():
    c = cat.cards()["a100-80gb"]
    assert c["mem_mib"] == 81920 and c["mem_gib"] == 80  # the driver shows the full 80 GiB
    assert c["peaks"]["bf16"] == 312
    assert c["bw_tbs"] == pytest.approx(2.04, abs=0.01)


def test_l40s():
    c = cat.cards()["l40s"]
    # docs/method.md section 8: an L40S sold as 48 GB shows 46,068 MiB in nvidia-smi = 44.99 GiB.
    assert c["mem_mib"] == 46068
    assert c["mem_gib"] == 46068 / 1024 == 44.98828125
    assert round(c["mem_gib"], 2) == 44.99
    assert c["name"] == "L40S 48 GB"  # the label stays in the name
    assert "46068" in c["mem_source"] and c["mem_read_on"] == "2026-11-30"
    assert c["bw_tbs"] == 0.864
    assert c["peaks"]["bf16"] == pytest.approx(362, abs=0.1)


def test_no_sparse_peaks():
    cards = cat.cards()
    # Datasheets print these "with sparsity"; the dense figure is half.
    assert cards["h100-sxm"]["peaks"]["bf16"] == 989 != 1979
    assert cards["h100-sxm"]["peaks"]["fp8"] == 1979 != 3958
    assert cards["a100-80gb"]["peaks"]["bf16"] == 312 != 624
    assert cards["l40s"]["peaks"]["bf16"] != 733
    assert cards["l4"]["peaks"]["bf16"] == 121 != 242
    assert cards["h100-nvl"]["peaks"]["bf16"] == 835.5
    # Cross-check: no card's bf16 dense peak exceeds its memory bandwidth by the factor a
    # sparse figure would give on these parts (ops per byte stays below 700).
    for key, c in cards.items():
        assert c["peaks"]["bf16"] / c["bw_tbs"] < 700, key
        fp8 = c["peaks"]["fp8"]
        if fp8 is not None:
            assert fp8 <= 2.05 * c["peaks"]["bf16"], key  # L40S: 733 vs 362.05


def test_ampere_has_no_fp8():
    for key in ("a100-40gb", "a100-80gb", "a100-80gb-pcie", "a10"):
        assert cat.cards()[key]["peaks"]["fp8"] is None, key
        assert "fp8 empty" in cat.cards()[key]["notes"], key


def test_card_fields_types():
    for key, c in cat.cards().items():
        assert set(c["peaks"]) == set(cat.PRECISIONS), key
        for value in c["peaks"].values():
            assert value is None or (isinstance(value, float) and value > 0), key
        assert c["peaks"]["bf16"] is not None
        assert c["link_gbs"] is None or c["link_gbs"] > 0
        if c["link_gbs"] is None:
            assert "unknown" in c["notes"].lower(), key
        assert c["usd_hr"] is None or c["usd_hr"] >= 0
        if c["usd_hr"] is not None:
            assert c["usd_hr_source"] and DATE_RE.match(c["usd_hr_date"]), key
        for prec, value in c["peaks"].items():
            if value is None:
                assert prec in c["notes"], (key, prec)


# Driver-reported totals (MiB) recorded per card, each from a public document (docs/method.md section 8).
DRIVER_MIB = {
    "h100-sxm": 81559, "h100-pcie": 81559, "h100-nvl": 95830, "h200-sxm": 143771, "a100-40gb": 40960,
    "a100-80gb": 81920, "a100-80gb-pcie": 81920, "l40s": 46068, "l4": 23034, "a10": 23028, "rtx-4090": 24564,
    "rtx-6000-ada": 49140, "mi300x": 196592, "mi325x": None, "b200": 183359, "gb200": 189471, "gaudi-3": 131072,
    "rtx-5090": 32607, "rtx-pro-6000": 97887, "h20": 97871,
}


def test_card_memory_is_the_driver_figure_with_its_source():
    cards = cat.cards()
    assert set(DRIVER_MIB) == set(cards)
    for key, c in cards.items():
        assert c["mem_mib"] == DRIVER_MIB[key], key
        assert c["mem_source"].strip() and DATE_RE.match(c["mem_read_on"]), key
        if c["mem_mib"] is None:
            # No driver figure found: the label is used, and the row says so.
            assert cat.LABEL_USED in c["notes"], key
            assert re.search(rf"\b{c['mem_gib']:g} GB\b", c["name"]), key
        else:
            assert c["mem_gib"] == c["mem_mib"] / 1024, key
            assert str(c["mem_mib"]) in c["mem_source"] or key == "mi300x", key
            # The driver never shows more than the label (read as GiB); the label is in the name.
            label = float(re.search(r"(\d+) ?GB", c["name"]).group(1))
            assert c["mem_gib"] <= label, key
    assert "206141652992" in cards["mi300x"]["mem_source"]  # rocm-smi prints bytes: 196592 MiB


def test_memory_text_for_people():
    assert cat.memory_text(cat.cards()["l40s"]) == "44.99 GiB (46,068 MiB)"
    assert cat.memory_text(cat.cards()["mi325x"]) == "256 GiB (label; driver figure not found)"


@pytest.mark.parametrize("edit,match", [
    ({"mem_gib": "48"}, "mem_mib / 1024"),  # a label beside a driver figure
    ({"mem_mib": "", "notes": "no word on memory"}, "label used"),
    ({"mem_source": ""}, "mem_source"),
    ({"mem_read_on": "yesterday"}, "mem_read_on"),
    ({"mem_mib": "46068.5"}, "mem_mib"),
])
def test_broken_card_memory_raises(tmp_path, edit, match):
    def change(rows):
        row = next(r for r in rows if r["id"] == "l40s")
        row.update(edit)
    path = _copy_with(tmp_path, "cards.csv", change)
    with pytest.raises(cat.CatalogueError, match=match):
        cat.load_cards(path)


def test_pcie_link_figures_one_direction():
    cards = cat.cards()
    for key, c in cards.items():
        if c["link_kind"] == "PCIe 4.0 x16":
            assert c["link_gbs"] == 32, key
        if c["link_kind"] == "PCIe 5.0 x16":
            assert c["link_gbs"] == 64, key
    assert cards["a100-80gb"]["link_gbs"] == 300


def test_card_rents_are_cheapest_on_demand_quote():
    frame = cat.cloud_prices()
    kinds = frame["pricing_type"].str.lower()
    on_demand = frame[kinds.str.startswith("on-demand")
                      & ~kinds.str.contains("spot|marketplace|capacity")]
    for key, c in cat.cards().items():
        if key == "h100-sxm":
            continue
        quotes = on_demand.loc[on_demand["card_id"] == key, "usd_per_gpu_hour"].dropna()
        if quotes.empty:
            assert c["usd_hr"] is None, key
        else:
            assert c["usd_hr"] == pytest.approx(quotes.min()), key
    # The reference preset sits below every on-demand H100 SXM quote seen.
    h100 = on_demand.loc[on_demand["card_id"] == "h100-sxm", "usd_per_gpu_hour"]
    assert h100.min() == pytest.approx(2.69)


def test_cloud_prices_frame():
    frame = cat.cloud_prices()
    assert isinstance(frame, pd.DataFrame)
    assert "card_id" in frame.columns
    assert frame["usd_per_gpu_hour"].dtype.kind == "f"
    assert set(frame["card_id"]) - {""} <= set(cat.cards())
    frame.loc[:, "usd_per_gpu_hour"] = -1.0  # a copy: the cache is untouched
    assert (cat.cloud_prices()["usd_per_gpu_hour"].dropna() > 0).all()


# --------------------------------------------------------------------------- models


def test_model_shapes():
    for key, m in cat.models().items():
        for col in ("layers", "heads", "kv_heads", "head_dim", "hidden", "experts",
                    "experts_active", "kv_latent", "window", "window_layers", "max_ctx"):
            assert isinstance(m[col], int), (key, col)
        assert 0 < m["active_b"] <= m["params_b"]
        assert m["kv_heads"] <= m["heads"]
        assert 0 <= m["embed_b"] < m["active_b"]


def test_embed_and_special_fields():
    ms = cat.models()
    assert ms["llama-3.1-8b"]["embed_b"] == pytest.approx(128256 * 4096 / 1e9)
    assert ms["llama-3.2-1b"]["embed_b"] == 0  # tied
    assert ms["gemma-2-9b"]["embed_b"] == 0  # tied
    ds = ms["deepseek-v3"]
    assert (ds["kv_latent"], ds["heads"], ds["kv_heads"], ds["head_dim"]) == (576, 128, 128, 128)
    assert (ds["experts"], ds["experts_active"]) == (256, 8)
    assert (ms["gemma-2-9b"]["window"], ms["gemma-2-9b"]["window_layers"]) == (4096, 21)
    assert (ms["gemma-2-27b"]["window"], ms["gemma-2-27b"]["window_layers"]) == (4096, 23)
    assert (ms["gpt-oss-120b"]["window"], ms["gpt-oss-120b"]["window_layers"]) == (128, 18)
    assert (ms["gpt-oss-20b"]["window"], ms["gpt-oss-20b"]["window_layers"]) == (128, 12)
    assert (ms["phi-3-mini-4k"]["window"], ms["phi-3-mini-4k"]["window_layers"]) == (2047, 32)
    assert ms["llama-3.1-70b"]["window"] == 0


def test_every_api_ref_resolves():
    apis = cat.apis()
    for key, m in cat.models().items():
        assert m["api_ref"] in apis, key
        assert apis[m["api_ref"]]["kind"] == "open-weight", key


def _kv_bytes_16bit(m):
    if m["kv_latent"]:
        return m["layers"] * m["kv_latent"] * 2
    return 2 * m["layers"] * m["kv_heads"] * m["head_dim"] * 2


def test_kv_bytes_per_token_matches_reference():
    ms = cat.models()
    for key, expected in KV_BYTES_BF16.items():
        assert _kv_bytes_16bit(ms[key]) == expected, key
    assert _kv_bytes_16bit(ms["deepseek-v3"]) == 61 * 576 * 2 == 70272


def test_kv_bytes_against_shared_file_when_present():
    shared = _shared_data_dir()
    if shared is None:
        pytest.skip("shared reference data not beside the repository")
    ms = cat.models()
    with open(shared / "models.csv", newline="") as f:
        for row in csv.DictReader(f):
            key = SHARED_NAMES.get(row["name"])
            if key is None:
                continue
            assert _kv_bytes_16bit(ms[key]) == int(row["kv_bytes_per_token_bf16"]), key


# --------------------------------------------------------------------------- API prices


def test_flagged_rows_rejected():
    apis = cat.apis()
    rejected = dict(cat.rejected_apis())
    for key in ("wandb/meta-llama/llama-3.3-70b-instruct", "wandb/openai/gpt-oss-120b",
                "ollama/llama3.1", "ollama/gpt-oss:20b-cloud",
                "vertex_ai/meta/llama-3.1-70b-instruct-maas", "deepseek-v3-2-251201"):
        assert key not in apis, key
        assert rejected.get(key), key
    with open(DATA / "api_prices.csv", newline="") as f:
        flagged = {r["id"] for r in csv.DictReader(f) if r["flag"].strip()}
    assert flagged and flagged <= set(rejected)
    for row in apis.values():
        for col in ("api_in", "api_out"):
            assert cat.API_PRICE_MIN <= row[col] <= cat.API_PRICE_MAX


def _price_file(tmp_path, rows):
    path = tmp_path / "prices.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cat.API_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


def _row(key, api_in, api_out, flag=""):
    return dict(id=key, provider="together_ai", model=key, family="llama-3/3.1-70b",
                kind="open-weight", api_in=api_in, api_out=api_out, source="test",
                read_on="2026-07-24", flag=flag)


def test_thousand_times_too_high_price_refused(tmp_path, caplog):
    path = _price_file(tmp_path, [_row("good/llama-70b", 0.88, 0.88),
                                  _row("bad/llama-70b", 880, 880)])
    with caplog.at_level(logging.INFO, logger="calc.catalogue"):
        accepted, rejected = cat.load_api_prices(path)
    assert set(accepted) == {"good/llama-70b"}
    assert accepted["good/llama-70b"]["api_in"] == 0.88
    reasons = dict(rejected)
    assert "bad/llama-70b" in reasons
    assert "outside" in reasons["bad/llama-70b"] and "880" in reasons["bad/llama-70b"]
    assert any("bad/llama-70b" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)


def test_zero_and_flagged_rows_refused(tmp_path, caplog):
    path = _price_file(tmp_path, [_row("ok/a", 0.2, 0.6), _row("zero/b", 0, 0),
                                  _row("flag/c", 0.2, 0.6, flag="do not use"),
                                  _row("cheap/d", 0.001, 0.6)])
    with caplog.at_level(logging.INFO, logger="calc.catalogue"):
        accepted, rejected = cat.load_api_prices(path)
    assert set(accepted) == {"ok/a"}
    reasons = dict(rejected)
    assert "placeholder" in reasons["zero/b"]
    assert "do not use" in reasons["flag/c"]
    assert "outside" in reasons["cheap/d"]
    assert len(caplog.records) == 3


def test_broken_price_file_raises(tmp_path):
    path = _price_file(tmp_path, [_row("ok/a", "abc", 0.6)])
    with pytest.raises(cat.CatalogueError, match="api_in"):
        cat.load_api_prices(path)
    path = _price_file(tmp_path, [_row("dup/a", 0.1, 0.2), _row("dup/a", 0.1, 0.2)])
    with pytest.raises(cat.CatalogueError, match="duplicate"):
        cat.load_api_prices(path)


# --------------------------------------------------------------------------- broken files


def _copy_with(tmp_path, name, edit):
    with open(DATA / name, newline="") as f:
        rows = list(csv.DictReader(f))
        cols = list(rows[0])
    edit(rows)
    path = tmp_path / name
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    return path


def test_shipped_files_load_clean():
    assert cat.load_models(DATA / "models.csv", cat.apis())
    assert cat.load_cards(DATA / "cards.csv")


@pytest.mark.parametrize(
    "column,value,match",
    [("kv_heads", "128", "kv_heads"), ("api_ref", "nowhere/model", "api_ref"),
     ("layers", "0", "layers"), ("params_b", "-1", "params_b"), ("read_on", "", "read_on"),
     ("source", "", "source"), ("heads", "8.5", "heads")],
)
def test_broken_model_file_raises(tmp_path, column, value, match):
    def edit(rows):
        rows[0][column] = value
    path = _copy_with(tmp_path, "models.csv", edit)
    with pytest.raises(cat.CatalogueError, match=match):
        cat.load_models(path, cat.apis())


@pytest.mark.parametrize(
    "column,value,match",
    [("mem_gib", "0", "mem_gib"), ("bf16_tflops", "", "bf16"), ("fp8_tflops", "x", "fp8"),
     ("usd_hr_date", "", "usd_hr_date"), ("read_on", "29/11/2026", "read_on")],
)
def test_broken_card_file_raises(tmp_path, column, value, match):
    def edit(rows):
        rows[0][column] = value
    path = _copy_with(tmp_path, "cards.csv", edit)
    with pytest.raises(cat.CatalogueError, match=match):
        cat.load_cards(path)


# --------------------------------------------------------------------------- cache safety


def test_cached_tables_are_read_only():
    ms, cs, aps = cat.models(), cat.cards(), cat.apis()
    with pytest.raises(TypeError):
        ms["x"] = {}
    with pytest.raises(TypeError):
        ms["llama-3.1-70b"]["layers"] = 1
    with pytest.raises(TypeError):
        cs["h100-sxm"]["peaks"]["bf16"] = 1979
    with pytest.raises(TypeError):
        aps[next(iter(aps))].update(api_in=0)
    assert cat.models() is ms and cat.cards() is cs
    assert cat.cards()["h100-sxm"]["peaks"]["bf16"] == 989
    assert cat.models()["llama-3.1-70b"]["layers"] == 80


def test_rows_copy_and_serialise():
    row = dict(cat.cards()["h100-sxm"])
    row["mem_gib"] = 1
    assert cat.cards()["h100-sxm"]["mem_gib"] == 81559 / 1024
    assert json.loads(json.dumps(cat.models()["llama-3.1-8b"]))["layers"] == 32
    deep = copy.deepcopy(cat.cards()["a100-80gb"])
    assert deep == cat.cards()["a100-80gb"]
    assert isinstance(cat.models()["llama-3.1-8b"], dict)


def test_every_source_is_an_address_anyone_can_open():
    """No catalogue row cites a search index's internal id instead of a public address."""
    import csv
    from pathlib import Path
    data = Path(__file__).resolve().parent.parent / "calc" / "data"
    for name in ("models.csv", "cards.csv", "cloud_prices.csv", "api_prices.csv", "measurements.csv"):
        with (data / name).open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                for col, text in row.items():
                    assert "index id" not in (text or "").lower(), (name, col, text[:80])


def test_one_price_for_many_model_families_is_a_placeholder(tmp_path):
    """The 2026-07-24 list gives hyperbolic 0.12 / 0.30 USD per 1M for every model from Llama 3.2 3B to Llama 3.1
    405B; as a cheaper row it called the API for a 405B model at 12,600 USD a month. One provider's one price for
    PLACEHOLDER_FAMILIES or more open-weight families is refused; for fewer, kept."""
    rows = [{**_row(f"p/m{i}", 0.12, 0.3), "provider": "p", "family": f"fam-{i}"} for i in range(4)]
    rows += [{**_row(f"q/m{i}", 0.12, 0.3), "provider": "q", "family": f"fam-{i}"} for i in range(3)]
    rows += [{**_row("p/other", 0.5, 0.9), "provider": "p", "family": "fam-9"}]
    accepted, rejected = cat.load_api_prices(_price_file(tmp_path, rows))
    assert set(accepted) == {"q/m0", "q/m1", "q/m2", "p/other"}
    assert dict(rejected)["p/m0"].startswith("p lists one price, 0.12 / 0.3 USD per 1M, for 4 model families")
    shipped = dict(cat.rejected_apis())
    assert "placeholder copied across its rows" in shipped["hyperbolic/meta-llama/meta-llama-3.1-405b-instruct"]
    assert not any(k.startswith("hyperbolic/meta-llama") for k in cat.apis())
    assert "hyperbolic/deepseek-ai/deepseek-v3" in cat.apis()  # its own price, kept
