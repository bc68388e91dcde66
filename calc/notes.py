"""Notes on a scenario for people: which preset figures a link overrides, display names, and warnings on
scenarios that are valid but deserve a second look."""

from __future__ import annotations

import functools
import math

from . import catalogue, engines, memory, model, traffic
from .accuracy import (
    MIN_BAND_ROWS,
    accuracy,
    band_text,
    kept_out_beyond_band,
    kept_out_capacity,
    kept_out_provenance,
    kept_out_region_band,
    measured_rows,
    measured_scope,
    published_runs_of,
    region,
)
from .catalogue import scale_up_cards
from .engines import ENGINE_NAMES, METRIC_NAMES, kept_out_as
from .scenario import CUSTOM, WEIGHT_FORMATS, Scenario, packed_weights, preset_figures

#: How :func:`beyond_trained_context` begins, so the pages can say it loudly.
BEYOND_CONTEXT = "no request can be served as set"


def context_refusal(s: Scenario) -> str | None:
    """Where a request (``in_tok + out_tok``) is longer than the model preset's trained context
    (:func:`calc.traffic.trained_context`), the clause saying so (engines and APIs refuse a prompt plus output beyond
    ``max_position_embeddings`` unless the context is extended); None otherwise, and for a custom model, whose
    context is not known."""
    if not traffic.request_beyond_context(s):
        return None
    return (f"a request holds {s.in_tok + s.out_tok:,} tokens (in_tok + out_tok), beyond "
            f"{catalogue.models()[s.model]['name']}'s trained context of {traffic.trained_context(s):,} tokens, which "
            "engines and APIs refuse")


def beyond_trained_context(s: Scenario) -> str | None:
    """:func:`context_refusal` and what it means for the figures, a clause that follows :data:`BEYOND_CONTEXT`;
    None where every request is within the context."""
    refusal = context_refusal(s)
    return refusal and refusal + "; every figure below prices requests this model cannot take"


def ctx_beyond(s: Scenario) -> str | None:
    """"ctx 200,000 is beyond Llama 3.1 8B's trained context of 131,072 tokens" where the context the Fit, Speed and
    Cost figures assume is longer than the model preset was trained for (engines refuse it unless the context is
    extended); None otherwise, and where the context follows the traffic and the requests themselves are beyond it
    (:func:`beyond_trained_context` says that once, for the requests)."""
    preset = catalogue.models().get(s.model)
    if not preset or not preset.get("max_ctx") or s.ctx <= preset["max_ctx"]:
        return None
    if "ctx" in s.follows_traffic and beyond_trained_context(s):
        return None
    return f"ctx {s.ctx:,} is beyond {preset['name']}'s trained context of {preset['max_ctx']:,} tokens"


@functools.lru_cache(maxsize=256)  # pure in the (frozen) scenario; the result is shared: do not change it
def modified_preset_keys(s: Scenario) -> dict[str, list[str]]:
    """Which figures of a preset model or card the scenario overrides (explicit keys win over presets).

    Returns ``{"model": [...], "card": [...]}``: the shape keys of each (the key table's ``shape`` rows) whose value
    differs from the preset's (calc.scenario.preset_figures); empty lists for custom entries or untouched presets.
    """
    out: dict[str, list[str]] = {}
    for source in ("model", "card"):
        preset = preset_figures(s, source)
        out[source] = [k for k, v in preset.items() if v is not None and getattr(s, k) != v]
    return out


def display_name(s: Scenario, what: str = "model") -> str:
    """The model's or card's name for people: the preset's, marked when its figures were changed."""
    table = catalogue.models() if what == "model" else catalogue.cards()
    ident = getattr(s, what)
    if ident not in table:
        return "custom model" if what == "model" else "custom card"
    return table[ident]["name"] + (" (modified)" if modified_preset_keys(s)[what] else "")


def batch_cap(max_batch: int, max_seqs: int | None, be: float | None) -> str:
    """What stops the batch first: ``"max_seqs"`` (the engine's cap, below what memory holds and the break-even
    batch), ``"memory"`` (``max_batch`` below the break-even batch ``be``, or no ``be``: SPEC's memory cap) or
    ``"compute"`` (the step turns compute-bound first). The pages' banner and the card comparison say this one."""
    engine = max_seqs is not None and max_seqs < max_batch
    cap = max_seqs if engine else max_batch
    if be is not None and cap >= be:
        return "compute"
    return "max_seqs" if engine else "memory"


def api_stand_in(s: Scenario) -> str:
    """For a custom model priced against the API row of the catalogue model nearest its size (no row of its own was
    chosen), a note naming the stand-in; "" otherwise."""
    near = catalogue.models()[catalogue.nearest_model(s.active_b)]
    if s.model != CUSTOM or s.api != near["api_ref"]:
        return ""
    row = catalogue.apis()[s.api]
    return (f"API price: {row['provider']} · {row['model']} ({near['name']}'s row: of the catalogue models priced "
            f"by a row of their own, the one nearest its {s.active_b:.3g} B active parameters) stands in for this custom "
            "model; "
            "choose the API row of the model you would call (api) or type its prices (api_in, api_out)")


