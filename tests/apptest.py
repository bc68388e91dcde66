"""Shared AppTest helpers: open the app on a link (and a page), read what a visitor reads."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


def open_app(params: dict | None = None, page: str | None = None) -> AppTest:
    """Run app.py under AppTest with ``params`` as the opened link's query, then switch to ``page``."""
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return draw(at, page)


def draw(at: AppTest, page: str | None = None) -> AppTest:
    """Run the app as a browser sees it: the session's first draw (headline figures), then the run that the
    browser asks for once it has drawn them (the whole page); then switch to ``page``."""
    at.run()
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def texts(elements) -> str:
    """The text of elements as a reader sees it (Markdown escapes and zero-width spaces removed)."""
    return " ".join(str(e.value) for e in elements).replace("\\", "").replace("\u200b", "")
