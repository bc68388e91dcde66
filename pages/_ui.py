"""Streamlit glue shared by every page: the scenario's single source of truth and the sidebar.

Data flows one way: URL query -> scenario (validated by ``calc``) -> widgets -> scenario -> ``calc``
-> tables and charts. Every widget's key is its link key; after each run the query string is
rewritten from the scenario, so the address bar is always a complete, shareable link.
No arithmetic happens here: pages call ``calc``.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import pandas as pd
import streamlit as st

from calc import (
    KEYS,
    Evaluation,
    FieldError,
    Parsed,
    Scenario,
    catalogue,
    evaluate,
    notes,
    parse,
    tables,
    with_change,
    words,
)
from calc.engines import ENGINE_NAMES
from calc.hf_config import HFConfigError, from_hf_config_json_with_notes
from calc.scenario import (
    CUSTOM,
    DEPENDENTS,
    KEY_TABLE,
    KV_FORMATS,
    LINK,
    RANGES,
    WEIGHT_FORMATS,
    day_weights,
    link_too_long,
    slider_stops,
)


def _warm_quant_lab() -> None:
    """The quantization lab's tables at the notes' settings, once per server process and off any request: a first
    visit to the lab then draws them from the cache (calc.quantlab.lab_tables waits for this run if it is on)."""
    from calc import quantlab
    quantlab.lab_tables()


threading.Thread(target=_warm_quant_lab, name="calc-warm-quant-lab", daemon=True).start()

#: Sidebar groups in order, each with its title; the keys of a group and their order come from calc's key table.
GROUP_TITLES = {"model": "Model", "hardware": "Hardware", "engine": "Engine", "precision": "Precision and context",
                "money": "Money", "own": "Owning the cards", "traffic": "Traffic and API", "levers": "Levers",
                "advanced": "Advanced"}
GROUPS = [(title, [k.key for k in KEY_TABLE if k.group == group]) for group, title in GROUP_TITLES.items()]
#: Keys whose input is on a page rather than in the sidebar (the Decision page's reasons).
PAGE_KEYS = [k.key for k in KEY_TABLE if k.group not in GROUP_TITLES]
OPEN_GROUPS = {"Model", "Hardware", "Precision and context", "Money"}
#: An axis label with SI prefixes as people read money and volumes: k, M, and B for a billion (d3 writes G).
SI_LABEL = "replace(format(datum.value, '~s'), 'G', 'B')"
#: The same, with plain numbers below 1,000 (0.001 stays 0.001, not 1m).
SI_LABEL_PLAIN = f"datum.value >= 1000 ? {SI_LABEL} : format(datum.value, ',~g')"
#: Placeholder text of an input left empty, by what empty means.
EMPTY_TEXT = {"auto": "auto", "unknown": "no price: enter one", "none": "no target"}


# ---------------------------------------------------------------- scenario <-> widget state

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
        st.session_state[key] = _widget_value(key, value)


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


_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character (CommonMark escapes them all)
_ZWSP = "\u200b"
#: Patterns the renderer acts on after escapes are read (autolinks in any letter case, e-mail addresses,
#: ``:material/…:`` icons, ``:emoji:`` short codes, ``:red[…]`` colours): a zero-width space splits each.
_AFTER_ESCAPES = re.compile(r"(?i)(?<=www)(?=\\\.)|(?<=:)|(?<=@)")


def plain(text: str, limit: int = 1000) -> str:
    """Text as Markdown that renders literally: text from a link or an uploaded file can never become a
    link, an image, an icon or formatting in the page, and is at most ``limit`` characters long."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[:limit] + "…"
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return _AFTER_ESCAPES.sub(_ZWSP, text)


def _link_errors() -> dict[str, FieldError]:
    """Values of the opened link that could not be used; each stays shown until its input is changed."""
    return st.session_state.setdefault("_errors", {})


