"""The frame of every page: navigation, the header every page shares (rejected values, the batch flags, the
accuracy note), and the first draw that ends a page where its details begin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from calc import (
    Scenario,
    notes,
    words,
)
from calc.engines import ENGINE_NAMES
from calc.scenario import KEYS

from .cache import current, evaluation, table
from .links import LINK_WARNINGS, LOADING_KEY, _copy_link, _drawn_signal, _on_drawn, sync
from .state import _errors, switched, switched_text
from .text import plain


def _label(key: str) -> str:
    """The field's name as the sidebar shows it, before a message that names its link key ("**Requests per day**: ")."""
    spec = KEYS.get(key)
    return f"**{plain(spec.label)}**: " if spec is not None else ""

def _enter_through_app() -> None:
    """Re-enter through app.py when Streamlit ran a page file on its own.

    Streamlit treats a folder named ``pages`` beside the entry script as a list of pages until the first
    ``st.navigation`` call of the server process; a first visit that lands on a page's URL would run that
    page without the frame. Declaring a navigation turns that mode off, and the rerun goes through app.py.
    """
    navigation()
    st.rerun()


FAVICON = str(Path(__file__).resolve().parents[2] / "assets" / "favicon.png")


PAGES = [  # (script, title, url_path, heading): url paths are part of shared links and never change
    ("pages/decision.py", "Decision", "decision", "Self-host or API?"),
    ("pages/fit.py", "Fit", "fit", "Does it fit?"),
    ("pages/speed.py", "Speed", "speed", "How fast does it decode?"),
    ("pages/cost.py", "Cost", "cost", "What does a million tokens cost?"),
    ("pages/catalogue.py", "Models & cards", "catalogue", "Models & cards"),
    ("pages/levers.py", "Levers", "levers", "What would change the answer?"),
    ("pages/quantlab.py", "Quantization lab", "quant-lab", "Quantization lab"),
    ("pages/validation.py", "Validation", "validation", "How close are the figures to real engines?"),
]


#: The hidden entry at the root, which forwards to the first page.
HOME_PATH = "start"


def navigation():
    """Declare the app's pages and return the one this run shows.

    Streamlit serves its default page at ``/`` only, so the default is a hidden entry that forwards to
    the first page: every visible page then keeps its own stable ``url_path``.
    """
    # No Material icons on the pages: the browser tab would fetch the current one from a font server outside.
    visible = [st.Page(path, title=title, url_path=url) for path, title, url, _ in PAGES]

    def home() -> None:
        st.session_state.pop("_frame", None)
        st.switch_page(visible[0])

    entry = st.Page(home, title="Self-host or API", url_path=HOME_PATH, default=True, visibility="hidden")
    return st.navigation([entry, *visible], position="top")


def frame(page: Any = None) -> None:
    """app.py's part of every run: link and widgets in step, then the header every page shares (its memory flag
    about the figures of ``page``: the Decision page sizes requests at prompt + output, the others at ctx).

    A session's first run is a first draw (see :func:`details`): the sidebar's folded groups wait for the rest."""
    path = getattr(page, "url_path", "")
    # The root only forwards: read the link, draw nothing (Streamlit gives the default page the url_path "", not
    # its own: drawn as a page, the root took the first, light draw that checks the link the browser opened).
    if path in (HOME_PATH, ""):
        sync(draw=False)
        return
    light = not st.session_state.get("_drawn", False)
    st.session_state["_drawn"] = True
    st.session_state["_light"] = light
    sync(decision=path == "decision", light=light)
    with st.sidebar:
        # The address bar is the link; the button copies it (a plain button: light to draw on a first visit).
        _copy_link(key="_copy_link", height=40)
    # The page's heading first, then what every page says on top (refused values, the memory flag, the accuracy).
    st.title(next((h for _, _, url, h in PAGES if url == path), ""))
    header(*current(), traffic=path == "decision", flags=path not in QUIET_PAGES,
           accuracy=path != "quant-lab", scenario_notes=path != "quant-lab",
           # The Validation page shows no speed or cost of the scenario: its engine's band is what it quotes.
           accuracy_lead="The scenario's engine, " if path == "validation" else "Speeds and costs on this page: ",
           rows_link=path != "validation")
    st.session_state["_frame"] = True


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


