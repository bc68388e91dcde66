"""Editing a link in the app: a change of one key drops the values derived from it (:data:`DEPENDENTS`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import catalogue, engines
from .derive import weights_refusal
from .fields import FieldError
from .keys import CUSTOM, DEFAULT_MODEL, DEPENDENTS, KEYS


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


def set_aside_by_change(params: Mapping[str, Any], key: str, value: Any) -> list[FieldError]:
    """The inputs of ``params`` that :func:`with_change` sets aside because they no longer go with a newly chosen
    engine or card (the weight or KV-cache format the engine cannot hold, the compute precision the card has no
    units for), each as a :class:`FieldError` naming the value and why, so that a page says so instead of
    switching it silently."""
    if key not in ("engine", "card"):
        return []
    changed = with_change(params, key, value)
    reasons = {  # why with_change let each go (it decided which; these say why in the engine's or card's words)
        "weights": lambda old: f"{weights_refusal(str(value), old)}; it takes the format "
                               f"{engines.ENGINE_NAMES[value]} loads instead",
        "kv": lambda old: f"{engines.kv_rule(str(value), old)}; it takes the default instead",
        "compute": lambda old: f"{catalogue.cards()[value]['name']} has no {old} units; it takes the default instead",
        "split": lambda old: f"{engines.ENGINE_NAMES[value]} is not priced with a row split (split=row is "
                             f"{', '.join(engines.ROW_SPLIT_ENGINES)}'s); it takes split=layer instead",
        "gpus": lambda old: f"{engines.ENGINE_NAMES[value]} splits the attention heads over the cards and refuses "
                            f"{old} of them for this model; it takes the nearest count it accepts, "
                            f"{changed.get('gpus')}",
    }
    return [FieldError(k, str(params[k]), KEYS[k].accepted, why(str(params[k])), rule=True)
            for k, why in reasons.items() if k in params and str(changed.get(k)) != str(params[k])]
