"""calc.words: numbers and names as the pages, the memo and the command line write them."""

import math

import pytest

from calc import parse, words


@pytest.mark.parametrize("x, digits, text", [
    (343.2, 2, "340"), (5800, 2, "5,800"), (273892.8, 2, "270,000"), (273892.8, 3, "274,000"),
    (0.001144, 2, "0.0011"), (0, 2, "0"), (None, 2, "—"), (math.nan, 2, "—"), (-1234.5, 3, "-1,230"),
])
def test_sig_rounds_to_significant_figures(x, digits, text):
    assert words.sig(x, digits) == text


def test_sig_pair_adds_digits_until_two_numbers_differ():
    assert words.sig_pair(5_800, 5_810) == ("5,800", "5,810")
    assert words.sig_pair(100, 100) == ("100", "100")


@pytest.mark.parametrize("x, text", [
    (9870, "9,870"), (12_300, "12.3 k"), (484_000, "484 k"), (1_480_000, "1.48 M"), (999_999, "1.00 M"),
    (2.1e9, "2.10 B"), (None, "—"), (math.inf, "—"),
])
def test_short_writes_a_large_figure_in_a_few_characters(x, text):
    assert words.short(x) == text


@pytest.mark.parametrize("x, text", [(300e6, "300M"), (2.7e10, "27B"), (4500, "4,500"), (1e9, "1B")])
def test_tokens_text_writes_b_for_a_billion(x, text):
    assert words.tokens_text(x) == text


@pytest.mark.parametrize("v, text", [(None, "—"), (True, "yes"), (1234.0, "1,234"), (2.345, "2.35"),
                                     (0.01234, "0.0123"), ("x", "x"), (math.inf, "—")])
def test_cell(v, text):
    assert words.cell(v) == text


def test_money_and_volume():
    assert words.volume_text(10000) == "10,000" and words.volume_text(12.5) == "12.5"
    assert words.usd(None) == "—" and words.usd(1234.567) == "1,234.57"
    assert words.money(None) == "—" and "USD" in words.money(5800)


def test_names_of_a_scenario():
    s = parse("model=llama-3.1-8b&card=l40s&gpus=2").scenario
    assert words.model_name(s) == "Llama 3.1 8B"
    assert words.card_name(s).startswith("L40S")
    assert "2" in words.cards_text(s)
    assert words.model_name(parse("model=custom").scenario) == "a custom 70.554B model"


def test_the_accuracy_text_says_the_basis_and_the_sign():
    band = [{"metric": "step_ms", "n": 18, "median_pct": 9.3, "p90_pct": 17.2, "signed_median_pct": -7.0,
             "basis": "leave-one-source-out"}]
    text = words.accuracy_text("vllm", band)
    assert text == ("vLLM: decode step time within about 9 % (90 % of rows within 17 %, 18 rows, median -7 %: "
                    "predicted too slow) of published vLLM measurements, each source predicted by figures fitted "
                    "without it")
    few = words.accuracy_text("vllm", [{**band[0], "n": 3, "signed_median_pct": 8.0}])
    assert "only 3 rows, median +8 %: predicted too fast" in few
    assert words.accuracy_text("roofline", None).endswith("they are not calibrated")
    # A release family that differs only in its memory quotes the measurements it shares its figures with.
    assert words.accuracy_text("trtllm-2024", band).endswith(
        "of published TensorRT-LLM measurements, whose speed figures it shares, each source predicted by figures "
        "fitted without it")


@pytest.mark.parametrize("x, text", [(0.001, "0.001"), (12.5, "12.5"), (10000, "10,000"), (0.25, "0.25")])
def test_a_small_volume_is_not_rounded_away(x, text):
    assert words.volume_text(x) == text


@pytest.mark.parametrize("x, text", [(0.0000343, "0.000034 USD"), (0.004, "0.0040 USD"), (0.005, "0.01 USD"),
                                     (12.5, "12.50 USD"), (5800, "5,800 USD")])
def test_a_small_amount_keeps_two_significant_figures(x, text):
    assert words.money(x) == text


def test_token_counts_never_print_in_e_notation():
    """A billion requests a day gives tens of trillions of tokens a month: the memo's "how it adds up" reads them
    as T, with separators, never as 3e+04B."""
    from calc.words import tokens_text
    assert tokens_text(3e13) == "30T" and tokens_text(9e15) == "9,000T" and tokens_text(2.7e10) == "27B"
    assert tokens_text(4500) == "4,500" and tokens_text(3e8) == "300M"
    assert all("e" not in tokens_text(10.0 ** k) for k in range(0, 19))


def test_money_short_keeps_a_headline_bill_whole():
    """A headline bill of millions reads in M, below a million as every other amount, never cut off."""
    assert words.money_short(34_320_000) == "34.3 M USD"
    assert words.money_short(2_150_000_000) == "2.15 B USD"
    assert words.money_short(999_999) == words.money(999_999) == "999,999 USD"
    assert words.money_short(None) == "—"


def test_price_short_keeps_a_headline_price_per_million_narrow():
    """A price per million tokens keeps a token price's three decimals while small, and an idle replica's enormous
    price stays short enough for a narrow metric (not "731,644.444 USD", cut off on the Cost page)."""
    assert words.price_short(0.0805) == "0.081 USD"
    assert words.price_short(94.6911) == "94.69 USD" and words.price_short(9.6911) == "9.691 USD"
    assert words.price_short(2_906.4) == "2,906 USD"
    assert words.price_short(731_644.444) == "732 k USD"
    assert words.price_short(180_228_000) == "180 M USD"
    assert words.price_short(None) == words.price_short(float("nan")) == "—"
    assert all(len(words.price_short(10.0 ** k)) <= 10 for k in range(-3, 12))


def test_amount_shows_a_light_bill_in_cents_and_a_large_one_in_dollars():
    """A table cell rounds as the metric beside it does: a light API bill is 0.03, not 0."""
    assert words.amount(0.0325) == "0.03" and words.amount(5800) == "5,800" and words.amount(0) == "0"
    assert words.amount(99.456) == "99.46" and words.amount(0.0012) == "0.0012" and words.amount(None) == "—"
    assert words.amount(0.0325) + " USD" == words.money(0.0325)


def test_per_day_says_one_request_in_the_singular():
    assert words.per_day(1) == "1 request a day" and words.per_day(10_000) == "10,000 requests a day"
    assert words.per_day(0.5) == "0.5 requests a day"
