"""Fit: does the model load, and how many sequences fit beside it?"""

import altair as alt
import pandas as pd
import streamlit as st

from pages import _ui as ui

s, r = ui.page()

st.title("Does it fit?")
c1, c2, c3, c4 = st.columns(4)
c1.metric("Weights", f"{r['weights_gib']:,.1f} GiB", help="Parameters × bits per weight / 8, all cards together.")
c2.metric("KV cache per sequence", f"{r['kv_gib_per_sequence']:,.2f} GiB",
          help=f"{r['kv_bytes_per_token']:,.0f} bytes per token with every layer full, at {s.ctx:,} tokens.")
c3.metric("Sequences that fit", f"{r['max_batch']:,}", help=f"At {s.ctx:,} tokens each.")
c4.metric("Batch used", f"{r['batch']:,}", help="auto = the largest useful batch" if s.batch == "auto" else None)

if r["kv_copy_factor"] > 1:
    held = ("every card holds the whole MLA latent" if s.kv_latent else
            f"each card holds {r['kv_heads_per_card']} of the model's {s.kv_heads} KV heads")
    st.info(f"**Tensor parallel copies the KV cache {r['kv_copy_factor']:g}×:** over {s.gpus} cards {held}, since "
            "engines copy a head rather than split it. The cache per sequence above counts the copies, so fewer "
            "sequences fit than the model's own cache size suggests.", icon=":material/content_copy:")

ui.details()  # the first draw of a session ends here

stack = ui.table("memory_stack", s)
per = "per card" if s.gpus > 1 else ""
st.subheader(f"Memory {per} at batch {r['batch']:,}".strip())
order = ["weights", "KV cache", "overhead", "free"]
shown = stack.assign(gib=stack["gib_per_card"].clip(lower=0), order=range(4))
x_max = max(s.mem_gib, float(stack["gib_per_card"][:3].sum())) * 1.02
chart = (
    alt.Chart(shown)
    .mark_bar(size=44)
    .encode(
        x=alt.X("gib:Q", stack="zero", title=f"GiB {per or 'on the card'}", scale=alt.Scale(domain=[0, x_max], nice=False)),
        color=alt.Color("part:N", sort=order, scale=alt.Scale(domain=order, range=["#4c78a8", "#f58518", "#9d9d9d", "#c7e0bd"]),
                        legend=alt.Legend(orient="bottom", title=None, columns=2, labelLimit=0)),
        order=alt.Order("order:Q"),
        tooltip=["part", alt.Tooltip("gib_per_card:Q", format=",.2f", title="GiB per card"),
                 alt.Tooltip("gib_total:Q", format=",.2f", title="GiB all cards")],
    )
    .properties(height=150)
)
rule = alt.Chart(pd.DataFrame({"gib": [s.mem_gib], "label": [f"card: {s.mem_gib:g} GiB"]})).mark_rule(
    color="#888888", strokeDash=[4, 3], size=2).encode(x="gib:Q")
st.altair_chart(alt.layer(chart, rule), width="stretch")
short = -float(stack["gib_per_card"].iloc[3])
if short > 0:
    st.error(f"Short by {short:,.1f} GiB per card at batch {r['batch']:,}: weights, cache and overhead exceed "
             f"the {s.mem_gib:g} GiB card (dashed line).")
ui.download_csv(stack, "fit-memory")

st.subheader("Sequences that fit, by weight precision and context")
fit = ui.table("fit_table", s, (2048, 8192, 32768), list(dict.fromkeys(["bf16", "fp8", "int4-g128", "q4_k_m",
                                                                       s.weights])))
ui.dataframe(
    fit,
    column_config={
        "weights": "Weights",
        "bits_per_weight": st.column_config.NumberColumn("Bits/weight", format="%.2f"),
        "weights_gib": st.column_config.NumberColumn("Weights (GiB)", format="%.1f"),
        "free_gib": st.column_config.NumberColumn("Left for cache (GiB)", format="%.1f"),
        **{c: st.column_config.NumberColumn(f"Seqs at {int(c.split('_')[-1]) // 1024}k", format="%d")
           for c in fit.columns if c.startswith("seqs_at_")},
        "quality": "Published quality cost (vs 16-bit)", "quality_source": "Source",
    },
)
st.caption(f"{s.gpus} × {s.mem_gib:g} GiB, {s.overhead_gib:g} GiB reserved per card, KV cache at {s.kv_bits:g} bits. "
           "Zero everywhere in a row means the weights alone do not load. The quality cost is the one published for "
           "the format, on the model named (a dash: nothing published); the Levers page sets every format's memory "
           "and money beside it.")
ui.download_csv(fit, "fit-sequences")
