"""Every reference table of docs/worked-examples.md (the seed notes' worked numbers), reproduced by calc.report.

The tables are the roofline of docs/method.md, so every link here names ``engine=roofline`` (docs/method.md section 8:
every table of section 4 holds under it; the default engine has its own, measured figures).
"""

import pytest

from calc import report

SEED_70B = "engine=roofline&model=custom&params_b=70&layers=80&heads=64&kv_heads=8&head_dim=128&attn=0&eff=0.7&overhead_gib=4&usd_hr=2.5"
H100 = "card=custom&mem_gib=80&bw_tbs=3.35&tflops=989"


def near(value, expected, places):
    """True when ``value`` printed to ``places`` decimals can read as ``expected`` (half-unit tolerance)."""
    return abs(value - expected) <= 0.5 * 10 ** -places + 1e-9


@pytest.mark.parametrize("card, be16, be4", [("h100-sxm", 295, 74), ("a100-80gb", 153, 38), ("l40s", 419, 105)])
def test_break_even_batch_by_card(card, be16, be4):
    for bits, expected in ((16, be16), (4, be4)):
        r = report(f"{SEED_70B}&card={card}&weights={bits}")
        assert round(r["break_even_batch"]) == expected


def test_kv_cache_per_token_and_per_sequence():
    r = report(f"{SEED_70B}&{H100}&weights=4&ctx=8192")
    assert r["kv_bytes_per_token"] == 320 * 1024
    assert near(r["kv_gib_per_sequence"], 2.50, 2)


@pytest.mark.parametrize("bits, fits", [(16, (0, 0, 0)), (8, (17, 4, 1)), (4, (69, 17, 4))])
def test_sequences_that_fit_on_80_gib(bits, fits):
    got = tuple(report(f"{SEED_70B}&{H100}&weights={bits}&ctx={n}")["max_batch"] for n in (2048, 8192, 32768))
    assert got == fits
    assert report(f"{SEED_70B}&{H100}&weights={bits}")["fits"] is (bits != 16)


H100_BY_BATCH = [  # batch, step ms, tok/s, USD per 1M at duty 1
    (1, 14.93, 67, 10.365), (4, 14.93, 268, 2.591), (16, 14.93, 1072, 0.648), (17, 14.93, 1139, 0.610),
    (64, 14.93, 4288, 0.162), (74, 14.96, 4945, 0.140), (256, 51.77, 4945, 0.140),
]


@pytest.mark.parametrize("batch, step_ms, tok_s, usd", H100_BY_BATCH)
def test_h100_4bit_by_batch(batch, step_ms, tok_s, usd):
    r = report(f"{SEED_70B}&{H100}&weights=4&batch={batch}&duty=1&upkeep=0")
    assert near(r["step_ms"], step_ms, 2)
    assert near(r["tok_s"], tok_s, 0)
    assert near(r["usd_per_mtok_rent"], usd, 3)
    assert r["usd_per_mtok"] == r["usd_per_mtok_rent"]  # no upkeep


@pytest.mark.parametrize("batch, row", [(1, (103.65, 34.55, 17.27, 10.36)), (17, (6.10, 2.03, 1.02, 0.61)),
                                        (74, (1.40, 0.47, 0.23, 0.14))])
def test_rent_per_million_by_duty(batch, row):
    for duty, expected in zip((0.1, 0.3, 0.6, 1.0), row, strict=True):
        r = report(f"{SEED_70B}&{H100}&weights=4&batch={batch}&duty={duty}")
        assert near(r["usd_per_mtok_rent"], expected, 2), (duty, r["usd_per_mtok_rent"])


def test_monthly_rent_and_upkeep():
    assert report(f"{SEED_70B}&{H100}&upkeep=0")["monthly_usd"] == pytest.approx(1800)
    assert report(f"{SEED_70B}&{H100}&upkeep=4000")["monthly_usd"] == pytest.approx(5800)


@pytest.mark.parametrize("wbits, kvbits, batch, weights_gib, cache_gib, total_gib, fits", [
    (16, 16, 16, 14.9, 16.0, 30.9, False), (8, 16, 16, 7.5, 16.0, 23.5, True), (4, 16, 16, 3.7, 16.0, 19.7, True),
    (4, 8, 16, 3.7, 8.0, 11.7, True), (4, 8, 32, 3.7, 16.0, 19.7, True),
])
def test_8b_on_a_24_gib_card(wbits, kvbits, batch, weights_gib, cache_gib, total_gib, fits):
    r = report(f"engine=roofline&model=custom&params_b=8&layers=32&heads=32&kv_heads=8&head_dim=128&card=custom&mem_gib=24"
               f"&overhead_gib=0&ctx=8192&weights={wbits}&kv={kvbits}&batch={batch}")
    cache = batch * r["kv_gib_per_sequence"]
    assert near(r["weights_gib"], weights_gib, 1)
    assert near(cache, cache_gib, 1)
    assert near(r["weights_gib"] + cache, total_gib, 1)
    assert (r["max_batch"] >= batch) is fits


@pytest.mark.parametrize("bits, ms", [(16, 8.0), (4, 2.0)])
def test_single_stream_floor(bits, ms):
    r = report(f"engine=roofline&model=custom&params_b=8&layers=32&heads=32&kv_heads=8&head_dim=128&card=custom&bw_tbs=2"
               f"&tflops=1000&eff=1&attn=0&batch=1&weights={bits}")
    assert r["step_ms"] == pytest.approx(ms, rel=1e-12)


def test_seed_case_memory_caps_the_batch():
    # the seed notes' duty is 30 %; from SPEC v3 the duty follows the traffic unless the link gives it
    r = report(f"{SEED_70B}&{H100}&weights=4&ctx=8192&batch=auto&duty=0.3")
    assert r["max_batch"] == 17 and round(r["break_even_batch"]) == 74
    assert r["memory_caps_batch"] is True and r["batch"] == 17
    assert near(r["step_ms"], 14.93, 2)
    assert near(r["usd_per_mtok_rent"], 2.03, 2)
