"""Levers: what would change the answer for this scenario, what each saves, and what it costs."""

import altair as alt
import pandas as pd
import streamlit as st

from calc import levers, notes, tables, words
from calc import memo as dm
from pages import _ui as ui

s, r = ui.page()
ev = ui.evaluation()

d = ev.decision
refusal = notes.context_refusal(s)
if refusal:  # priced as if served on the Decision page, but no bill serves them: said as the "As set" row does
    # The page's banner gives the reason (notes.context_refusal); this line says what becomes of the bill.
    priced = ("no fleet is sized for them" if d.self_host_usd_month is None else
              f"the Decision page's {words.money(d.self_host_usd_month)} a month to self-host prices them as if they "
              "could be served")
    st.markdown(f"**As set: {dm.headline(d)}.** No bill serves these requests: {priced}, and the API's "
                f"{words.money(d.api_usd_month)} a month is its list price for requests it would refuse. The levers "
                "below say what would let them be served.")
else:
    own_bill = (f"{words.money(d.self_host_usd_month)} a month" if d.self_host_usd_month is not None
                else "cannot be priced (not one request fits beside the weights)" if not d.fits
                else "cannot be priced (the card has no rent: enter one)")
    st.markdown(f"**As set: {dm.headline(d)}.** Self-hosting {own_bill} against "
                f"{words.money(d.api_usd_month)} at the API (the Decision page's verdict and bills).")
table = ui.lever_table(s.to_query())
st.info(levers.best_text(table), icon=":material/tune:")
st.caption("Each row is the scenario with one lever applied and evaluated with the same formulas: the monthly "
           "self-hosting bill after it, what it saves against the scenario as set (negative: it costs more), the "
           "verdict after it, the time per output token at the serving batch, the most a replica is sized to hold (the "
           "Decision page's 'at the serving batch' figure; a lighter busiest hour steps faster), and what the lever costs in quality, "
           "commitment or engineering. Ranked by saving; each row opens that scenario.")

ui.details()  # the first draw of a session ends here

base = ui.base_url()
shown = table.assign(link=[f"{base}/decision?{q}" for q in table["query"]]).drop(columns=["query"])
NUM = st.column_config.NumberColumn
TEXT = st.column_config.TextColumn
# The figures in a table whose every column shows at 1,400 px; what each lever changes and what it costs, long
# sentences a cell would cut, are listed whole below it (and in the CSV).
ui.dataframe(shown, pin="lever", column_config={
    "lever": TEXT("Lever", width=258),
    "self_host_usd_month": NUM("Self-host USD/month", format="%,.0f", width=142),
    "saving_usd_month": NUM("Saving USD/month", format="%,.0f", width=128),
    "api_usd_month": NUM("API USD/month", format="%,.0f", width=105),
    "verdict": TEXT("Verdict after", width=95, help="Self-hosting against the link's API row, after the lever (a "
                    "cheaper row the catalogue lists is the Decision page's advice beside it)"),
    "tpot_ms": NUM("TPOT, serving (ms)", format="%.1f", width=125,
                   help="Time per output token at the serving batch, the most a replica is sized to hold (a light "
                        "traffic fills less of it at its busiest hour, and steps faster: the Decision page's Time per "
                        "output token says how much)"),
    "link": st.column_config.LinkColumn("Scenario", display_text="open", width=70),
}, column_order=["lever", "self_host_usd_month", "saving_usd_month", "api_usd_month", "verdict", "tpot_ms", "link"],
             height="content")
st.markdown("**What each lever changes, and its price**\n\n" + "\n".join(
    f"- **{row.lever}:** {row.what}" + (f". *Price:* {row.price}" if row.price else "")
    for row in table.itertuples()))
ui.download_csv(table, "levers")

st.subheader("Weight formats: memory and money against published quality")
traffic_tokens = ev.capacity.n  # a request's tokens held in cache (calc.traffic.request_context)
st.caption(f"Every weight format of the catalogue that {words.ENGINE_NAMES[s.engine]} loads, on this scenario: the memory its "
           "weights take, the sequences that "
           f"fit at a request of the traffic ({traffic_tokens:,} tokens, prompt + output, the context the bill is "
           "sized at), the self-hosting bill for the traffic, and the quality cost published for it "
           "(against 16-bit, on the model named; a dash: nothing published).")
