"""Speed: decode step time and throughput by batch, against the roofline."""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from calc import memo as dm
from calc import notes, parse, tables, with_change, words
from pages import _ui as ui

s, r = ui.page()
sweep = ui.table("speed_sweep", s)
be, mb = r["break_even_batch"], r["max_batch"]

if not r["fits"] or mb == 0:  # no speed for a set-up that cannot hold one sequence
    st.info("No speed to show: this set-up cannot hold one sequence (see above). Change the inputs in the sidebar.",
            icon=":material/block:")
    ui.details()  # a first draw ends here too, so the run that completes the link and the sidebar comes
    st.stop()
if r["batch"] > mb:
    st.warning(f"**Batch {r['batch']:,} does not fit:** memory holds {mb:,} sequences at {s.ctx:,} tokens. The "
               "figures below are the step such a batch would take if it fitted; no deployment reaches them.",
               icon=":material/warning:")
c1, c2, c3, c4, c5 = st.columns(5)
c1.metric("Step at batch " + f"{r['batch']:,}", f"{r['step_ms']:,.2f} ms", help="Time per output token (TPOT) of every sequence.")
c2.metric("Decode (tok/s)", f"{r['tok_s']:,.0f}",
          help=f"All sequences together, decode steps only, at batch {r['batch']:,} and {s.ctx:,} tokens per sequence.")
full = r["max_throughput_tok_s"]
serving = r["serving_tok_s"] if ui.evaluation().decision.fits else None  # nothing fits: no speed
request_tokens = ui.evaluation().decision.cap.n
what_if = notes.ctx_what_if(s)  # a what-if context: two contexts on this page
c5.metric("Busy replica, traffic (tok/s)" if what_if else "Busy replica (tok/s)",
          "—" if serving is None else f"{serving:,.0f}",
          help=f"Output tokens a second one busy replica delivers on the traffic's requests ({s.in_tok:,} + "
               f"{s.out_tok:,} tokens each, not the context above), their prompts processed too, at the serving batch "
               f"({r['serving_batch']:,}): the figure that sizes the replicas and the bill on the Decision page.")
if serving is not None and full is not None and r["serving_batch"] < (r["throughput_batch"] or 0):
    traffic_be = ui.evaluation().decision.break_even_batch
    why = ("the link's batch" if s.batch != "auto" else "the latency target" if s.tpot_ms is not None
           else "batch=auto stops at the break-even batch, where a step stops being shared for free"
           + (f": {traffic_be:,.0f} at the requests' {request_tokens:,} tokens, where the figures beside it take "
              f"the what-if {s.ctx:,}" if what_if and traffic_be is not None else ""))
    st.caption(f"The traffic is served at batch {r['serving_batch']:,} ({why}), so a busy replica delivers "
               f"{serving:,.0f} tok/s; "
               + (f"at full load, {r['throughput_batch']:,} sequences at once, it would deliver {full:,.0f}."
                  if s.engine != "roofline" or full >= serving else
                  f"the full-load figure, {full:,.0f} at {r['throughput_batch']:,} sequences at once, is the load "
                  "model's (docs/method.md section 8), while under the roofline the traffic is served by section 6's "
                  "textbook formula: the two are not on one scale (at the same batch the load model gives less), so "
                  "the lower full-load figure is no slowdown."))
elif serving is not None and serving > r["tok_s"] and not what_if and r["batch"] == r["serving_batch"]:
    st.caption(notes.mean_context_note(s, "A busy replica delivers more than the decode figure beside it"))
elif serving is not None and serving > r["tok_s"] and what_if:
    st.caption(f"One busy replica on the traffic delivers more than the decode throughput here because the traffic's requests hold "
               f"{request_tokens:,} tokens, not the {s.ctx:,} of the Context input: shorter sequences fit more of "
               "them in memory and read less cache a step.")