def outside_measurements(s: Scenario) -> str:
    """When the scenario lies outside what the engine's published rows measured (its model or card, packed
    weights, or step times of an engine measured only at full load), a note saying so and naming what was
    measured ("" otherwise, and for the roofline, which is not calibrated)."""
    if s.engine == "roofline":
        return ""
    # A release family that shares every speed figure with another (trtllm-2024, vllm-0.21) is measured by its rows.
    models, cards, any_packed, metrics = measured_scope(engines.figures_of(s.engine))
    if not models:
        return ""
    out = []
    if s.model not in models or s.card not in cards:
        names = catalogue.models()
        cat_cards = catalogue.cards()
        shown_models = sorted(names[m]["name"] if m in names else "models given by their shapes" for m in models)
        shown_cards = sorted(cat_cards[c]["name"] if c in cat_cards else "cards given by their figures" for c in cards)
        out.append("the rows it was fitted to measured " + ", ".join(dict.fromkeys(shown_models)) + " on "
                   + ", ".join(dict.fromkeys(shown_cards))
                   + " only: this scenario's " + ("model" if s.model not in models else "card")
                   + (" and card" if s.model not in models and s.card not in cards else "")
                   + (" lie" if s.model not in models and s.card not in cards else " lies")
                   + " outside them, where the error may be larger")
    if packed_weights(s.weight_bits) and not any_packed:
        out.append(f"none of its rows stores weights below 8 bits or in scaled blocks, as this scenario's "
                   f"{s.weights} does: "
                   "the unpacking such formats cost is not in its figures")
    if "step_ms" not in metrics:
        out.append("the engine's rows measure full-load throughput only: step times at small batches (time per output "
                   "token) are not checked and are likely overstated")
    acc = accuracy(s)
    kept = kept_out_region_band(s)
    priced, from_region = kept_out_capacity(s)
    if not acc.measured:
        out.insert(0, f"not measured: no row the figures were fitted to covers {region_text(acc.region)}, so its "
                      "figures carry the engine's widest band"
                      + ("" if acc.band_pct is None else
                         f" ({band_text(acc.band_pct)}: the 90th percentile of its least accurate measure or set-up, so one row in "
                         "ten lies further off, the worst on the Validation page)"))
    if kept:  # published rows of this very set-up, kept out of the fit: what they say, whatever the band
        n = kept["n"]
        # The bills are priced at kept-out rows' error only where it lies beyond the capacity band they carry.
        beyond = kept_out_beyond_band(s)
        within = "" if acc.band_pct is None else f" (±{acc.band_pct:.0f} %)"
        if from_region:
            weighed = "; the bills weigh theirs" if beyond else \
                f"; their median lies within the capacity band the bills carry{within}"
        elif priced is not None and kept["signed_median_pct"] > priced["signed_median_pct"]:
            weighed = (f"; fewer than {MIN_BAND_ROWS}, so the bills weigh the {priced['n']:,} kept-out rows of "
                       "the engine" if beyond else
                       f"; fewer than {MIN_BAND_ROWS}, and the median of the engine's {priced['n']:,} kept-out rows "
                       f"lies within the capacity band the bills carry{within}")
        else:
            weighed = ""
        origin = kept_out_provenance(kept["rows"])
        out.append(f"{n} published row{'s' if n != 1 else ''} kept out of the fit measured set-ups like this one "
                   f"({region_text((kept_out_as(s.engine), *acc.region[1:]))}, of any model of that kind"
                   f"{'; ' + origin if origin else ''}): "
                   f"{METRIC_NAMES.get(kept['metric'], kept['metric'])} came out "
                   + lean_text(kept["signed_median_pct"], median=n != 1)
                   + (f" (worst row {kept['max_pct']:.0f} % off)" if n != 1 else "") + weighed)
    return "; ".join(out)


def lean_text(pct: float, median: bool = True, fast: str = "too fast", slow: str = "too slow") -> str:
    """A signed error in per cent (+: flatters self-hosting) in words: "a median 7 % too fast", "a median 3 % too
    slow", "a median under 1 % off" where it rounds to 0 (no lean to name); without ``median`` the bare figure."""
    lead = "a median " if median else ""
    if round(abs(pct)) == 0:
        return f"{lead}under 1 % off"
    return f"{lead}{abs(pct):.0f} % {fast if pct > 0 else slow}"