def _errors() -> dict[str, FieldError]:
    """Everything to show beside the inputs this run: the link's rejected values and the rules the
    current inputs break."""
    parsed = st.session_state.get("_parsed")
    return {**_link_errors(), **({e.key: e for e in parsed.errors} if parsed is not None else {})}


def _on_parent(key: str) -> None:
    """A preset changed: bring in its figures (and drop what depended on the old one)."""
    _on_parent_value(key, st.session_state[key])


def _on_parent_value(key: str, value: Any) -> None:
    parsed = parse(with_change(widget_params(), key, value))
    _store(parsed.scenario)
    _link_errors().pop(key, None)
    if any(e.key == key for e in parsed.errors):
        st.session_state[key] = value  # a value the parser refuses stays in its box, named beside it


def _on_override(key: str, parent: str | None) -> None:
    """A figure was typed over a preset's: the model or card becomes custom, so the label never lies. A key
    others derive from (the weight format, which the checkpoint's other parts follow) drops them, as a preset
    does."""
    _link_errors().pop(key, None)
    if parent and st.session_state.get(parent) != CUSTOM:
        st.session_state[parent] = CUSTOM
    if key in DEPENDENTS and key not in ("model", "card"):
        _on_parent_value(key, st.session_state[key])


def _label(key: str) -> str:
    return KEYS[key].label


def _options_with(options: list[str], current: Any) -> list[str]:
    return options + ([str(current)] if current is not None and str(current) not in options else [])


def _stop_text(value: Any) -> str:
    """A slider stop for people: whole numbers with thousands separators, others to four figures."""
    if isinstance(value, str):
        bits = WEIGHT_FORMATS.get(value, KV_FORMATS.get(value))
        return f"{value} ({bits:g} bits)" if bits is not None else f"{value} bits"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:.4g}"


def exact_entry() -> bool:
    """Whether the inputs are number boxes (exact entry) rather than sliders; a view setting, not in the link."""
    return bool(st.session_state.get("_exact", False))


def _slider(key: str, parent: str | None, common: dict) -> None:
    """A select-slider over the key's stops (calc.scenario.slider_stops), keyed by the link key."""
    stops = slider_stops(key, st.session_state.get(key))
    st.select_slider(_label(key), options=stops, format_func=_stop_text, on_change=_on_override,
                     args=(key, parent), **common)


def _restore() -> None:
    """The inputs change kind (slider <-> box): give the new widgets the scenario's values, not their defaults."""
    parsed = st.session_state.get("_parsed")
    if parsed is not None:
        _store(parsed.scenario)


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
    current = names.get(st.session_state.get("api", ""))
    family = current["family"] if current else None
    return sorted(names, key=lambda a: (names[a]["family"] != family, names[a]["kind"] != "open-weight",
                                        names[a]["family"], names[a]["api_in"] + names[a]["api_out"]))


def _choice_text(key: str) -> Any:
    """How a choice of ``key`` reads: an engine by its name, a precision marked where the card lacks it."""
    if key == "engine":
        return lambda v: ENGINE_NAMES.get(v, v)
    if key == "compute":
        card = catalogue.cards().get(st.session_state.get("card", ""))
        return lambda v: v if card is None or card["peaks"].get(v) is not None else f"{v} (not on this card)"
    return str


