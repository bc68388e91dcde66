"""The scenario <-> widget state: each widget's key is its link key; the values the link could not use; the
callbacks that keep a preset's figures in step when it changes."""

from __future__ import annotations

from typing import Any

import streamlit as st

from calc import (
    KEYS,
    FieldError,
    Scenario,
    parse,
)
from calc.scenario import (
    CUSTOM,
    DEPENDENTS,
    LINK,
    RANGES,
    change,
)


def _widget_value(key: str, value: Any) -> Any:
    """The widget form of a scenario value."""
    if KEYS[key].kind == "flag":
        return bool(value)
    if value == "auto":  # batch, and the keys that follow the traffic: an empty box that says auto
        return None
    if key in RANGES and value is not None:
        return int(value) if RANGES[key][0] is int else float(value)
    return value


def _store(scenario: Scenario) -> None:
    """Put every scenario value into its widget's state."""
    for key, value in scenario.as_dict().items():
        put(key, _widget_value(key, value))


def put(key: str, value: Any) -> None:
    """Give the widget of ``key`` a value, and keep giving it until a run that drew the widget has finished.

    Streamlit sends a value set this way to the browser once, with the widget, in the run that set it. A run
    stopped by a rerun asked for meanwhile (several at once on a first visit under load) may never reach the
    browser; the next run then draws the widget without its value, and the browser shows the widget's own default
    (an empty box) while the figures use the value."""
    st.session_state[key] = value
    st.session_state.setdefault("_unsent", set()).add(key)


def resend() -> None:
    """Before a run draws its widgets: set again every value that no finished run has drawn yet."""
    st.session_state["_drawn_now"] = set()
    for key in st.session_state.get("_unsent", ()):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def sent(key: str) -> None:
    """The widget of ``key`` was drawn in this run."""
    st.session_state.setdefault("_drawn_now", set()).add(key)


def finished() -> None:
    """The run drew its whole page: the values of the widgets it drew have reached the browser."""
    st.session_state.get("_unsent", set()).difference_update(st.session_state.get("_drawn_now", ()))


def widget_params() -> dict[str, Any]:
    """The link mapping the widgets hold now (absent optional values left out)."""
    out: dict[str, Any] = {}
    for key in KEYS:
        value = st.session_state.get(key)
        if key == "batch" and value is None:
            value = "auto"
        if KEYS[key].kind == "flag" and value is not None:
            value = int(bool(value))
        if value is not None:
            out[key] = value
    return out


def _link_errors() -> dict[str, FieldError]:
    """Values of the opened link that could not be used; each stays shown until its input is changed."""
    return st.session_state.setdefault("_errors", {})


def _errors() -> dict[str, FieldError]:
    """Everything to show beside the inputs this run: the link's rejected values and the rules the
    current inputs break."""
    parsed = st.session_state.get("_parsed")
    return {**_link_errors(), **st.session_state.get("_fallbacks", {}),
            **({e.key: e for e in parsed.errors} if parsed is not None else {})}


def _forget_said() -> None:
    """A change of any input: what the last change or the opened link moved or set aside is no longer said."""
    st.session_state["_fallbacks"] = {}
    st.session_state["_switched"] = {}
    st.session_state["_link_notes"] = []


def _on_parent(key: str) -> None:
    """A preset changed: bring in its figures (and drop what depended on the old one)."""
    _on_parent_value(key, st.session_state[key])


def _on_parent_value(key: str, value: Any) -> None:
    # The widget already holds the new value: the change is read against the value in use before it (a model
    # that shipped its own formats takes them away when it is left).
    before = widget_params()
    last = st.session_state.get("_parsed")
    if last is not None:
        before[key] = getattr(last.scenario, key)
    changed, moved = change(before, key, value)
    parsed = parse(changed)
    # A value typed into another box and refused on its own (exact entry: usd_hr=99999999) stays in its box, and so in
    # the address bar, named beside it: the change of a preset does not swap it for the default unsaid.
    typed = {e.key: st.session_state.get(e.key) for e in parsed.errors
             if e.key != key and not e.rule and st.session_state.get(e.key) is not None
             and e.key not in _link_errors()}
    _store(parsed.scenario)
    for k, raw in typed.items():
        put(k, raw)
    _link_errors().pop(key, None)
    # Another input this change made impossible (int4-g128 weights under llama.cpp, FP8 compute on an A100) takes the
    # value that goes with it, and the page says so, not as a refusal (the user typed no bad value), until the next
    # change of any input; a value the parser refuses outright is named as refused.
    _forget_said()
    st.session_state["_switched"] = {e.key: (e, getattr(parsed.scenario, e.key)) for e in moved if e.key != key}
    st.session_state["_fallbacks"] = {e.key: e for e in parsed.errors
                                      if e.key != key and e.key not in st.session_state["_switched"]
                                      and e.key not in typed}
    if any(e.key == key for e in parsed.errors):
        put(key, value)  # a value the parser refuses stays in its box, named beside it


def _on_override(key: str, parent: str | None) -> None:
    """A figure was typed over a preset's: the model or card becomes custom, so the label never lies. A key
    others derive from (the weight format, which the checkpoint's other parts follow) drops them, as a preset
    does."""
    _link_errors().pop(key, None)
    _forget_said()
    kept = st.session_state.setdefault("_kept_on_empty", {})
    kept.clear()
    spec = KEYS[key]
    parsed = st.session_state.get("_parsed")
    if st.session_state.get(key) is None and spec.kind in ("int", "float") and not spec.empty and parsed is not None:
        # An emptied box of a key that has no empty value keeps the figure in use (and says so), so the scenario
        # never takes the box's lowest value unasked.
        value = getattr(parsed.scenario, key)
        put(key, _widget_value(key, value))
        kept[key] = f"{value:,.12g}" if isinstance(value, (int, float)) else str(value)  # every digit in use
        return
    if parent and st.session_state.get(parent) != CUSTOM:
        put(parent, CUSTOM)
    if key in DEPENDENTS and key not in ("model", "card"):
        _on_parent_value(key, st.session_state[key])


def exact_entry() -> bool:
    """Whether the inputs are number boxes (exact entry) rather than sliders; a view setting, not in the link."""
    return bool(st.session_state.get("_exact", False))


def _restore() -> None:
    """The inputs change kind (slider <-> box): give the new widgets the scenario's values, not their defaults."""
    parsed = st.session_state.get("_parsed")
    if parsed is not None:
        _store(parsed.scenario)


def set_reasons(ids: list[str]) -> None:
    """The Decision page's reason boxes changed: keep the ticked ids in the link's ``why`` key."""
    ticked = [rid for rid in ids if st.session_state.get(f"_why_{rid}")]
    st.session_state["why"] = ",".join(ticked) or None
    _link_errors().pop("why", None)


def switched() -> dict[str, tuple[FieldError, Any]]:
    """The inputs the last change of an engine or card moved to a value that goes with it: ``{key: (why the old
    value went, the value in use)}``."""
    return st.session_state.get("_switched", {})


def switched_text(key: str, error: FieldError, value: Any) -> str:
    """One moved input in words: the key, the value it had, the value in use, and why."""
    return f"{key} moved from {error.value} to {value}: {error.reason}."


def refused() -> list[FieldError]:
    """The refused values behind this run's defaults (the opened link's and the inputs' own), one per key."""
    return list(_errors().values())


def rejected_keys() -> list[str]:
    """The link keys whose given values are not in use this run (each at its default), in link order."""
    errors = _errors()
    return [k for k in (*KEYS, LINK) if k in errors]
