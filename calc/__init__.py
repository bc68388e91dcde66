"""calc: should we host this model ourselves, or call an API? The arithmetic, as a pure package.

Decode speed is set by memory bandwidth: every step reads the weights once for the whole batch.
From a model's shape, a card, precisions, context and traffic this package computes memory fit,
the roofline step time by batch, the break-even batch, cost per million tokens by batch and duty
cycle, and the comparison with an API's prices. The contract is docs/method.md; the link format is the
URL query string parsed by :mod:`calc.scenario`.
"""

from .evaluate import Evaluation, build, evaluate, report
from .scenario import KEYS, FieldError, Parsed, Scenario, ScenarioError, load, parse, split_link, with_change

__all__ = ["KEYS", "Evaluation", "FieldError", "Parsed", "Scenario", "ScenarioError", "build", "evaluate",
           "from_hf_config",
           "load", "parse", "report", "split_link", "with_change"]


def from_hf_config(config):
    """Link keys of a custom model counted from a Hugging Face ``config.json`` mapping
    (see :func:`calc.hf_config.from_hf_config`)."""
    from .hf_config import from_hf_config as _impl
    return _impl(config)
