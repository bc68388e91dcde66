"""Validation: every engine profile against published measurements, in sample and cross-validated by source."""

import altair as alt
import pandas as pd
import streamlit as st

from calc import accuracy, engines, validate, words
from pages import _ui as ui

s, r = ui.page()

#: Units of each figure on the axes.
UNITS = {"step_ms": "ms", "max_throughput_tok_s": "tok/s"}
#: Engines in colours that differ (colour-blind-safe palettes: Okabe-Ito's, and Paul Tol's wine and olive for
#: TensorRT-LLM's two oldest families, which an orange or a brown beside its current release's vermillion hid), the
#: older llama.cpp CUDA builds in a lighter shade and the Vulkan builds in their own (the older ones darker).
COLOURS = {"vllm": "#0072B2", "vllm-v0": "#6A3D9A", "sglang": "#56B4E9", "trtllm": "#D55E00", "trtllm-2025": "#000000",
           "trtllm-2023": "#882255", "trtllm-v05": "#999933",
           "llamacpp": "#009E73", "llamacpp-vulkan": "#CC79A7", "llamacpp-vulkan-2025": "#7B3294",
           "llamacpp-2024": "#7FCDBB"}


def _flattering(result) -> float | None:
    """The row's error in per cent, + where the prediction flatters self-hosting (calc.validate.flattering_pct)."""
    return None if result.error_pct is None else validate.flattering_pct(result.row.metric, result.error_pct)


@st.cache_data(show_spinner=False)
def _rows() -> pd.DataFrame:
    """Each published row with the shipped profiles' prediction and the cross-validated one (once per server)."""
    rows = validate.read_measurements()
    inside = validate.evaluate(rows)
    cv = validate.cross_validated_results(rows)
    return pd.DataFrame([{
        "engine": a.row.engine, "version": a.row.version, "metric": a.row.metric,
        "figure": f"{words.METRIC_NAMES.get(a.row.metric, a.row.metric)} "
                  f"({words.METRIC_UNITS.get(a.row.metric, '?')})",
        # Signed as in the tables above: + where the prediction flatters self-hosting (a step too short).
        "measured": a.row.measured, "predicted": a.predicted, "error_pct": _flattering(a),
        "predicted_cv": b.predicted, "error_cv_pct": _flattering(b), "why": a.reason or b.reason,
        "source": validate.source_of(a.row), "notes": a.row.notes, "link": a.row.link, "id": a.row.id,
    } for a, b in zip(inside, cv, strict=True)])


@st.cache_data(show_spinner=False)
def _summaries() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = validate.read_measurements()

    def table(results) -> pd.DataFrame:
        return pd.DataFrame(validate.summarise(results)).drop(columns=["rows", "missing"]).assign(
            metric=lambda d: d["metric"].map(lambda m: words.METRIC_NAMES.get(m, m)))

    return table(validate.cross_validated_results(rows)), table(validate.evaluate(rows))