def region_text(region: tuple) -> str:
    """A measured region (calc.accuracy.region) in words: "TensorRT-LLM on Blackwell cards with an MoE model in
    weights stored below 8 bits or in scaled blocks on 1 card per replica"."""
    engine, arch, kind, gpus, packed = region
    card = "a custom card whose family the link does not name (arch)" if arch == "unknown" else arch + " cards"
    return (f"{ENGINE_NAMES.get(engine, engine)} on {card} with "
            f"{'an' if kind[0] in 'AEIOMU' else 'a'} {kind} model "
            f"{'in weights stored below 8 bits or in scaled blocks ' if packed else ''}on {gpus} "
            f"card{'s' if gpus != 1 else ''} per replica")


def cheaper_api_row(s: Scenario) -> tuple[str, float] | None:
    """The catalogue's cheapest API row for the same model family as the scenario's row, and its monthly bill
    for the scenario's traffic (USD), when it bills at least 5 % less than the row priced; None otherwise (or
    when the link typed its own prices, or a request is longer than the model's trained context: no API takes it,
    so no row is advice)."""
    apis = catalogue.apis()
    row = apis.get(s.api)
    if row is None or (s.api_in, s.api_out) != (row["api_in"], row["api_out"]) or beyond_trained_context(s):
        return None
    now = float(traffic.api_usd_month(s, s.req_day))
    best = None
    for api_id, other in apis.items():
        if other["family"] != row["family"] or api_id == s.api:
            continue
        bill = float(traffic.requests_month(s)) * traffic.api_usd_per_request(s, other)
        if best is None or bill < best[1]:
            best = (api_id, bill)
    return best if best is not None and best[1] < 0.95 * now else None


#: A batch cap within this share below the break-even batch is "only just" below it: the step then shares its
#: weight read among nearly as many sequences as the roofline figure assumes.
NEAR_KNEE_SHARE = 0.05


def cap_just_below_knee(cap: int, break_even: float | None) -> bool:
    """True when the batch cap ``cap`` (sequences) sits below the break-even batch by less than
    :data:`NEAR_KNEE_SHARE` of it, so the cost per token is close to the roofline figure."""
    return break_even is not None and cap < break_even and cap >= (1 - NEAR_KNEE_SHARE) * break_even


#: The shortest calendar month, in hours (28 days): a shorter ``hours`` is read as a part-time fleet by mistake.
SHORT_MONTH_HOURS = 672


#: How :func:`latency_missed` begins, so the pages that say it loudly leave it out of their notes.
LATENCY_MISSED = "the latency target of"


def latency_missed(s: Scenario, single_stream_ms: float) -> str:
    """The note where no batch meets the latency target ``tpot_ms`` (a single stream's step ``single_stream_ms``,
    ms, is longer): the capacity is then sized at one stream per replica (calc.traffic.capacity)."""
    return (f"{LATENCY_MISSED} {s.tpot_ms:g} ms per output token cannot be met: even a single stream takes "
            f"{single_stream_ms:,.1f} ms per token here, so these figures assume one stream per replica")


#: NVIDIA's licence for the GeForce driver ("No Datacenter Deployment. The SOFTWARE is not licensed for datacenter
#: deployment, except that blockchain processing in a datacenter is permitted": the GeForce software licence,
#: www.nvidia.com/en-us/drivers/geforce-license/, read 2026-12-05).
CONSUMER_PREFIX = "GeForce"


def fallback_clause(key: str, s: Scenario) -> str:
    """What the figures use for ``key`` while the link's value of it is refused: `` (the figures use key=value)``, as
    the complete link of ``s`` writes it; "" where that link leaves it empty."""
    used = s.to_params().get(key)
    return "" if used in (None, "") else f" (the figures use {key}={used})"


