"""Text and tables as the pages show them: Markdown that renders literally, axis labels, tables with dashes for
missing cells, CSV downloads."""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd
import streamlit as st

#: An axis label with SI prefixes as people read money and volumes: k, M, and B for a billion (d3 writes G).
SI_LABEL = "replace(format(datum.value, '~s'), 'G', 'B')"


#: The same, with plain numbers below 1,000 (0.001 stays 0.001, not 1m).
SI_LABEL_PLAIN = f"datum.value >= 1000 ? {SI_LABEL} : format(datum.value, ',~g')"


def log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values for a log axis from ``lo`` to ``hi`` (positive, any unit): 1, 2 and 5 times each power of ten
    inside the range, so the labels read as round numbers instead of the renderer's uneven picks."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [m * 10.0 ** k for k in range(first, last + 1) for m in (1, 2, 5) if lo <= m * 10.0 ** k <= hi]


#: Placeholder text of an input left empty, by what empty means.
EMPTY_TEXT = {"auto": "auto", "unknown": "no price: enter one", "none": "no target"}


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


def download_csv(df: pd.DataFrame, name: str, label: str = "Download CSV") -> None:
    """A CSV download of a table, named after the page and table."""
    st.download_button(label, df.to_csv(index=False).encode(), file_name=f"{name}.csv", mime="text/csv",
                       key=f"dl-{name}")


def usd_format(*columns: Any) -> str:
    """The column format for USD amounts a month: whole dollars, or cents where a column holds an amount under 100
    USD that whole dollars would show as 0 or round by more than a cent in a hundred (a light API bill beside the
    metric above it, "0.03 USD")."""
    small = any(0 < abs(v) < 100 for col in columns for v in pd.to_numeric(pd.Series(col), errors="coerce").dropna())
    return "%,.2f" if small else "%,.0f"


def _printf_to_format(fmt: str | None) -> str | None:
    """A column_config printf format ("%.2f", "%,.0f", "%d") as a str.format spec ("{:.2f}", "{:,.0f}", "{:,.0f}")."""
    if not fmt or not fmt.startswith("%"):
        return None
    spec = fmt[1:].replace("d", ".0f").replace("i", ".0f")
    return "{:" + spec + "}"


def dataframe(df: pd.DataFrame, column_config: dict | None = None, pin: str | None = None, **kwargs: Any) -> None:
    """``st.dataframe`` with every missing cell shown as a dash (never "None" or "nan"). A column with a missing
    cell is shown as text, each number in the column's own format (column formats outrank a Styler's in
    Streamlit, so the cells themselves carry the dash); columns without one keep their numbers for sorting. The
    CSV downloads keep the values. ``pin`` names a column that stays in view while a wide table scrolls
    sideways (a reference table's id)."""
    cfg = dict(column_config or {})
    if pin is not None:
        c = cfg.get(pin)
        cfg[pin] = {**c, "pinned": True} if isinstance(c, dict) else st.column_config.Column(c, pinned=True)
    if isinstance(df, pd.DataFrame) and df.isna().to_numpy().any():
        df = df.copy()
        for col in df.columns[df.isna().any()]:
            c = cfg.get(col)
            if isinstance(c, dict) and c.get("type_config", {}).get("type") == "link":
                df[col] = df[col].fillna("")  # a link column shows an empty cell where there is no address
                continue
            numeric = pd.api.types.is_numeric_dtype(df[col]) and not pd.api.types.is_bool_dtype(df[col])
            spec = _printf_to_format(c.get("type_config", {}).get("format")) if isinstance(c, dict) else None

            def shown(v: Any, spec: str | None = spec) -> str:
                if v is None or (not isinstance(v, (list, tuple, dict)) and pd.isna(v)):  # None, NaN, pd.NA
                    return "—"
                if spec and isinstance(v, (int, float)) and not isinstance(v, bool):
                    return spec.format(v)
                return str(v)
            df[col] = [shown(v) for v in df[col]]
            label = c.get("label") if isinstance(c, dict) else c if isinstance(c, str) else None
            kept = {k: c[k] for k in ("width", "help", "pinned") if isinstance(c, dict) and c.get(k) is not None}
            # A column of numbers keeps its numbers' right alignment once its cells are text.
            cfg[col] = st.column_config.TextColumn(label, **kept, **({"alignment": "right"} if numeric else {}))
    st.dataframe(df, column_config=cfg, **{"hide_index": True, "width": "stretch", **kwargs})
