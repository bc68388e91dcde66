"""The command line: JSON on stdout, exit 2 with the key named on bad input (docs/method.md section 1)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from calc import catalogue

ROOT = Path(__file__).resolve().parent.parent

SEED = ("engine=roofline&model=custom&params_b=70&layers=80&heads=64&kv_heads=8&head_dim=128&card=custom&mem_gib=80&bw_tbs=3.35"
        "&tflops=989&weights=4&kv=fp16&ctx=8192&attn=0&batch=17&duty=0.3&eff=0.7&overhead_gib=4&usd_hr=2.5&upkeep=0")


def run(*args):
    return subprocess.run([sys.executable, "-m", "calc", *args], capture_output=True, text=True, timeout=60)


def test_bare_query_string_prints_the_report():
    out = run(SEED)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert round(r["step_ms"], 2) == 14.93 and round(r["usd_per_mtok_rent"], 2) == 2.03 and r["max_batch"] == 17


def test_whole_url_with_fragment_is_the_same_as_its_query():
    url = f"https://calc.example.internal/speed?{SEED}#top"
    from_url, from_query = run(url), run(SEED)
    for out in (from_url, from_query):
        assert out.returncode == 0 and out.stderr == "", (out.returncode, out.stderr)
    assert json.loads(from_url.stdout) == json.loads(from_query.stdout)


def test_no_link_gives_the_defaults():
    out = run()
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    sc = r["scenario"]
    assert sc["model"] == "llama-3.1-70b" and sc["card"] == "h100-sxm" and sc["weights"] == "int4-g128"
    # SPEC section 10: the context and the duty follow the traffic by default, and the printed scenario says so
    assert sc["ctx"] == "auto" and sc["batch"] == "auto" and sc["duty"] == "auto"
    assert r["ctx_used"] == 1300 and r["duty_used"] == pytest.approx(r["duty_traffic"])


def test_unknown_key_is_a_warning_not_an_error():
    out = run(SEED + "&colour=blue")
    assert out.returncode == 0
    assert any("colour" in w for w in json.loads(out.stdout)["warnings"])


@pytest.mark.parametrize("bad, key", [("ctx=abc", "ctx"), ("duty=0", "duty"), ("duty=1.5", "duty"),
                                      ("eff=nan", "eff"), ("weights=int3", "weights"), ("kv=64", "kv"),
                                      ("batch=0", "batch"), ("attn=2", "attn"), ("model=gpt-9", "model"),
                                      ("card=tpu", "card"), ("kv_heads=128", "kv_heads"), ("usd_hr=-1", "usd_hr"),
                                      ("card=a100-80gb&compute=fp8", "compute")])
def test_bad_value_exits_2_naming_the_key(bad, key):
    out = run(bad)
    assert out.returncode == 2
    assert out.stdout == ""
    assert f"{key}=" in out.stderr and "takes" in out.stderr


def test_list_prints_preset_ids_one_per_line():
    # Every list holds the defaults' presets: the default model, the default card and that model's API row.
    api_ref = catalogue.models()["llama-3.1-70b"]["api_ref"]
    for what, must in (("models", "llama-3.1-70b"), ("cards", "h100-sxm"), ("apis", api_ref)):
        out = run("--list", what)
        assert out.returncode == 0 and out.stderr == "", (what, out.stderr)
        ids = [line.split("\t")[0] for line in out.stdout.splitlines()]
        assert ids and all(i == i.lower() and " " not in i for i in ids)
        assert must in ids, (what, must)


def test_list_cards_shows_the_family_the_driver_memory_and_its_source():
    out = run("--list", "cards")
    assert out.returncode == 0 and out.stderr == ""
    lines = {line.split("\t")[0]: line.split("\t") for line in out.stdout.splitlines()}
    assert all(len(fields) == 5 for fields in lines.values())
    _, name, family, memory, source = lines["l40s"]
    assert name == "L40S 48 GB" and family == "Ada" and memory == "44.99 GiB (46,068 MiB)"
    assert "46068 MiB" in source and "(read 2026-11-30)" in source
    assert lines["h100-sxm"][1:4] == ["H100 SXM 80 GB", "Hopper", "79.65 GiB (81,559 MiB)"]
    assert lines["a100-80gb"][3] == "80.00 GiB (81,920 MiB)"
    assert lines["mi325x"][2:4] == ["CDNA3", "256 GiB (label; driver figure not found)"]
    assert all(fields[4].strip() for fields in lines.values())


def test_a_bare_query_whose_value_holds_an_address_is_still_read():
    out = run("duty=[click](http://evil.example/)")
    assert out.returncode == 2 and "duty='[click](http://evil.example/)'" in out.stderr
    assert json.loads(run("/cost?ctx=4096").stdout)["scenario"]["ctx"] == 4096


def test_plan_names_the_formats_the_engine_refuses():
    """A format llama.cpp does not load is left out with its reason; none left is an error, not an empty table."""
    only = run("--plan", "model=llama-3.1-8b&req_day=20000&engine=llamacpp", "--weights", "fp8")
    assert only.returncode == 2 and "weights=fp8 is left out" in only.stderr and "q8_0" in only.stderr
    assert "none of the formats asked for loads in engine=llamacpp" in only.stderr
    mixed = run("--plan", "model=llama-3.1-8b&req_day=20000&engine=llamacpp", "--weights", "fp8,q4_k_m")
    assert mixed.returncode == 0 and "weights=fp8 is left out" in mixed.stderr
    rows = mixed.stdout.strip().splitlines()
    assert len(rows) > 1 and all(",q4_k_m," in row for row in rows[1:])


def test_formats_without_a_plan_are_refused_and_a_config_names_the_model_it_sets_aside(tmp_path):
    out = run("--weights", "fp8", "model=llama-3.1-8b")
    assert out.returncode == 2 and "--weights goes with --plan" in out.stderr
    cfg = tmp_path / "config.json"
    cfg.write_text('{"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, '
                   '"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, '
                   '"vocab_size": 128256, "max_position_embeddings": 8192}')
    out = run("--hf-config", str(cfg), "model=qwen3-32b")
    assert out.returncode == 0 and "the link's model=qwen3-32b is set aside" in out.stderr


@pytest.mark.parametrize("args, says", [
    (("--quant-lab", "--group", "0"), "group=0 is not accepted"),
    (("--quant-lab", "--size", "3"), "group=128 (the default) is not accepted"),
    (("--quant-lab", "--size", "4", "--group", "4"), "outliers=4096 (the default) is not accepted with --size 4"),
    (("--validate", "/no/such/rows.csv"), "cannot read /no/such/rows.csv: No such file or directory"),
    (("--memo", "--plan"), "--memo and --plan print different things"),
    (("--bits", "4"), "--bits is a setting of the quantization lab: give it with --quant-lab"),
    (("--size", "64", "--group", "8", "--memo"), "--group, --size are settings of the quantization lab"),
    (("--json", "--memo"), "--json goes with --plan"),
    (("req_day=5", "--validate"), "--validate takes no scenario link (the rows' own links set them up"),
    (("--validate", "req_day=5"), "cannot read req_day=5: No such file or directory (a scenario link? --validate takes"),
    (("req_day=5", "--quant-lab"), "--quant-lab takes no scenario link; the link 'req_day=5' goes with the report"),
])
def test_odd_options_exit_2_with_a_message_not_a_traceback(args, says):
    out = run(*args)
    assert out.returncode == 2
    assert says in out.stderr and "Traceback" not in out.stderr


def test_help_gives_each_default_as_a_link_would():
    out = run("--help")
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith("  ") and line.split()}
    assert lines["req_day"].endswith("default 10000") and lines["hours"].endswith("default 720")
    assert lines["link_us"].endswith("default 10")
    assert "10000.0" not in out.stdout


@pytest.mark.parametrize("args", [["--validate"], ["--list", "models"]])
def test_a_reader_that_stops_early_is_not_an_error(args):
    """`python -m calc --validate | head` : the pipe closes before the tables are out; no file is at fault."""
    proc = subprocess.Popen([sys.executable, "-m", "calc", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT)
    proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"error" not in err, err


def test_the_report_gives_the_time_per_token_a_latency_target_is_held_to():
    from calc.evaluate import report
    r = report("tpot_ms=20")
    assert r["serving_batch"] == 33 and r["meets_tpot"] and r["serving_tpot_ms"] <= 20 < r["step_ms"]
    assert report("")["serving_tpot_ms"] == pytest.approx(report("")["step_ms"])  # no target: the same batch