def _arithmetic_notes(s: Scenario) -> list[str]:
    """What a decode step's and a prefill's arithmetic reach at the scenario's precision, where it is not the plain
    eff_flops, and where the link prices it otherwise than the engine's profile measured (docs/method.md section 8)."""
    out = []
    prof = engines.profile(s.engine)
    if s.compute == "fp8" and s.eff_fp8 < 1:
        own = s.eff_fp8 == prof["eff_fp8"]
        why = (", about what the same step reaches at BF16: in the FP8 runs the profile's figures were fitted on, FP8 "
               "saved the time to read the weights and little arithmetic" if own else "")
        out.append(f"compute=fp8: a decode step's arithmetic reaches {s.eff_flops * s.eff_fp8:.0%} of the FP8 peak "
                   f"(eff_flops {s.eff_flops:g} times eff_fp8 {s.eff_fp8:g}{'' if own else ', set in the link'}){why}; "
                   f"a prefill reaches {s.eff_prefill:.0%} of it (eff_prefill)")
    key = {"fp8": "eff_fp8", "fp4": "eff_fp4"}.get(s.compute)
    if key and getattr(s, key) > prof[key]:
        out.append(f"{key}={getattr(s, key):g}: the link prices the arithmetic at {s.compute.upper()} above the share "
                   f"the {ENGINE_NAMES.get(s.engine, s.engine)} profile measured ({prof[key]:g}), so the step and the "
                   f"bill are optimistic; add {key}={prof[key]:g} for the profile's (a link that gives eff_flops or eff "
                   f"and not {key} takes 1, so that a link printed before {key} existed keeps its numbers)")
    if s.overlap > prof["overlap"]:
        out.append(f"overlap={s.overlap:g}: the link hides more of a step's shorter time (memory or arithmetic) under "
                   f"the longer than the {ENGINE_NAMES.get(s.engine, s.engine)} profile measured "
                   f"({prof['overlap']:g}), so the step and the bill are optimistic; add overlap={prof['overlap']:g} "
                   "for the profile's (a link that gives eff_flops or eff and not overlap takes 1, so that a link "
                   "printed before overlap existed keeps its numbers)")
    if s.engine != "roofline" and s.eff_prefill != prof["eff_prefill"]:
        side = "optimistic" if s.eff_prefill > prof["eff_prefill"] else "conservative"
        out.append(f"eff_prefill={s.eff_prefill:g}: the link prices a prefill's arithmetic at {s.eff_prefill:g} of the "
                   f"peak where the profile measured {prof['eff_prefill']:g} ({side} for the time to first token and "
                   "the bill); a link that gives eff_flops or eff and not eff_prefill takes that figure for prefill too")
    return out


def shape_mismatch(s: Scenario) -> str | None:
    """Where a model's shape asks for more parameters than it has: the embedding table and LM head
    (``embed_b`` + vocab x hidden) alone beyond the dense part (the total less the routed experts). The weights are
    then priced at the parameters given (docs/method.md section 2.1 bounds each part by what is left), so the shape's
    other figures mean little; None where they agree."""
    _, dense = model.moe_split(s)
    head = model.embed_params(s) + s.vocab * s.hidden
    if head <= dense:
        return None
    return (f"the shape does not add up: the embedding table and LM head alone (embed_b {s.embed_b:g} B plus vocab "
            f"{s.vocab:,} x hidden {s.hidden:,} = {head / 1e9:.3g} B parameters) are more than the model's "
            f"{dense / 1e9:.3g} B{' dense' if s.experts else ''} parameters, so the weights are priced at "
            f"params_b={s.params_b:g} as embedding parts alone (every format holds them at weights_embed); check "
            "params_b, vocab and hidden")


