"""The link and the address bar: one sync per run (link -> widgets -> scenario -> link), the copy-link button,
the base URL for links people copy, and the first draw's signal (with the size of the link the browser opened)."""

from __future__ import annotations

import os
from urllib.parse import urlencode, urlsplit, urlunsplit

import streamlit as st

from calc import (
    KEYS,
    Parsed,
    parse,
)
from calc.scenario import (
    GGUF_NOTE,
    LINK,
    PROFILE_PEAK_NOTE,
    link_too_long,
)

from .inputs import sidebar
from .state import _forget_said, _link_errors, _store, _widget_value, put, resend, widget_params

#: How calc.scenario.link words a link's repeated, empty and unknown keys.
LINK_WARNINGS = ("unknown key", "key ")

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
  // The top navigation's links name a page without the scenario: a link opened in a new tab (middle click, the
  // context menu, the keyboard) would start from the defaults. Just before any such use, the link takes the
  // address bar's query, so every page link carries the scenario as the Copy button does.
  if (!window.__calcNavCarriesQuery) {
    window.__calcNavCarriesQuery = true;
    const carry = (event) => {
      const a = event.target && event.target.closest && event.target.closest("a[data-testid=stTopNavLink]");
      if (a) a.href = new URL(a.getAttribute("href"), window.location.href).pathname + window.location.search;
    };
    for (const kind of ["mousedown", "focusin", "contextmenu", "pointerover"]) {
      document.addEventListener(kind, carry, true);
    }
    // One history entry per change the reader makes: the app's own rewrite of the address (the opened link made
    // complete, the query put back after a page change) replaces the entry it completes instead of adding one,
    // so Back goes to the previous scenario or page, not to the same one written shorter.
    let touched = false;
    for (const kind of ["pointerdown", "keydown", "input", "change"]) {
      document.addEventListener(kind, () => { touched = true; }, true);
    }
    const push = window.history.pushState.bind(window.history);
    window.history.pushState = (state, title, url) => {
      const target = new URL(url, window.location.href);
      if (target.pathname === window.location.pathname && !touched) {
        return window.history.replaceState(state, title, url);
      }
      if (target.pathname !== window.location.pathname) touched = false;  // a page change: its rewrite follows
      return push(state, title, url);
    };
    window.addEventListener("popstate", () => { touched = false; });
  }
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
    written = st.session_state.get("_written")
    # The browser's Back and Forward rerun the page with the address they go to: a query that is not the one this
    # session last wrote is a link opened again (an empty one is a page change that dropped it: keep the inputs).
    reopened = written is not None and len(st.query_params) and st.query_params.to_dict() != written
    if "_loaded" not in st.session_state or reopened:
        if reopened:
            _forget_said()
        # The query string again as text, so that its length meets the same limit as the command line's.
        first = parse(urlencode([(k, v) for k in st.query_params for v in st.query_params.get_all(k)]))
        st.session_state["_errors"] = {e.key: e for e in first.errors}
        # What the link said for each rejected key, kept in the address bar until that input is changed, so
        # the link still shows what was asked for rather than a silent default. A value that breaks a rule only
        # beside other values (gpus=3 for 64 heads) is kept until any input changes: a copied link then still
        # shows the error, and after an edit the link reads as it is used (the same value might pass beside the
        # new inputs, while the figures use the default).
        st.session_state["_rejected"] = {e.key: st.query_params.get_all(e.key)[-1] for e in first.errors
                                         if e.key in KEYS and st.query_params.get_all(e.key)}
        st.session_state["_opened_params"] = first.scenario.to_params()
        st.session_state["_check_link"] = not st.query_params
        st.session_state["_link_warnings"] = [w for w in first.warnings if w.startswith(LINK_WARNINGS)]
        # A value the link left to the engine that is not the model's own (llama.cpp's GGUF counterpart of the
        # model's format): said on the page until the next change, since the rewritten link names it.
        st.session_state["_link_notes"] = [w for w in first.warnings if GGUF_NOTE in w or PROFILE_PEAK_NOTE in w]
        _store(first.scenario)
        st.session_state["_loaded"] = True
    # Parse before drawing, so that a combination of inputs that breaks a rule is named beside its input now.
    parsed = parse(widget_params())
    st.session_state["_parsed"] = parsed
    for key, value in parsed.scenario.as_dict().items():
        # An emptied box whose key has a default (the card's rent) shows the value in use, never a blank that lies.
        if st.session_state.get(key) is None and _widget_value(key, value) is not None:
            put(key, _widget_value(key, value))
    params = parsed.scenario.to_params()
    errors = _link_errors()
    rejected = {k: v for k, v in st.session_state.get("_rejected", {}).items() if k in errors}
    kept = {k: v for k, v in rejected.items() if not errors[k].rule}
    rule_kept = {k: v for k, v in rejected.items() if errors[k].rule}
    if rule_kept and params == st.session_state.get("_opened_params"):  # nothing changed since it was opened
        # Kept only where the link, read again, is refused on the same keys and gives the same figures: beside the
        # complete link's other figures a rule may blame another key (params_b=1 against the preset's active_b).
        candidate = {**params, **kept, **rule_kept}
        again = parse(urlencode(candidate))
        if again.scenario == parsed.scenario and {e.key for e in again.errors} <= set(errors):
            kept.update(rule_kept)
    else:
        # An input changed, so the address bar no longer carries the refused value, and neither does the page.
        for key in rule_kept:
            errors.pop(key, None)
            st.session_state["_rejected"].pop(key, None)
    if draw:  # (the root's forward draws nothing: widgets drawn there and not on the next page lose their state)
        resend()
        sidebar(decision, light)
    # A value typed into a box and refused on its own (exact entry: req_day=-3) stays in the address bar as typed, as
    # an opened link's refused value does: the link then opens the same page (the value, its message, and the
    # default the figures use meanwhile) rather than the default with no word of the value asked for.
    typed = {e.key: e.value for e in parsed.errors if e.key in KEYS and not e.rule and e.key not in kept}
    kept = {**kept, **typed}
    params = {k: kept.get(k, params.get(k)) for k in KEYS if k in kept or k in params}
    # A first draw leaves the address as opened: the browser's script that keeps one history entry per change is
    # not loaded yet, and the next run (a moment later) writes the complete link over the opened one.
    if st.query_params.to_dict() != params and not light:
        st.query_params.from_dict(params)
    st.session_state["_written"] = params if not light else st.query_params.to_dict()
    return parsed


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
