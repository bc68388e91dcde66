"""Validation: every engine profile against the published measurements it was fitted on and checked with."""

import altair as alt
import pandas as pd
import streamlit as st

from calc import validate, words
from pages import _ui as ui

s, r = ui.page()


@st.cache_data(show_spinner=False)
def _rows() -> pd.DataFrame:
    """Each published row with the calculator's prediction (computed once per server)."""
    results = validate.evaluate(validate.read_measurements())
    return pd.DataFrame([{
        "engine": res.row.engine, "metric": words.METRIC_NAMES.get(res.row.metric, res.row.metric),
        "measured": res.row.measured, "predicted": res.predicted, "error_pct": res.error_pct,
        "source": res.row.source, "notes": res.row.notes, "link": res.row.link, "id": res.row.id,
    } for res in results])


@st.cache_data(show_spinner=False)
def _summary() -> pd.DataFrame:
    table = validate.summarise(validate.evaluate(validate.read_measurements()))
    return pd.DataFrame(table).drop(columns=["rows"]).assign(
        metric=lambda d: d["metric"].map(lambda m: words.METRIC_NAMES.get(m, m)))


st.title("How close are the figures to real engines?")
st.caption("Each row is a published measurement of a real engine (a decode step time, or the output tokens per "
           "second one replica sustained at full load), written as a link; the calculator evaluates that link "
           "under the same engine's profile. The profiles were fitted once per engine, never per row "
           "(docs/calibration.md); `python -m calc --validate` prints the same table.")
ui.details()  # the first draw of a session ends here

rows = _rows()
summary = _summary()
st.subheader("Error by engine and figure")
ui.dataframe(summary, column_config={
    "engine": "Engine", "metric": "Figure", "n": "Rows", "missing": "Without a prediction",
    "median_pct": st.column_config.NumberColumn("Median |error| %", format="%.1f"),
    "p90_pct": st.column_config.NumberColumn("90th percentile %", format="%.1f"),
    "max_pct": st.column_config.NumberColumn("Worst %", format="%.1f")})

st.subheader("Predicted against measured")
shown = rows.dropna(subset=["predicted"])
for metric, part in shown.groupby("metric", sort=False):
    lo, hi = float(min(part["measured"].min(), part["predicted"].min())), float(
        max(part["measured"].max(), part["predicted"].max()))
    scale = alt.Scale(type="log", domain=[lo / 1.3, hi * 1.3], nice=False)
    diagonal = alt.Chart(pd.DataFrame({"x": [lo / 1.3, hi * 1.3]})).mark_line(
        color="#888888", strokeDash=[4, 3]).encode(x=alt.X("x:Q", scale=scale), y=alt.Y("x:Q", scale=scale))
    points = alt.Chart(part).mark_point(filled=True, size=70).encode(
        x=alt.X("measured:Q", scale=scale, title=f"measured {metric} (log)"),
        y=alt.Y("predicted:Q", scale=scale, title=f"predicted {metric} (log)"),
        color=alt.Color("engine:N", legend=alt.Legend(title="engine", orient="bottom", columns=3)),
        tooltip=["engine", alt.Tooltip("measured:Q", format=",.4g"), alt.Tooltip("predicted:Q", format=",.4g"),
                 alt.Tooltip("error_pct:Q", format="+.1f", title="error %"), "source"])
    st.markdown(f"**{metric.capitalize()}** (dashed: prediction = measurement)")
    st.altair_chart(alt.layer(diagonal, points).properties(height=360), width="stretch")

st.subheader("Every row")
ui.dataframe(rows, column_config={
    "measured": st.column_config.NumberColumn("Measured", format="%.4g"),
    "predicted": st.column_config.NumberColumn("Predicted", format="%.4g"),
    "error_pct": st.column_config.NumberColumn("Error %", format="%+.1f"),
    "link": st.column_config.TextColumn("Link (open it in the app)")})
ui.download_csv(rows, "validation-rows")
