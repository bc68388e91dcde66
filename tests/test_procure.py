"""calc/procure.py: SPEC section 9 (owning, the day's profile, autoscaling, mixing with the API, the best option),
checked by hand on round figures."""

from __future__ import annotations

import math

import pytest

from calc import catalogue, load, procure, report

BASE = "model=llama-3.1-70b&card=h100-sxm&req_day=200000&usd_hr=2.5&upkeep=4000"


def test_the_annuity_by_hand():
    # C = 25,000 x 1.4 = 35,000 per card; S = 3,500; CRF(8 %, 4 years) = 0.08 x 1.08^4 / (1.08^4 - 1) = 0.301921
    assert procure.capital_recovery(0.08, 4) == pytest.approx(0.30192080, rel=1e-7)
    assert procure.capital_recovery(0.0, 4) == 0.25
    s = load(BASE + "&card_usd=25000").scenario
    K = (35000 - 3500 * 1.08 ** -4) * 0.30192080 / 12
    assert procure.capital_per_card_month(s) == pytest.approx(K, rel=1e-7)
    assert pytest.approx(815.87, abs=0.01) == K


def test_owning_by_hand():
    r = report(BASE + "&card_usd=25000&power_w=700&colo_usd=100")
    cards = r["replicas"] * 1
    K = (35000 - 3500 * 1.08 ** -4) * procure.capital_recovery(0.08, 4) / 12
    E = 0.7 * (0.25 + 0.75 * r["duty_traffic"]) * 1.4 * 0.12 * 720  # kW x load share x PUE x USD/kWh x hours
    assert r["own_capital_usd_month"] == pytest.approx(cards * K)
    assert r["own_power_usd_month"] == pytest.approx(cards * E)
    assert r["own_usd_month"] == pytest.approx(cards * (K + E + 100) + 4000)
    assert r["own_capex_usd"] == pytest.approx(cards * 35000)
    running = cards * (E + 100) + 4000
    assert r["payback_months_rent"] == pytest.approx(r["own_capex_usd"] / (r["rent_usd_month"] - running))


def test_a_card_without_a_public_price_is_not_priced_for_owning():
    assert catalogue.cards()["h100-pcie"]["card_usd"] is None
    r = report("model=llama-3.1-8b&card=h100-pcie&req_day=100000")
    assert r["own_usd_month"] is None and r["best"] in ("api", "rent")
    assert any("owning is not priced" in w and "card_usd" in w for w in r["warnings"])


def test_the_days_profile_sets_the_peak_and_autoscaling_follows_it():
    office = catalogue.profiles()["office"]
    r = report(BASE + "&profile=office")
    assert r["scenario"]["peak"] == pytest.approx(max(office) / (sum(office) / 24))
    assert r["rent_usd_month"] == r["self_host_usd_month"]  # without autoscale: the fleet for the busiest hour
    auto = report(BASE + "&profile=office&autoscale=1&min_replicas=1")
    assert auto["rent_usd_month"] < r["rent_usd_month"]
    # an autoscaled fleet never runs fewer replicas than min_replicas nor more than the busiest hour's
    floor = report(BASE + "&profile=office&autoscale=1&min_replicas=" + str(r["replicas"]))
    assert floor["rent_usd_month"] == pytest.approx(r["rent_usd_month"])
    assert load(BASE + "&profile=office").scenario.profile == "office"


def test_mixing_never_costs_more_than_either_end():
    r = report(BASE + "&profile=evening")
    assert 0 <= r["hybrid_replicas"] <= r["replicas"]
    assert r["hybrid_usd_month"] <= min(r["api_usd_month"], r["rent_usd_month"]) + 1e-6
    assert 0 <= r["hybrid_api_share"] <= 1
    assert report(BASE)["hybrid_usd_month"] is None  # no profile: no day to mix over


def test_residency_leaves_only_self_hosting():
    r = report("model=llama-3.1-8b&req_day=10000&why=residency")
    assert r["api_usd_month"] < r["rent_usd_month"]  # the API would be cheaper...
    assert r["best"] in ("rent", "own")  # ...but the data may not leave
    assert report("model=llama-3.1-8b&req_day=10000")["best"] == "api"


def test_best_is_the_cheapest_option():
    r = report(BASE + "&profile=office")
    bills = {"api": r["api_usd_month"], "rent": r["rent_usd_month"], "own": r["own_usd_month"],
             "hybrid": r["hybrid_usd_month"], "hybrid_own": r["hybrid_own_usd_month"]}
    eligible = {k: v for k, v in bills.items() if v is not None and math.isfinite(v)}
    assert r["best"] in eligible and eligible[r["best"]] == pytest.approx(min(eligible.values()))


def test_nothing_fits_means_the_api():
    r = report("model=llama-3.1-405b&weights=bf16&gpus=1")
    assert r["verdict"] == "does not fit" and r["best"] == "api" and r["own_usd_month"] is None


def test_the_cost_chart_draws_buying_beside_renting():
    from calc import evaluate, parse, tables
    d = evaluate(parse(BASE)).decision
    curve = tables.cost_curve(d)
    assert set(curve["option"]) == {"API", "Self-hosting", "Buying the cards"}
    at_volume = curve[(curve["option"] == "Buying the cards") & (curve["req_day"] == 200000)]["usd_month"].iloc[0]
    assert at_volume == pytest.approx(report(BASE)["own_usd_month"])
    no_price = evaluate(parse("model=llama-3.1-8b&card=h100-pcie")).decision
    assert "Buying the cards" not in set(tables.cost_curve(no_price)["option"])


def test_the_headline_never_recommends_an_option_the_link_rules_out():
    from calc import evaluate, parse
    from calc.memo import headline, verdict_sentence
    d = evaluate(parse("model=llama-3.1-8b&req_day=50000&profile=office&why=residency")).decision
    assert d.verdict == "api"  # the rent-or-API comparison alone
    assert headline(d) == "Buy the cards (the data may not leave)"
    text = verdict_sentence(d)
    assert text.startswith("The data may not leave") and "the cheapest allowed is buying the cards" in text


def test_the_verdict_names_a_cheaper_way_than_the_two_it_compares():
    from calc import evaluate, parse
    from calc.memo import verdict_sentence
    d = evaluate(parse("model=llama-3.1-70b&req_day=200000&in_tok=1500&out_tok=300")).decision
    assert d.report["best"] == "own"
    assert "Of every way to serve this traffic, the cheapest is buying the cards" in verdict_sentence(d)