def _widget(key: str) -> None:
    """The input of one link key, by its kind (calc.scenario.Key.kind): a slider or a number box for a number, a
    select box for a preset id, a choice or a format, a check box for a flag, the day's editor for a profile."""
    spec = KEYS[key]
    parent = spec.preset if spec.shape else None  # typing over a preset's figure makes it custom
    common = dict(key=key, help=f"{spec.help} Link key `{key}`; accepts {spec.accepted}.")
    if spec.slider is not None and not exact_entry() and st.session_state.get(key) is not None:
        _slider(key, parent, common)
    elif spec.kind == "id":
        st.selectbox(_label(key), _options_with(_preset_options(key), st.session_state.get(key)),
                     format_func=_preset_text(key), on_change=_on_parent, args=(key,), **common)
    elif spec.kind == "choice":
        st.selectbox(_label(key), list(spec.choices), format_func=_choice_text(key),
                     on_change=_on_parent if key in DEPENDENTS else _on_override,
                     args=(key,) if key in DEPENDENTS else (key, None), **common)
    elif spec.kind in ("weights", "kv"):
        formats = KV_FORMATS if spec.kind == "kv" else WEIGHT_FORMATS
        st.selectbox(_label(key), _options_with(list(formats), st.session_state.get(key)),
                     format_func=lambda v, f=formats: f"{v} ({f[v]:g} bits)" if v in f else f"{v} bits",
                     accept_new_options=True, on_change=_on_override, args=(key, None), **common)
    elif spec.kind == "profile":
        st.text_input(_label(key), placeholder="none: every hour as the peak factor says", on_change=_on_override,
                      args=(key, None), **common)
        _profile_editor()
    elif spec.kind == "flag":
        st.checkbox(_label(key), on_change=_on_override, args=(key, None), **common)
    else:
        cast, lo, hi = RANGES[key]
        placeholder = EMPTY_TEXT.get(spec.empty or "")
        nullable = {"value": None} if placeholder else {}  # an empty box means auto / none / unknown
        st.number_input(_label(key), min_value=cast(lo), max_value=cast(hi), step=cast(spec.step),
                        format=spec.fmt, placeholder=placeholder, on_change=_on_override, args=(key, parent),
                        **nullable, **common)
    if key == "peak" and st.session_state.get("profile"):
        st.caption("Set by the day's profile (Traffic: profile): its busiest hour over its mean.")
    err = _errors().get(key)
    if err is not None:
        st.error(plain(err.message), icon=":material/error:")


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
    st.session_state["profile"] = ",".join(f"{float(st.session_state[f'_hour_{h}'] or 0):g}" for h in HOURS)
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
            st.session_state[key] = _widget_value(key, value)
        st.session_state["_hf_done"] = (f"This config.json has the shape of the catalogue's "
                                        f"{catalogue.models()[matched]['name']}: its preset and its API row are "
                                        f"used.{said}")
        return
    parsed = parse({**widget_params(), **shape})
    refused = [e for e in parsed.errors if e.key in shape]
    if refused:
        st.session_state["_hf_error"] = ("This config.json describes a model the calculator cannot take: "
                                         + "; ".join(e.message for e in refused))
        return
    _store(parsed.scenario)
    for key in shape:
        _link_errors().pop(key, None)
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
        for title, keys in _groups(decision):
            has_error = any(k in _errors() for k in keys)
            opened = title == DECISION_FIRST[0] if decision else title in OPEN_GROUPS
            if light and not (opened or has_error):
                continue  # a first draw shows the open groups; the folded ones follow with the rest of the page
            with st.expander(title, expanded=opened or has_error):
                if title in ("Model", "Model architecture"):
                    _import_config()
                for key in keys:
                    _widget(key)