#: Pages whose figures do not rest on the scenario's batch (reference tables, the quantization lab, the
#: validation): they show rejected values and the fit errors, not the batch flags.
QUIET_PAGES = ("catalogue", "quant-lab", "validation")


def header(scenario: Scenario, report: dict, traffic: bool = False, flags: bool = True, accuracy: bool = True,
           accuracy_lead: str = "Speeds and costs on this page: ", scenario_notes: bool = True,
           rows_link: bool = True) -> None:
    """What every page shows on top: rejected link values and the memory-before-compute flag, at the worst-case
    context (the Fit, Speed and Cost figures) or, with ``traffic``, at a request's prompt + output tokens (the
    Decision page's figures); without ``flags`` only the rejected values and whether the weights fit; with
    ``accuracy`` how far the engine's figures were from published measurements; without ``scenario_notes`` (a page
    whose figures are not the scenario's, the quantization lab) none of the scenario's notes; without ``rows_link``
    (the Validation page itself) no pointer to the Validation page."""
    for w in report["warnings"]:
        if w.startswith(notes.WHAT_IF):  # a fixed context or duty: said first, with the traffic's figure
            st.info(plain(w[0].upper() + w[1:]) + ".", icon=":material/science:")
    beyond = notes.beyond_trained_context(scenario)
    long_ctx = notes.ctx_beyond(scenario) if flags and not traffic else None  # the pages priced at ctx
    if long_ctx:  # the context the figures assume is one the model does not take as set: said before any figure
        st.warning(f"**The context is longer than the model was trained for:** {plain(long_ctx)}. Engines refuse it "
                   "unless the context is extended (RoPE scaling): the figures price a context this model does not "
                   "take as set.", icon=":material/warning:")
    if beyond:  # the requests themselves cannot be served: said before any figure
        st.error(f"**{notes.BEYOND_CONTEXT[0].upper() + notes.BEYOND_CONTEXT[1:]}:** {plain(beyond)}.",
                 icon=":material/block:")
    # The link itself as written: repeated, empty or unknown keys (the command line warns of them alike).
    written = [w for w in report["warnings"] if w.startswith(LINK_WARNINGS)]
    if written:
        st.warning("Parts of the link were not used as written:\n\n" + "\n".join(f"- {plain(w)}" for w in written),
                   icon=":material/link_off:")
    for w in st.session_state.get("_link_notes", []):  # what the link left to the engine, until the next change
        st.info(plain(w) + ".", icon=":material/swap_horiz:")  # it opens with the engine's name, as written
    moved = switched()
    if moved:  # the user's own change of engine or card moved these: not a refusal
        st.info("Your change moved another input to a value that goes with it:\n\n"
                + "\n".join(f"- {plain(switched_text(k, *v))}" for k, v in moved.items()),
                icon=":material/swap_horiz:")
    errors = list(_errors().values())
    if errors:
        st.error("Some values could not be used; each fell back to its default:\n\n"
                 + "\n".join(f"- {_label(e.key)}{plain(e.message.removesuffix('.'))}"
                             f"{notes.fallback_clause(e.key, scenario)}." for e in errors),
                 icon=":material/block:")
    if not report["fits"]:
        mem = table("card_memory", scenario)
        larger = mem.larger_share_text()
        named = notes.other_vllm_release_fits(scenario, scenario.ctx)
        what = "The weights do not fit" if mem.weights_alone_overflow else "The weights and the engine's reserve do not fit"
        st.error(f"**{what}.** Per card, the weights as loaded and the engine's reserve need "
                 f"{mem.needed_gib:,.1f} GiB, more than the engine takes of the card: {mem.share_text}. "
                 + ("" if named is None else
                    f"Under {named[1]} it fits ({named[2]:,.2f} GiB of KV cache per card): if that is the release "
                    f"you run, name it (engine={named[0]}, Engine in the sidebar). ")
                 + "Use fewer bits per weight, more cards, or a larger card"
                 + (f"; or give the engine more of the card: {larger} (Engine, in the sidebar)." if larger else ".")
                 + (f" {ran}." if (ran := notes.published_run_note(scenario)) else ""),
                 icon=":material/block:")
    elif not flags:
        pass
    elif report["max_batch"] == 0 and beyond:
        pass  # the requests are longer than the model takes (said above): more memory is not the answer
    elif report["max_batch"] == 0:
        untrained = notes.ctx_beyond(scenario)  # then more memory is not the answer: the model does not take it
        st.error(f"**No sequence of {scenario.ctx:,} tokens fits** beside the weights (the Context input, which the "
                 "Fit, Speed and Cost pages use). "
                 + ("Shorten the context: the model was not trained for it (said above or below), so more memory "
                    "is not the answer." if untrained else
                    "Shorten the context, quantise the KV cache, or add memory."),
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
        # Short notes rather than one long one: the cross-validated error, the band the bills use where it is not
        # the engine's own, the rows kept out of the fit, and what the rows did not measure of this scenario.
        said = [accuracy_lead + words.accuracy_text(report["engine"], report["error_band"]) + "."]
        band = words.band_clause(report, scenario).removeprefix("; ")
        if band:
            said.append(words.first_upper(band) + ".")
        kept = words.kept_out_text(report["error_band_kept_out"], report["error_band_kept_out_from"] or "")
        if kept:
            said.append(words.first_upper(kept) + ".")
        rest = outside.removeprefix("; ")
        if rest:
            said.append(words.first_upper(rest) + ".")
        if rows_link:  # the pointer ends the last of these notes, never a paragraph of its own
            said[-1] += " (Validation page: every row.)"
        for text in said:
            st.caption(text)
    for w in report["warnings"] if scenario_notes else ():
        if not w.startswith(("the weights do not fit", "the weights fit but not one", notes.WHAT_IF,
                             notes.BEYOND_CONTEXT, notes.LATENCY_MISSED, *LINK_WARNINGS)) \
                and w != long_ctx:  # said above, or loudly
            st.caption("Note: " + plain(w) + ("." if ". " in w and not w.endswith(".") else ""))  # sentences end


def _batch_flag(mb: int, be: float | None, at: str, s: Scenario) -> None:
    """Warn when the most sequences a step can carry, ``mb`` that memory holds at ``at`` or the engine's lower
    ``max_seqs``, sits below the break-even batch ``be`` (always, when there is none), naming which one binds."""
    binds = notes.batch_cap(mb, s.max_seqs, be)
    if binds == "compute":
        return
    by_engine = binds == "max_seqs"
    cap = s.max_seqs if by_engine else mb
    knee = (f"compute would not bind until batch {words.sig(be, 4) if round(be) == cap else f'{be:,.0f}'}"
            if be is not None else
            "compute never binds at this context (the cache read grows as fast as the arithmetic)")
    seqs = f"sequence{'s' if cap != 1 else ''}"
    if by_engine:
        lead = (f"**The engine caps the batch before compute does:** {ENGINE_NAMES.get(s.engine, s.engine)} "
                f"schedules at most {cap:,} {seqs} per step (max_seqs), though memory holds {mb:,} at {at}")
    else:
        lead = f"**Memory caps the batch before compute does:** memory holds {mb:,} {seqs} at {at}"
    cost = ("only just: the cost per token is close to the roofline figure" if notes.cap_just_below_knee(cap, be)
            else "so a million tokens costs more than the roofline figure")
    st.warning(f"{lead}; {knee}. A step can share its read of the weights among at most {cap:,} {seqs}, {cost}.",
               icon=":material/warning:")