if r["run_throughput_tok_s"] is not None:  # the link describes a benchmark run: what that run would measure
    st.info(f"**Benchmark run:** {words.count(s.run_prompts, 'request')} sent at once "
            + ("(replies spread around " + f"{words.count(s.out_tok, 'token')}"
               + (f", at most {s.out_max:,}" if s.out_max else "") + ") "
               if s.out_spread == "exp" else f"(every reply {words.count(s.out_tok, 'token')}) ")
            + f"would measure {r['run_throughput_tok_s']:,.0f} output tok/s over the run, ramp and tail included, "
            f"against {full:,.0f} at steady full load ({r['throughput_batch']:,} sequences at once). Compare the run's "
            "figure with a benchmark's; the bills use steady load.", icon=":material/speed:")
if latency := dm.latency_sentence(ui.evaluation().decision):
    st.error(latency, icon=":material/timer:")
c3.metric("Per sequence (tok/s)", f"{r['tok_s_per_seq']:,.1f}")
c4.metric("Break-even batch", "none" if be is None else f"{be:,.1f}",
          help="Where compute time equals memory time: below it adding a sequence is almost free.")

loaded = (f"{r['weights_loaded_gib']:,.2f} GiB {'a card ' if s.gpus > 1 else ''}as the engine loads them, the Fit "
          "page's figure")
resident_gib, read_gib = f"{r['weights_gib']:,.1f}", f"{r['weights_read_gib_per_step']:,.1f}"
kv_read = f" plus {r['kv_read_gib_per_step']:,.1f} GiB of KV cache."
if read_gib == resident_gib:  # as printed, nothing resident goes unread: no contrast to draw
    st.caption(f"A step at batch {r['batch']:,} reads all {resident_gib} GiB of the weights ({loaded})" + kv_read)
else:
    st.caption(
        f"Bytes resident are not bytes read: the weights take {resident_gib} GiB in their formats ({loaded}), "
        f"but a step at batch {r['batch']:,} reads {read_gib} GiB of them (the input-embedding table is looked up, "
        "not read" + ("; an MoE step reads only the experts its tokens are routed to" if s.experts else "") + ")"
        + kv_read)

ui.details()  # the first draw of a session ends here

top = tables.sweep_top(s)  # the sweep's last batch: the batch the scenario can serve is on the charts
marks = [{"what": f"memory holds {mb:,}", "batch": mb, "ypix": 2}] if 1 <= mb <= top else []
if s.max_seqs is not None and 1 <= s.max_seqs < mb:  # the engine's cap binds first: mark it where it stops the batch
    marks.append({"what": f"engine runs at most {s.max_seqs:,} (max_seqs)", "batch": s.max_seqs, "ypix": 34})
if be is not None and 1 <= be <= top:
    marks.append({"what": f"break-even {be:,.0f}", "batch": be, "ypix": 18})
x = alt.X("batch:Q", scale=alt.Scale(type="log", domain=[1, top], nice=False),
          title="batch (sequences per step, log scale)")
marks_df = pd.DataFrame(marks, columns=["what", "batch", "ypix"])
rules = alt.Chart(marks_df).mark_rule(strokeDash=[5, 3], color="#d62728").encode(x=x)
# A label right of its line; near the right edge, left of it and above the plot, where the curves do not run (the
# step climbs to the top right corner and the throughput flattens there).
RIGHT_EDGE = 200
right = marks_df[marks_df["batch"] > RIGHT_EDGE].assign(ypix=lambda m: -3 - 14 * np.arange(len(m)))
left = marks_df[marks_df["batch"] <= RIGHT_EDGE]
# A line with another just right of it (within a quarter on the log axis: memory holds 71 beside break-even 67)
# has its label left of it, so neither label runs over the other line.
crowded = left["batch"].map(lambda b: bool(((left["batch"] > b) & (left["batch"] < 1.25 * b)).any()))
right_labels = (alt.Chart(right).mark_text(align="right", dx=-4, baseline="bottom", color="#d62728")
                .encode(x=x, text="what:N", y=alt.Y("ypix:Q", scale=None)))