# A button that copies the page's address (the complete link) to the clipboard. The clipboard API needs a
# secure context; on plain http the copy falls back to a selected text field.
_COPY_LINK_HTML = """<button type="button" class="calc-copy">Copy link to this scenario</button>
<span class="calc-copied" aria-live="polite"></span>"""
_COPY_LINK_CSS = """
.calc-copy { font: inherit; font-size: 0.875rem; padding: 0.35rem 0.75rem; border-radius: 0.5rem; cursor: pointer;
  border: 1px solid var(--st-border-color, rgba(128, 128, 128, 0.4)); color: var(--st-text-color, inherit);
  background: var(--st-secondary-background-color, transparent); }
.calc-copy:hover { border-color: var(--st-primary-color, #ff4b4b); }
.calc-copied { font-size: 0.8rem; margin-left: 0.5rem; opacity: 0.8; }
"""
_COPY_LINK_JS = """
export default function (component) {
  const { parentElement } = component;
  const button = parentElement.querySelector(".calc-copy");
  const said = parentElement.querySelector(".calc-copied");
  button.onclick = async () => {
    const link = window.location.href;
    try {
      await navigator.clipboard.writeText(link);
    } catch (e) {
      const field = document.createElement("textarea");
      field.value = link;
      document.body.appendChild(field);
      field.select();
      document.execCommand("copy");
      field.remove();
    }
    said.textContent = "Copied";
    setTimeout(() => { said.textContent = ""; }, 2000);
  };
}
"""
_copy_link = st.components.v2.component("calc_copy_link", html=_COPY_LINK_HTML, css=_COPY_LINK_CSS, js=_COPY_LINK_JS)


def sync(decision: bool = False, light: bool = False, draw: bool = True) -> Parsed:
    """Run once per script run, before the pages: link -> widgets -> scenario -> link.

    On a session's first run the query string is parsed; bad values become named errors shown beside
    their inputs and the defaults are used. Returns the scenario the pages must use.
    """
    if "_loaded" not in st.session_state:
        # The query string again as text, so that its length meets the same limit as the command line's.
        first = parse(urlencode([(k, v) for k in st.query_params for v in st.query_params.get_all(k)]))
        st.session_state["_errors"] = {e.key: e for e in first.errors}
        # What the link said for each rejected key, kept in the address bar until that input is changed, so
        # the link still shows what was asked for rather than a silent default.
        # (A value that breaks a rule only beside other values is not kept: the link then reads as it is used.)
        st.session_state["_rejected"] = {e.key: st.query_params.get_all(e.key)[-1] for e in first.errors
                                         if e.key in KEYS and not e.rule and st.query_params.get_all(e.key)}
        st.session_state["_check_link"] = not st.query_params
        st.session_state["_link_warnings"] = [w for w in first.warnings if w.startswith(("unknown key", "key "))]
        _store(first.scenario)
        st.session_state["_loaded"] = True
    # Parse before drawing, so that a combination of inputs that breaks a rule is named beside its input now.
    parsed = parse(widget_params())
    st.session_state["_parsed"] = parsed
    for key, value in parsed.scenario.as_dict().items():
        # An emptied box whose key has a default (the card's rent) shows the value in use, never a blank that lies.
        if st.session_state.get(key) is None and _widget_value(key, value) is not None:
            st.session_state[key] = _widget_value(key, value)
    if draw:  # (the root's forward draws nothing: widgets drawn there and not on the next page lose their state)
        sidebar(decision, light)
    params = parsed.scenario.to_params()
    rejected = st.session_state.get("_rejected", {})
    kept = {k: v for k, v in rejected.items() if k in _link_errors()}
    params = {k: kept.get(k, params.get(k)) for k in KEYS if k in kept or k in params}
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    return parsed


# ---------------------------------------------------------------- what pages read


def base_url() -> str:
    """Where this app is served, for links people copy (the memo's): ``CALC_BASE_URL`` when set (behind a
    proxy that rewrites the address), else the scheme and host this page was opened at with the server's own
    ``server.baseUrlPath``: never a path the user typed (an unknown page's path is not echoed into links)."""
    from calc.memo import DEFAULT_BASE_URL

    override = os.environ.get("CALC_BASE_URL", "").strip()
    if override:
        return override.rstrip("/")
    url = st.context.url or ""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return DEFAULT_BASE_URL
    prefix = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return urlunsplit((parts.scheme, parts.netloc, f"/{prefix}" if prefix else "", "", ""))