def scenario_warnings(s: Scenario) -> list[str]:
    """Plain-language notes on a scenario that is valid but deserves a second look."""
    out = []
    mb = int(memory.max_batch(s, s.ctx))
    mem = memory.memory(s)
    if mem.kv_cache_gib <= 0:
        out.append(f"the weights do not fit: the weights as loaded and the engine's reserve need "
                   f"{mem.needed_gib:,.1f} GiB per card, and the engine takes {mem.share_text}; step_ms, tok_s, "
                   "spec_tpot_ms and usd_per_mtok in the report are batch 1's as if they did, and the pages show no "
                   "speed or price")
    elif mb == 0:
        out.append(f"the weights fit but not one sequence of {s.ctx:,} tokens does: step_ms, tok_s and usd_per_mtok "
                   "in the report are batch 1's as if it did, and the pages show no speed or price")
    if s.batch != "auto" and int(s.batch) > mb:
        out.append(f"batch {s.batch} exceeds the {mb:,} sequences memory holds at {s.ctx:,} tokens")
    shape_note = shape_mismatch(s)
    if shape_note:
        out.append(shape_note)
    if s.batch != "auto" and s.max_seqs is not None and int(s.batch) > s.max_seqs:
        plural = "s" if s.max_seqs != 1 else ""
        out.append(f"batch {s.batch} exceeds the engine's cap of {s.max_seqs:,} sequence{plural} per step "
                   "(max_seqs): the engine would not run it, so its step and its cost per million are not reachable")
    if s.hours < SHORT_MONTH_HOURS:
        out.append(f"hours={s.hours:g} is the month's length, not the hours the cards run: it scales the traffic "
                   f"too (requests a day x {s.hours:g} / 24 are the month's requests); for a fleet that runs part of "
                   "the day, keep hours at 720 and give the day's traffic (profile) with autoscale=1")
    if s.eff_card != 1:
        family = engines.family_name(s.arch)
        own = engines.family_share(s.arch, s.engine)  # 1 unless the family has a share under this engine
        why = "set in the link"
        if own != 1 and s.eff_card == own:
            covered = engines.card_families()[family]["engines"]
            rows = sum(1 for e, _, m in measured_rows() if e in covered and region(m)[1] == family)
            why = (f"the share the {rows} rows on {family} cards measured under "
                   f"{ENGINE_NAMES.get(s.engine, s.engine)}, calc/data/card_families.csv")
        name = family or "custom"
        out.append(f"{'an' if name[0] in 'AEIOU' else 'a'} {name} card: the weights and the KV cache are read at "
                   f"{s.eff_card:g} of the "
                   f"engine's bandwidth figures (eff_card: {why}), so each step's memory time is "
                   f"{1 / s.eff_card:.2f} times the profile's")
    out += _arithmetic_notes(s)
    card = catalogue.cards().get(s.card)
    if card is not None:
        domain = scale_up_cards(s.card)
        if s.gpus > domain and s.link_gbs == card["link_gbs"]:
            out.append(f"gpus={s.gpus} spans more than one scale-up domain of {domain} {card['name']} cards "
                       f"({card['link_kind']}): the all-reduces that leave it run over PCIe or the network (tens of "
                       f"GB/s: PCIe 5.0 x16 is 64, one 400 Gb/s port 50), not the {card['link_gbs']:g} GB/s the "
                       "figures assume, so the step and the bill are optimistic; set link_gbs to that speed")
        if card["name"].startswith(CONSUMER_PREFIX):
            out.append(f"{card['name']} is a consumer card: NVIDIA's licence for the GeForce driver excludes "
                       "datacenter deployment, so the replicas priced here need a place the licence allows (a "
                       "workstation, an office, a provider that offers them), which no bill here checks")
        if card.get("vendor") != "NVIDIA":
            parts = (("weights", s.weights), ("routed experts", s.weights_experts if s.experts else None),
                     ("attention projections", s.weights_attn if s.weights_attn != s.weights else None))
            fp4 = [f"{name} in nvfp4" for name, fmt in parts if fmt == "nvfp4"]
            if s.kv == "nvfp4":
                fp4.append("KV cache in nvfp4")
            if fp4:
                out.append(f"{', '.join(fp4)} on {card['name']}: NVFP4 is NVIDIA's format (Blackwell's FP4 units); "
                           f"no engine in the catalogue runs it on {card['vendor']} cards, so these figures describe "
                           "no set-up you can run (mxfp4 or int4-g128 are the 4-bit formats there)")
    if s.autoscale and not s.profile:
        out.append("autoscale=1 has nothing to follow without the day's traffic (profile): every figure is the fleet "
                   "for the busiest hour, all day; give a profile (flat, office, evening or 24 hourly weights)")
    preset = catalogue.models().get(s.model)
    apis = catalogue.apis()
    if preset and s.api in apis and preset["api_ref"] in apis and \
            apis[s.api]["family"] != apis[preset["api_ref"]]["family"]:
        out.append(f"the API row {s.api} prices {apis[s.api]['family']}, not {preset['name']}: the comparison is "
                   "with another model's price list")
    beyond = beyond_trained_context(s)
    long_ctx = ctx_beyond(s)
    if long_ctx:
        out.append(long_ctx)
    request = s.in_tok + s.out_tok
    if beyond:
        out.append(f"{BEYOND_CONTEXT}: {beyond}")
    if request > s.ctx:
        out.append(f"a request holds {request:,} tokens (prompt + output), more than the {s.ctx:,}-token context "
                   "the Fit, Speed and Cost figures assume")
    changed = modified_preset_keys(s)
    if changed["model"]:
        out.append(f"{preset['name']} preset with its own figures: {', '.join(changed['model'])} "
                   f"{'differ' if len(changed['model']) > 1 else 'differs'} from the preset")
    if changed["card"]:
        out.append(f"{catalogue.cards()[s.card]['name']} preset with its own figures: "
                   f"{', '.join(changed['card'])} "
                   f"{'differ' if len(changed['card']) > 1 else 'differs'} from the datasheet")
    tier_note = traffic.api_tier_note(s)
    if tier_note:
        out.append(tier_note)
    stand_in = api_stand_in(s)
    if stand_in:
        out.append(stand_in)
    if preset and s.api == preset["api_ref"] and preset.get("api_ref_note"):
        out.append(f"API price: {preset['api_ref_note']}; pick a closer row or type your own prices")
    card = catalogue.cards().get(s.card)
    if s.usd_hr is None:
        out.append(f"no reference rent for {card['name'] if card else 'this card'}: "
                   "set usd_hr (USD per card-hour) to price it")
    elif s.usd_hr == 0:
        # Legal (cards already paid for), but a bill of nothing is what a forgotten field looks like.
        out.append("rent is 0 USD per card-hour: the rented bill counts "
                   + ("nothing at all, as upkeep is 0 too: cards that cost nothing to hold, run and keep are not a "
                      "real option; enter your quote (usd_hr) and the people's time (upkeep)"
                      if not s.upkeep else "only the upkeep (for cards already paid for, the buy option prices "
                      "their power and purchase)"))
    if s.api_in == 0 and s.api_out == 0:
        out.append("the API prices are 0 USD per million input and output tokens: the API bill is nothing, so "
                   "self-hosting can never be cheaper; enter the provider's prices (api_in, api_out) or pick an API row")
    if card and card.get("link_gbs") is None and s.gpus > 1:
        out.append(f"{card['name']}: interconnect bandwidth is not in the catalogue; "
                   f"link_gbs {s.link_gbs:g} GB/s is an assumption")
    if not s.experts and s.experts_active:
        out.append("experts_active has no effect: the model is dense (experts = 0)")
    if not s.experts and s.active_b != s.params_b:
        out.append("active_b differs from params_b on a dense model (experts = 0): decode reads every weight")
    if s.window and not s.window_layers:
        out.append("window has no effect: window_layers is 0")
    if s.window_layers and not s.window:
        out.append("window_layers has no effect: window is 0")
    copies = model.kv_copy_factor(s)
    if copies > 1:
        held = ("every card holds the whole latent" if s.kv_latent else
                f"each card holds {model.kv_heads_per_card(s)} of the {s.kv_heads} KV heads (a head is copied, "
                "never split)")
        out.append(f"tensor parallel over {s.gpus} cards keeps {copies:g}x the KV cache: {held}, so memory and "
                   "each step's cache read count the copies")
    parts = checkpoint_parts(s)
    if parts:
        out.append(f"weights per part: {parts}")
    if not s.experts and s.weights_experts != s.weights:
        out.append("weights_experts has no effect: the model is dense (experts = 0)")
    if s.kv_latent:
        out.append("MLA cache sized as the compressed latent (engines such as vLLM and SGLang cache it); "
                   "an engine that expands keys and values needs the plain formula")
    names = engines.KV_FORMATS_BY_ENGINE.get(engines.base(s.engine))
    if names is not None and s.kv not in names:  # a bit count, taken as given
        out.append(f"kv={s.kv} is a cache format of the link's own ({s.kv_bits:g} bits): "
                   f"{ENGINE_NAMES.get(s.engine, s.engine)} holds its KV cache in {', '.join(names)}, so these figures "
                   "assume a build that stores keys and values in that many bits, at no cost in quality")
    release = vllm_release_note(s) or vulkan_kernel_note(s)
    if release:
        out.append(release)
    if s.engine == "trtllm-2025" and s.overhead_gib is not None and mem.kv_cache_gib > 0:
        own = memory.trtllm_torch_kv_gib(s)
        if own < (1 - RELEASE_GAP) * mem.kv_cache_gib:
            out.append(f"TensorRT-LLM 1.x (engine=trtllm) sizes its KV cache from a profiling run: 90 % "
                       "(free_gpu_memory_fraction) of "
                       f"the memory its weights, activations and buffers leave, about {max(own, 0.0):,.2f} GiB per "
                       f"card here, not the {mem.kv_cache_gib:,.2f} this profile's fitted reserve leaves; fewer "
                       "sequences may fit than these figures say")
    if mem.cells is not None and mb > 0 and mem.kv_asked_gib > mem.kv_cache_gib:
        slots = 1 if s.max_seqs is None else int(s.max_seqs)
        out.append(f"{ENGINE_NAMES.get(s.engine, s.engine)} told {mem.cells:,} cells ({slots} slot"
                   f"{'s' if slots != 1 else ''} of {s.ctx:,} tokens) would not start: they take "
                   f"{mem.kv_asked_gib:,.2f} GiB per card and {mem.kv_cache_gib:,.2f} are free beside the weights and "
                   "its buffers; fewer slots (max_seqs) fit, and its --fit (on by default) "
                   "shrinks n_ctx to what is free less 1 GiB")
    return out


