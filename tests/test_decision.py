"""The Decision page and the decision memo: the verdict in words, what flips it, and one memo for page and CLI."""

import math
import re
import subprocess
import sys
from pathlib import Path
from typing import ClassVar
from unittest import mock
from urllib.parse import urlencode

import numpy as np
import pytest
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from apptest import draw, open_app, texts
from calc import evaluate, parse, report, tables, traffic, words
from calc import memo as dm
from calc.memo import memo, verdict_sentence

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PAGE = "pages/decision.py"

SELF_HOST = {"model": "llama-3.1-8b", "card": "l40s", "req_day": "3000000", "usd_hr": "0.79", "upkeep": "1000"}
NO_FIT = {"model": "llama-3.1-405b", "weights": "bf16"}
SLOW = {"tpot_ms": "0.5"}
UNPRICED = {"card": "mi300x"}


class _Storage(MemoryMediaFileStorage):
    """The media store AppTest creates for each run, recorded so a test can read a download button's bytes."""

    made: ClassVar[list] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _Storage.made.append(self)


def memo_of(files: dict) -> bytes | None:
    """The memo among a page's downloads: named for the model and the volume (decision-memo-<model>-<n>-a-day.md)."""
    found = [v for k, v in files.items() if k.startswith("decision-memo-") and k.endswith("-a-day.md")]
    return found[0] if len(found) == 1 else None


def open_decision(params=None):
    """Run the app on a link, switch to the Decision page; returns (app, {file name: bytes} of its downloads)."""
    with mock.patch.object(app_test_module, "MemoryMediaFileStorage", _Storage):
        at = AppTest.from_file(APP, default_timeout=60)
        for k, v in (params or {}).items():
            at.query_params[k] = v
        draw(at, PAGE)
    store = _Storage.made[-1]
    files = {}
    for button in at.get("download_button"):
        f = store.get_file(button.proto.url.rsplit("/", 1)[1])
        files[f.filename] = f.content
    return at, files


def link_of(at):
    """The query string the app holds after the run (every key, as the address bar shows it)."""
    return urlencode({k: at.query_params[k] for k in at.query_params})


