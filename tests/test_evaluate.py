"""calc.evaluate: one typed chain per link (memory, decode, cost, bill, engine, band, procurement), each part
built once from the one before; the report only flattens it, and the decision reads the same parts."""

import dataclasses

import pytest

from calc import evaluate, parse, report
from calc.evaluate import PARTS

LINK = "model=llama-3.1-70b&req_day=200000&in_tok=1500&out_tok=300"


@pytest.fixture(scope="module")
def ev():
    return evaluate(parse(LINK))


def test_the_report_is_the_parts_flattened(ev):
    r = report(LINK)
    for part in (ev.memory, ev.decode, ev.cost, ev.step, ev.bill, ev.engine, ev.band, ev.procurement, ev.speculation):
        for f in dataclasses.fields(part):
            assert r[f.name] == getattr(part, f.name), f.name
    assert r["scenario"] == ev.scenario.as_dict()


def test_no_two_parts_name_the_same_figure():
    names = [f.name for part in PARTS for f in dataclasses.fields(part)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_the_traffic_sizes_the_memory_figures_on_every_part(ev):
    """ctx follows the traffic (auto): 1,800 tokens a request, the same sequences in memory for the page, the
    decision and the command line."""
    assert ev.memory.ctx_used == 1800 and "ctx" in ev.scenario.follows_traffic
    assert ev.decision.cap.n == 1800
    assert ev.decision.cap.max_batch == ev.memory.max_batch == report(LINK)["max_batch"]
    assert ev.decision.self_host_usd_month == ev.bill.self_host_usd_month


def test_a_what_if_context_changes_the_page_figures_and_says_so():
    what_if = evaluate(parse(LINK + "&ctx=8192"))
    assert what_if.memory.ctx_used == 8192 and what_if.memory.max_batch < evaluate(parse(LINK)).memory.max_batch
    assert any(w.startswith("what-if context") for w in what_if.warnings)


def test_the_evaluation_is_frozen_and_its_report_a_fresh_copy(ev):
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.memory = None
    a = ev.report()
    a["max_batch"] = -1
    assert ev.report()["max_batch"] == ev.memory.max_batch


@pytest.mark.parametrize("link", ["req_day=1000000&model=llama-3.1-8b&card=l40s", "req_day=2000&profile=office",
                                  "model=llama-3.1-70b&gpus=4&req_day=300000&in_tok=4000&out_tok=500"])
def test_each_bill_per_million_output_tokens_is_that_bill_over_the_months_output(link):
    r = report(link)
    out_mtok = r["requests_month"] * r["scenario"]["out_tok"] / 1e6
    assert r["api_usd_per_mtok_out"] == pytest.approx(r["api_usd_month"] / out_mtok, rel=1e-12)
    assert r["self_host_usd_per_mtok_out"] == pytest.approx(r["self_host_usd_month"] / out_mtok, rel=1e-12)


def test_a_set_up_that_does_not_fit_has_no_self_hosting_price_per_million():
    r = report("model=llama-3.1-405b&weights=bf16")
    assert r["verdict"] == "does not fit" and r["self_host_usd_per_mtok_out"] is None
    assert r["api_usd_per_mtok_out"] > 0


def test_run_keys_without_a_run_are_named_not_silently_dropped():
    """out_spread and out_max describe a finite benchmark run (run_prompts): alone they change nothing, and the
    report says so instead of ignoring them."""
    def warned(link: str) -> list[str]:
        return evaluate(parse(link)).report()["warnings"]
    assert any(w.startswith("out_spread describes a benchmark run and changes nothing without run_prompts")
               for w in warned("out_spread=exp"))
    assert any(w.startswith("out_spread and out_max describe a benchmark run and change nothing")
               for w in warned("out_spread=exp&out_max=3000"))
    assert any(w.startswith("out_max is the longest reply of an 'exp' spread")
               for w in warned("run_prompts=1000&out_max=2000"))
    assert not any("benchmark run" in w or "out_max" in w
                   for w in warned("run_prompts=1000&out_spread=exp&out_max=2000"))
