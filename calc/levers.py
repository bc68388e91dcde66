"""What would change the answer: each lever applied to the scenario, its bill, verdict and latency after it, and
what it costs in quality, commitment or engineering (docs/method.md section 9).

A lever is a change of link keys (:data:`LEVERS` lists which, and why each is a lever); applying it is parsing the
changed link and evaluating it, so every figure after a lever is the calculator's own, from the same formulas
as the scenario's. The table is ranked by the monthly saving of self-hosting (largest first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from . import catalogue, engines, model, traffic
from .decision import BEYOND_CONTEXT_WORD, TIE_SHARE, verdict_word
from .evaluate import Evaluation, evaluate
from .scenario import KV_FORMATS, WEIGHT_FORMATS, parse, plain_checkpoint, weights_refusal, with_change
from .units import MS_PER_S
from .words import ENGINE_NAMES, money

#: Weight formats a lever tries, from wider to narrower.
WEIGHT_STEPS = ("bf16", "fp8", "int4-g128")
#: A commitment's discount on the hourly rent used by the lever (a one-year reservation; the memo says it is
#: paid whether the traffic comes or not).
COMMITMENT_DISCOUNT = 0.3
#: The prefix-cache lever: half of every prompt found in the cache (a shared system prompt and few-shot
#: examples; the link's own prefix_hit replaces it).
PREFIX_HIT = 0.5
#: The speculative-decoding lever: four drafts per step at the SPEC's default acceptance and draft cost.
SPEC_K = 4
#: The latency lever: a time-per-output-token target in ms (a chat user reads about 5 to 10 tokens a second,
#: so 50 ms is comfortable); where the link sets one, the lever is dropping it.
TPOT_TARGET_MS = 50.0


@dataclass(frozen=True)
class Lever:
    """One lever applied: its name, what it changes (the keys and their new values), and its price in words."""

    name: str
    change: dict[str, Any]
    what: str
    price: str


def _quality_text(fmt: str, model_id: str, kv: bool = False) -> str:
    """The published quality cost of a format, in words (calc/data/quality.csv), or that none is published; where the
    model it was measured on is not the scenario's (``model_id``, a preset id or ``custom``), the words say so."""
    bits = (KV_FORMATS if kv else WEIGHT_FORMATS).get(fmt, 0)
    if bits >= 16:
        return "quality: none lost (16-bit is the reference)"
    rows = catalogue.quality().get(("kv:" if kv else "") + fmt, [])
    if not rows:
        return f"quality: nothing published for {fmt} in the catalogue"
    r = rows[0]
    squash = lambda text: "".join(c for c in text.lower() if c.isalnum())  # noqa: E731
    other = model_id == "custom" or squash(model_id) not in squash(r["model"])
    return (f"quality: {r['metric']} {r['delta_text']} on {r['model']}"
            + (", another model than this one" if other else "") + f" ({r['source_short']})")


def _refused(s: Any, key: str, value: str) -> bool:
    """Whether the scenario's link with ``key`` set to ``value`` is refused (weights the engine does not load or
    the card has no tensor cores for, compute narrower than them, a cache format the engine does not hold): a
    lever or row would price the fallback instead."""
    return bool(parse(with_change(s.to_params(), key, value)).errors)


