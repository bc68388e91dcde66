"""The sidebar: every link key's input, by the key's kind, in its group; the 24-hour editor and the config.json import."""

from __future__ import annotations

from typing import Any

import streamlit as st

from calc import (
    KEYS,
    catalogue,
    parse,
)
from calc.engines import ENGINE_NAMES, family_name, kv_rule, tp_rule
from calc.hf_config import HFConfigError, from_hf_config_json_with_notes
from calc.scenario import (
    CUSTOM,
    DEPENDENTS,
    KEY_TABLE,
    KV_FORMATS,
    RANGES,
    WEIGHT_FORMATS,
    day_weights,
    slider_stops,
    with_imported_model,
)

from .state import (
    _errors,
    _forget_said,
    _link_errors,
    _on_override,
    _on_parent,
    _on_parent_value,
    _restore,
    _store,
    _widget_value,
    exact_entry,
    put,
    sent,
    switched,
    switched_text,
    widget_params,
)
from .text import EMPTY_TEXT, plain

#: Sidebar groups in order, each with its title; the keys of a group and their order come from calc's key table.
GROUP_TITLES = {"model": "Model", "hardware": "Hardware", "engine": "Engine", "precision": "Precision and context",
                "money": "Money", "own": "Owning the cards", "traffic": "Traffic and API", "levers": "Levers",
                "advanced": "Advanced"}


GROUPS = [(title, [k.key for k in KEY_TABLE if k.group == group]) for group, title in GROUP_TITLES.items()]


#: Keys whose input is on a page rather than in the sidebar (the Decision page's reasons).
PAGE_KEYS = [k.key for k in KEY_TABLE if k.group not in GROUP_TITLES]


OPEN_GROUPS = {"Model", "Hardware", "Precision and context", "Money"}


def _label(key: str) -> str:
    return KEYS[key].label


def _options_with(options: list[str], current: Any) -> list[str]:
    return options + ([str(current)] if current is not None and str(current) not in options else [])


def _stop_text(value: Any) -> str:
    """A slider stop for people: whole numbers with thousands separators, others to four figures."""
    if isinstance(value, str):
        bits = WEIGHT_FORMATS.get(value, KV_FORMATS.get(value))
        return f"{value} ({bits:g} bits)" if bits is not None else f"{value} bits"
    if float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) >= 1000:  # 12,345.6, not 1.235e+04
        return f"{value:,.1f}"
    return f"{value:.4g}"


def _to_auto(key: str, parent: str | None) -> None:
    """The key's input is cleared: it follows the traffic again (an empty box means auto)."""
    put(key, None)
    _on_override(key, parent)


def _slider(key: str, parent: str | None, common: dict) -> None:
    """A select-slider over the key's stops (calc.scenario.slider_stops), keyed by the link key."""
    stops = slider_stops(key, st.session_state.get(key))
    if key == "gpus":  # only the sizes the engine can split this model over (its tensor-parallel rule), and the value
        get = st.session_state.get
        stops = [g for g in stops if g == get(key) or tp_rule(
            str(get("engine")), int(get("heads") or 1), int(get("kv_heads") or 1), g, bool(get("kv_latent"))) is None]
    if key == "kv":  # only the formats the engine holds its cache in (engines.kv_rule), and the value in use
        value = st.session_state.get(key)
        stops = [f for f in stops if f == value or kv_rule(str(st.session_state.get("engine")), str(f)) is None]
    st.select_slider(_label(key), options=stops, format_func=_stop_text, on_change=_on_override,
                     args=(key, parent), **common)


def _preset_text(key: str) -> Any:
    """How a preset id of ``key`` (a model, card or API row) reads in its box."""
    if key == "api":
        def fmt(v: str) -> str:
            row = catalogue.apis().get(v)
            if row is None:
                return v
            tier = "" if row["tier_above_tok"] is None else (
                f" ({row['tier_api_in']:g} / {row['tier_api_out']:g} above {row['tier_above_tok']:,} prompt tokens)")
            return (f"{row['api_in']:g} / {row['api_out']:g} USD{tier} · {row['provider']} · "
                    f"{row['model'].split('/')[-1]}")
        return fmt
    names = _PRESET_TABLES[key]()

    def fmt_preset(v: str) -> str:
        return "Custom" if v == CUSTOM else names[v]["name"] if v in names else v
    return fmt_preset


