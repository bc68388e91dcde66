"""Models & cards: the catalogue behind the presets, with units and sources, and a card comparison."""

import streamlit as st

from calc import catalogue, words
from pages import _ui as ui

s, r = ui.page()
NUM = st.column_config.NumberColumn

st.caption("Every figure carries its source and the date it was read. Compute peaks are dense (a datasheet figure "
           "'with sparsity' is twice the dense one and is never used). Memory is recorded in GiB. Click a column "
           "header to sort.")

ui.details()  # the first draw of a session ends here

st.subheader("Your model on other cards")
default_cards = list(dict.fromkeys([s.card if s.card in catalogue.cards() else "h100-sxm", "a100-80gb", "l40s"]))
picked = st.multiselect("Cards to compare (up to 3)", list(catalogue.cards()), default=default_cards,
                        max_selections=3, key="_compare_cards",
                        format_func=lambda c: catalogue.cards()[c]["name"])
if picked:
    cmp = ui.table("compare_cards", s, picked)
    shown_cmp = cmp.assign(card=[catalogue.cards()[c]["name"] for c in cmp["card"]])  # names, as the picker shows
    # Short headers and set widths so every column shows at 1,400 px (the cards per replica and the compute
    # precision are the scenario's, in the caption; the CSV has them).
    CHECK = st.column_config.CheckboxColumn
    ui.dataframe(shown_cmp, pin="card", column_config={
        "card": st.column_config.TextColumn("Card", width=110),
        "mem_gib": NUM("Mem GiB", format="%.1f", width=65, help="Memory per card (GiB, driver)"),
        "bw_tbs": NUM("TB/s", format="%.2f", width=50, help="Memory bandwidth per card"),
        "tflops": NUM("TFLOP/s", format="%.0f", width=65, help="Dense peak at the compute precision"),
        "usd_hr": NUM("USD/h", format="%.2f", width=55, help="Reference rent per card-hour"),
        "fits": CHECK("Fits", width=37, help="The weights fit"),
        "max_batch": NUM("Max batch", format="%d", width=70),
        "break_even_batch": NUM("Break-even", format="%.0f", width=78,
                                help="The batch where the step turns from memory-bound to compute-bound"),
        "batch": NUM("Batch", format="%d", width=55, help="The batch used"),
        "tok_s": NUM("tok/s", format="%.0f", width=52,
                     help="Output tokens a second of one replica at the batch used (the step time is the batch over "
                          "this; the CSV has it)"),
        "usd_per_mtok": NUM("Decode/1M", format="%.3f", width=80,
                            help="USD per 1M output tokens of one replica's decode steps (rent plus upkeep, the "
                                 "prompts not counted; the Cost page's 'decode only' figure) at the duty its "
                                 "replicas would run at" if s.duty is None
                            else "USD per 1M output tokens of one replica's decode steps (rent plus upkeep, the "
                                 f"prompts not counted) at duty {s.duty:.0%}"),
        "batch_cap": st.column_config.TextColumn(
            "Cap", width=72, help="What stops the batch first: memory (it holds fewer sequences than the "
                                         "break-even batch), max_seqs (the engine's scheduling cap, below what memory "
                                         "holds) or compute (the step turns compute-bound first)"),
        "replicas": NUM("Replicas", format="%d", width=65, help="Replicas the traffic needs at its busiest hour"),
        "self_host_usd_month": NUM("Bill USD/mo", format="%,.0f", width=85,
                                   help="The traffic's self-hosting bill on this card, as the Decision page gives it: "
                                        "every replica's rent plus the upkeep")},
        column_order=["card", "mem_gib", "bw_tbs", "tflops", "usd_hr", "fits", "max_batch", "break_even_batch", "batch",
                      "tok_s", "usd_per_mtok", "batch_cap", "replicas", "self_host_usd_month"])
    # A card the set-up cannot run on has no figures in the table: why, in full, under it.
    for row in cmp[cmp["refused"].notna()].itertuples():
        st.caption(f"**{catalogue.cards()[row.card]['name']}: not run as linked**, so no figures: {row.refused}.",
                   help=None)
    duty_text = "each card at the duty its replicas would run at for this traffic" if s.duty is None else \
        f"duty {s.duty:.0%}"
    st.caption(f"Same model, precisions ({s.weights} weights, {s.kv} cache), {s.ctx:,}-token context, {words.count(s.gpus, 'card')}, "
               f"{duty_text}; each card with its own datasheet figures and reference rent (a dash: no quote).")
    ui.download_csv(cmp, "catalogue-compare")

def _figures_first(table) -> list[str]:
    """The table's columns with the figures first and where each was read (sources, dates) after them, so the
    figures show without a sideways scroll."""
    where = [c for c in table.columns if c.endswith(("source", "read_on", "notes"))]
    return [c for c in table.columns if c not in where] + where


