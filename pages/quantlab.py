"""Quantization lab: what rounding weights to fewer bits does, and where the damage lands (calc.quantlab)."""

import altair as alt
import streamlit as st

from calc import quantlab
from calc.scenario import KEYS
from pages import _ui as ui

ui.page()

st.caption("Per-group affine quantization, live: each group of weights keeps its minimum and maximum and stores "
           "every weight as the nearest of 2^bits levels between them. The matrix is N(0, 0.02²) weights; a copy has "
           "a few weights made much louder (outliers). With the reference settings (4096 × 4096, group 128, "
           "4,096 outliers at 20×, seed 0) the figures are the reference tables' own; `python -m calc --quant-lab` "
           "prints them (8, 4, 3 and 2 bits; `--bits` for others).")

# The four inputs are link keys (lab_n, lab_group, lab_outliers, lab_scale): the widget keys are the link keys, so
# the address bar carries the experiment.
c1, c2 = st.columns(2)
with c1:
    size = int(st.select_slider("Matrix size (n × n)", list(KEYS["lab_n"].choices), key="lab_n",
                                help="The reference tables use 4096. A smaller matrix answers faster while you "
                                     "explore; its figures differ a little from theirs (fewer weights, other "
                                     "random draws)."))
    group = int(st.select_slider("Group size (weights per scale pair)", list(KEYS["lab_group"].choices),
                                 key="lab_group"))
with c2:
    share = float(st.select_slider("Outliers (share of weights)", list(KEYS["lab_outliers"].choices),
                                   key="lab_outliers", format_func=lambda v: f"{float(v):.3%}"))
    scale = float(st.select_slider("Outlier scale (× a typical weight)", list(KEYS["lab_scale"].choices),
                                   key="lab_scale", format_func=lambda v: f"{float(v):g}×"))

for key in ("lab_n", "lab_group", "lab_outliers", "lab_scale"):
    ui.sent(key)  # drawn with the value the link gave
ui.details()  # the first draw of a session ends here: the lab's arithmetic comes with the details

run = quantlab.lab_tables(size, group, share, scale)
errors, damage = run.errors, run.damage
st.caption(f"{run.outliers:,} outliers in {run.weights:,} weights. "
           + ("These are the reference settings." if run.notes_settings else
              "Settings differ from the reference: the figures are this experiment's, not the reference tables'."))
st.subheader("Error of x @ W by bits")
long = errors.melt(["bits", "bits_per_weight"], ["well_behaved", "with_outliers"], var_name="matrix",
                   value_name="relative_error").replace({"matrix": {"well_behaved": "well-behaved",
                                                                    "with_outliers": "with outliers"}})
# Ticks where the points are (x) and at round values (y), so the chart reads without hovering.
lo_err, hi_err = float(long["relative_error"].min()), float(long["relative_error"].max())
chart = alt.Chart(long).mark_line(point=alt.OverlayMarkDef(size=60)).encode(
    x=alt.X("bits_per_weight:Q", title="stored bits per weight (bits + 32 / group)",
            axis=alt.Axis(values=sorted(errors["bits_per_weight"]), format=".2f", grid=False)),
    y=alt.Y("relative_error:Q", scale=alt.Scale(type="log", domain=[lo_err / 1.5, hi_err * 1.5], nice=False),
            title="relative error (log)", axis=alt.Axis(values=ui.log_ticks(lo_err / 1.5, hi_err * 1.5),
                                                        format="~g")),
    color=alt.Color("matrix:N", title=None, legend=alt.Legend(orient="bottom")),
    tooltip=["bits", alt.Tooltip("bits_per_weight:Q", format=".2f"), "matrix",
             alt.Tooltip("relative_error:Q", format=".4f")],
).properties(height=380)
st.altair_chart(chart, width="stretch")
NUM = st.column_config.NumberColumn
ui.dataframe(errors, column_config={"bits": "Bits", "bits_per_weight": NUM("Stored bits per weight", format="%.2f"),
                                    "well_behaved": NUM("Well-behaved", format="%.4f"),
                                    "with_outliers": NUM("With outliers", format="%.4f")})

st.subheader("Where the 4-bit damage lands")
ui.dataframe(damage, column_config={
    "matrix": "Matrix", "all": NUM("All groups", format="%.4f"),
    "outlier_groups": NUM("Groups where the outliers sit", format="%.4f"),
    "other_groups": NUM("The rest", format="%.4f"),
    "outlier_group_share": NUM("Share of groups where they sit", format="percent")})
st.caption("Per group: mean absolute error over mean absolute weight. An outlier stretches its group's range, so "
           "the other weights of that group share a coarser grid; the groups without one are untouched. The "
           "average barely moves while the damage where it lands is several times larger: the reason the serious "
           "4-bit methods protect salient channels. The well-behaved row reads the same groups without the "
           "outliers, as the control.")

st.subheader("Bytes of a 512 × 512 matrix")
ui.dataframe(quantlab.bytes_table(), column_config={
    "bits": "Bits", "scales": NUM("16-bit scales", format="%d"), "bytes": NUM("Bytes", format="%,d"),
    "vs_16bit": NUM("Smaller than 16-bit by", format="%.2fx")})
st.caption("A 4-bit format is never a quarter of 16-bit: the scales add bytes. Here one 16-bit scale per row of 512 "
           "weights (the reference example) adds 0.03 bits per weight; one 16-bit scale and one 16-bit zero per group "
           "of 128, as the calculator's int4-g128 stores them, add 0.25: 4.25 bits per weight.")