#: The Vulkan profile of the builds whose quantized matrix-vector products take integer dot products, and the one
#: of the builds (and cards) that dequantize in the shader (docs/calibration.md sections 3 and 8).
VULKAN_INT_DOT, VULKAN_DEQUANT = "llamacpp-vulkan", "llamacpp-vulkan-2025"


def vulkan_kernel_note(s: Scenario) -> str | None:
    """For a llama.cpp Vulkan scenario that stores packed weights: which builds its speeds assume (from
    September 2025), the batch-1 step of the builds before (the ``llamacpp-vulkan-2025`` profile's loss on packed
    weights), and that the integer-dot kernels behind part of the gain (PR #14903 for legacy quants, PR #16900 for
    k-quants, +5 % to +23 % on 4-bit decode in their tables) run only on a driver that reports integer dot
    products. None for other engines, for weights the step reads as stored (:func:`calc.model.read_packed`), or
    where the two losses are one."""
    if s.engine != VULKAN_INT_DOT or not any(model.read_packed(s, p.bits) for p in model.weight_parts(s)):
        return None
    old = engines.profile(VULKAN_DEQUANT)["eff_dequant"]
    if old >= s.eff_dequant:
        return None
    now_ms = float(model.step_seconds(s, 1)) * 1e3
    then_ms = float(model.step_seconds(s.model_copy(update={"eff_dequant": old}), 1)) * 1e3
    return (f"{ENGINE_NAMES[s.engine]} is priced as the Vulkan builds from September 2025 on, {now_ms:,.2f} ms a "
            f"step at batch 1; the 2025 builds before them took {then_ms:,.2f} (engine={VULKAN_DEQUANT}). Part of "
            "the gain is the integer-dot kernels (legacy quants such as Q4_0 and Q8_0 from September 2025, k-quants "
            "such as Q4_K from the end of November 2025: +5 % to +23 % on 4-bit decode in their pull requests), which run "
            "only where the driver reports integer dot products (int dot: 1 in llama.cpp's start-up printout): on "
            "a card without them, or a k-quant build before December 2025, expect up to about a fifth slower")