def _enter_through_app() -> None:
    """Re-enter through app.py when Streamlit ran a page file on its own.

    Streamlit treats a folder named ``pages`` beside the entry script as a list of pages until the first
    ``st.navigation`` call of the server process; a first visit that lands on a page's URL would run that
    page without the frame. Declaring a navigation turns that mode off, and the rerun goes through app.py.
    """
    navigation()
    st.rerun()


FAVICON = str(Path(__file__).resolve().parent.parent / "assets" / "favicon.png")

PAGES = [  # (script, title, url_path): url paths are part of shared links and never change
    ("pages/decision.py", "Decision", "decision"),
    ("pages/fit.py", "Fit", "fit"),
    ("pages/speed.py", "Speed", "speed"),
    ("pages/cost.py", "Cost", "cost"),
    ("pages/catalogue.py", "Models & cards", "catalogue"),
    ("pages/levers.py", "Levers", "levers"),
    ("pages/quantlab.py", "Quantization lab", "quant-lab"),
    ("pages/validation.py", "Validation", "validation"),
]


#: The hidden entry at the root, which forwards to the first page.
HOME_PATH = "start"


def navigation():
    """Declare the app's pages and return the one this run shows.

    Streamlit serves its default page at ``/`` only, so the default is a hidden entry that forwards to
    the first page: every visible page then keeps its own stable ``url_path``.
    """
    # No Material icons on the pages: the browser tab would fetch the current one from a font server outside.
    visible = [st.Page(path, title=title, url_path=url) for path, title, url in PAGES]

    def home() -> None:
        st.session_state.pop("_frame", None)
        st.switch_page(visible[0])

    entry = st.Page(home, title="Self-host or API", url_path=HOME_PATH, default=True, visibility="hidden")
    return st.navigation([entry, *visible], position="top")


@st.cache_resource(max_entries=512, show_spinner=False)
def _evaluation(query: str) -> Evaluation:
    # An Evaluation is frozen, so sessions can share one; keyed by the complete link.
    return evaluate(parse(query))


def frame(page: Any = None) -> None:
    """app.py's part of every run: link and widgets in step, then the header every page shares (its memory flag
    about the figures of ``page``: the Decision page sizes requests at prompt + output, the others at ctx).

    A session's first run is a first draw (see :func:`details`): the sidebar's folded groups wait for the rest."""
    path = getattr(page, "url_path", "")
    if path == HOME_PATH:  # the root only forwards: read the link, draw nothing
        sync(draw=False)
        return
    light = not st.session_state.get("_drawn", False)
    st.session_state["_drawn"] = True
    st.session_state["_light"] = light
    sync(decision=path == "decision", light=light)
    with st.sidebar:
        # The address bar is the link; the button copies it (a plain button: light to draw on a first visit).
        _copy_link(key="_copy_link", height=40)
    header(*current(), traffic=path == "decision", flags=path not in QUIET_PAGES,
           accuracy=path != "quant-lab")
    st.session_state["_frame"] = True


# Asks for the rest of the page once the browser has drawn the first part (after the next paint). It also says
# how large the link the browser opened was: the server ignores a whole query string past its limits, so the
# script then sees an empty link, and only the browser still knows what was asked for. (One signal, one rerun:
# a second component asking for its own rerun on a first visit raced this one and could leave the inputs drawn
# at their defaults.)
_DRAWN_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  const entry = performance.getEntriesByType("navigation")[0];
  const query = new URL(entry ? entry.name : window.location.href).search.replace(/^\\?/, "");
  const opened = {fields: query ? query.split("&").length : 0, chars: query.length};
  requestAnimationFrame(() => setTimeout(() => setTriggerValue("drawn", opened), 0));
}
"""
_drawn_signal = st.components.v2.component("calc_drawn", js=_DRAWN_JS)
#: The key of the marker a first draw leaves where the details will be (tests wait for it to go).
LOADING_KEY = "calc-loading-details"


def _on_drawn() -> None:
    """The first draw is on screen: when the session opened with an empty link, check the size of the link the
    browser opened; one past the server's limits becomes a named error on every page."""
    if not st.session_state.get("_check_link"):
        return
    st.session_state["_check_link"] = False
    opened = (st.session_state.get("_drawn_signal") or {}).get("drawn")
    if isinstance(opened, dict):
        error = link_too_long(int(opened.get("fields", 0)), int(opened.get("chars", 0)))
        if error is not None:
            _link_errors()[LINK] = error


