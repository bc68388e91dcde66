"""Editing a link in the app: a change of one key drops the values derived from it (:data:`DEPENDENTS`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import catalogue, engines
from .derive import weights_refusal
from .fields import FieldError
from .keys import CUSTOM, DEFAULT_CARD, DEFAULT_MODEL, DEPENDENTS, KEYS


def with_change(params: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A link mapping with ``key`` set to ``value`` and every value derived from that key dropped,
    so that choosing another model, card, compute precision or API row brings in its own figures."""
    if key not in KEYS:
        raise KeyError(key)
    if value == CUSTOM and key in ("model", "card"):
        # Going custom starts from the figures in use, not from the default preset's.
        return {**params, key: value}
    out = {k: v for k, v in params.items() if k not in _closure(key)}
    if key == "model":
        # A checkpoint that ships its own formats brings them in, and takes them away when left.
        models = catalogue.models()
        old, new = models.get(str(params.get("model", DEFAULT_MODEL))), models.get(str(value))
        if (old and old.get("weights")) or (new and new.get("weights")):
            for k in ("weights", *DEPENDENTS["weights"]):
                out.pop(k, None)
    out[key] = value
    # Keep the weight format only where the new engine loads it (llama.cpp reads GGUF types, TensorRT-LLM none):
    # dropped, it becomes the engine's own default (docs/method.md section 5), and the report says which.
    if key == "engine" and value in engines.FAMILIES and "weights" in out \
            and weights_refusal(str(value), str(out["weights"])):
        old = str(out["weights"])
        for k in ("weights", *DEPENDENTS["weights"]):
            out.pop(k, None)
        counterpart = engines.engine_weights(str(value), old)  # llama.cpp: the GGUF type a conversion gives
        if counterpart != old and not weights_refusal(str(value), counterpart):
            out["weights"] = counterpart
        # Leaving llama.cpp: the checkpoint a GGUF type stands for, at the same bits where the engine and card run it
        # (q8_0: FP8 on a card with FP8 units, else INT8), not the engine's 4-bit default.
        origin = _first_runnable(str(value), catalogue.cards().get(str(out.get("card", DEFAULT_CARD))),
                                 engines.GGUF_ORIGIN.get(old, ()))
        if origin:
            out["weights"] = origin
    # Keep the cards per replica where the new engine splits the heads over them; else the nearest count it accepts,
    # the next larger first (it holds what the old count held), so a change of engine keeps a set-up that ran.
    if key == "engine" and value in engines.FAMILIES and "gpus" in out:
        shape = {**(catalogue.models().get(str(out.get("model", DEFAULT_MODEL))) or {}), **out}
        try:
            heads, kv_heads, gpus = int(shape["heads"]), int(shape["kv_heads"]), int(out["gpus"])
            latent = bool(float(shape.get("kv_latent") or 0))
        except (KeyError, TypeError, ValueError):
            heads = None
        if heads and engines.tp_rule(str(value), heads, kv_heads, gpus, latent):
            ok = [g for g in range(1, 65) if not engines.tp_rule(str(value), heads, kv_heads, g, latent)]
            larger = [g for g in ok if g > gpus]
            out["gpus"] = larger[0] if larger else max(g for g in ok if g < gpus)
    # Keep a row split only where the new engine prices it (llama.cpp's 2023-2024 builds): dropped, it becomes the
    # default, whole layers (llama.cpp) or tensor parallel (the others).
    if key == "engine" and str(out.get("split")) == "row" and value not in engines.ROW_SPLIT_ENGINES:
        out.pop("split")
    # Keep the KV-cache format only where the new engine holds its cache in it (vLLM and SGLang: no int8 or int4;
    # llama.cpp: no fp8): dropped, it becomes the default.
    if key == "engine" and value in engines.FAMILIES and "kv" in out and engines.kv_rule(str(value), str(out["kv"])):
        out.pop("kv", None)
    # Keep the compute precision only where the new card has units for it.
    if key == "card" and value in catalogue.cards() and \
            catalogue.cards()[value]["peaks"].get(str(out.get("compute", "bf16"))) is None:
            out.pop("compute", None)
    return out


def with_imported_model(params: Mapping[str, Any], shape: Mapping[str, Any]) -> dict[str, Any]:
    """A link mapping with an imported model (``shape``: ``model=custom`` and the shape and format keys of
    :func:`calc.hf_config.from_hf_config`) in place of the model in use.

    Every value derived from the model in use is dropped (its shape, its API row and that row's prices), and so are
    the formats a preset shipped, so the imported model takes its own, exactly as a link giving ``shape`` alone
    does on the command line (``--hf-config``); the other inputs (card, cards, traffic, engine) are kept.
    """
    out = {k: v for k, v in params.items() if k not in _closure("model")}
    old = catalogue.models().get(str(params.get("model", DEFAULT_MODEL)))
    if old and old.get("weights"):
        for k in ("weights", *DEPENDENTS["weights"]):
            out.pop(k, None)
    out.update(shape)
    return out


def _closure(key: str) -> set[str]:
    seen: set[str] = set()
    todo = list(DEPENDENTS.get(key, ()))
    while todo:
        k = todo.pop()
        if k not in seen:
            seen.add(k)
            todo.extend(DEPENDENTS.get(k, ()))
    return seen


