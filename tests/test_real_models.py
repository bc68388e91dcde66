"""docs/method.md sections 2-5 on real models and cards: MoE, MLA, windows, embeddings, tensor parallel, presets, import."""

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from apptest import open_app
from calc import catalogue, model, parse, report
from calc.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "hf"
PAGES = ["pages/decision.py", "pages/fit.py", "pages/speed.py", "pages/cost.py", "pages/catalogue.py"]


def cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_every_model_card_pair_resolves_on_the_command_line():
    for mid in catalogue.models():
        for cid in catalogue.cards():
            code, out, err = cli(f"model={mid}&card={cid}")
            assert code == 0, (mid, cid, err)
            r = json.loads(out)
            assert r["scenario"]["model"] == mid and r["scenario"]["card"] == cid


@pytest.mark.parametrize("link", ["model=deepseek-v3&card=b200&gpus=8", "model=gemma-2-9b&card=l4"])
def test_command_line_in_a_subprocess(link):
    out = subprocess.run([sys.executable, "-m", "calc", link], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["scenario"]["model"] == link.split("&")[0].split("=")[1]


def test_a_card_without_the_precision_is_an_error_naming_compute():
    code, out, err = cli("card=a100-80gb&compute=fp8")
    assert code == 2 and "compute='fp8'" in err and out == ""
    assert report("card=h100-sxm&compute=fp8")["scenario"]["tflops"] == 1979


def test_list_commands_match_the_catalogue():
    for what, table in (("models", catalogue.models()), ("cards", catalogue.cards()), ("apis", catalogue.apis())):
        code, out, _ = cli("--list", what)
        assert code == 0 and [line.split("\t")[0] for line in out.splitlines()] == list(table)


def test_moe_is_sized_by_total_parameters_and_reads_active_ones_at_batch_1():
    s = parse("model=deepseek-v3&weights=int4&weights_embed=int4&gpus=8&card=h200-sxm").scenario
    assert model.weight_bytes(s) / 1e9 == pytest.approx(671.026 * 0.5, rel=1e-6)  # not ~37 B x 0.5
    wr1 = float(model.weight_bytes_read(s, 1))
    assert wr1 == pytest.approx((s.active_b - s.embed_b) * 1e9 * 0.5, rel=1e-9)
    assert float(model.weight_bytes_read(s, 4096)) == pytest.approx(model.weight_bytes(s) - s.embed_b * 1e9 * 0.5, rel=1e-3)


def test_mla_cache_is_the_latent_not_the_plain_formula():
    r = report("model=deepseek-v3&kv=16")
    assert r["kv_bytes_per_token"] == 70_272
    assert any("latent" in w for w in r["warnings"])


def test_sliding_window_caps_the_cache_of_its_layers():
    r = report("model=gemma-2-9b&kv=16&ctx=32768")
    # 21 global layers hold 32k tokens, 21 windowed layers hold 4k: 2*8*256*2 bytes per token-layer
    assert r["kv_gib_per_sequence"] * 2**30 == 2 * 8 * 256 * 2 * (21 * 32768 + 21 * 4096)
    assert r["kv_bytes_per_token"] == 344_064  # every layer full, as models.csv lists


def test_tied_embeddings_are_read_as_the_output_head():
    tied = parse("model=gemma-2-9b").scenario
    untied = parse("model=llama-3.1-8b").scenario
    assert tied.embed_b == 0 and untied.embed_b == pytest.approx(0.525336576)
    assert float(model.weight_bytes_read(untied, 1)) < model.weight_bytes(untied)


def test_tensor_parallel_adds_communication_and_splits_memory():
    one = report("model=llama-3.1-70b&weights=fp8&gpus=1")
    four = report("model=llama-3.1-70b&weights=fp8&gpus=4")
    assert one["comm_ms"] == 0 and four["comm_ms"] > 0
    assert four["max_batch"] > one["max_batch"]
    s = parse("model=llama-3.1-70b&gpus=4&batch=8").scenario
    expected = 2 * 80 * (2 * 3 / 4 * 8 * 8192 * 2 / (450 * 1e9) + 10e-6) * 1e3
    assert report(s.to_query())["comm_ms"] == pytest.approx(expected, rel=1e-12)


def test_moe_break_even_solves_compute_equals_memory():
    s = parse("model=mixtral-8x7b&attn=0&weights=16").scenario
    be = model.break_even(s)
    parts = model.step_parts(s, be)
    assert parts.compute_s == pytest.approx(parts.memory_s, rel=1e-9)
    dense_like = parse("model=custom&params_b=46.703&attn=0&weights=16").scenario
    # Every expert is read once the batch is large, but each token computes with only the active ones:
    # the knee moves out by about total/active (46.7/12.9) against a dense model of the same size.
    assert 3 * model.break_even(dense_like) < be < 4 * model.break_even(dense_like)


def test_imported_config_round_trips_through_the_command_line(tmp_path):
    # A config with a catalogue model's shape is that model: its preset and its API row are used, and said.
    code, out, err = cli("--hf-config", str(FIXTURES / "llama-3.1-8b.json"), "card=l40s&ctx=4096")
    assert code == 0, err
    r = json.loads(out)
    sc = r["scenario"]
    assert sc["model"] == "llama-3.1-8b" and sc["card"] == "l40s" and sc["ctx"] == 4096
    assert "shape of the catalogue's Llama 3.1 8B" in r["warnings"][0]
    # A shape no preset has stays custom, and the API price it is compared with is named as a stand-in.
    code, out, err = cli("--hf-config", str(FIXTURES / "llama-2-70b.json"), "card=l40s&ctx=4096")
    assert code == 0, err
    r = json.loads(out)
    assert r["scenario"]["model"] == "custom" and r["scenario"]["layers"] == 80
    assert any("stands in for this custom model" in w for w in r["warnings"])
    bad = tmp_path / "bad.json"
    bad.write_text('{"hidden_size": 4096}')
    code, _, err = cli("--hf-config", str(bad))
    assert code == 2, (code, err)
    assert "num_hidden_layers" in err or "num_attention_heads" in err, err




@pytest.mark.slow  # 20 AppTest runs
@pytest.mark.parametrize("link", [{"model": "mixtral-8x7b", "gpus": "2"}, {"model": "deepseek-v3", "card": "b200", "gpus": "8"},
                                  {"model": "gemma-2-27b", "ctx": "32768"}, {"model": "gpt-oss-120b", "card": "h200-sxm"}])
@pytest.mark.parametrize("page", PAGES)
def test_pages_run_clean_with_moe_mla_and_windowed_models(link, page):
    at = open_app(link, page)
    assert not at.exception
    assert at.query_params["model"] == link["model"]


def test_fit_page_shows_memory_per_card():
    at = open_app({"gpus": "4"}, "pages/fit.py")
    assert any("One card's memory" in h.value for h in at.subheader)
    assert any("per card" in m.label for m in at.metric)


def test_config_import_in_the_app_fills_the_custom_model():
    at = open_app({"card": "a100-80gb"})
    at.text_area(key="_hf_text").set_value((FIXTURES / "mixtral-8x7b.json").read_text())
    at.button[0].click().run()
    assert not at.exception
    # Mixtral's config has the catalogue preset's shape: the preset (and its API row) is used, and said.
    assert at.query_params["model"] == "mixtral-8x7b" and at.query_params["card"] == "a100-80gb"
    assert "shape of the catalogue's" in " ".join(str(x.value) for x in at.success)
    assert float(at.query_params["params_b"]) == pytest.approx(46.70, rel=5e-3)
    assert float(at.query_params["active_b"]) == pytest.approx(12.88, rel=5e-3)
    assert at.query_params["experts"] == "8" and at.query_params["experts_active"] == "2"


def test_a_config_import_of_a_new_model_takes_its_own_api_row_as_the_command_line_does(tmp_path):
    # Falcon-H1-7B (no catalogue preset) imported over Llama 3.1 405B on 8 cards: the 405B's API row and its prices
    # must not price the 7.6 B model; it takes the stand-in the command line's --hf-config gives it.
    from test_hf_config import FALCON_H1_7B

    at = open_app({"model": "llama-3.1-405b", "gpus": "8", "req_day": "300000"}, "pages/decision.py")
    assert "405b" in at.query_params["api"]
    at.text_area(key="_hf_text").set_value(json.dumps(FALCON_H1_7B))
    at.button[0].click().run()
    assert not at.exception
    assert at.query_params["model"] == "custom" and at.query_params["state_layers"] == "44"
    path = tmp_path / "falcon.json"
    path.write_text(json.dumps(FALCON_H1_7B))
    code, out, _ = cli("--hf-config", str(path), "req_day=300000")
    shown = json.loads(out)["scenario"]
    assert code == 0 and at.query_params["api"] == shown["api"] and "405b" not in shown["api"]
    assert float(at.query_params["api_out"]) == shown["api_out"]
    # 8 cards of tensor parallelism cannot split 12 heads: the page says so instead of switching silently.
    assert at.query_params["gpus"] == "1"
    assert "gpus" in " ".join(str(x.value) for x in [*at.warning, *at.error])


def test_config_import_rejects_garbage_with_a_message():
    at = open_app({})
    at.text_area(key="_hf_text").set_value('{"a": ' * 50 + "1" + "}" * 50)
    at.button[0].click().run()
    assert not at.exception
    assert any("cannot be used" in e.value for e in at.error)
    assert at.query_params["model"] == "llama-3.1-70b"