def levers(ev: Evaluation) -> list[Lever]:
    """The levers that apply to the scenario of ``ev`` (each a real change of at least one key)."""
    s = ev.scenario
    out: list[Lever] = []
    runs = ev.decision.fits
    cut = _within_context(s)
    if cut:
        out.append(cut)
    # The steps in the types the engine loads (llama.cpp: q8_0 and q4_k_m for fp8 and int4-g128); a set-up that
    # does not run is offered no wider format (it needs more memory, not less).
    for fmt in dict.fromkeys(engines.engine_weights(s.engine, f) for f in WEIGHT_STEPS):
        if not runs and WEIGHT_FORMATS[fmt] >= s.weight_bits:
            continue
        if fmt != s.weights and WEIGHT_FORMATS[fmt] != s.weight_bits and not _refused(s, "weights", fmt):
            experts = ""
            if s.experts and s.weights_experts != s.weights:
                # An MoE checkpoint's routed experts stored otherwise (gpt-oss's mxfp4) follow the new format: say so.
                moved = parse(with_change(s.to_params(), "weights", fmt)).scenario.weights_experts
                experts = f" and routed experts {s.weights_experts} → {moved}" if moved != s.weights_experts else ""
            out.append(Lever(f"Weights in {fmt}", {"weights": fmt},
                             f"weights {s.weights} ({s.weight_bits:g} bits) → {fmt} ({WEIGHT_FORMATS[fmt]:g} bits)"
                             + experts, _quality_text(fmt, s.model)))
    for fmt in ("fp8", "fp16"):
        if not runs and KV_FORMATS[fmt] > s.kv_bits:
            continue
        if fmt != s.kv and KV_FORMATS[fmt] != s.kv_bits and not _refused(s, "kv", fmt):
            out.append(Lever(f"KV cache in {fmt}", {"kv": fmt},
                             f"KV cache {s.kv} → {fmt}: {'half' if KV_FORMATS[fmt] < s.kv_bits else 'twice'} the "
                             "bytes per token", _quality_text(fmt, s.model, kv=True)))
    for engine in ("vllm", "sglang", "trtllm"):
        if engine != s.engine:
            # A format the new engine cannot load gives way to its own default (scenario.with_change): say so.
            changed = parse(with_change(s.to_params(), "engine", engine))
            if changed.errors:  # the engine cannot run this set-up (TensorRT-LLM's FP8 on an A100): no lever
                continue
            swap = weights_refusal(engine, s.weights)
            moved = changed.scenario.weights if swap else None
            out.append(Lever(f"Engine: {ENGINE_NAMES[engine]}", {"engine": engine},
                             f"serve with {ENGINE_NAMES[engine]} instead of {ENGINE_NAMES.get(s.engine, s.engine)}"
                             + (f", the weights in {moved} instead of {s.weights}, which it cannot load" if moved else ""),
                             "engineering: a different serving stack to run and tune" + _rows_note(engine)))
    if s.tpot_ms is None:
        out.append(Lever(f"Latency target {TPOT_TARGET_MS:g} ms", {"tpot_ms": TPOT_TARGET_MS},
                         f"hold every sequence to {TPOT_TARGET_MS:g} ms per output token: smaller batches",
                         "users: faster replies; money: more replicas"))
    else:
        out.append(Lever("No latency target", {"tpot_ms": None},
                         f"drop the {s.tpot_ms:g} ms per-token target: the batch fills as memory allows",
                         "users: slower replies at the busiest hour"))
    if not s.spec_k:
        out.append(Lever(f"Speculative decoding, {SPEC_K} drafts", {"spec_k": SPEC_K},
                         f"a draft model proposes {SPEC_K} tokens per step, {s.spec_alpha:g} accepted each",
                         "engineering: a draft model to pick and run; no quality lost (the target checks every "
                         "token); the gain fades as the batch fills"))
    if not s.prefix_hit:
        out.append(Lever(f"Prefix cache, {PREFIX_HIT:.0%} hit", {"prefix_hit": PREFIX_HIT},
                         f"{PREFIX_HIT:.0%} of each prompt found in a prefix cache: less prefill self-hosted, cached "
                         "input prices at the API (where the price list has them)",
                         "engineering: prompts built to share a prefix; no quality lost"))
    if not s.discount and s.usd_hr is not None:
        out.append(Lever(f"Commitment, {COMMITMENT_DISCOUNT:.0%} off the rent", {"discount": COMMITMENT_DISCOUNT},
                         f"rent at {s.usd_hr * (1 - COMMITMENT_DISCOUNT):,.2f} instead of {s.usd_hr:,.2f} USD per "
                         "card-hour",
                         "commitment: paid every hour of the term, whether the traffic comes or not"))
    # llama.cpp gives each card whole layers (model.splits_layers): more cards add memory, not speed.
    layers = model.splits_layers(s)
    split = "whole layers split over" if layers else "rows split over" if s.split == "row" else "tensor parallel over"
    if s.gpus < 64:
        what = (f"whole layers split over {s.gpus * 2} cards instead of {s.gpus}: more memory for the cache, the "
                "same step speed, a hand-over of the activations at each boundary" if layers else
                f"every weight matrix split by rows over {s.gpus * 2} cards instead of {s.gpus}: more memory for "
                "the weights (the main card holds the whole cache), faster reads, more hand-overs in every layer"
                if s.split == "row" else
                f"tensor parallel over {s.gpus * 2} cards instead of {s.gpus}: more memory for the cache, "
                "a faster step at the same batch (the fuller batch the cache then holds may take longer), "
                "all-reduces added")
        out.append(Lever(f"{s.gpus * 2} cards per replica", {"gpus": s.gpus * 2}, what,
                         "money: each replica rents twice the cards"))
    if not runs and s.gpus < 64:
        # Twice the cards may still be too few: offer the fewest cards per replica that run it, when more than two.
        fewest = next((g for g in range(s.gpus * 2 + 1, 65) if _runs_on(s.to_params(), g)), None)
        if fewest is not None and not _runs_on(s.to_params(), s.gpus * 2):
            out.append(Lever(f"{fewest} cards per replica", {"gpus": fewest},
                             f"{split} {fewest} cards instead of {s.gpus}: the fewest that hold the weights and one "
                             "sequence", f"money: each replica rents {fewest} cards"))
    if s.gpus > 1:
        out.append(Lever(f"{s.gpus // 2} card{'s' if s.gpus // 2 > 1 else ''} per replica", {"gpus": s.gpus // 2},
                         f"{split} {s.gpus // 2} instead of {s.gpus}: fewer cards per replica, less "
                         "memory for the cache", "latency: about the same step" if layers else
                         "latency: a slower step at the same batch (the smaller batch that then fits may be quicker)"))
    return out


def _within_context(s: Any) -> Lever | None:
    """Where a request is longer than the model's trained context (calc.notes.beyond_trained_context), the one
    lever that lets any bill serve it: requests cut to that context, the prompt first (the output is what the
    traffic is for), a pinned ``ctx`` with them. None otherwise."""
    limit = traffic.trained_context(s)
    if limit is None or s.in_tok + s.out_tok <= limit:
        return None
    # The longer part gives way: a prompt cut to what the reply leaves, or a reply cut to what the prompt leaves
    # (each to half the context where it alone is too long), never a part made longer than it was.
    if s.out_tok < limit and (s.in_tok >= limit or s.in_tok >= s.out_tok):
        in_tok, out_tok = limit - s.out_tok, s.out_tok
    else:
        in_tok = min(s.in_tok, limit // 2)
        out_tok = limit - in_tok
    change: dict[str, Any] = {}
    if in_tok != s.in_tok:
        change["in_tok"] = in_tok
    if out_tok != s.out_tok:
        change["out_tok"] = out_tok
    if "ctx" not in s.follows_traffic and s.ctx > limit:
        change["ctx"] = limit
    parts = ([f"prompts of {in_tok:,} tokens instead of {s.in_tok:,}"] if "in_tok" in change else []) + \
        ([f"replies of {out_tok:,} instead of {s.out_tok:,}"] if "out_tok" in change else [])
    what = f"requests cut to the model's trained context of {limit:,} tokens: " + ", ".join(parts)
    name = f"Requests within {limit:,} tokens"
    price = "; ".join(
        (["engineering: prompts retrieved, chunked or summarised to fit; quality: the model no longer sees the whole "
          "of each prompt"] if "in_tok" in change else []) +
        (["quality: replies end at the context, so a longer answer is continued in another request"]
         if "out_tok" in change else []))
    params = dict(s.to_params())
    for key, value in change.items():
        params = with_change(params, key, value)
    if not _runs_on(params, s.gpus):
        # A request of the whole trained context may still not fit one replica as set: the fewest cards that hold it.
        fewest = next((g for g in range(s.gpus + 1, 65) if _runs_on(params, g)), None)
        if fewest is not None:
            change["gpus"] = fewest
            name += f", {fewest} cards per replica"
            what += f", on {fewest} cards per replica instead of {s.gpus} (the fewest that hold one such request)"
            price += f"; money: each replica rents {fewest} cards"
    return Lever(name, change, what, price)


def _runs_on(params: Any, gpus: int) -> bool:
    """Whether the scenario of link ``params`` (a mapping of its keys) runs (weights and one sequence fit) on
    ``gpus`` cards per replica; False where the engine refuses that tensor-parallel size."""
    parsed = parse(with_change(params, "gpus", gpus))
    return not parsed.errors and evaluate(parsed).decision.fits


def _after(ev: Evaluation, lever: Lever) -> Evaluation:
    params = dict(ev.scenario.to_params())
    for key, value in lever.change.items():
        params = with_change(params, key, value)
        if value is None:
            params.pop(key, None)
    return evaluate(parse(params))


def _row(name: str, what: str, price: str, ev: Evaluation, base_usd: float | None) -> dict[str, Any]:
    d = ev.decision
    verdict = verdict_word(d)
    served = verdict != BEYOND_CONTEXT_WORD  # requests the model refuses get no bill and no speed, however many cards
    sh = d.self_host_usd_month if served else None
    cap = ev.capacity
    # Both at the serving batch (a latency target may hold it below the scenario's batch, where spec_tpot_ms is).
    latency = (float(model.speculative(ev.scenario, cap.serving_batch, cap.n).tpot_s) * MS_PER_S
               if ev.scenario.spec_k and d.fits else cap.step_ms)
    return {
        "lever": name, "what": what,
        "self_host_usd_month": sh,
        "saving_usd_month": None if sh is None or base_usd is None else base_usd - sh,
        "api_usd_month": d.api_usd_month,
        "verdict": verdict,
        "tpot_ms": latency if d.fits and served else None,
        "price": price,
        "query": ev.scenario.to_query(),
    }


def _rows_note(engine: str) -> str:
    """A note on an engine whose figures rest on few published rows of its own (fewer than 10), else ""."""
    n = sum(b["n"] for b in engines.error_band(engine) or [])
    if n >= 10:
        return ""
    if n == 0:
        return f" (no published {ENGINE_NAMES[engine]} rows: its figures are another engine's)"
    return (f" (only {n} published row{'s' if n != 1 else ''} measured {ENGINE_NAMES[engine]}: its figures are "
            "less sure than vLLM's)" if engine != "vllm" else "")


def _spec_when_quiet(ev: Evaluation, lever: Lever) -> str:
    """Where the traffic leaves the serving batch part-filled even at its busiest hour
    (:func:`calc.traffic.part_filled_batch`), the time per token with and without the drafts at the
    batch it does fill, as a clause ("" otherwise): speculation pays at a small batch."""
    d, cap = ev.decision, ev.capacity
    found = traffic.part_filled_batch(ev.scenario, cap, d.replicas) if d.fits else None
    if found is None:
        return ""
    held, batch = found
    drafted = _after(ev, lever).scenario
    plain_ms = float(model.step_seconds(ev.scenario, batch, cap.n)) * 1e3
    spec_ms = float(model.speculative(drafted, batch, cap.n).tpot_s) * 1e3
    if spec_ms >= plain_ms:
        return ""
    return (f"; at this traffic's busiest hour a replica holds about {held:,.1f} requests at once, and at batch "
            f"{batch:,} the drafts make replies faster ({spec_ms:,.1f} against {plain_ms:,.1f} ms per token)")


def lever_table(ev: Evaluation) -> pd.DataFrame:
    """The scenario (first row, ``lever`` = "As set") and every lever applied to it, ranked by saving.

    Columns: ``lever``, ``what`` (the change in words), ``self_host_usd_month`` (USD, None when not priced or not
    fitting), ``saving_usd_month`` (USD against the scenario; negative: the lever costs money), ``api_usd_month``,
    ``verdict`` after it, ``tpot_ms`` (time per output token at the serving batch, the most a replica is sized to hold; with speculative
    decoding the speculative figure), ``price`` (quality, commitment or engineering, in words) and ``query`` (the
    complete link of the scenario with the lever applied).
    """
    first = _row("As set", "the scenario of the link", "", ev, None)
    base = first["self_host_usd_month"]  # none where no bill serves the requests as set
    first["saving_usd_month"] = None if base is None else 0.0
    rows = []
    for lv in levers(ev):
        row = _row(lv.name, lv.what, lv.price, _after(ev, lv), base)
        if "spec_k" in lv.change and None not in (row["tpot_ms"], first["tpot_ms"]) and \
                row["tpot_ms"] > first["tpot_ms"]:
            # Past the break-even batch the drafts' arithmetic outweighs the reads they share: say it where it shows.
            row["price"] = (f"slower replies at the serving batch ({ev.capacity.serving_batch:,}: "
                            f"{row['tpot_ms']:,.1f} against {first['tpot_ms']:,.1f} ms per token): the drafts cost "
                            "more arithmetic than the shared reads save, which is why engines turn speculation off "
                            "under load" + _spec_when_quiet(ev, lv) + "; " + row["price"])
        rows.append(row)
    rows.sort(key=lambda r: (r["saving_usd_month"] is None, -(r["saving_usd_month"] or 0.0)))
    return pd.DataFrame([first, *rows])


def best_text(table: pd.DataFrame) -> str:
    """The lever that saves most, in one sentence (or that none saves money)."""
    rest = table.iloc[1:]
    if table.iloc[0]["verdict"] == BEYOND_CONTEXT_WORD:
        # Neither the cards nor the API take such requests: no lever on the set-up changes that, only shorter ones.
        served = rest[rest["verdict"] != BEYOND_CONTEXT_WORD]
        text = ("As set, no request can be served: each is longer than the model's trained context, which no "
                "number of cards, format or engine changes.")
        if served.empty:
            return text
        top = served.iloc[0]
        bill = ("self-hosting then " + (f"costs {money(top['self_host_usd_month'])} a month" if
                                        pd.notna(top["self_host_usd_month"]) else "does not fit")
                + f" against {money(top['api_usd_month'])} at the API, verdict {top['verdict']!r}")
        return f"{text} {top['lever']}: {bill}."
    if pd.isna(table.iloc[0]["self_host_usd_month"]):  # nothing to save against: not run, or not priced
        unpriced = table.iloc[0]["verdict"] == "no rent"  # it runs, but the card has no rent
        state = ("self-hosting has no price (the card has no rent: enter one)" if unpriced
                 else "the scenario cannot be self-hosted")
        priced = rest.dropna(subset=["self_host_usd_month"]).sort_values("self_host_usd_month")
        # Without a rent a lever that makes it run has no bill either: name it all the same.
        running = rest[rest["verdict"] != "does not fit"] if not unpriced else priced
        if running.empty:
            return f"As set, {state}, and no single lever " + ("prices it." if unpriced else "makes it run.")
        if priced.empty:
            one = len(running) == 1
            return (f"As set, {state}; {'this lever makes' if one else 'these levers make'} it run, though the card "
                    f"has no rent to price {'it' if one else 'them'} with (enter one): "
                    f"{', '.join(running['lever'].head(3))}.")
        names = ", ".join(f"{n} ({money(b)} a month)" for n, b in
                          zip(priced["lever"].head(3), priced["self_host_usd_month"].head(3), strict=True))
        verb = "price" if unpriced else "make"
        if len(priced) == 1:
            return f"As set, {state}; this lever {verb}s it " + ("" if unpriced else "run") + f": {names}."
        return (f"As set, {state}; these levers {verb} it" + ("" if unpriced else " run")
                + f", cheapest first: {names}.")
    saving = rest["saving_usd_month"].dropna()
    if saving.empty or saving.max() <= 0:
        return "No single lever lowers the self-hosting bill of this scenario."
    top = rest.loc[saving.idxmax()]
    flips = top["verdict"] != table.iloc[0]["verdict"]
    after = (f"the two bills then lie within {TIE_SHARE:.0%} of each other, a tie at the figures' accuracy"
             if flips and top["verdict"] == "tie" else
             f"the verdict {'becomes ' + repr(top['verdict']) if flips else 'stays'}")
    return (f"The largest saving: {top['lever'].lower()}, {money(top['saving_usd_month'])} a month less "
            f"({money(top['self_host_usd_month'])}); {after}. Its price: {top['price']}.")


def format_table(ev: Evaluation) -> pd.DataFrame:
    """Every weight format of the catalogue the engine loads, applied to the scenario of ``ev``: ``format``, ``bits`` (stored bits per
    weight), ``weights_gib``, ``max_batch`` (sequences that fit at a request of the traffic, ``in_tok + out_tok``
    tokens: the context the bill is sized at, whatever a what-if ``ctx``), ``self_host_usd_month`` and
    ``verdict`` for the traffic, and the published ``quality`` cost against 16-bit, the model it was measured on
    (``quality_model``: often not the scenario's), the figure alone (``quality_delta``) and what it measures
    (``quality_metric``), ``quality_source`` and the
    address it opens with, ``quality_url`` (None where the catalogue has nothing published). Ordered by bits."""
    params = dict(ev.scenario.to_params())
    rows = []
    for fmt, bits in sorted(WEIGHT_FORMATS.items(), key=lambda kv: (kv[1], kv[0])):
        # The whole checkpoint in the format, every part (as the Fit page's table prices it): a change of the
        # dense format alone would keep an MoE's experts in theirs and price a 16-bit row below an 8-bit one.
        parsed = parse({**with_change(params, "weights", fmt),
                        **{k: str(v) for k, v in plain_checkpoint(fmt).items()}})
        if parsed.errors:  # refused (a format the engine does not load): a row would show the fallback's figures
            continue
        after = evaluate(parsed)
        published = catalogue.quality().get(fmt, [])
        q = published[0] if published else None
        rows.append({"format": fmt, "bits": bits, "weights_gib": after.flat["weights_gib"],
                     # At a request of the traffic, as the bill beside it (a what-if ctx moves neither).
                     "max_batch": after.capacity.max_batch,
                     "self_host_usd_month": after.decision.self_host_usd_month,
                     "verdict": verdict_word(after.decision),
                     "quality": None if q is None else q["summary"],
                     "quality_model": None if q is None else q["model"],
                     "quality_delta": None if q is None else q["delta_text"],
                     "quality_metric": None if q is None else q["metric"],
                     "quality_source": None if q is None else q["source"],
                     "quality_url": None if q is None else catalogue.first_address(q["source"])})
    return pd.DataFrame(rows)
