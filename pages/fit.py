"""Fit: does the model load, and how many sequences fit beside it?"""

import altair as alt
import pandas as pd
import streamlit as st

from calc import engines, notes
from pages import _ui as ui

s, r = ui.page()

c1, c2, c3, c4 = st.columns(4)
c1.metric("Weights as loaded, per card", f"{r['weights_loaded_gib']:,.2f} GiB",
          help=f"{r['weights_gib']:,.1f} GiB of checkpoint over all cards, each part in its format, plus any padding "
               "the engine's kernels add.")
c2.metric("KV cache, all cards" if s.gpus > 1 else "KV cache", f"{r['kv_cache_gib']:,.1f} GiB",
          help=f"{r['kv_cache_gib_per_card']:,.2f} GiB per card: what the engine allocates for the cache (vLLM prints "
               "it as 'Available KV cache memory', llama.cpp as its 'KV buffer size': the cells it is told, max_seqs "
               "slots of ctx tokens).")
c3.metric("KV cache tokens", f"{r['kv_tokens']:,.0f}",
          help=f"vLLM's 'GPU KV cache size', SGLang's max_total_num_tokens, llama.cpp's cells: "
               f"{r['max_concurrency']:,.2f} sequences of {s.ctx:,} tokens."
               + (f" Each sequence also holds a fixed state in its {s.state_layers} state layers "
                  f"({s.state_kib:,.0f} KiB each), which takes part of this memory: so the tokens are fewer than "
                  f"the memory over {r['kv_bytes_per_token']:,.0f} bytes per token, and more with longer sequences."
                  if s.state_layers else ""))
c4.metric("Sequences memory holds", f"{r['max_batch']:,}",
          help=f"Whole sequences of {s.ctx:,} tokens in the memory left beside the weights; "
               f"{r['kv_gib_per_sequence']:,.2f} GiB each. Batch used: {r['batch']:,}.")
if s.max_seqs is not None and s.max_seqs < r["max_batch"]:
    # llama.cpp allocates its cache for its slots only; other engines allocate the memory and cap the batch.
    st.caption(f"Memory would hold {r['max_batch']:,} sequences of {s.ctx:,} tokens, but the engine runs at most "
               f"{s.max_seqs:,} at once (max_seqs)"
               + (f", and llama.cpp allocates its cache for those {s.max_seqs:,} slots only: "
                  f"{r['kv_tokens']:,.0f} tokens." if engines.base(s.engine) == "llamacpp" else "."))

if r["kv_copy_factor"] > 1:
    held = ("every card holds the whole MLA latent" if s.kv_latent else
            f"each card holds {r['kv_heads_per_card']} of the model's {s.kv_heads} KV heads")
    st.info(f"**Tensor parallel copies the KV cache {r['kv_copy_factor']:g}×:** over {s.gpus} cards {held}, since "
            "engines copy a head rather than split it. The cache per sequence above counts the copies, so fewer "
            "sequences fit than the model's own cache size suggests.", icon=":material/content_copy:")

ui.details()  # the first draw of a session ends here

stack = ui.table("memory_stack", s)
mem = ui.table("card_memory", s)
st.subheader(f"One card's memory at batch {r['batch']:,}" if r["fits"] and r["max_batch"] >= 1 else "One card's memory")
if s.batch == "auto" and r["batch"] < r["max_batch"]:  # the batch shown is not the most memory holds: say why
    why = (f"the engine's cap (max_seqs {s.max_seqs:,})" if s.max_seqs is not None and r["batch"] == s.max_seqs
           else "the break-even batch, where a step stops being shared for free")
    st.caption(f"Batch auto stops at {r['batch']:,}, {why}; memory holds {r['max_batch']:,} sequences, and the rest "
               "of the allocated cache stays unused at this batch. Set the batch in the sidebar to draw another.")
#: Colours by kind of block: the weights, the engine's reserve (greys), the cache in use and allocated, what the
#: engine leaves alone.
GREYS = ["#8c8c8c", "#b0b0b0", "#cfcfcf"]


def colour(part: str, i: int) -> str:
    if part.startswith("weights"):
        return "#4c78a8"
    if part.startswith("KV cache") and " at batch " in part:  # "KV cache and state at batch N" for a hybrid
        return "#f58518"
    if part.startswith("KV cache allocated"):
        return "#ffbf79"
    if part == "left by the engine":
        return "#c7e0bd"
    return GREYS[(i - 1) % len(GREYS)]


colours = {p: colour(p, i) for i, p in enumerate(stack["part"])}
shown = stack.assign(gib=stack["gib_per_card"].clip(lower=0), order=range(len(stack)),
                     label=[f"{p}: {g:,.2f} GiB" for p, g in zip(stack["part"], stack["gib_per_card"], strict=True)])