def _side(part: pd.DataFrame, **text) -> alt.Chart:
    """The labels of ``part`` right of their lines, or left of them where another line crowds the right."""
    mine = crowded.reindex(part.index, fill_value=False)
    return alt.layer(*(alt.Chart(part[mine == flip]).mark_text(align="right" if flip else "left", dx=-4 if flip else 4,
                                                              color="#d62728", **text).encode(x=x, text="what:N",
                                                                                             **({} if "y" in text else
                                                                                                {"y": alt.Y("ypix:Q", scale=None)}))
                       for flip in (False, True)))


labels = alt.layer(_side(left, dy=2, baseline="top"), right_labels)
# On the throughput chart both curves run along the top where the batch is near the break-even (the total has
# turned flat, each sequence's rate has not yet fallen): its label there sits at the foot of its line.
even = left["what"].str.startswith("break-even")
tp_labels = alt.layer(_side(left[even], baseline="bottom", y=alt.expr("height - 4")),
                      _side(left[~even], dy=2, baseline="top"), right_labels)

st.subheader("Step time by batch")
step_name, step_clause = words.overlap_words(s)
names = {"step_ms": step_name, "memory_ms": "memory: weights + cache read",
         "compute_ms": "compute: arithmetic",
         "ideal_ms": "physical limit (every peak, no fixed cost)"}
# The gap between the figures and the ideal, on the same axes: the roofline at 100 % of every peak, no step cost.
ideal = parse({**with_change(s.to_params(), "engine", "roofline"), "eff": 1}).scenario
sweep = sweep.assign(ideal_ms=ui.table("speed_sweep", ideal, sweep["batch"].to_numpy())["step_ms"].to_numpy())
lines = sweep.melt("batch", list(names), var_name="line", value_name="ms").replace({"line": names})
step_chart = alt.Chart(lines).mark_line().encode(
    x=x, y=alt.Y("ms:Q", scale=alt.Scale(type="log"), title="ms per step (log scale)"),
    color=alt.Color("line:N", scale=alt.Scale(domain=list(names.values()), range=["#f58518", "#4c78a8", "#54a24b", "#9d9d9d"]),
                    legend=alt.Legend(title=None, orient="bottom", columns=1, labelLimit=0)),
    strokeWidth=alt.condition(alt.datum.line == names["step_ms"], alt.value(3.5), alt.value(1.5)),
    strokeDash=alt.condition(alt.datum.line == names["step_ms"], alt.value([1, 0]), alt.value([6, 3])),
    tooltip=["batch", "line", alt.Tooltip("ms:Q", format=",.3f")])
st.altair_chart(alt.layer(step_chart, rules, labels), width="stretch")
if be is None:
    st.caption("No break-even batch at this context: reading each sequence's KV cache costs more time than its "
               "arithmetic, so the step stays memory-bound at every batch (set Advanced → attention off to see the "
               "weights-only textbook roofline).")

st.subheader("Throughput by batch")
tp = sweep.assign(reachable=np.where(sweep["fits_in_memory"], "reachable", "beyond memory or max_seqs"))
# The grey line starts at the last reachable batch, so the two meet instead of leaving a gap at the cap.
tp = pd.concat([tp, tp[tp["fits_in_memory"]].tail(1).assign(reachable="beyond memory or max_seqs")])
tp_chart = alt.Chart(tp).mark_line(point=False).encode(
    x=x, y=alt.Y("tok_s:Q", title="tokens/s, all sequences"),
    color=alt.Color("reachable:N", scale=alt.Scale(domain=["reachable", "beyond memory or max_seqs"], range=["#4c78a8", "#bbbbbb"]),
                    legend=alt.Legend(title=None, orient="bottom", columns=1, labelLimit=0)),
    tooltip=["batch", alt.Tooltip("tok_s:Q", format=",.0f"), alt.Tooltip("tok_s_per_seq:Q", format=",.1f", title="per sequence")])
