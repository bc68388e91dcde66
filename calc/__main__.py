"""Command line: ``python -m calc "<link or URL>"`` prints the report as JSON (docs/method.md section 1);
``python -m calc --plan "<link>" [--weights fp8,int4-g128] [--json]`` prints the fleet planner;
``python -m calc --validate [CSV]`` checks the engine profiles against published measurements (docs/method.md section 8);
``python -m calc --quant-lab [--bits 8,4,3,2] [--group 128] [--outliers 4096] [--outlier-scale 20] [--size 4096]``
prints the quantization lab's tables (docs/method.md section 10.4).

Exit codes: 0 on success, 2 when the input is bad (the message names the key, the value and the
accepted range), 1 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import catalogue, engines
from .evaluate import evaluate
from .scenario import ScenarioError, load, split_link

MAX_CONFIG_BYTES = 1_000_000


#: Where a key's default comes from, in the help's words, by its row's preset source.
_SOURCE_WORDS = {"model": "the model preset's", "card": "the card preset's", "engine": "the engine profile's",
                 "api": "the API row's"}


def _keys_help() -> str:
    """The link keys, from the one key table: meaning, unit, what each accepts and where its default comes from."""
    from .scenario import KEY_TABLE, PRESET, link_text
    lines = ["link keys (each a URL query key; a preset fills the ones marked 'preset'):"]
    for k in KEY_TABLE:
        if k.preset:
            default = _SOURCE_WORDS[k.preset] + (" (preset)" if k.preset in ("model", "card") else "")
            if k.default is not None and k.default != PRESET:  # what a preset without the figure takes
                default += f" where it gives one, else {link_text(k.default)}"
        elif k.default == PRESET:
            default = "worked out from other keys"
        else:
            default = "none" if k.default is None else link_text(k.default)
        unit = f" [{k.unit}]" if k.unit else ""
        lines.append(f"  {k.key:<16} {k.label}{unit}; default {default}")
        lines.append(f"  {'':<16} accepts {k.accepted}")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m calc",
        description="Self-host or API: print the report of a scenario link as JSON.",
        epilog=_keys_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("link", nargs="?", default="",
                   help="a whole URL of the app or a bare query string, e.g. 'model=llama-3.1-8b&card=l40s'")
    p.add_argument("--hf-config", metavar="FILE",
                   help="a Hugging Face config.json whose shape becomes the custom model (link keys still override)")
    p.add_argument("--list", choices=("models", "cards", "apis"),
                   help="print the preset ids, one per line (cards: id, name with its memory label, the memory "
                        "the driver reports and its source, tab-separated)")
    p.add_argument("--memo", action="store_true", help="print the decision memo (Markdown) instead of JSON")
    p.add_argument("--validate", nargs="?", const="", metavar="CSV",
                   help="check the engine profiles against published measurements (default: the package's "
                        "calc/data/measurements.csv): each row's link, measured and predicted figure and error, then "
                        "the median and 90th-percentile absolute error per engine and metric")
    p.add_argument("--as-linked", action="store_true",
                   help="with --validate CSV: predict every row by its link as written, even where the row names an "
                        "older release than the link's plain engine id (by default such a row is predicted by that "
                        "release family's profile)")
    p.add_argument("--plan", action="store_true",
                   help="print the fleet planner for the link's model and traffic: every card preset x 1, 2, 4, 8 "
                        "cards per replica x each weight format of --weights, ranked by the cheaper of renting and "
                        "buying, those that meet the latency target and hold at the slow end of the capacity band "
                        "first (CSV, or JSON with --json)")
    p.add_argument("--weights", metavar="FORMATS",
                   help="with --plan: the weight formats allowed, comma-separated (default: the link's)")
    p.add_argument("--json", action="store_true", help="with --plan: print JSON instead of CSV")
    lab = p.add_argument_group("quantization lab (--quant-lab; defaults: the reference settings)")
    lab.add_argument("--quant-lab", action="store_true",
                     help="print the quantization lab: error of x @ W by bits with and without outliers, where the "
                          "damage lands by group, and the bytes table")
    lab.add_argument("--bits", default=None, help="bit widths, comma-separated, each 1..16 (default 8,4,3,2)")
    lab.add_argument("--group", type=int, default=None, help="weights per group (default 128)")
    lab.add_argument("--outliers", type=int, default=None, help="weights made loud (default 4096)")
    lab.add_argument("--outlier-scale", type=float, default=None, help="how much louder (default 20)")
    lab.add_argument("--size", type=int, default=None, help="the matrix is size x size (default 4096)")
    return p


def _quant_lab(args: argparse.Namespace) -> int:
    from . import quantlab
    # The reference settings where a flag is not given (None marks "not given", so that main can refuse a lab
    # flag given without --quant-lab).
    args.bits = "8,4,3,2" if args.bits is None else args.bits
    args.size = 4096 if args.size is None else args.size
    args.outlier_scale = 20.0 if args.outlier_scale is None else args.outlier_scale
    try:
        try:
            bits = tuple(int(b) for b in args.bits.split(","))
        except ValueError:
            raise ValueError(f"bits={args.bits!r} is not accepted: bits takes integers from 1 to 16, "
                             "comma-separated") from None
        if args.size < 2 or args.size > 8192:
            raise ValueError(f"size={args.size} is not accepted: size takes an integer from 2 to 8192")
        weights = args.size * args.size
        # Checked before the lab runs, so that a default the --size does not suit is named as the default.
        group = quantlab.NOTES["group"] if args.group is None else args.group
        quantlab.check_group(group, weights, " (the default)" if args.group is None else "", f" (--size {args.size})")
        outliers = quantlab.NOTES["outliers"] if args.outliers is None else args.outliers
        quantlab.check_outliers(outliers, weights, " (the default)" if args.outliers is None else "",
                                f" with --size {args.size}")
        if not 0 < args.outlier_scale <= 1e6:
            raise ValueError(f"outlier-scale={args.outlier_scale!r} is not accepted: it takes a number above 0, "
                             "at most 1000000")
        print(quantlab.text(bits, group, n=args.size, outliers=outliers,
                            outlier_scale=args.outlier_scale))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def card_line(card_id: str, card: dict) -> str:
    """One line of ``--list cards``: id, name (with the marketing label), family (``arch``), memory in GiB (MiB) as
    the driver reports it, and where that figure comes from with the date it was read; tab-separated."""
    return "\t".join((card_id, card["name"], engines.card_arch().get(card_id, "unknown"), catalogue.memory_text(card),
                      f"{card['mem_source']} (read {card['mem_read_on']})"))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.weights and not args.plan:
        print("error: --weights goes with --plan (the formats to plan with); a link sets its own weights=",
              file=sys.stderr)
        return 2
    lab_flags = [f"--{name.replace('_', '-')}" for name in ("bits", "group", "outliers", "outlier_scale", "size")
                 if getattr(args, name) is not None]
    if lab_flags and not args.quant_lab:
        one = len(lab_flags) == 1
        print(f"error: {', '.join(lab_flags)} {'is a setting' if one else 'are settings'} of the quantization lab: "
              f"give {'it' if one else 'them'} with --quant-lab (alone {'it' if one else 'they'} would be ignored)",
              file=sys.stderr)
        return 2
    if args.as_linked and not args.validate:
        print("error: --as-linked goes with --validate CSV (a file of your own rows; the shipped rows name their "
              "release families already)", file=sys.stderr)
        return 2
    if args.json and (args.memo or args.quant_lab or args.validate is not None or args.list):
        print("error: --json goes with --plan; the report is JSON already, and the other modes print text",
              file=sys.stderr)
        return 2
    modes = [flag for flag, on in (("--memo", args.memo), ("--plan", args.plan), ("--validate", args.validate is not None),
                                   ("--quant-lab", args.quant_lab), ("--list", bool(args.list))) if on]
    if len(modes) > 1:
        print(f"error: {' and '.join(modes)} print different things; give one of them", file=sys.stderr)
        return 2
    ignored = next((m for m in modes if m in ("--validate", "--quant-lab", "--list")), None)
    if ignored and args.link:
        # A scenario link beside a mode that reads none would be dropped in silence: say so instead.
        where = " (the rows' own links set them up; give the CSV after --validate)" if ignored == "--validate" else ""
        print(f"error: {ignored} takes no scenario link{where}; the link {args.link!r} goes with the report, --memo "
              "or --plan", file=sys.stderr)
        return 2
    if args.quant_lab:
        return _quant_lab(args)
    if args.validate is not None:
        from .validate import main as validate
        try:
            return validate(args.validate or None, as_linked=args.as_linked)
        except BrokenPipeError:
            raise  # the reader stopped early (_run): no file is at fault
        except OSError as exc:  # a file the user named: the input is at fault, as a bad link value is
            hint = (" (a scenario link? --validate takes a CSV file of measurements, whose rows carry their own "
                    "links)" if "=" in str(args.validate) else "")
            print(f"error: cannot read {exc.filename or args.validate}: {exc.strerror or exc}{hint}", file=sys.stderr)
            return 2
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.list == "cards":
        print("\n".join(card_line(cid, card) for cid, card in catalogue.cards().items()))
        return 0
    if args.list:
        table = {"models": catalogue.models, "apis": catalogue.apis}[args.list]()
        print("\n".join(table))
        return 0
    try:
        raw, _ = split_link(args.link)
    except ScenarioError as exc:
        return _refuse(exc)
    link: object = args.link
    matched = None
    if args.hf_config:
        from .hf_config import HFConfigError, from_hf_config_json_with_notes
        try:
            with open(args.hf_config, "rb") as fh:
                # One byte past the limit tells an oversized file without reading all of it.
                data = fh.read(MAX_CONFIG_BYTES + 1)
            if len(data) > MAX_CONFIG_BYTES:
                print(f"error: {args.hf_config}: larger than the {MAX_CONFIG_BYTES:,} bytes allowed for a config.json",
                      file=sys.stderr)
                return 2
            shape, read = from_hf_config_json_with_notes(data, max_bytes=MAX_CONFIG_BYTES)
            for note in read:
                print(f"config.json: {note}", file=sys.stderr)
        except OSError as exc:
            print(f"error: cannot read {args.hf_config}: {exc.strerror}", file=sys.stderr)
            return 2
        except HFConfigError as exc:
            print(f"error: {args.hf_config}: {exc}", file=sys.stderr)
            return 2
        # The config is the model: the link's other keys still win over its figures, but not its model id.
        matched = catalogue.match_model(shape)
        if matched:  # the config is a catalogue model: its preset (and its API row) stand for it, with any
            # checkpoint format the config states and the preset does not ship
            shape = {"model": matched, **catalogue.format_differences(shape, matched)}
        link = {**shape, **{k: v for k, v in raw.items() if k != "model"}}
        if "model" in raw and str(raw["model"]) != str(link.get("model", "custom")):
            print(f"config.json: the link's model={raw['model']} is set aside: the config is the model "
                  f"({link.get('model', 'custom')}); the link's other keys still apply", file=sys.stderr)
    try:
        parsed = load(link)
    except ScenarioError as exc:
        return _refuse(exc)
    if args.plan:
        return _plan(parsed, args)
    ev = evaluate(parsed)
    if args.memo:
        from .memo import memo
        print(memo(ev))
        return 0
    out = ev.report()
    if args.hf_config and matched:
        out["warnings"].insert(0, f"the config.json has the shape of the catalogue's {catalogue.models()[matched]['name']}: "
                                  f"its preset ({matched}) and its API row are used")
    print(json.dumps(out, indent=2, allow_nan=False))
    return 0


def _plan(parsed, args: argparse.Namespace) -> int:
    """``--plan``: the planner's rows as CSV (or JSON), best first; exit 2 when a format is not accepted."""
    import csv
    from dataclasses import asdict, fields

    from .planner import PlanRow, plan, to_cents
    from .scenario import KEYS
    formats = None
    if args.weights:
        formats = [f.strip() for f in args.weights.split(",") if f.strip()]
        for f in formats:
            try:
                load({"weights": f})
            except ScenarioError:
                print(f"error: weights={f!r} is not accepted: weights takes {KEYS['weights'].accepted}",
                      file=sys.stderr)
                return 2
    from .scenario import weights_refusal
    engine = parsed.scenario.engine
    refused = {f: why for f in (formats or []) if (why := weights_refusal(engine, f))}
    for f, why in refused.items():
        print(f"note: weights={f} is left out: {why}", file=sys.stderr)
    if formats and len(refused) == len(formats):
        print(f"error: none of the formats asked for loads in engine={engine}", file=sys.stderr)
        return 2
    formats = [f for f in formats if f not in refused] if formats else None
    rows = [asdict(r) for r in plan(parsed.scenario, formats)]
    from .notes import context_refusal
    if not rows and (refusal := context_refusal(parsed.scenario)):
        print(f"note: no card serves these requests: {refusal}", file=sys.stderr)
    elif not rows:
        print("note: no card preset fits this model and traffic with the formats and cards per replica tried "
              "(1, 2, 4, 8)", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2, allow_nan=False))
        return 0
    out = csv.DictWriter(sys.stdout, fieldnames=[f.name for f in fields(PlanRow)], lineterminator="\n")
    out.writeheader()
    out.writerows(to_cents(r) for r in rows)
    return 0


def _refuse(exc: ScenarioError) -> int:
    """Print each error of a refused link (values already escaped and bounded) and return exit status 2."""
    for err in exc.errors:
        print(f"error: {err.message}", file=sys.stderr)
    return 2


def _run() -> int:
    try:
        return main()
    except BrokenPipeError:  # the reader (e.g. `head`) stopped early: not an error of ours
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(_run())