@st.cache_data(show_spinner=False)
def _kept_out() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The published rows kept out of the fit: their summary per profile and metric, and each row (once per
    server)."""
    results = validate.kept_out_results()
    named = {r.id: r.engine for r in validate.read_measurements(engines.KEPT_OUT_CSV)}
    summary = pd.DataFrame(validate.summarise(results)).drop(columns=["rows", "missing"]).assign(
        metric=lambda d: d["metric"].map(lambda m: words.METRIC_NAMES.get(m, m)))
    each = pd.DataFrame([{
        "id": r.row.id, "engine": r.row.engine, "named": named[r.row.id],
        "figure": f"{words.METRIC_NAMES.get(r.row.metric, r.row.metric)} "
                  f"({words.METRIC_UNITS.get(r.row.metric, '?')})",
        "measured": r.row.measured, "predicted": r.predicted, "error_pct": _flattering(r),
        "why": r.reason, "version": r.row.version, "source": validate.source_of(r.row), "notes": r.row.notes,
        "link": r.row.link,
    } for r in results])
    return summary, each


def _reasons(table: pd.DataFrame) -> None:
    """Under a table of rows, each row without a prediction or with one in doubt, and why, in full (the table's
    column cuts long text)."""
    said = table[table["why"].fillna("") != ""]
    if len(said):
        st.caption("Rows without a prediction (—), or with one in doubt:\n\n"
                   + "\n".join(f"- {r.id}: {ui.plain(r.why)}" for r in said.itertuples()))


#: The columns both row tables share: the row, what was measured and where it was published.
ROW_COLUMNS = {"id": st.column_config.TextColumn("Row", width=80),
               "why": st.column_config.TextColumn("No prediction, or in doubt", width=220,
                                                  help="Why a row has no prediction (—), or why the one given is in "
                                                       "doubt"),
               "figure": st.column_config.TextColumn("Figure (unit)", width=175,
                                                     help="Measured and predicted in this unit: ms a step, or tok/s"),
               "measured": st.column_config.NumberColumn("Measured", format="%.5g", width=80),
               "version": st.column_config.TextColumn("Engine version", width=220),
               "source": st.column_config.TextColumn("Source", width=220),
               "notes": st.column_config.TextColumn("Notes", width=300),
               "link": st.column_config.TextColumn("Link (open it in the app)", width=300)}
#: Widths that hold every column of the two summaries in the page's width (about 920 px) without a scroll.
COLUMNS = {"engine": st.column_config.TextColumn("Engine", width=150),
           "metric": st.column_config.TextColumn("Figure", width=140),
           "n": st.column_config.NumberColumn("Rows", width=50),
           "signed_median_pct": st.column_config.NumberColumn("Signed median % (+: too fast)", format="%+.1f",
                                                              width=175),
           "median_pct": st.column_config.NumberColumn("Median |error| %", format="%.1f", width=115),
           "p90_pct": st.column_config.NumberColumn("90th pct. %", format="%.1f", width=80),
           "max_pct": st.column_config.NumberColumn("Worst %", format="%.1f", width=65),
           "most_flattering_pct": st.column_config.NumberColumn("Most flattering row %", format="%+.1f",
                                                                width=135)}

st.caption("Each row is a published measurement of a real engine (a decode step time, or the output tokens per "
           "second one replica sustained at full load), written as a link; the calculator evaluates that link "
           "under the profile of the engine release that was measured. The profiles were fitted once per engine "
           "release family, never per row (docs/calibration.md); `python -m calc --validate` prints the same "
           "tables.")
ui.details()  # the first draw of a session ends here

rows = _rows()
cv_summary, in_summary = _summaries()
st.subheader("Cross-validated: each source predicted by a fit without it")
st.caption("The accuracy every page quotes (a set-up whose own rows were further off has its bills ranged with theirs: "
           "By set-up, below). For each source (one published document at one commit), every "
           "profile was fitted again without that source's rows, and those rows predicted. A positive signed "
           "error flatters self-hosting (a throughput too high, a step too short).")
def _whole(df: pd.DataFrame) -> int:
    """The height that shows every row without scrolling: a header and each row 35 px high, and the frame's border."""
    return 35 * (len(df) + 1) + 3


ui.dataframe(cv_summary, column_config=COLUMNS, height=_whole(cv_summary))
regions = pd.DataFrame(accuracy.region_table()).assign(
    metric=lambda d: d["metric"].map({"max_throughput_tok_s": "full-load tok/s", "step_ms": "step ms"}),
    packed=lambda d: d["packed"].map({True: "packed", False: "as stored"}),
    bills_use=lambda d: d["bills_use"].map({True: "this region's", False: "the engine's"}))
st.markdown(f"**By set-up**: the same errors for each measured region of {accuracy.MIN_BAND_ROWS} rows or more (an "
            "engine on a card family, with a kind of model, on so many cards per replica, its weights packed or as "
            "stored). Where a region's rows were further off than its engine's as a whole, a scenario in that "
            "region has its bills ranged with the region's band.")