def details() -> None:
    """Where a page's details begin (charts, long tables, the memo). On a session's first run the page ends here:
    the verdict and the headline figures reach a fresh browser first, and once it has drawn them it asks for the
    rest, which comes in the next run, with the sidebar's folded groups. Every later run draws the whole page."""
    if not st.session_state.get("_light"):
        return
    with st.container(key=LOADING_KEY):
        st.caption("Loading the charts and tables…")
        _drawn_signal(key="_drawn_signal", height=0, on_drawn_change=_on_drawn)
    st.stop()


def page() -> tuple[Scenario, dict]:
    """A page's first call: the scenario and report of this run.

    When Streamlit ran the page file without app.py (its ``pages``-folder mode), re-enter through app.py.
    """
    if not st.session_state.pop("_frame", False):
        _enter_through_app()
    return current()


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


#: Pages whose figures do not rest on the scenario's batch (reference tables, the quantization lab, the
#: validation): they show rejected values and the fit errors, not the batch flags.
QUIET_PAGES = ("catalogue", "quant-lab", "validation")


def header(scenario: Scenario, report: dict, traffic: bool = False, flags: bool = True, accuracy: bool = True) -> None:
    """What every page shows on top: rejected link values and the memory-before-compute flag, at the worst-case
    context (the Fit, Speed and Cost figures) or, with ``traffic``, at a request's prompt + output tokens (the
    Decision page's figures); without ``flags`` only the rejected values and whether the weights fit; with
    ``accuracy`` how far the engine's figures were from published measurements."""
    for w in report["warnings"]:
        if w.startswith(notes.WHAT_IF):  # a fixed context or duty: said first, with the traffic's figure
            st.info(plain(w[0].upper() + w[1:]) + ".", icon=":material/science:")
    errors = list(_errors().values())
    if errors:
        st.error("Some values could not be used; each fell back to its default:\n\n"
                 + "\n".join(f"- {plain(e.message)}" for e in errors), icon=":material/block:")
    if not report["fits"]:
        mem = table("card_memory", scenario)
        st.error(f"**The weights do not fit.** Per card, the weights as loaded and the engine's reserve need "
                 f"{mem.needed_gib:,.1f} GiB, more than it takes: {mem.share_text}. "
                 "Use fewer bits per weight, more cards, or a larger card.", icon=":material/block:")
    elif not flags:
        pass
    elif report["max_batch"] == 0:
        st.error(f"**No sequence of {scenario.ctx:,} tokens fits** beside the weights (the Context input, which the "
                 "Fit, Speed and Cost pages use). Shorten the context, quantise the KV cache, or add memory.",
                 icon=":material/block:")
    elif traffic:
        d = evaluation().decision
        if d.fits:
            _batch_flag(d.cap.max_batch, d.break_even_batch, f"{d.cap.n:,} tokens per request (prompt + output)",
                        scenario)
    else:
        _batch_flag(report["max_batch"], report["break_even_batch"], f"{scenario.ctx:,} tokens", scenario)
    if accuracy:
        outside = notes.outside_measurements(scenario)
        st.caption("Speeds and costs on this page: " + words.accuracy_text(report["engine"], report["error_band"])
                   + (f"; {outside}" if outside else "") + ". (Validation page: every row.)")
    for w in report["warnings"]:
        if not w.startswith(("the weights do not fit", "the weights fit but not one", notes.WHAT_IF)):  # said above
            st.caption("Note: " + plain(w))