shown = shown[shown["gib"] > 0]  # a waterfall (calc.tables.memory_stack lays the blocks end to end)
chart = (
    alt.Chart(shown)
    .mark_bar(height=18)
    .encode(
        x=alt.X("start_gib:Q", title="GiB on one card", axis=alt.Axis(format=",.0f"),
                scale=alt.Scale(domain=[0, max(s.mem_gib, float(shown["end_gib"].max())) * 1.02], nice=False)),  # layout
        x2="end_gib:Q",
        y=alt.Y("label:N", sort=list(shown["label"]), title=None, axis=alt.Axis(labelLimit=320, labelOverlap=False)),
        color=alt.Color("part:N", scale=alt.Scale(domain=list(shown["part"]),
                                                   range=[colours[p] for p in shown["part"]]), legend=None),
        tooltip=["part", alt.Tooltip("gib_per_card:Q", format=",.2f", title="GiB per card"),
                 alt.Tooltip("gib_total:Q", format=",.2f", title="GiB all cards")],
    )
    .properties(height=32 * len(shown) + 56)  # the chart's height holds its x axis and title too (autosize fit)
)
rule = alt.Chart(pd.DataFrame({"gib": [s.mem_gib]})).mark_rule(color="#888888", strokeDash=[4, 3], size=2).encode(x="gib:Q")
st.altair_chart(alt.layer(chart, rule), width="stretch")
st.caption(mem.sentence() + f" The dashed line is {mem.card_line_text}; the blocks add up to it.")
short = stack.loc[stack["part"] == "short", "gib_per_card"]
if r["kv_cache_gib"] <= 0:
    st.error(f"Short by {-mem.kv_cache_gib:,.2f} GiB per card: the weights as loaded and the engine's reserve exceed "
             f"what it takes ({mem.share_text}).")
elif len(short):
    st.error(f"Short by {-float(short.iloc[0]):,.2f} GiB per card: {r['batch']:,} sequence{'s' if r['batch'] != 1 else ''}"
             f" of {s.ctx:,} tokens {'needs' if r['batch'] == 1 else 'need'} more than the {mem.kv_cache_gib:,.2f} GiB of KV "
             "cache the engine holds."
             + (f" More memory would not serve them: {beyond}." if (beyond := notes.ctx_beyond(s) or (
                 "ctx" in s.follows_traffic and notes.context_refusal(s))) else ""))
ui.download_csv(stack, "fit-memory")

st.subheader("Sequences that fit, by weight precision and context")
fit = ui.table("fit_table", s, (2048, 8192, 32768), list(dict.fromkeys(["bf16", "fp8", "int4-g128", "q4_k_m",
                                                                       s.weights])))
mixed = fit["weights"].iloc[0].removeprefix("checkpoint: ") if fit["weights"].iloc[0].startswith("checkpoint: ") else None
shown = fit.assign(weights=["checkpoint as set", *fit["weights"].iloc[1:]]) if mixed else fit
ui.dataframe(
    shown,
    column_config={
        "weights": st.column_config.TextColumn("Weights", width=150),
        "bits_per_weight": st.column_config.NumberColumn("Bits/weight", format="%.2f", width=80),
        "weights_gib": st.column_config.NumberColumn("Loaded GiB", format="%.1f", width=85,
                                                     help="Weights as loaded, all cards"),
        "free_gib": st.column_config.NumberColumn("KV cache GiB", format="%.1f", width=95,
                                                  help="Memory left for the KV cache on all cards; a negative figure "
                                                       "is how far the weights and the engine's reserve overrun the "
                                                       "cards (they do not fit)."),
        **{c: st.column_config.NumberColumn(f"Seqs at {int(c.split('_')[-1]) // 1024}k", format="%d", width=80)
           for c in fit.columns if c.startswith("seqs_at_")},
    },
    column_order=[c for c in fit.columns if c not in ("quality", "quality_source", "quality_url")],
)
# The published quality cost is a sentence, too long for a column beside seven figures: a table of its own.
ui.dataframe(
    shown[["weights", "quality", "quality_url"]],
    column_config={
        "weights": st.column_config.TextColumn("Weights", width=150),
        "quality": st.column_config.TextColumn("Quality cost against 16-bit, as published", width=680,
                                               help="The published quality cost of the format, on the model and "
                                                    "benchmark named; the source in full in the CSV"),
        "quality_url": st.column_config.LinkColumn("Source", display_text="open", width=60),
    },
)
st.caption(f"{s.gpus} × {s.mem_gib:,.2f} GiB, the engine's own reserve as above, KV cache at {s.kv_bits:g} bits"
           + (" (on the main card alone: under a row split it holds the whole cache)" if s.split == "row" and s.gpus > 1
              else "") + ". "
           "Each row puts every weight in its format (an integer format's embeddings and LM head in bf16, as GPTQ and "
           "AWQ checkpoints keep them)"
           + (f"; the first row is the checkpoint as set ({mixed}), at its average bits per weight. "
              if mixed else ". ")
           + ("A negative KV cache is the shortfall: the weights alone do not load. " if (fit["free_gib"] < 0).any() else "")
           + "The quality cost is the one published for "
           "the format, on the model named (a dash: nothing published, or a checkpoint's mix); the Levers page sets every "
           "format's memory "
           "and money beside it.")
ui.download_csv(fit, "fit-sequences")