ui.dataframe(regions[["engine", "card_family", "model_kind", "gpus", "packed", "metric", "n", "signed_median_pct",
                      "p90_pct", "max_pct", "engine_p90_pct", "bills_use"]],
             # Narrower than the summaries' columns: twelve of them fit the page's width (about 920 px).
             column_config={**COLUMNS,
                            "engine": st.column_config.TextColumn("Engine", width=100),
                            "card_family": st.column_config.TextColumn("Card family", width=115),
                            "model_kind": st.column_config.TextColumn("Model", width=55),
                            "gpus": st.column_config.NumberColumn("TP", width=40,
                                                                  help="Cards per replica (tensor parallel)"),
                            "packed": st.column_config.TextColumn(
                                "Weights", width=72, help="Packed: stored below 8 bits or in scaled blocks"),
                            "metric": st.column_config.TextColumn("Figure", width=100),
                            "n": st.column_config.NumberColumn("Rows", width=45),
                            "signed_median_pct": st.column_config.NumberColumn(
                                "Signed %", format="%+.1f", width=92, help="Signed median error; +: predicted too fast"),
                            "p90_pct": st.column_config.NumberColumn("p90 %", format="%.1f", width=72,
                                                            help="90th percentile of the absolute error"),
                            "max_pct": st.column_config.NumberColumn("Worst %", format="%.1f", width=60),
                            "engine_p90_pct": st.column_config.NumberColumn(
                                "Engine p90 %", format="%.1f", width=98,
                                help="The 90th percentile of all the engine's rows of this figure"),
                            "bills_use": st.column_config.TextColumn("Bills use", width=90,
                                                               help="The band the bills of a scenario in the region are ranged with")},
             height=_whole(regions))
st.subheader("In sample: the rows the figures were fitted to")
st.caption("How well the shipped figures fit their own rows. Not an accuracy claim.")
ui.dataframe(in_summary, column_config=COLUMNS, height=_whole(in_summary))
st.subheader("Kept out of the fit: published rows the figures never saw")
kept_summary, kept_rows = _kept_out()
st.caption("Published measurements found while extending the data and kept out of the fit: set-ups their links "
           "approximate (a checkpoint's formats, a benchmark's request mix), releases or kernels no profile carries "
           "(vLLM's V0 engine scheduling one step at a time, v0.5 to v0.7, which spends more host time than the V0 "
           "family's figures, fitted on its multi-step runs; TensorRT-LLM tables whose decode kernel is not "
           "stated), card families and quantization kinds the Vulkan profiles lack, the 310 other cells of the "
           "TensorRT-LLM v0.17 table whose 28 cells are fitted, and one lab's runs of vLLM, SGLang and "
           "TensorRT-LLM on one H100 and one A100 (gpustack; docs/calibration.md section 2). Predicted by the shipped figures, each under "
           "the profile whose figures predicted it (vllm-v0's under its own: its pages quote them, the current "
           "release's do not); every page quotes them beside the cross-validated error. Where "
           "they lean too fast, treat the pages' self-hosting figures as optimistic. `python -m calc --validate` "
           "prints this table too; `--validate calc/data/measurements_other.csv` lists the rows by the engine each "
           "names.")
ui.dataframe(kept_summary, column_config=COLUMNS, height=_whole(kept_summary))
with st.expander(f"The {len(kept_rows)} rows kept out of the fit"):
    ui.dataframe(kept_rows, pin="id", column_config={
        **ROW_COLUMNS,
        "engine": st.column_config.TextColumn("Profile", width=145,
                                              help="The profile whose figures predicted the row"),
        "named": st.column_config.TextColumn("Engine named", width=145,
                                             help="The release family the row's source names (vllm-2025 shares every "
                                                  "figure of vllm, so vllm's figures predicted it)"),
        "predicted": st.column_config.NumberColumn("Predicted", format="%.5g", width=80,
                                                   help="Predicted by the shipped figures"),
        "error_pct": st.column_config.NumberColumn("Error %", format="%+.1f", width=70,
                                                   help="+ where the prediction flatters self-hosting"),
        },
        column_order=["id", "engine", "named", "figure", "measured", "predicted", "error_pct", "why", "version",
                      "source", "notes", "link"])
    _reasons(kept_rows)
    ui.download_csv(kept_rows, "validation-kept-out-rows")

st.subheader("Predicted against measured")
basis = st.radio("Prediction", ["cross-validated", "in sample"], horizontal=True, key="validation_basis",
                 help="Cross-validated: each row predicted by profiles fitted without its source.")