#: How far apart vLLM's release families may size the KV cache before the notes say so.
RELEASE_GAP = 0.10
#: The vLLM release families in words, for the notes.
_RELEASE_WORDS = {"vllm-0.21": "vLLM v0.21 and later", "vllm-2025": "vLLM's 2025 releases (v0.10 to v0.14)"}


def vllm_release_note(s: Scenario) -> str | None:
    """Where vLLM's release families (calc/memory.py ``VLLM_RELEASES``: v0.21 and later reserve CUDA-graph memory,
    profile a lean FlashInfer/Triton sampler and hold MXFP4 experts through Triton; v0.10 to v0.14 profile the
    PyTorch sort sampler and pad MXFP4 experts for Marlin) size the scenario's KV cache more than
    :data:`RELEASE_GAP` apart: for a link that names no release (``engine=vllm``), which family's accounting it
    was charged (the one that leaves less) and what the other gives; for a link that names one, what the other
    gives, so that a log is compared with its own release. None otherwise, and where ``overhead_gib`` replaces
    the reserve and no MXFP4 expert differs."""
    if engines.base(s.engine) != "vllm":
        return None
    used = memory.vllm_release_id(s)
    other = next(r for r in memory.VLLM_RELEASES if r != used)
    now = memory.memory(s).kv_cache_gib
    then = memory.memory(s.model_copy(update={"engine": other})).kv_cache_gib
    if abs(then - now) <= RELEASE_GAP * max(abs(now), 1e-9) and not (now <= 0 < then or then <= 0 < now):
        return None

    def size(x: float, nothing: str = "no KV cache") -> str:
        return f"{x:,.2f} GiB per card" if x > 0 else f"{nothing} (short by {-x:,.2f} GiB per card)"

    why = []
    if s.overhead_gib is None:
        why.append("the sampler's profiling run")
        if s.cuda_graphs:
            why.append("the CUDA-graph reserve")
    if s.experts and s.weights_experts == "mxfp4":
        why.append("how the MXFP4 experts are held")
    differ = f" ({', '.join(why)} differ)" if why else ""
    if s.engine == memory.VLLM_UNNAMED:
        return (f"The link names no vLLM release, so the KV cache is charged as {_RELEASE_WORDS[used]} allocate "
                f"it, the accounting that leaves less: {size(now)}; {_RELEASE_WORDS[other]} leave {size(then)}"
                f"{differ}. Name the release with engine={other} or engine={used} to compare a log with its own")
    return (f"{_RELEASE_WORDS[other]} leave {size(then, 'none')} for the KV cache, against {size(now, 'none')} "
            f"here{differ}; compare a log of one of them with engine={other}")


def published_run_note(s: Scenario) -> str:
    """For a set-up the engine's memory accounting says does not fit, the published runs of it all the same (the
    Validation page's rows): "" where it fits or none ran it. The accounting may be stricter than the release that
    ran it, so such a verdict is in doubt, and the page and the memo say so."""
    if memory.memory(s).kv_cache_gib > 0 and int(memory.max_batch(s, s.ctx)) > 0:
        return ""
    runs = published_runs_of(s)
    if not runs:
        return ""
    first = runs[0]
    unit = "ms a step" if first["metric"] == "step_ms" else "tok/s"
    more = f" and {len(runs) - 1} more" if len(runs) > 1 else ""
    return (f"A published run of this set-up ran all the same: {first['version']} measured {first['measured']:,.4g} "
            f"{unit} (row {first['id']}{more}, Validation page), so the memory accounting here may be stricter than "
            "that release's")