formats = ui.format_table(s.to_query())
ui.dataframe(formats, pin="format", column_config={
    "format": TEXT("Format", width=75), "bits": NUM("Bits/weight", format="%.2f", width=75),
    "weights_gib": NUM("Stored GiB", format="%.1f", width=80,
                       help="The checkpoint's weights as stored, all cards together. The sequences that fit come from "
                            "the weights as the engine loads them (the Fit page's figure), which a format the card "
                            "has no kernel for (mxfp4 on Hopper, unpacked or padded) makes larger"),
    "max_batch": NUM("Seqs that fit", format="%d", width=85),
    "self_host_usd_month": NUM("Self-host USD/mo", format="%,.0f", width=115), "verdict": TEXT("Verdict", width=80),
    "quality_delta": TEXT("Quality cost", width=168,
                          help="The published quality cost against 16-bit, on the model beside it; the benchmark and "
                               "the whole sentence in the CSV"),
    "quality_model": TEXT("Measured on", width=177,
                          help="The model the published quality cost was measured on: often not this scenario's"),
    "quality_url": st.column_config.LinkColumn("Source", display_text="open", width=55),
}, column_order=["format", "bits", "weights_gib", "max_batch", "self_host_usd_month", "verdict", "quality_delta",
                 "quality_model", "quality_url"], height="content")
ui.download_csv(formats, "levers-formats")

st.subheader("Speculative decoding by batch")
curve = ui.table("spec_curve", s)
mb = r["max_batch"]
spec_base = alt.Chart(curve).encode(
    x=alt.X("batch:Q", scale=alt.Scale(type="log", domain=[1, tables.sweep_top(s)], nice=False),
            title="batch (sequences per step, log scale)"),
    y=alt.Y("speedup:Q", title="speed-up (×)",
            scale=alt.Scale(domain=[0, max(1.0, float(curve["speedup"].max())) * 1.1])),
    # Three hues apart (not shades of one), so a faded curve is never read as another draft count.
    color=alt.Color("drafts:N", title="drafts per step", legend=alt.Legend(orient="bottom", symbolOpacity=1),
                    scale=alt.Scale(range=["#4c78a8", "#f58518", "#54a24b"])),
    tooltip=["batch", "drafts", alt.Tooltip("speedup:Q", format=".2f")])
# A line takes one opacity and one dash: the whole curve is drawn faded and dashed, and the batches memory holds
# again in full over it.
# 1 is no speculation: above it speculation helps, below it hurts.
parity = alt.Chart(pd.DataFrame({"speedup": [1.0]})).mark_rule(color="#666", strokeDash=[4, 3]).encode(y="speedup:Q")
chart = alt.layer(spec_base.mark_line(opacity=0.45, strokeDash=[5, 4]),
                  spec_base.transform_filter("datum.fits_in_memory").mark_line(), parity).properties(height=300)
st.altair_chart(chart, width="stretch")
st.caption(f"Acceptance {s.spec_alpha:g} and a draft step {s.spec_c:g} of a target step (link keys spec_alpha, "
           f"spec_c), at the {s.ctx:,}-token context. Verifying k + 1 tokens reads the weights and the cache once, "
           f"so while the step is memory-bound the drafts ride along almost free; once the arithmetic binds, each "
           f"extra token costs its own compute and the gain goes (at long contexts the cache read keeps the step "
           f"memory-bound, and the gain lasts). "
           + ("In an MoE model the drafted tokens are routed to experts of their own, so at small batches verifying "
              "them reads more of the weights than one token does: the gain grows with the batch until every expert "
              "is read anyway, then fades as above. " if s.experts else "")
           + "Speculation shortens the time per token where the curve is above 1 and "
           "lengthens it below (the dashed line: 1×, no speculation); it does not raise what a full replica serves, "
           "so it lowers no bill on the table above. "
           + (f"Faded and dashed: batches beyond the {words.cell(mb)} sequences memory holds at {s.ctx:,} tokens. " if mb > 0
              else "Faded and dashed: every batch, since memory holds not one sequence at this context. ")
           + "Engines turn speculation off under load for this reason.")