column, err = ("predicted_cv", "error_cv_pct") if basis == "cross-validated" else ("predicted", "error_pct")
shown = rows.dropna(subset=[column]).assign(shown=lambda d: d[column], shown_err=lambda d: d[err])
for metric, part in shown.groupby("metric", sort=False):
    # Each chart's legend lists the engines it draws, each in the colour it has on the other chart.
    engines_shown = [e for e in COLOURS if e in set(part["engine"])]
    palette = alt.Scale(domain=engines_shown, range=[COLOURS[e] for e in engines_shown])
    unit = UNITS.get(metric, "")
    name = words.METRIC_NAMES.get(metric, metric)
    lo = float(min(part["measured"].min(), part["shown"].min()))
    hi = float(max(part["measured"].max(), part["shown"].max()))
    scale = alt.Scale(type="log", domain=[lo / 1.3, hi * 1.3], nice=False)
    ticks = ui.log_ticks(lo / 1.3, hi * 1.3)
    ends = pd.DataFrame({"x": [lo / 1.3, hi * 1.3]})
    diagonal = alt.Chart(ends).mark_line(color="#888888", strokeDash=[4, 3]).encode(
        x=alt.X("x:Q", scale=scale), y=alt.Y("x:Q", scale=scale))
    # The bound on a flattering row, 30 % either way, drawn faint on both sides of the diagonal.
    bands = [alt.Chart(ends).transform_calculate(y=f"datum.x * {f}").mark_line(color="#bbbbbb", strokeDash=[1, 3])
             .encode(x=alt.X("x:Q", scale=scale), y=alt.Y("y:Q", scale=scale)) for f in (1.3, 1 / 1.3)]
    points = alt.Chart(part).mark_point(filled=True, size=70, opacity=0.85).encode(
        x=alt.X("measured:Q", scale=scale, title=f"measured {name} ({unit}, log)",
                axis=alt.Axis(values=ticks, labelExpr=ui.SI_LABEL_PLAIN, labelFlush=False, labelOverlap=True)),
        y=alt.Y("shown:Q", scale=scale, title=f"predicted ({unit}, log)",
                axis=alt.Axis(values=ticks, labelExpr=ui.SI_LABEL_PLAIN, labelOverlap=True)),
        color=alt.Color("engine:N", scale=palette, legend=alt.Legend(title="engine", orient="right", labelLimit=0)),
        shape=alt.Shape("source:N", legend=None),
        tooltip=["engine", "version", alt.Tooltip("measured:Q", format=",.4g"),
                 alt.Tooltip("shown:Q", format=",.4g", title="predicted"),
                 alt.Tooltip("shown_err:Q", format="+.1f", title="error % (+: flatters)"), "source"])
    st.markdown(f"**{name.capitalize()}**, {unit} (dashed: prediction = measurement; dotted: 30 % off either way; "
                f"marker shape: source, named in each marker's tooltip)")
    # Tall enough that the distance from the diagonal (the error) reads up as well as across, and as wide as the
    # screen, a phone's included.
    st.altair_chart(alt.layer(diagonal, *bands, points).properties(height=520), width="stretch")

st.subheader("Every row")
measured = engines.figures_of(s.engine)  # the profile whose rows the scenario's engine is quoted against
st.caption("Errors are signed as everywhere on this page: + where the prediction is faster than the measurement "
           "(a step too short, a throughput too high), the side that flatters self-hosting. "
           + (f"The rows of {engines.ENGINE_NAMES.get(measured, measured)}, the scenario's engine, come first."
              if measured in set(rows["engine"]) else ""))
# The scenario's engine's rows first, the others after them in file order (a stable sort).
rows = rows.sort_values("engine", key=lambda e: e.ne(measured), kind="stable")
# The figures first (the cross-validated ones lead, as on every page), the long texts after them.
ui.dataframe(rows.drop(columns=["metric"]), pin="id", column_config={
    **ROW_COLUMNS,
    "engine": st.column_config.TextColumn("Engine", width=145),
    "predicted_cv": st.column_config.NumberColumn("Predicted (CV)", format="%.5g", width=95,
                                                  help="Predicted by a fit without the row's source"),
    "error_cv_pct": st.column_config.NumberColumn("CV error %", format="%+.1f", width=80,
                                                  help="Cross-validated error; + where the prediction flatters "
                                                       "self-hosting (a throughput too high, a step too short)"),
    "predicted": st.column_config.NumberColumn("In sample", format="%.5g", width=80,
                                               help="Predicted by the shipped figures, fitted on this row too"),
    "error_pct": st.column_config.NumberColumn("In-sample error %", format="%+.1f", width=120,
                                               help="+ where the prediction flatters self-hosting")},
    column_order=["id", "engine", "figure", "measured", "predicted_cv", "error_cv_pct", "predicted", "error_pct",
                  "why", "version", "source", "notes", "link"])
_reasons(rows)
ui.download_csv(rows, "validation-rows")
