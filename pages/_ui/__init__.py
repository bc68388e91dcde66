"""Streamlit glue shared by every page: the scenario's single source of truth and the sidebar.

Data flows one way: URL query -> scenario (validated by ``calc``) -> widgets -> scenario -> ``calc``
-> tables and charts. Every widget's key is its link key; after each run the query string is
rewritten from the scenario, so the address bar is always a complete, shareable link.
No arithmetic happens here: pages call ``calc``.

- ``state``: the scenario <-> widget state and the callbacks of a change;
- ``inputs``: the sidebar, one input per link key by its kind;
- ``links``: the one sync per run, the copy-link button, the base URL, the first draw's signal;
- ``cache``: the evaluation and the page tables, cached by link;
- ``frame``: navigation and the header every page shares;
- ``text``: text, axis labels and tables as pages show them.
"""

from .cache import catalogue_table, current, evaluation, format_table, lever_table, table
from .frame import FAVICON, HOME_PATH, PAGES, QUIET_PAGES, details, frame, header, navigation, page
from .inputs import GROUPS, PAGE_KEYS, sidebar
from .links import LOADING_KEY, base_url, sync
from .state import exact_entry, finished, refused, rejected_keys, sent, set_reasons, widget_params
from .text import EMPTY_TEXT, SI_LABEL, SI_LABEL_PLAIN, dataframe, download_csv, log_ticks, plain, usd_format

__all__ = [
    "EMPTY_TEXT", "FAVICON", "GROUPS", "HOME_PATH", "LOADING_KEY", "PAGES", "PAGE_KEYS", "QUIET_PAGES", "SI_LABEL",
    "SI_LABEL_PLAIN", "base_url", "catalogue_table", "current", "dataframe", "details", "download_csv",
    "evaluation", "exact_entry", "finished", "format_table", "frame", "header", "lever_table", "log_ticks", "navigation", "page",
    "plain", "refused", "rejected_keys", "sent", "set_reasons", "sidebar", "sync", "table", "usd_format", "widget_params",
]