#: The catalogue each preset-id key picks from.
_PRESET_TABLES = {"model": catalogue.models, "card": catalogue.cards, "api": catalogue.apis}


def _preset_options(key: str) -> list[str]:
    """The ids a preset key offers: API rows of the current model's family first; models and cards, then Custom."""
    names = _PRESET_TABLES[key]()
    if key != "api":
        return [*names, CUSTOM]
    return catalogue.api_ids_for(st.session_state.get("api"))


def _choice_text(key: str) -> Any:
    """How a choice of ``key`` reads: an engine by its name, a card family as its vendor spells it, a precision marked
    where the card lacks it."""
    if key == "engine":
        return lambda v: ENGINE_NAMES.get(v, v)
    if key == "arch":
        return lambda v: family_name(v) or "unknown"
    if key == "compute":
        card = catalogue.cards().get(st.session_state.get("card", ""))
        return lambda v: v if card is None or card["peaks"].get(v) is not None else f"{v} (not on this card)"
    return str


#: What an empty box means where that is the key's own (an empty reserve is the engine's own accounting, not a
#: target nobody set).
EMPTY_BY_KEY = {"overhead_gib": "none: the engine's own accounting", "max_seqs": "none: no cap"}


def _widget(key: str) -> None:
    """The input of one link key, by its kind (calc.scenario.Key.kind): a slider or a number box for a number, a
    select box for a preset id, a choice or a format, a check box for a flag, the day's editor for a profile."""
    spec = KEYS[key]
    parent = spec.preset if spec.shape else None  # typing over a preset's figure makes it custom
    common = dict(key=key, help=f"{spec.help} Link key `{key}`; accepts {spec.accepted}.")
    sliding = spec.slider is not None and not exact_entry() and st.session_state.get(key) is not None
    # A key whose input changes kind (an auto box typed into becomes a slider, and back): Streamlit drops the
    # value the old widget held, so it is given to the new one again before it is drawn.
    kinds = st.session_state.setdefault("_input_kinds", {})
    if spec.slider is not None and kinds.get(key, sliding) != sliding:
        put(key, st.session_state.get(key))
    kinds[key] = sliding
    if sliding:
        _slider(key, parent, common)
        if spec.empty == "auto":  # a slider has no empty state: a way back to the value that follows the traffic
            st.button(f"Back to {key}=auto", key=f"_auto_{key}", on_click=_to_auto, args=(key, parent),
                      type="tertiary", help=f"Clear {key}: it follows the traffic again.")
    elif spec.kind == "id":
        st.selectbox(_label(key), _options_with(_preset_options(key), st.session_state.get(key)),
                     format_func=_preset_text(key), on_change=_on_parent, args=(key,), **common)
    elif spec.kind == "choice":
        # A preset card's family is its own (the link may not name another): shown, not chosen.
        fixed = key == "arch" and st.session_state.get("card") != CUSTOM
        st.selectbox(_label(key), list(spec.choices), format_func=_choice_text(key),
                     on_change=_on_parent if key in DEPENDENTS else _on_override,
                     args=(key,) if key in DEPENDENTS else (key, None), disabled=fixed, **common)
    elif spec.kind in ("weights", "kv"):
        formats = KV_FORMATS if spec.kind == "kv" else WEIGHT_FORMATS
        names = [f for f in formats if spec.kind != "kv" or kv_rule(str(st.session_state.get("engine")), f) is None]
        st.selectbox(_label(key), _options_with(names, st.session_state.get(key)),
                     format_func=lambda v, f=formats: f"{v} ({f[v]:g} bits)" if v in f else f"{v} bits",
                     accept_new_options=True, on_change=_on_override, args=(key, None), **common)
    elif spec.kind == "profile":
        st.text_input(_label(key), placeholder="none: every hour as the peak factor says", on_change=_on_override,
                      args=(key, None), **common)
        _profile_editor()
    elif spec.kind == "flag":
        st.checkbox(_label(key), on_change=_on_override, args=(key, None), **common)
    else:
        cast = RANGES[key][0]
        placeholder = EMPTY_BY_KEY.get(key, EMPTY_TEXT.get(spec.empty or ""))
        if spec.empty == "unknown" and "USD" not in spec.unit:  # a board power or a clock is not a price
            placeholder = "unknown: enter one"
        # An empty box means auto / none / unknown where the key has such a value; elsewhere emptying it keeps the
        # figure in use and says so (state._on_override), never its lowest value.
        # No bounds in the box: the browser would refuse a value out of range in silence, leaving it shown while the
        # figures keep the last one. Here the parser refuses it by name, beside the box, with the accepted range.
        st.number_input(_label(key), step=cast(spec.step),
                        format=spec.fmt, placeholder=placeholder or "a number is needed", on_change=_on_override,
                        args=(key, parent), value=None, **common)
    sent(key)
    kept = st.session_state.get("_kept_on_empty", {}).get(key)
    if kept is not None:
        st.warning(f"{_label(key)} needs a number ({RANGES[key][1]:g} to {RANGES[key][2]:g}): "
                   f"the box was emptied, so {kept} is kept.", icon=":material/warning:")
    if key == "peak" and st.session_state.get("profile"):
        st.caption("Set by the day's profile (Traffic: profile): its busiest hour over its mean.")
    err = _errors().get(key)
    if err is not None:
        st.error(plain(err.message), icon=":material/error:")
    moved = switched().get(key)
    if moved is not None:
        st.info(plain(switched_text(key, *moved)), icon=":material/swap_horiz:")


