"""calc.rules: the consistency rules between figures, one table for the catalogue loader and the parser."""

import pytest

from calc import catalogue, parse, rules

DENSE = {"params_b": 8.0, "active_b": 8.0, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "window": 0,
         "window_layers": 0, "linear_layers": 0, "state_layers": 0, "state_kib": 0.0, "layers_full": 0, "experts": 0,
         "experts_active": 0, "embed_b": 0.5, "torch_gib": 79.2, "mem_gib": 79.6}


def test_a_consistent_shape_breaks_no_rule():
    assert rules.first_broken(DENSE) is None


@pytest.mark.parametrize("change, keys, said", [
    ({"kv_heads": 64}, ("kv_heads", "heads"), "kv_heads (64) must not exceed heads (32)"),
    ({"torch_gib": 80.0}, ("torch_gib", "mem_gib"), "torch_gib (80) must not exceed mem_gib (79.6)"),
    ({"window": 4096, "window_layers": 20, "linear_layers": 20}, ("linear_layers", "window_layers", "layers"),
     "must not exceed layers (32) together"),
    ({"experts": 1}, ("experts",), "at least 2 experts"),
    ({"experts": 8, "experts_active": 8}, ("experts_active", "experts"), "from 1 to experts - 1 (7)"),
    ({"active_b": 9.0}, ("active_b", "params_b"), "active_b (9) must not exceed params_b (8)"),
    ({"embed_b": 8.0}, ("embed_b", "active_b", "params_b"), "embed_b (8) must be below active_b (8)"),
    ({"linear_layers": 4, "state_layers": 4}, ("state_kib", "state_layers"), "state_kib must be at least 1 KiB"),
    ({"linear_layers": 4}, ("state_layers", "linear_layers", "layers"),
     "state_layers (0) must be from linear_layers (4) to layers (32)"),
    ({"state_layers": 33, "state_kib": 100.0}, ("state_layers", "linear_layers", "layers"),
     "state_layers (33) must be from linear_layers (0) to layers (32)"),
    ({"layers_full": 33}, ("layers_full", "layers"), "layers_full (33) must not exceed layers (32)"),
    ({"hidden": 3, "layers": 1, "params_b": 70.0, "active_b": 70.0}, ("hidden", "layers", "params_b", "active_b"),
     "1 layer of width hidden=3 would hold 69.5 billion parameters each"),
    ({"params_b": 0.00001, "active_b": 0.00001, "embed_b": 0.000001}, ("hidden", "layers", "params_b", "active_b"),
     "this one holds 5.469e-05 to 5.369e+06 billion"),
])
def test_each_rule_names_its_keys(change, keys, said):
    rule, reason = rules.first_broken({**DENSE, **change})
    assert rule.keys == keys and said in reason


def test_an_moe_whose_dense_part_would_be_negative_is_refused():
    moe = {**DENSE, "params_b": 100.0, "active_b": 10.0, "experts": 8, "experts_active": 7, "embed_b": 1.0}
    rule, reason = rules.first_broken(moe)
    assert rule.name == "active_b" and "dense part less the embedding table would be negative" in reason
    # routed = (P - Pa) / (1 - k/E): 90 / (1/8) = 720 billion, more than the whole model
    assert rules.routed_params(100.0, 10.0, 8, 7) == pytest.approx(720.0)
    assert rules.routed_params(100.0, 90.0, 8, 2) == pytest.approx(40 / 3)
    assert rules.routed_params(8.0, 8.0, 0, 0) == 0.0


def test_the_shape_rule_admits_every_catalogue_model_with_room_to_spare():
    """Active parameters a layer per hidden^2: 10 to 28 in the catalogue, every expert included up to 394; the
    bounds (1 and 1000) leave a factor of 2.5 or more either side."""
    low = [rules.shape_rho(m["active_b"], m["embed_b"], m["layers"], m["hidden"]) for m in catalogue.models().values()]
    high = [rules.shape_rho(m["params_b"], m["embed_b"], m["layers"], m["hidden"]) for m in catalogue.models().values()]
    assert min(low) > 8 and max(low) < 30 and max(high) < 400
    lo, hi, every = rules.SHAPE_RHO_NOTED
    assert lo < min(low) / 2 and max(low) * 2 < hi and max(high) * 2.5 < every
    assert lo / 100 > rules.SHAPE_RHO_MIN and every * 1000 < rules.SHAPE_RHO_MAX
    m = catalogue.models()["llama-3.1-70b"]
    assert rules.shape_note(m) is None
    assert "unlike any decoder's" in rules.shape_note({**m, "hidden": 1024})  # the seed's width, heads = kv_heads


def test_a_custom_shape_unlike_any_decoder_is_noted_where_a_figure_reads_the_width():
    narrow = "model=custom&kv_heads=1&head_dim=64"  # heads = kv_heads = 1, so hidden = 64
    assert not parse(narrow).errors
    assert not any("unlike any decoder" in w for w in parse(narrow + "&engine=roofline").warnings)
    assert any("unlike any decoder" in w for w in parse(narrow + "&engine=vllm").warnings)
    assert not any("unlike any decoder" in w for w in parse("model=llama-3.1-70b&engine=vllm").warnings)


def test_only_the_rules_whose_figures_are_there_are_checked():
    card = {"torch_gib": 90.0, "mem_gib": 80.0}
    rule, _ = rules.first_broken(card, keys=set(card))
    assert rule.keys == ("torch_gib", "mem_gib")
    assert rules.first_broken({"kv_heads": 64}, keys={"kv_heads"}) is None


def test_every_preset_obeys_every_rule():
    for mid, m in catalogue.models().items():
        assert rules.first_broken(m, keys=set(m)) is None, mid
    assert not parse("").errors


def test_a_shape_wrong_in_several_keys_falls_back_whole_not_key_by_key():
    # One layer of width 3 cannot hold 70 B, and no single key repairs it: dropping them one at a time would
    # price a model nobody asked for (the kept head_dim=3 with default heads), so the model's figures go together.
    given = "model=custom&params_b=70&layers=1&hidden=3&heads=1&kv_heads=1&head_dim=3"
    p = parse(given)
    assert [(e.key, e.rule) for e in p.errors] == [("hidden", True)]
    assert "falls back to its default together" in p.errors[0].reason and "(params_b=70, layers=1" in p.errors[0].reason
    assert "layers=1" in p.errors[0].reason and "head_dim=3" in p.errors[0].reason
    default = parse("model=custom").scenario
    for key in ("params_b", "layers", "hidden", "heads", "kv_heads", "head_dim"):
        assert getattr(p.scenario, key) == getattr(default, key), key


def test_a_shape_one_key_repairs_drops_that_key_alone():
    p = parse("model=custom&layers=80&hidden=8192&heads=64&kv_heads=8&head_dim=128&params_b=0.0001")
    assert [e.key for e in p.errors] == ["params_b"]
    assert (p.scenario.layers, p.scenario.hidden, p.scenario.heads) == (80, 8192, 64)