def cli_memo(link):
    out = subprocess.run([sys.executable, "-m", "calc", "--memo", link], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.endswith("\n")
    return out.stdout[:-1]  # print() adds one newline


# ---------------------------------------------------------------- the page


def test_page_runs_clean_on_defaults_and_names_both_totals():
    at, files = open_decision()
    assert not at.exception
    assert not at.error
    verdict = texts(at.info)
    assert ("343" in verdict or "340" in verdict) and "5,800" in verdict
    assert "326,000" in verdict and "1 H100 SXM 80 GB card" in verdict
    assert at.query_params["model"] == "llama-3.1-70b"
    assert "decision-memo-llama-3.1-70b-10000-a-day.md" in files  # named for its scenario
    assert {"decision-cost-by-volume.csv", "decision-capacity.csv", "decision-cost-per-million.csv"} <= set(files)


def test_page_where_self_hosting_wins():
    # A quoted API price typed in the link (0.20 USD per 1M each way): no catalogue row stands in for it.
    at, _ = open_decision({**SELF_HOST, "api_in": "0.2", "api_out": "0.2"})
    assert not at.exception
    verdict = texts(at.info)
    # Under the default engine (vLLM's profile, fitted and cross-validated by source) 17 cards carry the busiest hour.
    # Renting beats the API, and buying the same cards beats renting: the headline is what to do, buy them.
    assert verdict.startswith("**Buy the cards.** Self-hosting is cheaper") and "17 L40S 48 GB cards" in verdict
    # API: 3e6 requests x 30 days x (1000 + 300 tokens) x 0.2 USD per 1M = 23,400 USD.
    assert "10,670 USD a month" in verdict and "23,400 USD a month" in verdict
    assert ("self-hosting costs 8,963 USD to 12,376 USD a month. Renting stays cheaper than the API across that "
            "range.") in verdict  # the answer is buying: this range weighs renting
    assert "A cheaper API" not in texts(at.warning)
    assert at.query_params["req_day"] == "3000000"


def test_a_self_host_win_over_the_linked_row_is_not_a_win_over_the_cheapest_row():
    """Against the preset's API row (0.18 / 0.18 USD) self-hosting is cheaper, but the catalogue's cheapest row
    for the same model (deepinfra, 0.02 / 0.03 USD) bills a quarter of self-hosting: the headline is the API's."""
    at, _ = open_decision(SELF_HOST)
    assert not at.exception
    verdict = texts(at.info)
    # The row the answer rests on first, then what the link's row would have said.
    assert verdict.startswith("**Call the API, at the cheaper provider below.** The catalogue's cheapest row for this "
                              "model, deepinfra"), verdict
    assert "at that row the API is the cheaper way to serve this model. At the API row priced in the link, " \
           "self-hosting is cheaper" in verdict
    # deepinfra: 3e6 x 30 x (1000 x 0.02 + 300 x 0.03) / 1e6 = 2,610 USD, against 10,670 to self-host.
    assert "would bill 2,610 USD a month, less than self-hosting's 10,670 USD" in verdict
    callout = texts(at.warning)
    assert "deepinfra" in callout and "At that price the API is cheaper than self-hosting." in callout


def test_page_where_the_model_does_not_fit():
    at, files = open_decision(NO_FIT)
    assert not at.exception
    shown = texts(at.error)
    # 756 GiB of weights as loaded, the activation peak of the 2025 releases' sampler profile (1024 rows x 128,256
    # logits x 38 bytes, 4.54 GiB: the link names no release, so the family that leaves less) and 0.2 GiB outside
    # PyTorch's allocator
    assert "do not fit" in shown and "760.8 GiB" in shown
    assert "1,365 USD a month" in shown  # the API total is still given
    assert memo_of(files) is not None


def test_a_context_beyond_the_trained_one_is_not_told_to_add_memory():
    """ctx=200,000 on Llama 3.1 70B: no sequence of it fits, and more memory would not help, since the model was
    trained for 131,072 tokens: the page says so instead of advising more memory."""
    at, _ = open_decision({"ctx": "200000"})
    assert not at.exception
    shown = texts(at.error)
    assert "No sequence of 200,000 tokens fits" in shown
    assert "the model was not trained for it" in shown and "or add memory" not in shown
    assert "beyond Llama 3.1 70B's trained context of 131,072 tokens" in texts(at.caption)  # said once, in the notes
    # A context the model takes keeps the advice.
    at, _ = open_decision({"ctx": "100000", "model": "llama-3.1-405b", "weights": "fp8", "gpus": "8",
                           "card": "a100-80gb"})
    short = texts(at.error)
    assert "No sequence of 100,000 tokens fits" not in short or "or add memory" in short


def test_page_with_an_unmeetable_latency_target():
    at, _ = open_decision(SLOW)
    assert not at.exception
    shown = texts(at.error)
    assert "0.5 ms per output token cannot be met" in shown
    assert "cannot be met" in texts(at.info)  # the verdict says it too
    assert at.query_params["tpot_ms"] == "0.5"


def test_page_on_an_unpriced_card_asks_for_a_rent():
    at, files = open_decision(UNPRICED)
    assert not at.exception
    # Upkeep alone (4,000 USD) is above the API's 343 USD: no rent would change the answer, and the page says so,
    # as a decided answer (no rent is asked for).
    shown = texts(at.info)
    assert "Call the API (no rent would change it)" in shown and "343 USD a month" in shown
    assert "usd_hr" not in at.query_params  # no price invented
    assert memo_of(files) is not None
    # The command line's answer is the page's (it was null beside "Call the API" on the page and in the memo).
    link = "&".join(f"{k}={v}" for k, v in UNPRICED.items())
    assert (report(link)["verdict"], report(link)["recommendation"]) == (None, "api")
    assert report(link + "&upkeep=100")["recommendation"] == "no rent"  # a rent would decide: none is invented
    at, _ = open_decision({**UNPRICED, "upkeep": "100"})
    shown = texts(at.warning)
    assert "Enter a rent to decide" in shown and "usd_hr" in shown and "below about 0.34 USD per card-hour" in shown


@pytest.mark.parametrize("params", [{}, SELF_HOST, NO_FIT, SLOW, UNPRICED], ids=["defaults", "self-host", "no-fit",
                                                                                "latency", "unpriced"])
def test_memo_from_the_page_equals_calc_and_cli(params):
    at, files = open_decision(params)
    link = link_of(at)
    downloaded = memo_of(files).decode()
    assert downloaded == memo(parse(link))
    assert downloaded == cli_memo(link)
    # The link written in the memo opens the same scenario.
    written = re.search(r"^<(http[^>]+)>$", downloaded, re.M).group(1)
    assert "/decision?" in written
    assert parse(written).scenario.to_query() == parse(link).scenario.to_query()


def test_ticked_reasons_are_kept_in_the_link_and_the_memo():
    at, files = open_decision()
    boxes = [b for b in at.checkbox if str(b.key).startswith("_why_")]
    assert len(boxes) == len(dm.REASONS)
    assert "- [x]" not in memo_of(files).decode()
    boxes[2].check().run()
    assert not at.exception
    assert at.query_params["why"] == "latency"
    assert "1 ticked" in texts(at.caption)
    text = memo(parse(link_of(at)))
    assert f"- [x] {dm.REASONS[2][1]}" in text and f"- [ ] {dm.REASONS[0][1]}" in text
    # The link reopens with the box ticked.
    again = open_app({"why": "latency,residency"}, "pages/decision.py")
    ticked = {str(b.key) for b in again.checkbox if str(b.key).startswith("_why_") and b.value}
    assert ticked == {"_why_latency", "_why_residency"}


# ---------------------------------------------------------------- the sentence and the memo


def sentence(link=""):
    p = parse(link)
    return verdict_sentence(evaluate(p).decision)


# ---------------------------------------------------------------- what flips it (calc.traffic additions)


@pytest.mark.parametrize("link", ["", "model=llama-3.1-8b&card=l40s&usd_hr=0.79&upkeep=1000", "gpus=2", "upkeep=0",
                                  "peak=1&upkeep=100000", "usd_hr=0"])
def test_break_even_and_stays_cheaper_against_a_dense_sweep(link):
    s = parse(link).scenario
    cap = traffic.capacity(s)
    first, stays = traffic.break_even_req_day(s, cap), traffic.stays_cheaper_req_day(s, cap)
    assert first is not None and stays >= first
    x = np.geomspace(first / 100, stays * 100, 200_001)
    c = traffic.monthly_costs(s, x, cap)
    cheaper = c["self_host_usd_month"] < c["api_usd_month"]
    assert cheaper[x > stays * (1 + 1e-9)].all()
    assert not cheaper[x < first * (1 - 1e-9)].any()
    assert x[cheaper].min() == pytest.approx(first, rel=1e-4)
    assert x[~cheaper].max() == pytest.approx(stays, rel=1e-4)


def test_price_to_flip_makes_both_options_equal():
    s = parse(SELF_HOST).scenario
    p = traffic.price_to_flip(s)
    flipped = report({**SELF_HOST, "usd_hr": repr(p)})
    assert flipped["self_host_usd_month"] == pytest.approx(flipped["api_usd_month"], rel=1e-9)


def test_the_flip_tiles_say_which_row_they_weigh_when_a_cheaper_api_row_heads_the_page():
    """The page heads with "Call the API, at the cheaper provider below" while the tiles weigh renting against the
    link's own API row (self-hosting wins against it): a caption says so, with that row's bill."""
    at, _ = open_decision(SELF_HOST)
    assert not at.exception
    r = report(SELF_HOST)
    assert r["recommendation"] == "api-cheaper-row"
    assert (f"Against the API row priced in the link ({words.money(r['api_usd_month'])} a month), the verdict these "
            "tiles flip is renting against that row") in texts(at.caption)
    assert "the verdict these tiles flip" not in texts(open_decision()[0].caption)


def test_the_report_carries_the_memos_volumes_and_rent_that_flip_the_verdict():
    """The command line gives the memo's two other answers, the figures the Decision page reads: where self-hosting
    stays cheaper and the rent that flips the verdict, each worked out from the scenario by hand here."""
    r = report(SELF_HOST)
    s = parse(SELF_HOST).scenario
    d = evaluate(parse(SELF_HOST)).decision
    assert r["rent_to_flip_usd_hr"] == d.price_to_flip == pytest.approx(
        (r["api_usd_month"] - s.upkeep) / (r["replicas"] * s.gpus * s.hours))
    assert r["stays_cheaper_req_day"] == d.stays_cheaper >= r["break_even_req_day"]
    text = memo(parse(SELF_HOST))
    assert f"{r['rent_to_flip_usd_hr']:,.2f} USD per card-hour" in text
    # Upkeep alone above the API bill: no rent flips it, on the command line as in the memo.
    default = report("")
    assert default["rent_to_flip_usd_hr"] is None and default["scenario"]["upkeep"] > default["api_usd_month"]


def test_each_page_flags_memory_for_its_own_figures():
    def memory_flag(at):
        return texts([w for w in at.warning if "Memory caps the batch" in w.value])

    long = {"in_tok": "1500", "out_tok": "300"}  # at the default 1,300 tokens compute binds first (batch 67 of 71)
    flag = memory_flag(open_app({**long, "ctx": "32768"}, "pages/decision.py"))
    assert "at 1,800 tokens per request (prompt + output)" in flag and "32,768" not in flag
    fit = open_app({**long, "ctx": "32768"}, "pages/fit.py")
    assert "at 32,768 tokens" in memory_flag(fit)
    # Context changes the Fit page's flag, not the Decision page's.
    assert memory_flag(open_app({**long, "ctx": "4096"}, "pages/decision.py")) == flag


def test_the_verdict_says_the_assumptions_that_favour_self_hosting():
    text = sentence("model=llama-3.1-8b&card=l40s&weights=fp8&usd_hr=1")
    assert "Priced with fp8 weights (8 bits)" in text and "1.00 USD per card-hour, within the range of the on-demand quotes" in text
    assert "above every on-demand quote" in sentence("usd_hr=20")
    assert "no on-demand quote for this card" in sentence("card=mi300x&usd_hr=3")


def test_the_cheapest_api_row_for_the_model_is_shown_up_front_with_a_link_that_compares_it():
    from urllib.parse import urlsplit
    # Cards bought one by one (buy_lot=1): bought by the 8-card board, buying would not beat the link's row.
    at, _ = open_decision({"model": "llama-3.1-70b", "req_day": "200000", "in_tok": "1500", "out_tok": "300",
                           "buy_lot": "1"})
    callout = next(w.value for w in at.warning if "A cheaper API for this model" in w.value)
    assert "would bill 1,404 USD a month, against 9,504 USD" in callout
    # Buying (8,738 USD) beats the row priced here, and that cheaper row beats buying: the API's, said up front.
    assert "At that price the API is cheaper than self-hosting." in callout
    link = callout.split("](", 1)[1].rstrip(")")
    other = report(urlsplit(link).query)
    assert other["scenario"]["api"] == "deepinfra/meta-llama/meta-llama-3.1-70b-instruct-turbo"
    assert other["api_usd_month"] == pytest.approx(1404) and other["verdict"] == "api"


def test_the_page_draws_the_service_life_and_the_day():
    at, _ = open_decision({"model": "llama-3.1-70b", "gpus": "8", "weights": "fp8", "req_day": "1000000",
                               "profile": "evening", "api_in": "1.2", "api_out": "1.2"})
    assert not at.exception
    md = texts(at.markdown)
    assert "Cash paid over the 4-year service life" in md and "The day hour by hour" in md
    assert len(at.get("vega_lite_chart")) >= 3  # cost by volume, cash over the life, the day
    assert "the rest (orange) going to the API" in texts(at.caption)
    # Without a profile there are no hours to draw.
    at, _ = open_decision({})
    assert "The day hour by hour" not in texts(at.markdown)


def test_the_24_hour_editor_writes_the_profile_into_the_link():
    at, _ = open_decision({"model": "llama-3.1-70b", "gpus": "8", "weights": "fp8", "req_day": "1000000",
                           "profile": "office", "api_in": "1.2", "api_out": "1.2"})
    hours = [at.number_input(key=f"_hour_{h}") for h in range(24)]
    assert [h.value for h in hours[:10]] == [0.1] * 7 + [0.3, 0.8, 1.0]  # the office shape, hour 0 first
    hours[20].set_value(1.0).run()
    assert not at.exception
    office = [0.1] * 7 + [0.3, 0.8, 1, 1, 1, 0.8, 1, 1, 1, 1, 0.7, 0.4, 0.2, 1, 0.1, 0.1, 0.1]
    assert at.query_params["profile"] == ",".join(f"{w:g}" for w in office)
    assert at.text_input(key="profile").value == at.query_params["profile"]
    # The same link, opened afresh, holds the same hours and prices the same options.
    again = open_app(dict(at.query_params), "pages/decision.py")
    assert [again.number_input(key=f"_hour_{h}").value for h in range(24)] == pytest.approx(office)
    assert texts(again.info) == texts(at.info)
    # Every hour at 0 is refused by name, and the page keeps working.
    for h in range(24):
        at.number_input(key=f"_hour_{h}").set_value(0.0)
    at.run()
    assert not at.exception and "profile" in texts(at.error)


def test_the_24_hours_survive_other_changes_and_runs_that_do_not_draw_them():
    """A change elsewhere (here the volume, then the model) keeps the day's weights in the editor; editing one hour
    then changes that hour only."""
    at, _ = open_decision({"profile": "office"})
    at.select_slider(key="req_day").set_value(100000).run()
    at.selectbox(key="model").set_value("llama-3.1-8b").run()
    assert not at.exception
    office = [0.1] * 7 + [0.3, 0.8, 1, 1, 1, 0.8, 1, 1, 1, 1, 0.7, 0.4, 0.2, 0.2, 0.1, 0.1, 0.1]
    assert [at.number_input(key=f"_hour_{h}").value for h in range(24)] == pytest.approx(office)
    at.number_input(key="_hour_14").set_value(5.0).run()
    office[14] = 5
    assert at.query_params["profile"] == ",".join(f"{w:g}" for w in office)
    assert "Set by the day's profile" in texts(at.caption)


def test_the_command_line_gives_the_answer_the_page_and_memo_give():
    """Where the catalogue's cheapest row for the model beats self-hosting while the row priced does not, the
    report says so beside its verdict (the contract's comparison with the row priced), and every sentence that
    compares with the row priced says which row it is."""
    link = "model=mixtral-8x7b&card=a100-80gb&gpus=2&req_day=500000&engine=trtllm"
    r = report(link)
    assert r["verdict"] == "self-host" and r["recommendation"] == "api-cheaper-row"
    assert r["cheaper_api"] == "perplexity/mixtral-8x7b-instruct" and r["cheaper_api_usd_month"] < r["self_host_usd_month"]
    text = memo(parse(link))
    assert "**Call the API, at the cheaper provider below.**" in text
    assert "The verdict holds across that range" not in text and "Against the link's API row (13,650 USD)" in text
    assert "Against the API row priced in the link (13,650 USD a month), the API becomes cheaper above" in text
    assert "Against the API row in the link alone (13,650 USD a month), the cheapest way to serve this traffic" in text
    # Where no cheaper row beats self-hosting the answer is the verdict.
    assert report("")["recommendation"] == report("")["verdict"] == "api"


def test_the_headline_is_the_cheapest_way_when_buying_beats_the_api_that_beats_renting():
    """SPEC section 6's verdict is renting against the API; a reader told "call the API" while buying is cheaper
    is told the wrong thing, so the headline and the report's recommendation name the cheapest way (section 9)."""
    link = ("model=llama-3.1-70b&card=h100-sxm&gpus=2&weights=fp8&usd_hr=3.1&req_day=300000&in_tok=2000&out_tok=500"
            "&api_in=0.88&api_out=0.88&api_cached=0.88")
    r = report(link)
    assert (r["verdict"], r["best"]) == ("api", "own")
    assert r["own_usd_month"] < r["api_usd_month"] < r["self_host_usd_month"]
    # The catalogue's cheapest row for the model bills less than buying: that is the answer.
    assert r["cheaper_api_usd_month"] < r["own_usd_month"] and r["recommendation"] == "api-cheaper-row"
    # At a quoted API price (typed in the link, so no catalogue row stands in for it), buying is the answer.
    quoted = link.replace("api_in=0.88&api_out=0.88&api_cached=0.88", "api_in=0.9&api_out=0.9&api_cached=0.9")
    r = report(quoted)
    assert (r["verdict"], r["best"], r["cheaper_api"], r["recommendation"]) == ("api", "own", None, "own")
    memo_text = memo(evaluate(parse(quoted)))
    assert "**Buy the cards (renting loses to the API).** The API is cheaper than renting:" in memo_text


def test_requests_beyond_the_models_trained_context_are_said_loudly_not_priced_quietly():
    link = {"model": "llama-3.1-8b", "in_tok": "1000", "out_tok": "200000"}
    text = memo(evaluate(parse(urlencode(link))))
    assert "**No request can be served as set.** A request holds 201,000 tokens (in_tok + out_tok)" in text
    assert "trained context of 131,072 tokens" in text
    at = open_app(link, "pages/decision.py")
    assert not at.exception
    assert "No request can be served as set" in texts(at.error)
    assert "No request can be served as set" not in texts(at.caption)
    assert "served as set" not in memo(evaluate(parse("model=llama-3.1-8b&out_tok=2000")))
    # No way serves such requests: none is the best, no option is allowed, the volume table ticks none, and the
    # Decision page says why rather than "Cheapest allowed option: Call the API".
    r = report(urlencode(link))
    assert r["best"] is None and r["api_usd_month"] > 0
    opts = tables.options_table(r)
    assert not opts["allowed"].any() and not opts["best"].any()
    assert "Call the API (serves no request: beyond the model's trained context)" in text
    assert set(tables.volume_table(evaluate(parse(urlencode(link))).decision)["cheaper"]) == {"beyond context"}
    captions = texts(at.caption)
    assert "Cheapest allowed option: **none**: no option is allowed, since a request holds 201,000" in captions
    # No rent or volume flips a verdict that does not exist (it said "Rent that flips it 0.02 USD/h").
    flips = {m.label: m.value for m in at.metric}
    assert flips["Rent that flips it"] == "none"
    assert "- **Rent:** No rent changes it: the requests are longer than the model's trained context." in text
    assert "The verdict holds across that range" not in text and "No verdict rests on it" in text
    # The monthly-cash chart and the API's figure say why only the API is there (not "the model does not fit").
    assert "Priced as if these requests could be served, which neither the cards nor the API do" in captions
    assert "API per month (list price; it refuses them)" in [m.label for m in at.metric]
    # A model too long for the cards as well (Llama 3.1 70B, a million-token prompt): the chart says which.
    far = open_app({"in_tok": "1000000"}, "pages/decision.py")
    assert "Only the API line is drawn, priced as if it took such requests: a request holds 1,000,300" \
        in texts(far.caption)
    # ... and the cash chart too, not "the model does not fit as set up".
    assert "Only the API's list price is drawn: no request can be served" in texts(far.caption)
    assert "the model does not fit as set up" not in texts(far.caption)
    assert "API per month (list price; it refuses them)" in [m.label for m in far.metric]
    assert report("in_tok=1000000")["best"] is None
    # The report's answer says so too, the memo prices the bills as what they are, and no card is planned for them.
    assert r["recommendation"] == "beyond context" and r["verdict"] == "api"
    assert "Priced as if they could be served, the API would be cheaper: at 1,000 requests a day" in \
        memo(evaluate(parse("model=llama-3.1-8b&in_tok=200000&req_day=1000")))
    from calc import planner
    assert planner.plan(parse(urlencode(link)).scenario) == []
    assert "No card serves these requests: a request holds 201,000 tokens" in texts(at.error)
    assert "no number of cards, format or engine changes that" in texts(far.error)


def test_an_autoscaled_fleet_shows_its_bill_beside_the_busiest_hours():
    # SPEC section 9: the verdict stays the fleet for the busiest hour; the autoscaled rent is given beside it, in
    # the page's table and the memo alike, so a reader who set autoscale=1 sees the bill it asked for.
    link = {"profile": "office", "autoscale": "1", "req_day": "300000"}
    e = evaluate(parse(link))
    table = dm.monthly_table(e.decision)
    rent = e.report()["rent_usd_month"]
    assert rent < e.report()["self_host_usd_month"]
    assert list(table.option) == ["Self-hosting", "Self-hosting, autoscaled", "API", "API, cheapest row (deepinfra)"]
    assert table.usd_month[1] == rent
    assert "| Self-hosting, autoscaled |" in memo(parse(link))
    at, _ = open_decision(link)
    shown = at.dataframe[0].value
    assert list(shown.option) == list(table.option) and shown.usd_month[1] == rent
    # Without autoscaling, or without a profile to follow, the autoscaled row goes.
    assert "Self-hosting, autoscaled" not in list(
        dm.monthly_table(evaluate(parse({**link, "autoscale": "0"})).decision).option)
    # The link typing its own API prices has no catalogue row to beat: the table is the two bills.
    typed = dm.monthly_table(evaluate(parse({**link, "autoscale": "0", "api_in": "0.5", "api_out": "0.5"})).decision)
    assert list(typed.option) == ["Self-hosting", "API"]


def test_the_break_even_tile_gives_the_volume_at_both_ends_of_the_band():
    """On a thin margin the break-even volume swings with the capacity: the tile shows the band's two volumes under
    the figure, 'never' where one end never breaks even."""
    import calc
    at, _ = open_decision({"out_tok": "1000"})
    tile = next(m for m in at.metric if m.label == "Break-even, requests a day")
    r = calc.report("out_tok=1000")
    assert tile.value == calc.words.short(r["break_even_req_day"])
    assert tile.delta == f"band: {calc.words.short(r['break_even_req_day_low'])} to never"
    at, _ = open_decision({"profile": "office", "autoscale": "1", "req_day": "1000000"})
    assert any(m.label == "Self-hosting, all-day fleet" for m in at.metric)  # not the autoscaled rent


def test_a_card_without_a_rent_but_with_a_price_is_answered_by_buying():
    """A buy-only card (no rent in the catalogue) that the planner may rank first: its link's answer is the
    buying bill it was ranked on, not "enter a rent", and a cheaper API row still beats it where it bills less."""
    link = "model=llama-3.1-70b&card=mi300x&weights=int4-g128&req_day=2000000&api_in=0.9&api_out=0.9"
    e = evaluate(parse(link))
    r = e.report()
    assert r["verdict"] is None and r["best"] == "own" and r["recommendation"] == "own"
    assert dm.headline(e.decision) == "Buy the cards"
    sentence = dm.verdict_sentence(e.decision)
    # 19 cards in use, bought on 8-card OAM platforms: 24 bought.
    assert r["own_cards_bought"] == 24
    assert sentence.startswith("Buying the cards is cheaper than the API: at 2,000,000 requests a day the API costs "
                               f"{dm.money(r['api_usd_month'])} a month, while 19 Instinct MI300X 192 GB cards bought "
                               f"cost {dm.money(r['own_usd_month'])} a month (24 bought, in units of 8)")
    assert sentence.count("the cheapest is buying") == 0  # said once, first
    at, _ = open_decision(dict(kv.split("=") for kv in link.split("&")))
    bought = next(m for m in at.metric if m.label == "Buying the cards, per month")
    assert bought.value == words.money_short(r["own_usd_month"]) == "14,765 USD"
    # At the catalogue's prices a cheaper row bills less than buying: that row is the answer, named against buying.
    row = evaluate(parse(link.replace("&api_in=0.9&api_out=0.9", "")))
    assert row.report()["recommendation"] == "api-cheaper-row"
    assert "less than buying's 14,765 USD" in dm.cheaper_api_sentence(row.decision)


def test_the_tables_weigh_the_cheaper_api_row_the_headline_rests_on():
    """At 2M requests a day on L40S the headline is the cheaper row's (1,740 USD against 11,394 to self-host): the
    volume table and the options table say the same, not 'self-host' and 'Buy cards'."""
    from calc import tables
    e = evaluate(parse("model=llama-3.1-8b&card=l40s&req_day=2000000"))
    vt = tables.volume_table(e.decision)
    now = vt[vt["current"]].iloc[0]
    assert now["api_cheapest_usd_month"] == pytest.approx(1740.0)
    assert now["cheaper"] == "API, cheapest row" and now["self_host_usd_month"] < now["api_usd_month"]
    opts = tables.options_table(e.report())
    assert list(opts.loc[opts["best"], "option"]) == ["Call the API, cheapest row (deepinfra)"]
    # Without a cheaper row the tables are as they were.
    typed = evaluate(parse("model=llama-3.1-8b&card=l40s&req_day=2000000&api_in=0.18&api_out=0.19"))
    assert "api_cheapest_usd_month" not in tables.volume_table(typed.decision)
    assert "Call the API, cheapest row" not in " ".join(tables.options_table(typed.report())["option"])


def test_a_card_without_a_rent_is_weighed_by_buying_at_every_volume():
    """MI300X has a purchase price and no rent: the volume table gives the bill of the same replicas bought (the
    options table's at the scenario's volume, the cost chart's line at every volume) and says where buying is the
    cheaper way, against the cheaper API row where the catalogue has one."""
    from calc import tables
    e = evaluate(parse("model=llama-3.1-70b&card=mi300x&req_day=200000"))
    vt = tables.volume_table(e.decision, (1_000, 10_000_000))
    now = vt[vt["current"]].iloc[0]
    # 3 cards in use, bought as one 8-card OAM platform.
    assert now["own_usd_month"] == pytest.approx(e.report()["own_usd_month"]) == pytest.approx(7487.93, abs=0.01)
    assert math.isnan(now["self_host_usd_month"])  # renting: no rent, not priced
    assert list(vt["cheaper"]) == ["API, cheapest row", "API, cheapest row", "buying"]
    curve = tables.cost_curve(e.decision)
    bought = curve[(curve["option"] == "Buying the cards") & (curve["req_day"] == 200000)]["usd_month"]
    assert bought.iloc[0] == pytest.approx(now["own_usd_month"])
    assert "buying's bill beside the API's" in dm.volume_sentence(e.decision)
    # Rented and priced, the column names the cheapest of the bills on the row, buying among them: at a trillion
    # requests a day on RTX 4090s buying (794 million USD) beats the cheaper API row (870 million), as the verdict says.
    rented = tables.volume_table(evaluate(parse("model=llama-3.1-70b&req_day=200000")).decision, ())
    assert rented["cheaper"].iloc[0] in ("renting", "buying", "API", "API, cheapest row") and "own_usd_month" in rented
    huge = evaluate(parse("req_day=1000000000000&model=llama-3.1-8b&card=rtx-4090")).decision
    row = tables.volume_table(huge, ()).iloc[0]
    assert row["own_usd_month"] < row["api_cheapest_usd_month"] < row["self_host_usd_month"]
    assert row["cheaper"] == "buying" and huge.report["recommendation"] == "own"


def test_the_downloaded_memo_names_a_value_the_page_refused():
    """req_day=20000000O (a letter O): the page falls back to the default and says so; the memo it offers says so
    too, instead of a memo for 10,000 requests a day that reads as the link's."""
    at, files = open_decision({"model": "llama-3.1-8b", "card": "l40s", "req_day": "20000000O"})
    assert not at.exception
    text = memo_of(files).decode()
    assert "Values in the link that could not be used" in text and "req_day='20000000O' is not accepted" in text
    _, clean = open_decision({"model": "llama-3.1-8b", "card": "l40s", "req_day": "2000000"})
    assert "could not be used" not in memo_of(clean).decode()


def test_the_cheapest_tick_is_the_lowest_bill_with_the_cheaper_api_row_in():
    """The options table ticks the cheaper API row wherever it bills less than the cheapest way priced against the
    link's row, also where the verdict is the API's already (the defaults: 55.20 against the link's 343.20); the memo's
    'Cheapest' line reads the same tick."""
    from calc import tables
    r = report("")
    opts = tables.options_table(r)
    assert list(opts.loc[opts["best"], "option"]) == ["Call the API, cheapest row (deepinfra)"]
    assert "- **Cheapest:** call the API, cheapest row (deepinfra), 55.20 USD a month" in memo(parse(""))
    own = report("req_day=2000000&api_in=2&api_out=2")  # typed prices: no row to compare, buying is cheapest
    assert list(tables.options_table(own).loc[lambda o: o["best"], "key"]) == ["own"]
    assert tables.options_table(report("why=residency")).loc[lambda o: o["best"], "key"].tolist() != ["api_cheapest"]


def test_a_latency_target_no_batch_meets_is_said_in_the_report_as_on_the_page():
    """tpot_ms=5 under a 14.4 ms single-stream step: the command line's report says so among its warnings, in the
    words the Decision page shows loudly (once: not again among the page's notes)."""
    r = report("tpot_ms=5")
    assert not r["meets_tpot"]
    said = [w for w in r["warnings"] if w.startswith("the latency target of 5 ms per output token cannot be met")]
    assert len(said) == 1 and "even a single stream takes 14.4 ms per token" in said[0]
    at, _ = open_decision({"tpot_ms": "5"})
    assert sum("latency target of 5 ms" in e.value for e in at.error) == 1
    assert not any("cannot be met" in c.value for c in at.caption)
    assert report("")["warnings"] == [w for w in report("")["warnings"] if "latency target" not in w]


def test_what_serving_would_take_is_null_where_nothing_fits():
    """DeepSeek-V3 on 8 H100s does not fit: no latency met, no time to first token, no serving batch in the
    report, as no replica count or bill (it printed meets_tpot true and a 5.3 ms step for a set-up that cannot run)."""
    r = report("model=deepseek-v3&card=h100-sxm&gpus=8")
    assert r["verdict"] == "does not fit"
    assert [r[k] for k in ("serving_batch", "serving_tok_s", "serving_tpot_ms", "meets_tpot", "ttft_ms",
                           "replicas", "self_host_usd_month")] == [None] * 7
    fits = report("model=deepseek-v3&card=h200-sxm&gpus=8")
    assert fits["meets_tpot"] is True and fits["ttft_ms"] > 0 and fits["serving_batch"] >= 1


def test_where_the_data_may_not_leave_the_volume_table_weighs_renting_against_buying():
    """why=residency rules the API out: the volume table's Cheaper column names renting or buying, never the API
    (it said 'API, cheapest row' under a headline that says to buy)."""
    from calc import tables
    e = evaluate(parse("why=residency&req_day=2000000"))
    vt = tables.volume_table(e.decision)
    assert set(vt["cheaper"]) <= {"renting", "buying"}
    now = vt[vt["current"]].iloc[0]
    assert now["cheaper"] == "buying" and now["own_usd_month"] < now["self_host_usd_month"]
    assert e.report()["best"] == "own"
    assert list(tables.volume_table(evaluate(parse("why=residency")).decision, ())["cheaper"]) == ["renting"]


def test_the_marginal_remark_under_the_options_is_about_the_options_it_weighs():
    """Where the catalogue's cheaper API row is the answer, the options table ticks it; the band's remark is about
    the options priced against the link's row (buying, and an owned fleet beside the API at the fast end), so it
    follows the cheaper row's sentence as about those, never as a fleet beating the ticked row."""
    from apptest import open_app, texts
    at = open_app({"req_day": "1500000", "card_usd": "30000", "power_w": "700", "buy_lot": "8", "profile": "office"},
                  "pages/decision.py")
    caption = next(texts([c]) for c in at.caption if c.value.startswith("Cheapest allowed option"))
    assert caption.startswith("Cheapest allowed option: **Call the API, cheapest row (deepinfra)**: the catalogue's "
                              "cheapest row for this model (deepinfra/meta-llama/meta-llama-3.1-70b-instruct-turbo)")
    assert ("(the others are priced against the API row in the link); of those, buying the cards is the cheapest, "
            "and at an end of the capacity error an owned fleet for the base load with the API taking the overflow "
            "would be the cheapest of them. Buying") in caption
    assert "(marginal:" not in caption