def set_reasons(ids: list[str]) -> None:
    """The Decision page's reason boxes changed: keep the ticked ids in the link's ``why`` key."""
    ticked = [rid for rid in ids if st.session_state.get(f"_why_{rid}")]
    st.session_state["why"] = ",".join(ticked) or None
    _link_errors().pop("why", None)


def rejected_keys() -> list[str]:
    """The link keys whose given values are not in use this run (each at its default), in link order."""
    errors = _errors()
    return [k for k in (*KEYS, LINK) if k in errors]


def _batch_flag(mb: int, be: float | None, at: str, s: Scenario) -> None:
    """Warn when the most sequences a step can carry, ``mb`` that memory holds at ``at`` or the engine's lower
    ``max_seqs``, sits below the break-even batch ``be`` (always, when there is none), naming which one binds."""
    by_engine = s.max_seqs is not None and s.max_seqs < mb
    cap = s.max_seqs if by_engine else mb
    if be is not None and cap >= be:
        return
    knee = (f"compute would not bind until batch {words.sig(be, 4) if round(be) == cap else f'{be:,.0f}'}"
            if be is not None else
            "compute never binds at this context (the cache read grows as fast as the arithmetic)")
    seqs = f"sequence{'s' if cap != 1 else ''}"
    if by_engine:
        lead = (f"**The engine caps the batch before compute does:** {ENGINE_NAMES.get(s.engine, s.engine)} "
                f"schedules at most {cap:,} {seqs} per step (max_seqs), though memory holds {mb:,} at {at}")
    else:
        lead = f"**Memory caps the batch before compute does:** memory holds {mb:,} {seqs} at {at}"
    st.warning(f"{lead}; {knee}. A step can share its read of the weights among at most {cap:,} {seqs}, so a "
               "million tokens costs more than the roofline figure.", icon=":material/warning:")


def download_csv(df: pd.DataFrame, name: str, label: str = "Download CSV") -> None:
    """A CSV download of a table, named after the page and table."""
    st.download_button(label, df.to_csv(index=False).encode(), file_name=f"{name}.csv", mime="text/csv",
                       key=f"dl-{name}")




def _printf_to_format(fmt: str | None) -> str | None:
    """A column_config printf format ("%.2f", "%,.0f", "%d") as a str.format spec ("{:.2f}", "{:,.0f}", "{:,.0f}")."""
    if not fmt or not fmt.startswith("%"):
        return None
    spec = fmt[1:].replace("d", ".0f").replace("i", ".0f")
    return "{:" + spec + "}"


def dataframe(df: pd.DataFrame, column_config: dict | None = None, **kwargs: Any) -> None:
    """``st.dataframe`` with every missing cell shown as a dash (never "None" or "nan"). A column with a missing
    cell is shown as text, each number in the column's own format (column formats outrank a Styler's in
    Streamlit, so the cells themselves carry the dash); columns without one keep their numbers for sorting. The
    CSV downloads keep the values."""
    cfg = dict(column_config or {})
    if isinstance(df, pd.DataFrame) and df.isna().to_numpy().any():
        df = df.copy()
        for col in df.columns[df.isna().any()]:
            c = cfg.get(col)
            spec = _printf_to_format(c.get("type_config", {}).get("format")) if isinstance(c, dict) else None

            def shown(v: Any, spec: str | None = spec) -> str:
                if v is None or (not isinstance(v, (list, tuple, dict)) and pd.isna(v)):  # None, NaN, pd.NA
                    return "—"
                if spec and isinstance(v, (int, float)) and not isinstance(v, bool):
                    return spec.format(v)
                return str(v)
            df[col] = [shown(v) for v in df[col]]
            label = c.get("label") if isinstance(c, dict) else c if isinstance(c, str) else None
            cfg[col] = st.column_config.TextColumn(label)
    st.dataframe(df, column_config=cfg, **{"hide_index": True, "width": "stretch", **kwargs})
