"""Cost: USD per million tokens over batch × duty cycle, and the upkeep that does not fall with volume."""

import altair as alt
import numpy as np
import streamlit as st

from calc import notes, tables, words
from pages import _ui as ui

s, r = ui.page()

if s.usd_hr is None:
    st.warning("This card has no reference rent in the catalogue: enter your quote as **Rent per card-hour** "
               "in the sidebar (Money) to price it.")
c0, c1, c2, c3, c4 = st.columns(5)
runs = r["fits"] and r["max_batch"] >= r["batch"]  # memory holds the batch priced here
d = ui.evaluation().decision
whole = d.units.self_host_all_in
held_by_target = s.tpot_ms is not None and d.fits and r["serving_batch"] < r["batch"]  # the target binds the traffic


def per_mtok(x):
    return "—" if not runs else words.price_short(x)


# The whole bill first, as the Decision page has it; one replica's figures at this page's batch and duty beside it.
c0.metric("Self-hosting per month", words.money_short(d.self_host_usd_month),
          help=f"The Decision page's bill, {words.money(d.self_host_usd_month)}: {words.count(d.replicas or 0, 'replica')} of {words.count(s.gpus, 'card')} for the busiest hour, "
               "rented for the month, plus the upkeep.")
what_if = notes.ctx_what_if(s)  # a what-if context: two contexts on this page
c1.metric("All-in /1M, traffic" if what_if else "All-in per 1M output", words.price_short(whole),
          help="The whole self-hosting bill per 1M output tokens: the same bill over the month's output tokens (prompt time and idle capacity included).")
c2.metric(f"Decode, ctx {s.ctx:,}" if what_if else f"Decode only, batch {r['batch']:,}", per_mtok(r["usd_per_mtok"]),
          help=f"One replica's rent plus the upkeep per million output tokens at batch {r['batch']:,} and duty "
               f"{r['duty_used']:.0%}, counting the "
               "decode steps only (the prompts' processing is not in it): the cost surface below. The whole bill "
               "beside it counts the prompts and the idle capacity."
               + (f" The traffic's {r['upkeep_replicas']:,} replicas share the upkeep, as in the bill."
                  if r["upkeep_replicas"] > 1 else ""))
c3.metric("of which rent only", per_mtok(r["usd_per_mtok_rent"]),
          help="The rent alone in the figure beside it (same batch and duty, decode only). The textbook figure "
               "counts only the rent, at duty 100 %.")
c4.metric("Replica rent a month", words.money_short(r["monthly_rent_usd"]),
          help=f"{words.count(s.gpus, 'card')} × {s.hours:g} h, busy or not; the upkeep, {words.money(s.upkeep)} a month, "
               "does not fall with volume.")

if what_if and runs:
    st.caption(f"Two contexts on this page: the bill and the all-in figure price the traffic's requests "
               f"({d.cap.n:,} tokens each, as the Decision page does), the decode-only figures and the surface below "
               f"the what-if context of {s.ctx:,} tokens, so the two do not rank as they would at one context.")
if runs and not what_if and whole is not None and r["usd_per_mtok"] is not None and whole < r["usd_per_mtok"]:
    st.caption(notes.mean_context_note(s, "The all-in figure comes out below decode only"))
if held_by_target and runs:
    st.caption(f"The latency target ({s.tpot_ms:g} ms per output token) holds the traffic to batch "
               f"{r['serving_batch']:,}: the bill at the top is priced there (the Decision page), while the decode-only "
               f"figures and the surface below price batch {r['batch']:,}, which the target rules out; read the "
               f"surface's column at {r['serving_batch']:,}.")

if not runs:
    why = ("the weights do not fit" if not r["fits"] else
           f"memory holds {r['max_batch']:,} sequences at {s.ctx:,} tokens, not the {r['batch']:,} asked for")
    st.error(f"No price for a set-up that cannot run: {why}. "
             + ("The surface below shows what each batch would cost where memory allows it." if r["max_batch"] >= 1
                else "Memory holds no batch, so every cell of the surface below is grey: the roofline's price of a "
                     "batch the engine cannot reach.")
             + (f" The first two figures above are the traffic's bill, whose requests of {d.cap.n:,} tokens do fit "
                "(the Decision page's)." if r["fits"] and d.fits and "ctx" not in s.follows_traffic else ""))

ui.details()  # the first draw of a session ends here

