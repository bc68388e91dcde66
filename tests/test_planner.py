"""calc/planner.py: the fleet planner, against the single-link report of each set-up it lists."""

from __future__ import annotations

import csv
import io
import itertools
import json

import pytest

from calc import catalogue, parse, planner, report
from calc.__main__ import main
from calc.planner import plan

LINK = "model=llama-3.1-70b&req_day=200000"


def test_each_row_is_its_own_links_report_and_the_rows_are_ranked():
    rows = plan(parse(LINK).scenario)
    assert rows and all(planner.rank_key(a) <= planner.rank_key(b) for a, b in itertools.pairwise(rows))
    # Within each group (target met, holds at the band) the cheaper bill first.
    for _, group in itertools.groupby(rows, key=lambda x: (x.meets_tpot, x.holds_at_band)):
        group = list(group)
        assert all(a.best_usd_month <= b.best_usd_month for a, b in itertools.pairwise(group))
    for row in rows[:5] + rows[-3:]:
        r = report(row.link)
        assert (r["scenario"]["card"], r["scenario"]["gpus"], r["scenario"]["weights"]) == (row.card, row.gpus,
                                                                                         row.weights)
        assert (r["replicas"], r["rent_usd_month"], r["own_usd_month"]) == (row.replicas, row.rent_usd_month,
                                                                            row.own_usd_month)
        assert row.best_usd_month == min(v for v in (r["rent_usd_month"], r["own_usd_month"]) if v is not None)
        assert row.cards == row.replicas * row.gpus and r["fits"]
        assert r["scenario"]["req_day"] == 200000 and r["scenario"]["model"] == "llama-3.1-70b"


def test_left_out_set_ups_do_not_fit_or_are_refused():
    rows = plan(parse(LINK).scenario)
    listed = {(r.card, r.gpus) for r in rows}
    # 70B at 4.25 bits does not fit one 24 GB card; vLLM refuses 3 cards (sizes are 1, 2, 4, 8 anyway).
    assert ("rtx-4090", 1) not in listed and not report(f"{LINK}&card=rtx-4090&gpus=1")["fits"]
    assert ("h100-sxm", 1) in listed and ("h100-sxm", 8) in listed
    assert {r.card for r in rows} <= set(catalogue.cards())