per_seq = alt.Chart(tp).mark_line(color="#72b7b2", strokeDash=[2, 2]).encode(
    x=x, y=alt.Y("tok_s_per_seq:Q", title="tokens/s per sequence"))
st.altair_chart(alt.layer(alt.layer(tp_chart, rules, tp_labels), per_seq).resolve_scale(y="independent"), width="stretch")
st.caption("Solid: total tokens/s (grey where memory cannot hold that many sequences). Dotted, right axis: "
           "tokens/s each sequence sees. "
           + ("Up to the break-even batch a sequence costs almost nothing extra; past it the step lengthens and each "
              "user waits longer." if be is not None else
              "With no break-even batch, each sequence added reads its own KV cache, so the step lengthens a little "
              "with every one, and each user waits a little longer."))

st.subheader("The step's parts")
# Powers of two up to twice the batches that matter (the cap, memory's or the engine's, and the knee), so the
# reachable ones stay readable beside the faded ones.
reach = max(min(mb, s.max_seqs) if s.max_seqs is not None else mb, be or 1, 8)
pick = sweep[sweep["batch"].isin([b for b in tables.powers_of_two(top) if b <= 2 * reach])]
parts = pick.melt(["batch", "fits_in_memory"], ["weights_ms", "cache_ms", "compute_ms", "comm_ms", "fixed_ms"],
                  var_name="part", value_name="ms")
parts["path"] = parts["part"].map({"weights_ms": "memory", "cache_ms": "memory", "compute_ms": "compute",
                                   "comm_ms": "both", "fixed_ms": "both"})
comm_name, comm_phrase = words.comm_words(s)  # all-reduce, or a hand-over where llama.cpp splits the model
parts = parts.replace({"part": {"weights_ms": "weights read", "cache_ms": "KV cache read", "compute_ms": "compute",
                                "comm_ms": comm_name, "fixed_ms": "engine's fixed time"}})
both = parts[parts["path"] == "both"]
parts = pd.concat([parts[parts["path"] != "both"], both.assign(path="memory"), both.assign(path="compute")])
parts["stack"] = parts["part"].map({"weights read": 0, "KV cache read": 1, "compute": 0, comm_name: 2,
                                    "engine's fixed time": 3})
bars = alt.Chart(parts).mark_bar().encode(
    x=alt.X("batch:O", title="batch (bars: memory path, compute path)", axis=alt.Axis(labelAngle=0)),
    xOffset=alt.XOffset("path:N", sort=["memory", "compute"]),
    y=alt.Y("ms:Q", stack="zero", title="ms"),
    color=alt.Color("part:N", scale=alt.Scale(domain=["weights read", "KV cache read", "compute", comm_name,
                                                      "engine's fixed time"],
                                              range=["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d9da0"]),
                    legend=alt.Legend(title=None, orient="bottom", columns=2, labelLimit=0)),
    order=alt.Order("stack:Q", sort="ascending"),
    opacity=alt.condition("datum.fits_in_memory", alt.value(1.0), alt.value(0.3)),
    tooltip=["batch", "path", "part", alt.Tooltip("ms:Q", format=",.3f")],
).properties(height=380)  # the legend below takes part of the height
st.altair_chart(bars, width="stretch")
st.caption(f"Per batch: the memory path (weights and KV cache read) beside the compute path; {step_clause}, "
           f"and the {comm_phrase} and the engine's fixed time per step (launches, scheduling, "
           "sampling) add to either. Faded: batches beyond "
           + (f"the {s.max_seqs:,} sequences the engine schedules per step (max_seqs)."
              if s.max_seqs is not None and s.max_seqs < mb else f"the {mb:,} sequences memory holds."))
ui.download_csv(sweep, "speed-by-batch")