st.subheader("Models")
models = ui.catalogue_table("models_table")
ui.dataframe(models, pin="id", column_config={
    "params_b": NUM("Params (B)", format="%.3f"), "active_b": NUM("Active (B)", format="%.3f"),
    "embed_b": NUM("Input embedding (B)", format="%.3f"),
    "kv_bytes_per_token_16bit": NUM("KV bytes/token (16-bit)", format="%d"),
    "weights_gib_16bit": NUM("Weights at 16-bit (GiB)", format="%.1f"),
    "window": NUM("Window (tokens)", format="%d"), "max_ctx": NUM("Trained context (tokens)", format="%d"),
    "kv_latent": NUM("MLA latent", format="%d"), "experts": NUM("Experts", format="%d"),
    "experts_active": NUM("Experts/token", format="%d"), "window_layers": NUM("Windowed layers", format="%d"),
    "layers": NUM("Layers"), "heads": NUM("Query heads"), "kv_heads": NUM("KV heads"), "head_dim": NUM("Head dim"),
    "hidden": NUM("Hidden"), "api_ref": "Reference API", "read_on": "Read on",
    "name": st.column_config.TextColumn("name", width=230),  # the longest, "Llama 3.1 405B (Meta FP8 release)", whole
}, column_order=_figures_first(models))
ui.download_csv(models, "catalogue-models")

st.subheader("Cards")
cards = ui.catalogue_table("cards_table")
ui.dataframe(cards, pin="id", column_config={
    "name": st.column_config.TextColumn("name", width=200), "arch": "Family (arch)",
    "mem_gib": NUM("Memory (GiB, driver)", format="%.2f"), "mem_mib": NUM("Memory (MiB, driver)", format="%d"),
    "mem_source": "Memory source", "mem_read_on": "Memory read on",
    "torch_gib": NUM("Memory (GiB, CUDA)", format="%.2f"), "torch_source": "CUDA memory source",
    "bw_tbs": NUM("Bandwidth (TB/s)", format="%.3f"),
    "bf16_tflops": NUM("BF16 dense (TFLOP/s)", format="%.1f"), "fp8_tflops": NUM("FP8 dense (TFLOP/s)", format="%.1f"),
    "int8_tflops": NUM("INT8 dense (TOPS)", format="%.1f"), "fp4_tflops": NUM("FP4 dense (TFLOP/s)", format="%.0f"),
    "flop_per_byte_bf16": NUM("FLOP per byte (BF16)", format="%.0f"),
    "link_gbs": NUM("Interconnect (GB/s, one way)", format="%.0f"), "usd_hr": NUM("Rent (USD/card-h)", format="%.2f"),
    "clock_ghz": NUM("Boost clock (GHz)", format="%.3g"), "clock_source": "Clock source",
}, column_order=_figures_first(cards))
st.caption("Memory is the total the driver reports (nvidia-smi, ECC on for datacenter cards; rocm-smi; hl-smi), "
           "not the label in the card's name; a dash in the MiB column means no driver figure was found and the label is used. "
           "The CUDA figure is the total torch.cuda.mem_get_info() returns, which vLLM and SGLang take their share of "
           "(a dash: none found, and the driver figure stands in). "
           "FLOP per byte is the card's roofline ridge: a 16-bit dense model becomes compute-bound near that batch "
           "when attention is not counted. The boost clock prices llama.cpp Vulkan's time per layer. "
           "A dash: the card has no such units, or no public figure was found.")
ui.download_csv(cards, "catalogue-cards")

st.subheader("API prices")
apis = ui.catalogue_table("apis_table")
ui.dataframe(apis, pin="id", column_config={
    "api_in": NUM("Input (USD / 1M)", format="%.3f"), "api_out": NUM("Output (USD / 1M)", format="%.3f"),
    "tier_above_tok": NUM("Long prompt above (tokens)", format="%d"),
    "tier_api_in": NUM("Input above (USD / 1M)", format="%.3f"),
    "tier_api_out": NUM("Output above (USD / 1M)", format="%.3f"),
    "tier_source": "Tier source", "tier_read_on": "Tier read on"},
    column_order=["id", "api_in", "api_out", *[c for c in _figures_first(apis) if c not in ("id", "api_in", "api_out")]])
st.caption("A request whose prompt is longer than a row's long-prompt threshold is billed entirely at the prices "
           "above it, as the price list publishes them.")
with st.expander(f"{len(catalogue.rejected_apis())} rows refused at load"):
    # A list, not a table: each reason is a sentence, which a table cell would cut off.
    st.markdown("\n".join(f"- `{i}`: {why}" for i, why in catalogue.rejected_apis()))
ui.download_csv(apis, "catalogue-apis")

st.subheader("Cloud GPU quotes")
ui.dataframe(catalogue.cloud_prices(), pin="provider", column_config={
    "provider": "Provider", "product_or_instance": "Product or instance", "gpu": "GPU",
    "gpus_per_instance": NUM("GPUs per instance", format="%d"),
    "usd_per_instance_hour": NUM("USD per instance-hour", format="%.2f"),
    "usd_per_gpu_hour": NUM("USD per GPU-hour", format="%.2f"), "pricing_type": "Pricing", "region": "Region",
    "date_seen": "Seen on", "source": "Source", "notes": "Notes", "card_id": "Card id"})
st.caption("Reference rents take the cheapest on-demand quote per card (not spot, marketplace or capacity blocks); "
           "the H100 SXM's default rent, 2.50 USD per card-hour, is below every on-demand quote here, so it favours "
           "self-hosting: set usd_hr (Money) to a quote you can get.")
