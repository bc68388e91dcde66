"""The scenario: every input of the calculator, parsed from a link and resolved against the catalogue.

A scenario is a URL query string (docs/method.md section 1). This package turns a query string, a whole URL or a
mapping into a validated, fully resolved :class:`Scenario` and back into a link. Bad values never raise from
:func:`parse`: each becomes a :class:`FieldError` naming the key, the value given and the accepted range, and that
key falls back to its default. :func:`load` is the strict form that raises :class:`ScenarioError` instead (the
command line uses it).

- ``keys``: the key table, one row per key (kind, range, words, where its preset value comes from);
- ``derive``: the defaults worked out from other keys, named by their rows;
- ``fields``: the pydantic models made from the table, and the error values;
- ``link``: a link's limits and splitting it into raw values;
- ``resolve``: the one resolving loop, the consistency rules, :func:`parse` and :func:`load`;
- ``edit``: the app's edits of a link (a change drops what derives from it);
- ``hints``: how the app's sliders move.
"""

from .derive import (
    AUTO,
    DEFAULT_VOCAB,
    card_torch_gib,
    day_weights,
    plain_checkpoint,
    plain_embed_format,
    weights_refusal,
)
from .edit import change, set_aside_by_change, with_change, with_imported_model
from .fields import FieldError, LinkInputs, Parsed, Scenario, ScenarioError
from .hints import slider_stops
from .keys import (
    CARD_FIGURES,
    COMPUTE_PRECISIONS,
    CUSTOM,
    DEFAULT_CARD,
    DEFAULT_MODEL,
    DEFAULT_WEIGHTS,
    DEPENDENTS,
    FROM_DEFAULT,
    KEY_TABLE,
    KEYS,
    KV_FORMATS,
    MODEL_FIGURES,
    NONE_GIVEN,
    PRESET,
    RANGES,
    REASON_IDS,
    SOURCES,
    UNKNOWN,
    WEIGHT_FORMATS,
    Key,
    link_text,
    packed_weights,
    weight_format_bits,
)
from .link import (
    LINK,
    LINK_ACCEPTED,
    MAX_LINK_CHARS,
    MAX_LINK_FIELDS,
    UNKNOWN_NAMED,
    link_too_long,
    near_key,
    split_link,
    split_link_keys,
    unknown_note,
)
from .resolve import GGUF_NOTE, PROFILE_PEAK_NOTE, load, parse, preset_figures

__all__ = [
    "AUTO",
    "CARD_FIGURES",
    "COMPUTE_PRECISIONS",
    "CUSTOM",
    "DEFAULT_CARD",
    "DEFAULT_MODEL",
    "DEFAULT_VOCAB",
    "DEFAULT_WEIGHTS",
    "DEPENDENTS",
    "FROM_DEFAULT",
    "GGUF_NOTE",
    "KEYS",
    "KEY_TABLE",
    "KV_FORMATS",
    "LINK",
    "LINK_ACCEPTED",
    "MAX_LINK_CHARS",
    "MAX_LINK_FIELDS",
    "MODEL_FIGURES",
    "NONE_GIVEN",
    "PRESET",
    "PROFILE_PEAK_NOTE",
    "RANGES",
    "REASON_IDS",
    "SOURCES",
    "UNKNOWN",
    "UNKNOWN_NAMED",
    "WEIGHT_FORMATS",
    "FieldError",
    "Key",
    "LinkInputs",
    "Parsed",
    "Scenario",
    "ScenarioError",
    "card_torch_gib",
    "change",
    "day_weights",
    "link_text",
    "link_too_long",
    "load",
    "near_key",
    "packed_weights",
    "parse",
    "plain_checkpoint",
    "plain_embed_format",
    "preset_figures",
    "set_aside_by_change",
    "slider_stops",
    "split_link",
    "split_link_keys",
    "unknown_note",
    "weight_format_bits",
    "weights_refusal",
    "with_change",
    "with_imported_model",
]