HOURS = range(24)


def _hour_weights() -> tuple[float, ...]:
    """The 24 weights the profile box holds now: a named shape's, the typed ones, or 1 every hour (no profile, or
    one the parser will refuse and name)."""
    text = (st.session_state.get("profile") or "").strip()
    try:
        weights = day_weights(text) if text else None
    except ValueError:
        weights = None
    return tuple(weights) if weights is not None and len(weights) == 24 else (1.0,) * 24


def _on_hour() -> None:
    """An hour was edited: the profile key takes the 24 numbers (so the link holds them), as if typed."""
    put("profile", ",".join(f"{float(st.session_state[f'_hour_{h}'] or 0):g}" for h in HOURS))
    st.session_state["_hours_of"] = st.session_state["profile"]
    _on_override("profile", None)


def _profile_editor() -> None:
    """The 24-hour editor beside the profile box: one number an hour, filled from the profile in use."""
    current = st.session_state.get("profile")
    # Streamlit drops a widget's state in a run that does not draw it (a folded group on a first draw, another
    # page): then, or when the profile changed elsewhere, the boxes take the profile in use again.
    missing = any(f"_hour_{h}" not in st.session_state for h in HOURS)
    if missing or st.session_state.get("_hours_of", object()) != current:
        for h, w in zip(HOURS, _hour_weights(), strict=True):
            st.session_state[f"_hour_{h}"] = float(w)
        st.session_state["_hours_of"] = current
    with st.popover("Edit the 24 hours", icon=":material/schedule:", width="stretch"):
        st.caption("Each hour's share of the day's requests, as relative weights (hour 0 first). Editing one "
                   "writes all 24 into the profile key, and so into the link.")
        cols = st.columns(4)
        for h in HOURS:
            cols[h // 6].number_input(f"{h:02d}:00", min_value=0.0, max_value=1000.0, step=0.1, format="%g",
                                      key=f"_hour_{h}", on_change=_on_hour)


