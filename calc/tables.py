"""Tables and sweeps the pages show, as pandas DataFrames built from single array expressions.

Column names carry their units. Nothing here rounds: the pages format for display.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from . import catalogue, engines, memory, model, notes, procure, traffic, words
from .decision import BEYOND_CONTEXT_WORD, Decision
from .scenario import WEIGHT_FORMATS, Scenario, plain_checkpoint, weight_format_bits, weights_refusal
from .units import BILLION, MS_PER_S

#: Duty cycles of the cost surface: 1 % to 100 % in 100 steps.
DUTIES = np.linspace(0.01, 1.0, 100)
#: The widest batch a by-batch chart draws (past it, a batch's step is the same straight line on a log axis).
MAX_SWEEP_BATCH = 16_384


def sweep_top(s: Scenario) -> int:
    """The largest batch the by-batch charts and sweeps draw for ``s``: 1,024, or the power of two at or above the
    most sequences memory holds at ``s.ctx`` (at or above the engine's ``max_seqs`` cap), up to
    :data:`MAX_SWEEP_BATCH`, so the batch a scenario serves and what stops it are on its charts."""
    cap = int(memory.max_batch(s, s.ctx))
    return int(min(MAX_SWEEP_BATCH, max(1024, 1 << max(cap - 1, 1).bit_length())))


def batch_grid(s: Scenario) -> np.ndarray:
    """Every batch from 1 to :func:`sweep_top` (int array)."""
    return np.arange(1, sweep_top(s) + 1)


def cost_batches(s: Scenario, points: int = 41) -> np.ndarray:
    """About ``points`` batches spaced evenly on a log axis from 1 to :func:`sweep_top` (the cost surface's)."""
    return np.unique(np.round(np.geomspace(1, sweep_top(s), points)).astype(int))


def powers_of_two(top: int) -> list[int]:
    """1, 2, 4, ... up to ``top``."""
    return [1 << k for k in range(int(top).bit_length()) if 1 << k <= top]


def card_memory(s: Scenario) -> memory.Memory:
    """A card's memory as the scenario's engine allocates it (:func:`calc.memory.memory`)."""
    return memory.memory(s)


def memory_stack(s: Scenario, batch: int | None = None) -> pd.DataFrame:
    """A card's memory at the scenario's batch, part by part, as the engine allocates it (calc/memory.py): the
    weights as loaded, each block of the engine's reserve, the KV cache the batch fills, the rest of the KV
    cache the engine allocated, and what the engine leaves alone. The parts add up to the card (``mem_gib``).

    Returns columns ``part``, ``gib_per_card``, ``gib_total``, and ``start_gib`` / ``end_gib``: where each block
    sits on one card when the blocks are laid end to end (a waterfall; a negative block has no width). A batch
    whose caches exceed the KV cache, or weights and a reserve that exceed the engine's share, add a ``short`` row
    holding the shortfall as a negative figure.
    """
    batch = memory.batch_used(s) if batch is None else batch
    g = s.gpus
    mem = memory.memory(s)
    pool = max(mem.allocated_gib, 0.0)
    # The cards that hold the cache: every one, or the main card alone under a row split (the card drawn here).
    held = mem.cache_cards
    need = batch * float(model.cache_bytes(s, s.ctx)) / model.GiB / held
    used = min(need, pool)  # the engine allocates its pool, no more: what the batch needs beyond it is short
    cache = "KV cache and state" if s.state_layers else "KV cache"  # a hybrid's sequences hold a state too
    # A batch the cache cannot hold fills all of it: the label says so, or the bar reads as what the batch takes.
    filled = f"{cache} at batch {batch:,}" + (f", all there is (it needs {need:,.2f} GiB)" if need > pool else "")
    # On a Mac, what lies beyond Metal's working set is macOS's, not room the engine left.
    outside = min(mem.outside_gib, max(0.0, mem.unclaimed_gib))
    # Each block: its name, its GiB on the card drawn, and the cards of the replica that hold one like it (every
    # card its weights and reserve, the cards that hold the cache theirs).
    blocks = [("weights (as loaded)", mem.weights_loaded_gib, g), *[(b.name, b.gib, g) for b in mem.reserve],
              (filled, used, held), ("KV cache allocated, unused", pool - used, held),
              ("left by the engine", max(0.0, mem.unclaimed_gib) - outside, g)]
    if outside > 0:
        blocks.append(("beyond Metal's working set (macOS keeps it)", outside, g))
    short = (used - need) + min(0.0, mem.kv_cache_gib)
    if short < 0:
        blocks.append(("short", short, held))
    names = [name for name, _, _ in blocks]
    per_card_arr = np.array([gib for _, gib, _ in blocks])
    cards = np.array([n for _, _, n in blocks], dtype=float)
    end = np.cumsum(np.clip(per_card_arr, 0.0, None))
    return pd.DataFrame({"part": names, "gib_per_card": per_card_arr, "gib_total": per_card_arr * cards,
                         "start_gib": end - np.clip(per_card_arr, 0.0, None), "end_gib": end})


def fit_table(s: Scenario, contexts: Sequence[int] = (2048, 8192, 32768),
              formats: Iterable[str] | None = None) -> pd.DataFrame:
    """Sequences that fit at each context for each weight format (rows) on the scenario's cards.

    ``formats`` defaults to 16-, 8- and 4-bit weights plus the scenario's own format; a format the engine cannot
    load becomes the one it runs instead (:func:`calc.engines.engine_weights`). Columns:
    ``weights`` (format), ``bits_per_weight``, ``weights_gib``, ``free_gib`` (for the cache, all cards),
    one ``seqs_at_<n>`` column per context, then ``quality`` (the published quality cost against 16-bit, from
    ``catalogue.quality``; None where nothing is published), ``quality_source`` and its address ``quality_url``.
    """
    if formats is None:
        formats = ["16", "8", "4"] + ([s.weights] if s.weights not in ("16", "8", "4") else [])
    # Each in the type the engine loads (llama.cpp: a GGUF counterpart), never a format it would refuse.
    formats = list(dict.fromkeys(engines.engine_weights(s.engine, str(f)) for f in formats))
    # Nor one the card has no tensor cores for (TensorRT-LLM's FP8 and NVFP4: engines.card_format_rule).
    card = catalogue.cards().get(s.card)
    formats = [f for f in formats if f == s.weights or not engines.card_format_rule(
        s.engine, f, card and card["peaks"], card and card["name"])]
    # Nor one the engine refuses to load (a release family no format shipped after it: MXFP4 before gpt-oss).
    formats = [f for f in formats if f == s.weights or not weights_refusal(s.engine, f)]
    bits = [weight_format_bits(f) for f in formats]
    # Each row is a checkpoint in its format as such checkpoints ship (an integer one keeps its embeddings and LM head
    # in bf16); a checkpoint whose parts differ from that gets a row of its own, first.
    variants = [s.model_copy(update=plain_checkpoint(f)) for f in formats]
    label = [f"{f} ({b:.3g}-bit)" if f in WEIGHT_FORMATS else f"{b:.3g}-bit" for f, b in zip(formats, bits, strict=True)]
    own = plain_checkpoint(s.weights)
    mixed = notes.checkpoint_parts(s) if any(
        getattr(s, k) != v for k, v in own.items() if k != "weights_experts" or s.experts) else None
    if mixed:
        variants.insert(0, s)
        formats.insert(0, None)
        bits.insert(0, model.weight_bytes(s) * 8 / (s.params_b * BILLION))
        label.insert(0, f"checkpoint: {mixed}")
    weights_b = np.array([memory.loaded_weight_bytes(v) for v in variants])
    free_b = np.array([memory.free_bytes(v) for v in variants])
    per_seq = model.cache_bytes(s, np.asarray(contexts))
    seqs = np.floor(np.maximum(free_b, 0)[:, None] / per_seq[None, :]).astype(np.int64)
    df = pd.DataFrame({"weights": label, "bits_per_weight": np.array(bits), "weights_gib": weights_b / model.GiB,
                       "free_gib": free_b / model.GiB})
    for j, n in enumerate(contexts):
        df[f"seqs_at_{n}"] = seqs[:, j]
    # Quality is published per format, not for a checkpoint's mix of them.
    published = [None if f is None else (catalogue.quality().get(f) or [None])[0] for f in formats]
    df["quality"] = [None if q is None else q["summary"] for q in published]
    df["quality_source"] = [None if q is None else q["source"] for q in published]
    df["quality_url"] = [None if q is None else catalogue.first_address(q["source"]) for q in published]
    return df


def speed_sweep(s: Scenario, batches: np.ndarray | None = None, n: int | None = None) -> pd.DataFrame:
    """Decode step by batch at context ``n`` (default ``s.ctx``): every part of the step in ms,
    tokens/s overall and per sequence, which term binds, and whether the batch is reachable (``fits_in_memory``:
    memory holds it and the engine schedules that many sequences, ``max_seqs``)."""
    batches = batch_grid(s) if batches is None else np.asarray(batches)
    n = s.ctx if n is None else n
    p = model.step_parts(s, batches, n)
    mb = int(memory.max_batch(s, n))
    return pd.DataFrame({
        "batch": batches,
        "step_ms": p.step_s * MS_PER_S,
        "memory_ms": p.memory_s * MS_PER_S,
        "weights_ms": p.weights_s * MS_PER_S,
        "cache_ms": np.broadcast_to(p.cache_s * MS_PER_S, batches.shape),
        "compute_ms": p.compute_s * MS_PER_S,
        "comm_ms": np.broadcast_to(p.comm_s * MS_PER_S, batches.shape),
        "fixed_ms": np.broadcast_to(p.fixed_s * MS_PER_S, batches.shape),
        "tok_s": batches / p.step_s,
        "tok_s_per_seq": 1 / p.step_s,
        "bound": np.where(p.compute_bound, "compute", "memory"),
        "fits_in_memory": batches <= memory.seqs_cap(s, mb),  # memory holds it and the engine schedules it
    })


def cost_surface(s: Scenario, batches: np.ndarray | None = None, duties: np.ndarray | None = None,
                 replicas: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """USD per million tokens (rent + upkeep) over duty x batch: one broadcast expression, the upkeep shared by
    ``replicas`` replicas at that duty (the report's ``upkeep_replicas``; :func:`calc.model.cost_per_mtok`).

    Returns ``(usd_per_mtok, rent, reachable)``, each shaped ``(len(duties), len(batches))``;
    ``reachable`` is False where memory cannot hold the batch at ``s.ctx`` or the engine schedules fewer sequences
    (``max_seqs``). Rent is NaN for an unpriced card.
    """
    batches = batch_grid(s) if batches is None else np.asarray(batches)
    duties = DUTIES if duties is None else np.asarray(duties)
    tok_s = batches / model.step_seconds(s, batches)
    rent, upkeep = model.cost_per_mtok(s, tok_s[None, :], duties[:, None], replicas)
    reachable = np.broadcast_to(batches <= memory.seqs_cap(s, int(memory.max_batch(s, s.ctx))), rent.shape)
    return rent + upkeep, rent, reachable


def cost_surface_frame(s: Scenario, batches: np.ndarray, duties: np.ndarray, replicas: int = 1) -> pd.DataFrame:
    """:func:`cost_surface` in long form for a heatmap: one row per (batch, duty) cell."""
    total, rent, reachable = cost_surface(s, batches, duties, replicas)
    bb, dd = np.meshgrid(batches, duties)
    return pd.DataFrame({"batch": bb.ravel(), "duty": dd.ravel(), "usd_per_mtok": total.ravel(),
                         "rent_usd_per_mtok": rent.ravel(), "reachable": reachable.ravel()})


def cost_by_duty(s: Scenario, batches: Sequence[int], duties: Sequence[float] = (0.1, 0.3, 0.6, 1.0),
                 replicas: int = 1) -> pd.DataFrame:
    """Rent, upkeep and total USD per million tokens for a few batches (rows) by duty cycle, the upkeep shared by
    ``replicas`` replicas (the report's ``upkeep_replicas``)."""
    batches = np.asarray(list(dict.fromkeys(int(b) for b in batches)))
    duties = np.asarray(duties, dtype=float)
    tok_s = batches / model.step_seconds(s, batches)
    rent, upkeep = model.cost_per_mtok(s, tok_s[:, None], duties[None, :], replicas)
    rows = []
    mb = memory.seqs_cap(s, int(memory.max_batch(s, s.ctx)))  # memory holds it and the engine schedules it
    for i, b in enumerate(batches):
        for j, d in enumerate(duties):
            rows.append({"batch": int(b), "fits_in_memory": bool(b <= mb), "tok_s": float(tok_s[i]), "duty": float(d),
                         "rent_usd_per_mtok": float(rent[i, j]), "upkeep_usd_per_mtok": float(upkeep[i, j]),
                         "usd_per_mtok": float(rent[i, j] + upkeep[i, j])})
    return pd.DataFrame(rows)


def models_table() -> pd.DataFrame:
    """The model catalogue with derived sizes: one row per preset (units in column names)."""
    from . import catalogue
    from .scenario import parse

    rows = []
    for mid, m in catalogue.models().items():
        s = parse({"model": mid, "kv": "16"}).scenario
        rows.append({
            "id": mid, "name": m["name"], "params_b": m["params_b"], "active_b": m["active_b"],
            "layers": m["layers"], "heads": m["heads"], "kv_heads": m["kv_heads"], "head_dim": m["head_dim"],
            "hidden": m["hidden"], "experts": m["experts"] or None, "experts_active": m["experts_active"] or None,
            "kv_latent": m["kv_latent"] or None, "window": m["window"] or None,
            "window_layers": m["window_layers"] or None, "embed_b": m["embed_b"],
            "kv_bytes_per_token_16bit": model.kv_bytes_per_token(s),
            "weights_gib_16bit": model.weight_bytes(parse({"model": mid, "weights": "16"}).scenario) / model.GiB,
            "max_ctx": m["max_ctx"], "api_ref": m["api_ref"], "source": m["source"], "read_on": m["read_on"],
            "notes": m["notes"],
        })
    df = pd.DataFrame(rows)
    for col in ("experts", "experts_active", "kv_latent", "window", "window_layers"):
        df[col] = df[col].astype("Int64")  # blank, not 0, where the model has no such feature
    return df


def cards_table() -> pd.DataFrame:
    """The card catalogue: family (calc/data/card_arch.csv), dense peaks per precision, memory (as the driver reports
    it, and as CUDA reports it, each with its source), bandwidth, interconnect and rent."""
    from . import catalogue, engines

    rows = []
    for cid, c in catalogue.cards().items():
        rows.append({
            "id": cid, "name": c["name"], "vendor": c["vendor"], "arch": engines.card_arch().get(cid),
            "mem_gib": c["mem_gib"], "mem_mib": c["mem_mib"],
            "mem_source": c["mem_source"], "mem_read_on": c["mem_read_on"], "torch_gib": c["torch_gib"],
            "torch_source": c["torch_source"], "bw_tbs": c["bw_tbs"],
            **{f"{p}_tflops": c["peaks"].get(p) for p in ("bf16", "fp8", "int8", "fp4")},
            "flop_per_byte_bf16": c["peaks"]["bf16"] / c["bw_tbs"] if c["peaks"].get("bf16") else None,
            "link_gbs": c["link_gbs"], "link_kind": c["link_kind"], "clock_ghz": c.get("clock_ghz"),
            "clock_source": c.get("clock_ghz_source"), "usd_hr": c["usd_hr"],
            "usd_hr_source": c["usd_hr_source"], "usd_hr_date": c["usd_hr_date"], "source": c["source"],
            "read_on": c["read_on"], "notes": c["notes"],
        })
    df = pd.DataFrame(rows)
    df["mem_mib"] = df["mem_mib"].astype("Int64")  # blank where no driver figure was found
    return df


def apis_table() -> pd.DataFrame:
    """API price rows accepted at load (USD per 1M input / output tokens) with their sources, and the
    long-prompt tier where a row has one (threshold in prompt tokens, prices above it, its source)."""
    from . import catalogue

    cols = ("provider", "model", "family", "kind", "api_in", "api_out", "source", "read_on",
            "tier_above_tok", "tier_api_in", "tier_api_out", "tier_source", "tier_read_on")
    df = pd.DataFrame([{"id": aid, **{k: a[k] for k in cols}} for aid, a in catalogue.apis().items()])
    df["tier_above_tok"] = df["tier_above_tok"].astype("Int64")  # blank where the row has no tier
    return df


def refused_text(errors: Sequence) -> str:
    """Why a set-up is refused, short: the first refused input and its reason ("weights=nvfp4: TensorRT-LLM runs
    nvfp4 weights on cards with FP4 tensor cores, and L40S 48 GB has none"), and the other inputs refused."""
    first, others = errors[0], [e.key for e in errors[1:]]
    return ((f"{first.key}={first.value}: {first.reason}" if first.reason else first.message)
            + (f" (refused too: {', '.join(others)})" if others else ""))


def compare_cards(s: Scenario, card_ids: Sequence[str]) -> pd.DataFrame:
    """The scenario's model, precisions, context and money on other cards, side by side.

    Each card keeps the scenario's number of cards, compute precision (where the card has it, else bf16)
    and duty cycle, and takes its own datasheet figures and reference rent. Columns: fits, max batch, batch
    used, step time, tokens/s and USD per 1M tokens at the scenario's duty (None when the card is unpriced), SPEC's
    ``memory_caps_batch`` and what stops the batch first (``batch_cap``: notes.batch_cap), and the traffic's
    self-hosting bill on that card (``replicas``, ``self_host_usd_month``: the Decision page's). A card the
    scenario cannot run on as set (the calculator refuses the set-up there: TensorRT-LLM's NVFP4 weights on a card
    without FP4 tensor cores, say) gets no figures, only its datasheet and ``refused`` (:func:`refused_text`); it is
    never priced with the refused input's default in its place.
    """
    from .evaluate import build
    from .scenario import parse, with_change

    rows = []
    for cid in dict.fromkeys(card_ids):
        params = with_change(s.to_params(), "card", cid)
        parsed = parse(params)
        if parsed.errors:
            sheet = catalogue.cards().get(cid, {})
            rows.append({"card": cid, "gpus": s.gpus, "compute": s.compute, "mem_gib": sheet.get("mem_gib", np.nan),
                         "bw_tbs": sheet.get("bw_tbs", np.nan), "tflops": np.nan,
                         "usd_hr": np.nan if sheet.get("usd_hr") is None else sheet["usd_hr"], "fits": False,
                         "max_batch": np.nan, "break_even_batch": np.nan, "batch": np.nan, "step_ms": np.nan,
                         "tok_s": np.nan, "usd_per_mtok": np.nan, "memory_caps_batch": None, "batch_cap": None,
                         "replicas": np.nan, "self_host_usd_month": np.nan,
                         "refused": refused_text(parsed.errors)})
            continue
        r = build(parsed)
        sc = r["scenario"]
        runs = r["fits"] and r["max_batch"] > 0
        if not runs:  # no speed or price for a set-up that cannot hold one sequence
            r = {**r, "step_ms": np.nan, "tok_s": np.nan, "usd_per_mtok": np.nan, "break_even_batch": np.nan}
        rows.append({"card": cid, "gpus": sc["gpus"], "compute": sc["compute"], "mem_gib": sc["mem_gib"],
                     "bw_tbs": sc["bw_tbs"], "tflops": sc["tflops"], "usd_hr": np.nan if sc["usd_hr"] is None else sc["usd_hr"], "fits": r["fits"],
                     "max_batch": r["max_batch"],
                     "break_even_batch": np.nan if r["break_even_batch"] is None else r["break_even_batch"],
                     "batch": r["batch"],
                     "step_ms": r["step_ms"], "tok_s": r["tok_s"],
                     "usd_per_mtok": np.nan if r["usd_per_mtok"] is None else r["usd_per_mtok"],
                     "memory_caps_batch": r["memory_caps_batch"],
                     "batch_cap": notes.batch_cap(r["max_batch"], sc["max_seqs"], r["break_even_batch"])
                     if runs else None,
                     "replicas": np.nan if r["replicas"] is None else r["replicas"],
                     "self_host_usd_month": np.nan if r["self_host_usd_month"] is None else r["self_host_usd_month"],
                     "refused": None})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- the decision's tables

#: Request volumes (per day) of the cost-against-volume table; the scenario's own volume is added.
VOLUMES: tuple[float, ...] = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)


def volume_table(d: Decision, volumes: Iterable[float] = VOLUMES) -> pd.DataFrame:
    """Monthly cost at a few request volumes plus the scenario's own: ``req_day``, ``replicas``, ``cards``,
    ``self_host_usd_month`` (renting), ``own_usd_month`` (the same replicas bought, where the card has a purchase
    price and a board power: :func:`own_usd_month`), ``api_usd_month``, ``api_cheapest_usd_month`` (where the
    catalogue has a cheaper row for the model: :func:`cheapest_api_usd_month`), ``cheaper`` ("self-host", "API",
    "API, cheapest row"; "buying" against the API where the card has no rent, so renting is not priced; "renting"
    or "buying" where the data may not leave, ``why=residency``, which rules the API out; "beyond context" at every
    volume where a request is longer than the model's trained context, which no way serves), ``current`` (the
    scenario's volume)."""
    s, cap = d.scenario, d.cap
    x = np.array(sorted(set(float(v) for v in volumes) | {float(s.req_day)}))
    c = traffic.monthly_costs(s, x, cap)
    fits = cap.max_batch > 0
    sh = c["self_host_usd_month"]
    api = c["api_usd_month"]
    own = own_usd_month(s, c) if fits else None
    cheapest = cheapest_api_usd_month(d, x)
    # The cheapest of the columns the table shows: renting ("self-host" where buying is not priced), buying, the
    # link's API row and the catalogue's cheapest row; where the data may not leave (why=residency) the API is no
    # option, and where nothing is self-hosted (nothing fits) the column says "—".
    rented = np.nan_to_num(sh, nan=np.inf)
    bought = np.full_like(rented, np.inf) if own is None else np.nan_to_num(own, nan=np.inf)
    no_api = np.full_like(rented, np.inf)
    stays = procure.data_stays(s.why)
    bills = np.stack([rented, bought, no_api if stays else api, no_api if stays or cheapest is None else cheapest])
    names = np.array(["renting" if own is not None or stays else "self-host", "buying", "API", CHEAPEST_API])
    best = np.argmin(bills, axis=0)  # ties go to the first: renting, buying, the link's row, the cheaper row
    cheaper = np.where(np.isinf(np.minimum(rented, bought)), "—", names[best])
    if traffic.request_beyond_context(s):  # no way serves requests longer than the model's trained context
        cheaper = np.full(len(x), BEYOND_CONTEXT_WORD)
    out = pd.DataFrame({
        "req_day": x,
        "replicas": c["replicas"].astype(int) if fits else pd.array([None] * len(x), dtype="Int64"),
        "cards": (c["replicas"] * s.gpus).astype(int) if fits else pd.array([None] * len(x), dtype="Int64"),
        "self_host_usd_month": sh, "api_usd_month": api,
        "cheaper": cheaper, "current": x == float(s.req_day),
    })
    if own is not None:
        out.insert(out.columns.get_loc("self_host_usd_month") + 1, "own_usd_month", own)
    if cheapest is not None:
        out.insert(out.columns.get_loc("api_usd_month") + 1, "api_cheapest_usd_month", cheapest)
    return out


def own_usd_month(s: Scenario, c: dict[str, np.ndarray]) -> np.ndarray | None:
    """SPEC section 9's bill for buying the replicas that :func:`calc.traffic.monthly_costs` ``c`` sizes at each
    volume (USD a month, array): the cards bought in whole units of ``buy_lot``, each its capital annuity and rack
    space, the cards in use their power at the replicas' duty and the spare ones their idle power
    (:func:`calc.procure.own_month`), and the upkeep; None where the card has no purchase price or board power."""
    if procure.own_missing(s) is not None:
        return None
    with np.errstate(invalid="ignore", divide="ignore"):
        duty = c["busy_fraction"] / c["replicas"]
    return procure.own_month(s, c["replicas"] * s.gpus, duty)[0] + s.upkeep


def cheapest_api_usd_month(d: Decision, req_day: np.ndarray) -> np.ndarray | None:
    """The catalogue's cheaper API row for the model (``d.cheaper_api``) billed at each volume ``req_day`` (requests a
    day, array): its bill at the scenario's volume scaled with the requests (an API bill is per token, so it is in
    proportion to the volume); None where the catalogue has no cheaper row for the link."""
    if d.cheaper_api is None or d.scenario.req_day <= 0:
        return None
    return d.cheaper_api[1] * np.asarray(req_day, dtype=float) / float(d.scenario.req_day)


def curve_range(d: Decision) -> tuple[float, float]:
    """Requests per day the cost chart spans: from 10 (or a tenth of the volume) to 10 million (or ten times
    the volume, or three times the break-even points)."""
    s = d.scenario
    marks = [v for v in (d.break_even, d.stays_cheaper) if v]
    return min(10.0, s.req_day / 10), max(1e7, s.req_day * 10, *(3 * v for v in marks))


#: The cost chart's name for the catalogue's cheaper API row for the model.
CHEAPEST_API = "API, cheapest row"


def cheapest_api_name(api_id: str) -> str:
    """The catalogue's cheaper API row ``api_id`` in a table: :data:`CHEAPEST_API` and its provider."""
    return f"{CHEAPEST_API} ({catalogue.apis()[api_id]['provider']})"


def cost_curve(d: Decision, lo: float | None = None, hi: float | None = None,
               points: int = 600) -> pd.DataFrame:
    """Monthly cost against requests per day for the chart (long form: ``req_day``, ``option``, ``usd_month``,
    ``replicas``). The x range runs from 10 (or a tenth of the volume) to 10 million (or ten times the volume
    or the break-even points); the self-hosting staircase gets a sample just after each step (one more replica)
    so a step-after line draws it exactly. Self-hosting is left out where it cannot be priced.
    """
    s, cap = d.scenario, d.cap
    marks = [v for v in (d.break_even, d.stays_cheaper) if v]
    lo0, hi0 = curve_range(d)
    lo = lo0 if lo is None else lo
    hi = hi0 if hi is None else hi
    x = np.geomspace(lo, hi, points)
    steps = np.arange(1, 2001) * cap.x_cap
    steps = steps[(steps >= lo) & (steps <= hi)]
    x = np.unique(np.concatenate([x, steps * (1 + 1e-9), [s.req_day], marks]))
    c = traffic.monthly_costs(s, x, cap)
    api = pd.DataFrame({"req_day": x, "option": "API", "usd_month": c["api_usd_month"], "replicas": np.nan})
    sh = pd.DataFrame({"req_day": x, "option": "Self-hosting", "usd_month": c["self_host_usd_month"],
                       "replicas": c["replicas"]})
    frames = [api, sh.dropna(subset=["usd_month"])]
    cheapest = cheapest_api_usd_month(d, x)
    if cheapest is not None:
        frames.append(pd.DataFrame({"req_day": x, "option": CHEAPEST_API, "usd_month": cheapest, "replicas": np.nan}))
    # SPEC section 9: the same replicas bought, each card's annuity plus its power at the replicas' duty.
    own = own_usd_month(s, c) if cap.max_batch > 0 else None
    if own is not None:
        frames.append(pd.DataFrame({"req_day": x, "option": "Buying the cards", "usd_month": own,
                                    "replicas": c["replicas"]}))
    return pd.concat(frames, ignore_index=True)


def spec_curve(s: Scenario, ks: Sequence[int] = (2, 4, 8), batches: np.ndarray | None = None) -> pd.DataFrame:
    """Speculative decoding's speed-up over the plain step by batch, at context ``s.ctx``, for ``ks`` drafts per
    step (``s.spec_alpha`` and ``s.spec_c``): columns ``batch``, ``drafts``, ``speedup``, ``fits_in_memory``.
    One vectorised evaluation per ``k`` (docs/method.md section 9)."""
    batches = batch_grid(s) if batches is None else np.asarray(batches)
    mb = int(memory.max_batch(s, s.ctx))
    plain = batches / model.step_seconds(s, batches)
    frames = [pd.DataFrame({"batch": batches, "drafts": k,
                            "speedup": model.speculative(s.model_copy(update={"spec_k": k}), batches).tok_s / plain,
                            "fits_in_memory": batches <= memory.seqs_cap(s, mb)}) for k in ks]
    return pd.concat(frames, ignore_index=True)


#: The options of SPEC section 9 for people, in the report's order.
OPTION_NAMES = {"api": "Call the API", "rent": "Rent cards", "own": "Buy cards",
                "hybrid": "Rented fleet + API for the overflow", "hybrid_own": "Owned fleet + API for the overflow"}


#: The options table's key for the catalogue's cheaper API row for the model (not an option of SPEC section 9: the
#: same API at another provider's prices).
CHEAPEST_API_KEY = "api_cheapest"


def options_table(r: dict) -> pd.DataFrame:
    """Every way to serve the traffic side by side (SPEC section 9), from a report: ``option``, ``usd_month``,
    ``usd_per_mtok_out`` (the whole monthly bill over the month's output tokens), ``replicas``, ``capex_usd``,
    ``payback_months`` (against renting; against the API for the API row's comparison), ``best``, ``allowed``
    (False where the data may not leave: ``why=residency`` rules the API out; False for every option where a request
    is longer than the model's trained context, which none serves). None where an option is not priced.
    Where the catalogue has a cheaper API row for the model, it is a row of its own (:data:`CHEAPEST_API_KEY`), ticked
    cheapest where the answer rests on it (the report's ``recommendation`` "api-cheaper-row") or it bills less than
    the cheapest way priced against the link's row."""
    out_tok = r["tokens_out_month"]
    residency = procure.data_stays(r["scenario"].get("why"))
    # A mix whose cheapest fleet is none or the whole fleet is the API or the fleet alone, rows of their own already
    # (SPEC section 9's best leaves it out): its bill is not shown twice, its row says why.
    mixes = {o: procure.is_mix(r[f"{o}_replicas"], r["replicas"]) for o in MIXED_OPTIONS}
    rows = [("api", r["api_usd_month"], None, None, None),
            ("rent", r["rent_usd_month"], r["replicas"], None, None),
            ("own", r["own_usd_month"], r["replicas"], r["own_capex_usd"], r["payback_months_rent"]),
            *((o, r[OPTION_BILLS[o]] if mixes[o] else None, r[f"{o}_replicas"] if mixes[o] else None, None, None)
              for o in MIXED_OPTIONS)]
    names = dict(OPTION_NAMES)
    if r.get("cheaper_api") is not None:  # the catalogue's cheaper row for the model, which the answer may rest on
        rows.insert(1, (CHEAPEST_API_KEY, r["cheaper_api_usd_month"], None, None, None))
        names[CHEAPEST_API_KEY] = f"Call the {cheapest_api_name(r['cheaper_api'])}"
    df = pd.DataFrame([{"option": names[o], "key": o, "usd_month": v, "replicas": n, "capex_usd": c,
                        "payback_months": p} for o, v, n, c, p in rows])
    df["usd_per_mtok_out"] = [None if v is None or not out_tok else v / out_tok * 1e6 for v in df["usd_month"]]
    # Where a request is longer than the model's trained context, no option serves it (the report's best is None).
    sc = r["scenario"]
    beyond = traffic.beyond_context(sc["model"], sc["in_tok"] + sc["out_tok"])
    df["allowed"] = [not beyond and (not residency or o in procure.IN_HOUSE) for o in df["key"]]
    best = r["best"]
    if r.get("cheaper_api") is not None and not residency and best is not None:
        # The cheaper row is the same API at another provider's prices: ticked wherever it bills less than the
        # cheapest way priced against the link's row (the headline's answer, or the API's already).
        bills = df.set_index("key")["usd_month"]
        if r.get("recommendation") == "api-cheaper-row" or bills[CHEAPEST_API_KEY] < bills[best]:
            best = CHEAPEST_API_KEY
    df["best"] = df["key"] == best
    df["sensitive_to"] = [no_mix_text(r, o) or sensitive_to(r, "api" if o == CHEAPEST_API_KEY else o)
                          for o in df["key"]]
    return df[["option", "usd_month", "usd_per_mtok_out", "replicas", "capex_usd", "payback_months", "best",
               "allowed", "sensitive_to", "key"]]


#: The inputs an option's bill may turn on (SPEC section 9), each a change of link keys by the same factor, and its
#: name for people: the traffic, the API's prices, the rent, the card's price, the money and the power.
SENSITIVITY_INPUTS = (
    (("req_day",), "requests a day"), (("out_tok",), "output tokens a request"),
    (("in_tok",), "prompt tokens a request"), (("api_in", "api_out"), "the API's prices"),
    (("usd_hr",), "rent per card-hour"), (("upkeep",), "upkeep"), (("card_usd",), "the card's price"),
    (("years",), "service life"), (("wacc",), "cost of capital"), (("usd_kwh",), "power price"),
)
#: The options that send the overflow of a fleet to the API: priced hour by hour, so only with a day's profile.
MIXED_OPTIONS = ("hybrid", "hybrid_own")
#: What a mixed option's row says without a day's traffic profile.
NEEDS_PROFILE = "not priced: needs the day's traffic (profile= in the link; Traffic and API in the app)"
#: The report key of each option's monthly bill.
OPTION_BILLS = {"api": "api_usd_month", "rent": "rent_usd_month", "own": "own_usd_month",
                "hybrid": "hybrid_usd_month", "hybrid_own": "hybrid_own_usd_month"}


def no_mix_text(r: dict, option: str) -> str | None:
    """Why a mixed option has no row of its own to price, where its cheapest fleet is none (the API alone) or the
    whole fleet (the fleet alone, its own row); None otherwise."""
    n = r.get(f"{option}_replicas") if option in MIXED_OPTIONS else None
    if n == 0:
        return "no mix: the cheapest fleet is none, so this is calling the API (its own row)"
    if n is not None and n == r["replicas"]:
        alone = "renting" if option == "hybrid" else "buying"
        return f"no mix: the cheapest fleet is the whole fleet, so this is {alone} the cards (its own row)"
    return None


@functools.lru_cache(maxsize=32)
def _nudged(scenario: tuple) -> tuple[tuple[str, dict], ...]:
    """The report again with each input of :data:`SENSITIVITY_INPUTS` 10 % higher (those the link has), for the
    scenario given as sorted ``(key, value)`` pairs (cached: the options table asks once per option)."""
    from .evaluate import evaluate
    from .scenario import parse, with_change
    base = dict(scenario)
    out = []
    for keys, name in SENSITIVITY_INPUTS:
        if any(base.get(k) in (None, 0) for k in keys):
            continue
        params = base
        for k in keys:
            value = base[k] * 1.1
            params = with_change(params, k, round(value) if isinstance(base[k], int) else value)
        parsed = parse(params)
        if not parsed.errors:
            out.append((name, evaluate(parsed).flat))
    return tuple(out)


def sensitive_to(r: dict, option: str) -> str | None:
    """What the option's monthly bill moves most with: the input of :data:`SENSITIVITY_INPUTS` whose 10 % rise
    changes it most, with the change ("rent per card-hour: +10 % → +7.8 %"); None where the option is not priced
    or nothing moves it, but a mixed option left unpriced for want of a day's traffic profile says so. Each input is
    the whole link evaluated again (replicas and duty included)."""
    bill = r.get(OPTION_BILLS[option])
    if bill is None and option in MIXED_OPTIONS and not r["scenario"].get("profile"):
        return NEEDS_PROFILE
    if bill is None or not bill:
        return None
    moves = [(abs(n[OPTION_BILLS[option]] / bill - 1), n[OPTION_BILLS[option]] / bill - 1, name)
             for name, n in _nudged(tuple(sorted(r["scenario"].items())))
             if n.get(OPTION_BILLS[option]) is not None]
    moves = [m for m in moves if m[0] > 1e-9]
    if not moves:
        return None
    _, change, name = max(moves)
    return f"{name}: +10 % → {change:+.1%}".replace("%", " %").replace("  %", " %")



def day_table(d: Decision) -> pd.DataFrame | None:
    """The day's traffic hour by hour (SPEC section 9; None without a ``profile`` or when nothing fits): ``hour``
    (0-23), ``requests`` an hour, ``fleet_capacity`` (requests an hour the replicas running then serve; the fleet
    is sized for the busiest hour, and under ``autoscale`` only the replicas the hour needs run), ``replicas_on``,
    ``mixed_capacity`` (what the cheapest mixed fleet serves) and ``to_api`` (what it sends to the API), both None
    where no mixed option exists, and ``served`` (the requests the cards serve: all but ``to_api``)."""
    r = d.report
    owned = r["best"] == "hybrid_own"
    mixed = r["hybrid_own_replicas"] if owned else r["hybrid_replicas"]
    h = procure.hours(d.scenario, d.cap, d.replicas, mixed, owned)
    if h is None:
        return None
    none = [None] * len(h.requests)
    to_api = np.zeros(len(h.requests)) if h.api_overflow is None else h.api_overflow
    return pd.DataFrame({"hour": np.arange(len(h.requests)), "requests": h.requests, "fleet_capacity": h.fleet_capacity,
                         "replicas_on": h.replicas_on,
                         "mixed_capacity": none if h.hybrid_capacity is None else h.hybrid_capacity,
                         "to_api": none if h.api_overflow is None else h.api_overflow,
                         "served": h.requests - to_api})


def lifetime_table(r: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cumulative cash over the service life (SPEC section 9), month by month from 0 to ``years*12``: owning pays
    the purchase at month 0, then its running cost (power, rack space, upkeep: the own bill less the purchase's
    annuity) each month, and gets the resale value back at the end; renting and the API pay their monthly bills.
    Undiscounted, as the payback months are. Returns (``month``, ``option``, ``usd``) for the options that are
    priced, and the payback marks (``option`` crossed, ``month``, ``usd``, ``label``)."""
    s = r["scenario"]
    months = np.arange(0, round(s["years"] * 12) + 1, dtype=float)
    rows = {OPTION_NAMES["api"]: r["api_usd_month"] * months}
    if r["rent_usd_month"] is not None:
        rows[OPTION_NAMES["rent"]] = r["rent_usd_month"] * months
    marks = []
    if r["own_usd_month"] is not None:
        capex = r["own_capex_usd"]
        running = r["own_usd_month"] - r["own_capital_usd_month"]
        own = capex + running * months
        own[-1] -= s["residual"] * capex
        rows[OPTION_NAMES["own"]] = own
        for key, pay in (("rent", r["payback_months_rent"]), ("api", r["payback_months_api"])):
            if pay is not None and pay <= months[-1] and OPTION_NAMES[key] in rows:
                marks.append({"option": OPTION_NAMES[key], "month": pay, "usd": capex + running * pay,
                              "label": f"paid back against {'renting' if key == 'rent' else 'the API'} in "
                                       f"{pay:,.1f} months"})
    frame = pd.DataFrame([{"month": m, "option": o, "usd": float(v)} for o, vs in rows.items()
                          for m, v in zip(months, vs, strict=True)])
    return frame, pd.DataFrame(marks, columns=["option", "month", "usd", "label"])


def plan_table(s: Scenario, formats: Sequence[str] | None = None) -> pd.DataFrame:
    """The fleet planner (:func:`calc.planner.plan`) as a table, best first: ``card_name``, ``gpus``, ``weights``,
    ``replicas``, ``cards``, ``rent_usd_month``, ``own_usd_month``, ``own_capex_usd``, ``best_usd_month``, ``best``
    ("rent" or "buy"), ``meets_tpot``, ``memory_caps_batch``, ``max_batch``, ``capacity_measured``, ``card`` and
    ``query`` (the set-up's own link); money to the cent."""
    from dataclasses import asdict

    from .planner import PlanRow, plan, to_cents
    rows = [to_cents(asdict(r)) for r in plan(s, formats)]
    cols = [f for f in PlanRow.__dataclass_fields__ if f != "link"] + ["query"]
    df = pd.DataFrame([{**{k: v for k, v in r.items() if k != "link"}, "query": r["link"]} for r in rows],
                      columns=cols)
    df["best"] = df["best"].map({"rent": "rent", "own": "buy"})
    return df


def chart_marks(d: Decision) -> pd.DataFrame:
    """Points to mark on the cost-against-volume chart: ``what``, ``req_day``, ``usd_month`` (None for a
    vertical rule), ``label``, ``align`` (the side of the point its label sits on, so that it stays inside
    the chart): the current volume, the break-even volume and, when the staircase makes it differ, the
    volume above which self-hosting is cheaper at every volume."""
    s = d.scenario
    lo, hi = curve_range(d)
    side = "right" if math.log(s.req_day / lo) > 0.75 * math.log(hi / lo) else "left"
    rows = [("current", float(s.req_day), None, f"this scenario: {words.volume_text(s.req_day)} a day", side)]
    if d.break_even:
        be = words.sig(d.break_even, 3)
        rows.append(("break-even", d.break_even, float(traffic.api_usd_month(s, d.break_even)),
                     f"break-even ≈ {be} a day", "right"))
        st_text = words.sig(d.stays_cheaper, 3)
        if st_text != be:
            rows.append(("always cheaper", d.stays_cheaper, float(traffic.api_usd_month(s, d.stays_cheaper)),
                         f"always cheaper above ≈ {st_text} a day", "right"))
    return pd.DataFrame(rows, columns=["what", "req_day", "usd_month", "label", "align"])