def test_the_command_line_prints_the_same_plan(capsys):
    assert main(["--plan", LINK, "--weights", "int4-g128,fp8"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    both = plan(parse(LINK).scenario, ["int4-g128", "fp8"])
    assert [(r["card"], int(r["gpus"]), r["weights"]) for r in rows] == [(r.card, r.gpus, r.weights) for r in both]
    assert {r["weights"] for r in rows} == {"int4-g128", "fp8"}
    assert main(["--plan", LINK, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)[0]
    assert first["best_usd_month"] == pytest.approx(plan(parse(LINK).scenario)[0].best_usd_month)
    assert main(["--plan", LINK, "--weights", "fp9"]) == 2
    assert "weights='fp9' is not accepted" in capsys.readouterr().err


def test_the_decision_page_lists_the_plan():
    from apptest import open_app, texts
    at = open_app({"model": "llama-3.1-70b", "req_day": "200000"}, "pages/decision.py")
    assert not at.exception
    assert "Which cards to get" in texts(at.subheader)
    assert "python -m calc --plan" in texts(at.caption)


def test_the_planner_offers_only_cards_the_engine_runs_on():
    """TensorRT-LLM runs on NVIDIA cards only and reads no GGUF file: an AMD or Intel card, or a GGUF format, is
    refused with the engine named, and the planner leaves those set-ups out."""
    p = parse("model=llama-3.1-70b&engine=trtllm&card=mi300x")
    assert [e.key for e in p.errors] == ["engine"] and "runs on NVIDIA cards" in p.errors[0].message
    p = parse("model=llama-3.1-70b&engine=trtllm&weights=q4_k_m")
    assert [e.key for e in p.errors] == ["weights"] and "GGUF" in p.errors[0].message
    assert "runs on NVIDIA, AMD and Apple cards" in parse("engine=llamacpp&card=gaudi-3").errors[0].message
    assert not parse("engine=vllm&card=mi300x").errors and not parse("engine=llamacpp&weights=q4_k_m").errors
    rows = plan(parse("model=llama-3.1-70b&req_day=200000&engine=trtllm").scenario, ["int4-g128", "q4_k_m"])
    assert rows and {catalogue.cards()[r.card]["vendor"] for r in rows} == {"NVIDIA"}
    assert {r.weights for r in rows} == {"int4-g128"}


def test_a_plan_that_ranks_consumer_cards_says_their_driver_licence_excludes_datacenters():
    from calc import planner
    note = planner.consumer_note(["h100-sxm", "rtx-4090", "rtx-4090", "rtx-5090"])
    assert note.startswith("GeForce RTX 4090 24 GB, GeForce RTX 5090 32 GB are consumer cards")
    assert "excludes datacenter deployment" in note
    assert planner.consumer_note(["h100-sxm", "l40s"]) == ""
    assert planner.consumer_note(["rtx-4090"]).startswith("GeForce RTX 4090 24 GB is a consumer card")


def test_a_set_up_that_ranks_on_a_thin_margin_says_it_does_not_hold_at_the_band():
    """Two RTX 4090s hold 5 requests of the default traffic and serve barely more than it needs: at the slow end of
    vLLM's capacity band a second replica is needed, so the row is marked; its bill at that end says the same."""
    from calc import planner
    rows = planner.plan(parse("").scenario)
    r = next(x for x in rows if (x.card, x.gpus) == ("rtx-4090", 2))
    assert not r.holds_at_band
    end = report(r.link)
    assert end["self_host_usd_month_high"] > end["self_host_usd_month"]
    assert all(report(x.link)["self_host_usd_month_high"] == report(x.link)["self_host_usd_month"]
               for x in rows[:6] if x.holds_at_band)
    # It ranks below every set-up that holds, however much cheaper it is: the top of the plan holds.
    assert rows[0].holds_at_band and rows.index(r) > max(i for i, x in enumerate(rows) if x.holds_at_band)
    assert r.best_usd_month < rows[0].best_usd_month


def test_the_links_own_card_is_planned_with_the_links_figures_for_it():
    """The plan's row of the link's own card, at the link's cards per replica, bills what the options table bills:
    a rent typed in the link and the link's buy_lot stay (another card brings its own)."""
    from calc import evaluate, parse
    from calc.planner import plan
    for link in ("req_day=200000&buy_lot=1", "req_day=200000&usd_hr=1.5"):
        s = parse(link).scenario
        r = evaluate(parse(link)).report()
        row = next(p for p in plan(s) if p.card == s.card and p.gpus == s.gpus)
        assert (row.rent_usd_month, row.own_usd_month, row.own_capex_usd) == pytest.approx(
            (r["rent_usd_month"], r["own_usd_month"], r["own_capex_usd"]))
        assert f"buy_lot={s.buy_lot}" in row.link and f"usd_hr={s.usd_hr:g}" in row.link
    other = next(p for p in plan(parse("req_day=200000&buy_lot=1").scenario) if p.card == "h200-sxm" and p.gpus == 1)
    assert "buy_lot=8" in other.link  # another SXM card: its own baseboard


def test_a_card_without_a_rent_holds_at_the_band_only_if_its_replicas_do():
    """An RTX PRO 6000 has no rent in the catalogue, only a purchase price: the plan buys it. Whether it still carries
    the busiest hour at the slow end of the band is a count of replicas (5 at the model's capacity, 6 at the slow
    end for Qwen3-30B-A3B in NVFP4 at 3M requests a day), not a rent bill; the plan ticked it 'holds' and ranked it
    first because it has no rent bill to compare."""
    link = "model=qwen3-30b-a3b&card=b200&weights=nvfp4&kv=fp8&compute=fp4&gpus=1&engine=trtllm&req_day=3000000"
    rows = plan(parse(link).scenario)
    pro = next(x for x in rows if (x.card, x.gpus) == ("rtx-pro-6000", 1))
    r = report(pro.link)
    assert r["scenario"]["usd_hr"] is None and pro.best == "own"
    assert (r["replicas"], r["replicas_at_band_ends"]) == (5, [4, 6])
    assert not pro.holds_at_band
    assert all(report(x.link)["replicas_at_band_ends"][1] <= x.replicas for x in rows if x.holds_at_band)


@pytest.mark.parametrize("engine", ["trtllm-v05", "trtllm-2023", "trtllm-2024"])
@pytest.mark.parametrize("card", ["b200", "gb200", "rtx-5090", "rtx-pro-6000"])
def test_a_release_older_than_the_card_is_refused_with_the_release_that_added_it(engine, card):
    """TensorRT-LLM's releases before v0.17 (CUDA 12.8) ship no Blackwell kernels: such a link was priced as if they
    ran (a v0.5 B200 at 8,306 USD a month), now it is refused by name, and the planner leaves the card out."""
    p = parse(f"model=llama-3.1-8b&engine={engine}&card={card}")
    assert [e.key for e in p.errors] == ["engine"]
    assert "predate the card" in p.errors[0].message and "v0.17" in p.errors[0].message
    assert p.scenario.engine == "vllm"  # the field's default, as for every refused value
    rows = plan(parse(f"model=llama-3.1-8b&req_day=200000&engine={engine}").scenario, ["fp8"])
    assert rows and card not in {r.card for r in rows}


@pytest.mark.parametrize("engine", ["trtllm", "trtllm-2025"])
def test_the_releases_that_added_blackwell_run_on_it(engine):
    assert not parse(f"model=llama-3.1-8b&engine={engine}&card=b200").errors
    assert not parse("model=llama-3.1-8b&engine=trtllm-2023&card=h200-sxm").errors