def other_vllm_release_fits(s: Scenario, n: int) -> tuple[str, str, float, int] | None:
    """For a link that names no vLLM release (``engine=vllm``, charged the release family that leaves less cache:
    :func:`vllm_release_note`) on which not one request of ``n`` tokens fits, the other family where it does: (its
    id, its name in words, its KV cache in GiB per card, the requests of ``n`` tokens it holds at once); None
    otherwise."""
    if s.engine != memory.VLLM_UNNAMED:
        return None
    if int(memory.max_batch(s, n)) > 0:
        return None
    other = next(r for r in memory.VLLM_RELEASES if r != memory.vllm_release_id(s))
    named = s.model_copy(update={"engine": other})
    held = int(memory.max_batch(named, n))
    if held <= 0:
        return None
    return other, _RELEASE_WORDS[other], float(memory.memory(named).kv_cache_gib), held


def checkpoint_parts(s: Scenario) -> str | None:
    """The parts of the scenario's checkpoint stored in another format than ``weights``, in words ("routed experts
    in mxfp4, the rest in bf16"); None when every part is in ``weights`` (a dense model's expert format does not
    count)."""
    words = checkpoint_part_words(s)
    if not words:
        return None
    return ", ".join(words) + f", the rest in {_format_name(s.weights)}"


def _format_name(fmt: str) -> str:
    return fmt if fmt in WEIGHT_FORMATS else f"{fmt}-bit"


def checkpoint_part_words(s: Scenario, experts: bool = True) -> list[str]:
    """Each part of the checkpoint stored in another format than ``weights``, in words ("routed experts in mxfp4",
    "embeddings and LM head in bf16", "2 blocks whole at 16 bits"); without ``experts`` the routed experts are left
    out (a sentence that names them first)."""
    words = [f"{name} in {_format_name(fmt)}" for name, fmt, used in (
        ("routed experts", s.weights_experts, bool(s.experts) and experts),
        ("attention projections", s.weights_attn, True),
        ("embeddings and LM head", s.weights_embed, True)) if used and fmt != s.weights]
    if s.layers_full:
        words.append(f"{s.layers_full} block{'s' if s.layers_full != 1 else ''} whole at 16 bits")
    return words


def checkpoint_label(s: Scenario) -> str:
    """The weight format for a table cell, with the routed experts' where they are stored otherwise (the bulk of an
    MoE checkpoint's bytes): "int4-g128", "bf16 (experts mxfp4)"."""
    if s.experts and s.weights_experts != s.weights:
        return f"{s.weights} (experts {s.weights_experts})"
    return s.weights


#: The start of a what-if note (a context or duty the link fixes instead of following the traffic).
WHAT_IF = "what-if"


def ctx_what_if(s: Scenario) -> bool:
    """True where the link fixes ``ctx`` to a number other than a request's tokens (``in_tok + out_tok``) instead of
    following the traffic (SPEC section 10): the Fit, Speed and Cost figures then use another context than the bill."""
    return "ctx" not in s.follows_traffic and s.ctx != max(1, s.in_tok + s.out_tok)


def what_if(s: Scenario, implied_duty: float | None) -> list[str]:
    """Notes for a link that fixes ``ctx`` or ``duty`` to a number instead of following the traffic (SPEC section
    10): what the figures use, and the traffic's own figure beside it. ``implied_duty``: the traffic's implied
    duty per replica (None where nothing fits)."""
    out = []
    n = max(1, s.in_tok + s.out_tok)
    if ctx_what_if(s):
        out.append(f"{WHAT_IF} context: the Fit, Speed and Cost figures use {s.ctx:,} token{'s' if s.ctx != 1 else ''} per sequence "
                   f"(ctx={s.ctx}); a request of the traffic holds {n:,} (prompt + output), which sizes the "
                   "replicas and the bill on the Decision page; ctx=auto follows the traffic")
    if "duty" not in s.follows_traffic and implied_duty is not None and not math.isclose(s.duty, implied_duty,
                                                                                          rel_tol=1e-3):
        out.append(f"{WHAT_IF} duty: the cost per million tokens is at {s.duty:.1%} busy (duty={s.duty:g}); the "
                   f"traffic keeps each replica {implied_duty:.1%} busy, which the monthly bill uses; duty=auto "
                   "follows the traffic")
    return out


def mean_context_note(s: Scenario, lead: str) -> str:
    """Why the traffic's figures (a busy replica's tok/s, the all-in cost per 1M) can beat the decode figures beside
    them at one context: those take every sequence at the full ``in_tok + out_tok`` a request holds by its end, while
    under load the sequences are spread over their replies, so a step reads each one's cache at
    :func:`calc.traffic.load_context` tokens on average (docs/method.md section 8). ``lead`` starts the sentence
    ("A busy replica delivers more than the decode figure")."""
    return (f"{lead} because a request holds all {s.in_tok + s.out_tok:,} of its tokens only at its last step: under "
            f"load the sequences are spread over their replies, so a step reads each one's cache at "
            f"{traffic.load_context(s):,.0f} tokens on average, where the decode figures take every sequence at its "
            "full length (docs/method.md section 8). The replicas and the bill are sized from the traffic's figures.")