st.subheader("Cost surface: USD per 1M output tokens by batch and duty cycle, decode only")
st.caption("One replica's rent plus the upkeep over the output tokens its decode steps produce: the prompts' "
           "processing is not counted, so with long prompts a real replica costs more per token than this surface "
           "says. The whole bill per 1M output tokens at the top counts the prompts and the idle capacity."
           + (f" The upkeep ({words.money(s.upkeep)} a month) is shared by the traffic's {r['upkeep_replicas']:,} "
              "replicas, each at the duty of its cell, as the bill shares it." if r["upkeep_replicas"] > 1 and s.upkeep > 0
              else " One replica carries the whole upkeep here (a what-if duty prices a replica alone)."
              if s.duty is not None and (d.replicas or 0) > 1 and s.upkeep > 0 else ""))
if s.usd_hr is None:
    st.info("Enter your rent per card-hour (Money, in the sidebar) to draw the cost surface.")
    st.stop()
batches = tables.cost_batches(s)
duties = np.round(np.linspace(0.05, 1.0, 20), 2)
grid = ui.table("cost_surface_frame", s, batches, duties, r["upkeep_replicas"])
grid["cell"] = np.where(grid["reachable"], "", "×")
base = alt.Chart(grid).encode(
    x=alt.X("batch:O", title="batch (sequences per step)", axis=alt.Axis(labelAngle=0, labelOverlap=True)),
    y=alt.Y("duty:O", sort="descending", title="duty cycle", axis=alt.Axis(format=".0%")),
)
heat = base.mark_rect().encode(
    color=alt.condition("datum.reachable",
                        alt.Color("usd_per_mtok:Q", scale=alt.Scale(type="log", scheme="viridis", reverse=True),
                                  title="USD / 1M"),
                        alt.value("#d9d9d9")),
    tooltip=["batch", alt.Tooltip("duty:Q", format=".0%"), alt.Tooltip("usd_per_mtok:Q", format=",.3f", title="USD / 1M"),
             alt.Tooltip("rent_usd_per_mtok:Q", format=",.3f", title="rent only"), "reachable"],
)
cross = base.mark_text(color="#888888", fontSize=9).encode(text="cell:N")
st.altair_chart((heat + cross).properties(height=420), width="stretch")
if not grid["reachable"].all():
    capped = s.max_seqs is not None and s.max_seqs < r["max_batch"]
    limit = (f"{s.max_seqs:,} sequences the engine schedules per step (max_seqs)" if capped else
             f"{r['max_batch']:,} sequences memory holds at {s.ctx:,} tokens")
    st.caption(f"Grey cells marked × need more than the {limit}: the roofline prices them, the engine cannot reach "
               "them.")

st.subheader("By duty cycle, for a few batches")
capped_at = [s.max_seqs] if s.max_seqs is not None and s.max_seqs < r["max_batch"] else []  # the engine's cap
picks = ([1, max(1, r["max_batch"]), r["batch"], *capped_at]
         + ([round(r["break_even_batch"])] if r["break_even_batch"] else [])
         + ([r["serving_batch"]] if held_by_target else []))
by_duty = ui.table("cost_by_duty", s, [b for b in picks if b >= 1], (0.1, 0.3, 0.6, 1.0), r["upkeep_replicas"])
wide = by_duty.pivot_table(index=["batch", "fits_in_memory", "tok_s"], columns="duty", values="usd_per_mtok").reset_index()
wide.columns = [c if isinstance(c, str) else f"duty {c:.0%}" for c in wide.columns]
duty_cols = [c for c in wide.columns if c.startswith("duty")]
# A batch the engine cannot run has no price (the surface greys it; a number in a table would read as a quote).
wide[duty_cols] = wide[duty_cols].where(wide["fits_in_memory"])
ui.dataframe(wide,
             column_config={"tok_s": st.column_config.NumberColumn("tok/s", format="%,.0f"),
                            "fits_in_memory": st.column_config.CheckboxColumn("reachable", help="Memory holds the batch and the engine schedules that many sequences (max_seqs)"),
                            **{c: st.column_config.NumberColumn(c, format="%,.3f") for c in duty_cols}})
st.caption("USD per 1M output tokens, rent plus upkeep, decode steps only"
           + ("; no price where the batch cannot run (reachable unticked)" if not wide["fits_in_memory"].all() else "")
           + ". Rows: a single stream, the batch memory holds, the batch in use"
           + (f", the engine's cap of {s.max_seqs:,} sequences a step (max_seqs), the most a replica runs at"
              if capped_at else "")
           + ", and the break-even batch (the textbook figure)"
           + (f", and batch {r['serving_batch']:,}, which the latency target allows" if held_by_target else "")
           + ("; a batch that is two of these is one row." if len(set(wide["batch"])) < len(picks) else "."))
ui.download_csv(by_duty, "cost-by-duty")
