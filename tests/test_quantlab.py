"""The quantization lab reproduces the reference tables exactly (issue 12), and its parts behave."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calc import quantlab
from calc.__main__ import main

# The reference tables, as printed (four decimals; per cent to one decimal).
NOTES_ERRORS = [(8, "8.25", "0.0060", "0.0069"), (4, "4.25", "0.1001", "0.1167"), (3, "3.25", "0.2161", "0.2680"),
                (2, "2.25", "0.5039", "0.5707")]
NOTES_BYTES = [(16, 0, 524288, "1.00"), (8, 0, 262144, "2.00"), (8, 512, 263168, "1.99"), (4, 0, 131072, "4.00"),
               (4, 512, 132096, "3.97")]


def test_error_table_is_the_notes_table():
    t = quantlab.error_table()
    got = [(r.bits, f"{r.bits_per_weight:.2f}", f"{r.well_behaved:.4f}", f"{r.with_outliers:.4f}") for r in t.itertuples()]
    assert got == NOTES_ERRORS


def test_damage_lands_in_the_groups_that_hold_an_outlier():
    d = quantlab.group_damage().set_index("matrix")
    assert f"{d.loc['with outliers', 'outlier_groups']:.4f}" == "0.3169"
    assert f"{d.loc['with outliers', 'all']:.4f}" == "0.1134"
    assert f"{d.loc['with outliers', 'other_groups']:.4f}" == f"{d.loc['well-behaved', 'all']:.4f}" == "0.1070"
    assert f"{d.loc['with outliers', 'outlier_group_share']:.1%}" == "3.1%"


def test_bytes_table_is_the_notes_table():
    got = [(r.bits, r.scales, r.bytes, f"{r.vs_16bit:.2f}") for r in quantlab.bytes_table().itertuples()]
    assert got == NOTES_BYTES


def test_command_line_prints_the_notes_figures(capsys):
    assert main(["--quant-lab"]) == 0
    out = capsys.readouterr().out
    for row in NOTES_ERRORS:
        assert f"{row[0]:5d}{row[1]:>13}{row[2]:>14}{row[3]:>15}" in out
    assert "groups where the outliers sit 0.3169" in out and "3.1% of groups contain an outlier" in out
    assert "   4     512   132096      3.97x" in out


@pytest.mark.parametrize("args, named", [(["--bits", "4,x"], "bits='4,x'"), (["--bits", "0"], "bits=0"),
                                         (["--group", "100", "--size", "64"], "group=100"),
                                         (["--size", "100000"], "size=100000"),
                                         (["--outliers", "-1", "--size", "64"], "outliers=-1")])
def test_bad_lab_settings_are_named(capsys, args, named):
    assert main(["--quant-lab", *args]) == 2
    assert named in capsys.readouterr().err


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.sampled_from([2, 8, 32, 64, 128]), st.integers(0, 2**31 - 1))
def test_quantized_weights_stay_in_their_group_range_on_the_grid(bits, group, seed):
    w = np.random.default_rng(seed).standard_normal(256 * 4).astype(np.float32)
    q = quantlab.quantize(w, bits, group)
    g, qg = w.reshape(-1, group), q.reshape(-1, group)
    lo, hi = g.min(axis=1, keepdims=True), g.max(axis=1, keepdims=True)
    span = np.maximum(hi - lo, 1e-30)
    assert np.all(qg >= lo - 1e-5 * span) and np.all(qg <= hi + 1e-5 * span)
    # Rounding error is at most half a step (float32 rounding aside).
    assert np.all(np.abs(qg - g) <= span / (2**bits - 1) / 2 * (1 + 1e-4) + 1e-6)


def test_the_lab_inputs_live_in_the_link():
    """The lab's four inputs are link keys: a link opens the lab on its experiment, and moving an input
    rewrites the address bar."""
    from apptest import open_app
    at = open_app({"lab_n": "512", "lab_group": "64"}, "pages/quantlab.py")
    assert not at.exception
    assert at.select_slider(key="lab_n").value == "512" and at.select_slider(key="lab_group").value == "64"
    at.select_slider(key="lab_scale").set_value("50").run()
    assert at.query_params["lab_scale"] == "50" and at.query_params["lab_n"] == "512"


def test_the_apps_lab_is_computed_once_per_setting_and_says_when_it_is_the_notes():
    run = quantlab.lab_tables()
    assert (run.outliers, run.weights, run.notes_settings) == (4096, 4096 * 4096, True)
    assert quantlab.lab_tables(4096, 128, 4096 / 4096 ** 2, 20) is not run  # a new run object...
    assert quantlab.lab_tables(4096, 128, 4096 / 4096 ** 2, 20).errors is run.errors  # ...over the cached tables
    assert list(run.errors["bits"]) == list(quantlab.LAB_BITS)
    small = quantlab.lab_tables(512, 64, 0.001, 10)
    assert (small.outliers, small.notes_settings) == (round(0.001 * 512 * 512), False)