def _on_import() -> None:
    """Read the uploaded or pasted config.json (JSON only, size- and depth-limited, never executed)."""
    upload = st.session_state.get("_hf_file")
    pasted = (st.session_state.get("_hf_text") or "").encode()
    raw = pasted if pasted.strip() or upload is None else upload.getvalue()  # pasted text wins over a file
    st.session_state.pop("_hf_error", None)
    if not raw.strip():
        st.session_state["_hf_error"] = "Upload a config.json or paste its text first."
        return
    try:
        shape, read = from_hf_config_json_with_notes(raw)
    except HFConfigError as exc:
        st.session_state["_hf_error"] = f"This config.json cannot be used: {exc}"
        return
    said = (" " + " ".join(n[0].upper() + n[1:].rstrip(".") + "." for n in read)) if read else ""
    matched = catalogue.match_model(shape)
    if matched:  # the config is a catalogue model: its preset, with its API row, stands for it
        _on_parent_value("model", matched)
        for key, value in catalogue.format_differences(shape, matched).items():  # formats the preset lacks
            put(key, _widget_value(key, value))
        st.session_state["_hf_done"] = (f"This config.json has the shape of the catalogue's "
                                        f"{catalogue.models()[matched]['name']}: its preset and its API row are "
                                        f"used.{said}")
        return
    # The model in use goes with everything derived from it (its API row above all), as with --hf-config.
    parsed = parse(with_imported_model(widget_params(), shape))
    refused = [e for e in parsed.errors if e.key in shape]
    if refused:
        st.session_state["_hf_error"] = ("This config.json describes a model the calculator cannot take: "
                                         + "; ".join(e.message for e in refused))
        return
    _store(parsed.scenario)
    for key in shape:
        _link_errors().pop(key, None)
    # An input the new model makes impossible (8 cards of tensor parallelism for 12 heads) is said, not switched
    # silently, until the next change of any input.
    _forget_said()
    st.session_state["_fallbacks"] = {e.key: e for e in parsed.errors}
    st.session_state["_hf_done"] = (f"Imported: {shape['params_b']:.3f} B parameters ({shape['active_b']:.3f} B active), "
                                    f"{shape['layers']} layers, {shape['kv_heads']} KV heads.{said}")


def _import_config() -> None:
    with st.popover("Import a config.json", icon=":material/upload_file:", width="stretch"):
        st.caption("A Hugging Face model config becomes the custom model (parameters counted from its shapes). "
                   "The file is read as JSON only, at most 1 MB.")
        st.file_uploader("config.json", type=["json"], key="_hf_file", max_upload_size=1)
        st.text_area("…or paste it (pasted text is used first)", key="_hf_text", height=120, max_chars=1_000_000)
        st.button("Use this config", on_click=_on_import, type="primary")
    if "_hf_error" in st.session_state:
        st.error(plain(st.session_state.pop("_hf_error")))
    elif "_hf_done" in st.session_state:
        st.success(st.session_state.pop("_hf_done"))


#: The decision's own inputs, first on the Decision page: traffic, then model, card and precision; the
#: architecture and hardware details follow, folded.
DECISION_FIRST = ("Traffic, model, card and precision",
                  ["req_day", "in_tok", "out_tok", "model", "card", "gpus", "engine", "weights", "kv", "usd_hr"])


def _groups(decision: bool) -> list[tuple[str, list[str]]]:
    if not decision:
        return GROUPS
    first = DECISION_FIRST[1]
    rest = [(title if title != "Model" else "Model architecture", [k for k in keys if k not in first])
            for title, keys in GROUPS]
    return [DECISION_FIRST] + [(title, keys) for title, keys in rest if keys]


def sidebar(decision: bool = False, light: bool = False) -> None:
    """All inputs, grouped; each widget's key is its link key. On the Decision page the inputs the decision
    turns on come first and the details are folded."""
    with st.sidebar:
        st.caption("Every input is part of the link: copy the address bar, or use the Copy link button at the end of this sidebar, "
                   "to share this exact scenario.")
        st.toggle("Exact entry", key="_exact", on_change=_restore,
                  help="Number boxes instead of sliders, for values between the slider's stops.")
        # A group opened to show a refused value stays open once the value is mended: the user is still there.
        shown_error = st.session_state.setdefault("_groups_with_errors", set())
        for title, keys in _groups(decision):
            has_error = any(k in _errors() for k in keys)
            if has_error:
                shown_error.add(title)
            opened = title == DECISION_FIRST[0] if decision else title in OPEN_GROUPS
            if light and not (opened or has_error):
                continue  # a first draw shows the open groups; the folded ones follow with the rest of the page
            with st.expander(title, expanded=opened or title in shown_error):
                if title in ("Model", "Model architecture"):
                    _import_config()
                for key in keys:
                    _widget(key)