def _first_runnable(engine: str, card: Mapping[str, Any] | None, formats: Iterable[str]) -> str | None:
    """The first of ``formats`` ``engine`` loads and runs on ``card`` (a catalogue card; None: a custom one, whose
    units are not known), FP8 only where the card has FP8 units; None when none does."""
    for fmt in formats:
        if weights_refusal(engine, fmt):
            continue
        if card and (engines.card_format_rule(engine, fmt, card["peaks"], card["name"])
                     or (fmt == "fp8" and card["peaks"].get("fp8") is None)):
            continue
        return fmt
    return None


def _edited(params: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """:func:`with_change`, and on a change of card the formats it cannot run moved (:func:`_card_formats`): the link
    the app writes for a user's choice."""
    changed = with_change(params, key, value)
    return _card_formats(changed, value) if key == "card" else changed


def set_aside_by_change(params: Mapping[str, Any], key: str, value: Any) -> list[FieldError]:
    """The inputs of ``params`` that :func:`with_change` sets aside because they no longer go with a newly chosen
    engine or card (the weight or KV-cache format the engine cannot hold, the compute precision the card has no
    units for), each as a :class:`FieldError` naming the value and why, so that a page says so instead of
    switching it silently."""
    return _moved(params, key, value, _edited(params, key, value))


def _moved(params: Mapping[str, Any], key: str, value: Any, changed: Mapping[str, Any]) -> list[FieldError]:
    """:func:`set_aside_by_change` of the edited link ``changed`` (:func:`_edited`), so a caller that has it does not
    edit twice."""
    if key not in ("engine", "card"):
        return []
    reasons = {  # why with_change let each go (it decided which; these say why in the engine's or card's words)
        "weights": lambda old: f"{weights_refusal(str(value), old)}; it takes the format "
                               f"{engines.ENGINE_NAMES[value]} loads instead",
        "kv": lambda old: f"{engines.kv_rule(str(value), old)}; it takes the default instead",
        "compute": lambda old: f"{catalogue.cards()[value]['name']} has no {old} units; it takes the default instead",
        **({k: (lambda old, k=k: f"{_card_rule(params, value, old, k)}; it takes "
                                 f"{changed.get(k, 'the default')} instead")
            for k in ("weights", "kv")} if key == "card" else {}),
        "split": lambda old: f"{engines.ENGINE_NAMES[value]} is not priced with a row split (split=row is "
                             f"{', '.join(engines.ROW_SPLIT_ENGINES)}'s); it takes split=layer instead",
        "gpus": lambda old: f"{engines.ENGINE_NAMES[value]} splits the attention heads over the cards and refuses "
                            f"{old} of them for this model; it takes the nearest count it accepts, "
                            f"{changed.get('gpus')}",
    }
    return [FieldError(k, str(params[k]), KEYS[k].accepted, why(str(params[k])), rule=True)
            for k, why in reasons.items() if k in params and str(changed.get(k)) != str(params[k])]


def _card_formats(out: dict[str, Any], value: Any) -> dict[str, Any]:
    """The formats of ``out`` (a link just moved to card ``value``) the engine does not run on that card's tensor cores
    (TensorRT-LLM's FP8 and NVFP4 on an A100) dropped, each to the default, FP8 weights to INT8 (the same bits,
    weight-only) where the card runs those: what the app does when a user picks another card. A comparison of cards
    (:func:`calc.tables.compare_cards`) keeps the link's formats and names the cards that refuse them."""
    out = dict(out)
    if value in catalogue.cards():
        card, engine = catalogue.cards()[value], str(out.get("engine", engines.DEFAULT_ENGINE))
        if "weights" in out and engines.card_format_rule(engine, str(out["weights"]), card["peaks"], card["name"]):
            old = str(out["weights"])
            for k in ("weights", *DEPENDENTS["weights"]):
                out.pop(k, None)
            # The same bits in a format the card's units run (FP8 -> INT8 weight-only on an A100), else the default.
            same = _first_runnable(engine, card, {"fp8": ("int8",)}.get(old, ()))
            if same:
                out["weights"] = same
        for part in ("weights_experts", "weights_attn", "weights_embed"):
            if part in out and engines.card_format_rule(engine, str(out[part]), card["peaks"], card["name"]):
                out.pop(part)
        if "kv" in out and engines.card_format_rule(engine, str(out["kv"]), card["peaks"], card["name"], "KV cache"):
            out.pop("kv")
    return out


def _card_rule(params: Mapping[str, Any], card_id: str, fmt: str, key: str) -> str | None:
    """Why the engine of ``params`` cannot run weights (or the KV cache) in ``fmt`` on card ``card_id``."""
    card = catalogue.cards()[card_id]
    return engines.card_format_rule(str(params.get("engine", engines.DEFAULT_ENGINE)), fmt, card["peaks"],
                                    card["name"], "KV cache" if key == "kv" else "weights")


def change(params: Mapping[str, Any], key: str, value: Any) -> tuple[dict[str, Any], list[FieldError]]:
    """What the app does with a new value of ``key``: :func:`with_change`, and the inputs it moved
    (:func:`set_aside_by_change`). Where the new value is itself refused (llama.cpp on a Gaudi card), the inputs it
    would have moved stay as they were, and none is said moved: a refused choice moves nothing else."""
    from .resolve import parse  # resolve does not import this module: no circle

    changed = _edited(params, key, value)
    moved = _moved(params, key, value, changed)
    if moved and any(e.key == key for e in parse(changed).errors):
        for e in moved:
            for k in (e.key, *(DEPENDENTS["weights"] if e.key == "weights" else ())):
                if k in params:
                    changed[k] = params[k]
        moved = []
    return changed, moved
