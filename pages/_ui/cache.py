"""What pages read, cached by link: the evaluation of the scenario, its report and the page tables."""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import streamlit as st

from calc import (
    Evaluation,
    Parsed,
    Scenario,
    evaluate,
    parse,
    tables,
)


def _warm_quant_lab() -> None:
    """The quantization lab's tables at the reference settings, once per server process and off any request: a first
    visit to the lab then draws them from the cache (calc.quantlab.lab_tables waits for this run if it is on)."""
    from calc import quantlab
    quantlab.lab_tables()


threading.Thread(target=_warm_quant_lab, name="calc-warm-quant-lab", daemon=True).start()


@st.cache_resource(max_entries=512, show_spinner=False)
def _evaluation(query: str) -> Evaluation:
    # An Evaluation is frozen, so sessions can share one; keyed by the complete link.
    return evaluate(parse(query))


@st.cache_data(max_entries=256, show_spinner=False)
def _table(name: str, query: str, args: tuple) -> Any:
    return getattr(tables, name)(parse(query).scenario, *args)


def table(name: str, scenario: Scenario, *args: Any) -> Any:
    """``calc.tables.<name>(scenario, *args)``, cached by link (bounded: the 256 most recent)."""
    return _table(name, scenario.to_query(), tuple(tuple(a) if isinstance(a, list) else a for a in args))


@st.cache_data(max_entries=64, show_spinner=False)
def lever_table(query: str) -> pd.DataFrame:
    """``calc.levers.lever_table`` of the link ``query`` (cached by link)."""
    from calc import levers
    return levers.lever_table(evaluate(parse(query)))


@st.cache_data(max_entries=64, show_spinner=False)
def format_table(query: str) -> pd.DataFrame:
    """``calc.levers.format_table`` of the link ``query`` (cached by link)."""
    from calc import levers
    return levers.format_table(evaluate(parse(query)))


@st.cache_data(max_entries=8, show_spinner=False)
def catalogue_table(name: str) -> pd.DataFrame:
    """A catalogue table of ``calc.tables`` (models_table, cards_table, apis_table), read once."""
    return getattr(tables, name)()


def evaluation() -> Evaluation:
    """The evaluation of this run's scenario (cached by link): every figure, computed once."""
    parsed: Parsed = st.session_state["_parsed"]
    return _evaluation(parsed.scenario.to_query())


def current() -> tuple[Scenario, dict]:
    """The scenario of this run and its report (cached by link)."""
    parsed: Parsed = st.session_state["_parsed"]
    report = evaluation().report()
    # Input-level warnings of this run (unknown keys) belong with the report shown.
    return parsed.scenario, {**report, "warnings": list(st.session_state.get("_link_warnings", [])) + report["warnings"]}
