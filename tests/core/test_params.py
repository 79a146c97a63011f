"""params.yaml loading, profiles, and the MMNeedle plan/render configs built from it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from benchsmith.builders.mmneedle.config import PlanConfig, PlanSettings, RenderConfig, Setting
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.params import load_params, profile_of, section
from benchsmith.core.settings import settings_from

PARAMS_YAML = """\
# comment line, as in the real params.yaml
profile: {profile}
version: 0.1.0
seed: 7

coco:
  sample:
    n_images: 660

mmneedle:
  order: canonical
  grids: [1, 2, 4, 8]
  haystack_sizes: [1, 10]
  needle_counts: [1, 2, 5]
  sizes:
    sample: {{ pool_size: 20, samples_per_config: 10 }}
    full: {{ pool_size: 10000, samples_per_config: 9000 }}
  render:
    cell_size: 128
    jpeg_quality: 90
    resample: lanczos
    reducing_gap: null
    workers: 3
"""


def write_params(tmp_path: Path, profile: str = "sample") -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS_YAML.format(profile=profile), encoding="utf-8")
    return path


def test_load_params_reads_mapping(tmp_path: Path) -> None:
    params = load_params(write_params(tmp_path))
    assert params["seed"] == 7
    assert params["mmneedle"]["sizes"]["full"] == {"pool_size": 10000, "samples_per_config": 9000}


def test_load_params_missing_explicit_file_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "my_params.yaml"
    with pytest.raises(BenchsmithError) as info:
        load_params(missing)
    assert str(missing) in str(info.value)
    assert info.value.path == str(missing)


def test_load_params_default_absent_gives_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_params() == {}


def test_load_params_default_present_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_params(tmp_path, profile="full")
    monkeypatch.chdir(tmp_path)
    assert load_params()["profile"] == "full"


def test_load_params_empty_file_gives_empty(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("# only a comment\n", encoding="utf-8")
    assert load_params(path) == {}


def test_load_params_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("mmneedle:\n  grids: [1, 2\n  order: canonical\n", encoding="utf-8")
    with pytest.raises(BenchsmithError) as info:
        load_params(path)
    assert str(path) in str(info.value)
    assert "YAML" in str(info.value)


def test_load_params_top_level_list_rejected(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- profile: sample\n- seed: 0\n", encoding="utf-8")
    with pytest.raises(BenchsmithError) as info:
        load_params(path)
    assert str(path) in str(info.value)


def test_profile_of() -> None:
    assert profile_of({}) == "sample"
    assert profile_of({"profile": "sample"}) == "sample"
    assert profile_of({"profile": "full"}) == "full"


@pytest.mark.parametrize("profile", ["Full", "tiny", "", None, 1])
def test_profile_of_rejects_unknown(profile: object) -> None:
    with pytest.raises(BenchsmithError) as info:
        profile_of({"profile": profile})
    assert repr(profile) in str(info.value)


def test_section() -> None:
    params = {"a": {"b": {"c": 1}}, "x": 3}
    assert section(params, "a", "b") == {"c": 1}
    assert section(params, "a", "missing") == {}
    assert section(params, "x") == {}  # not a mapping
    assert section(params, "x", "y") == {}
    assert section(params) == params


def plan_config(params: dict, seed: int | None = None, **flags) -> PlanConfig:
    """The plan's config as ``build mmneedle plan`` makes it: the declared settings from the
    ``mmneedle:`` block for the running profile, the flags given on top, and the seed."""
    settings = settings_from(PlanSettings, section(params, "mmneedle"), flags, profile_of(params))
    return PlanConfig.from_settings(settings, params.get("seed", 0) if seed is None else seed)


def test_plan_config_sample_profile_sizes(tmp_path: Path) -> None:
    config = plan_config(load_params(write_params(tmp_path, "sample")))
    assert (config.pool_size, config.samples_per_config) == (20, 10)
    assert config.seed == 7
    assert config.order == "canonical"
    assert config.grids == (1, 2, 4, 8)
    assert config.haystack_sizes == (1, 10)
    assert config.needle_counts == (1, 2, 5)


def test_plan_config_full_profile_sizes(tmp_path: Path) -> None:
    config = plan_config(load_params(write_params(tmp_path, "full")))
    assert (config.pool_size, config.samples_per_config) == (10000, 9000)


def test_plan_config_empty_params_uses_defaults() -> None:
    """No params: the sample profile's sizes (as every family); profile full: the benchmark's."""
    assert plan_config({}) == PlanConfig(pool_size=20, samples_per_config=10)
    assert plan_config({"profile": "full"}) == PlanConfig()


def test_plan_config_cli_overrides_win(tmp_path: Path) -> None:
    params = load_params(write_params(tmp_path, "sample"))
    config = plan_config(
        params,
        seed=99,
        order="legacy",
        grids=(2, 4),
        haystack_sizes=None,
        needle_counts=(1,),
        pool_size=5,
        samples_per_config=None,
    )
    assert config.order == "legacy"
    assert config.grids == (2, 4)
    assert config.haystack_sizes == (1, 10)  # None: params value kept
    assert config.needle_counts == (1,)
    assert config.pool_size == 5
    assert config.samples_per_config == 10  # None: params value kept
    assert config.seed == 99
    assert [s.name for s in config.settings()] == [
        "m1_n2_k1",
        "m1_n4_k1",
        "m10_n2_k1",
        "m10_n4_k1",
    ]


def test_plan_config_default_settings() -> None:
    settings = PlanConfig().settings()
    expected = {
        f"m{m}_n{n}_k{k}"
        for m, n, k in itertools.product((1, 10), (1, 2, 4, 8), (1, 2, 5))
        if (m, n) != (1, 1)
    }
    assert len(settings) == 21
    assert len(expected) == 21
    assert {s.name for s in settings} == expected
    assert not [s for s in settings if s.name.startswith("m1_n1_")]
    assert all(isinstance(s, Setting) for s in settings)
    for setting in settings:
        assert setting.slots == setting.num_images * setting.grid**2


def test_plan_config_settings_deduplicate_values() -> None:
    config = PlanConfig(grids=(2, 2, 1), haystack_sizes=(1,), needle_counts=(1, 1))
    assert [s.name for s in config.settings()] == ["m1_n2_k1"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"order": "random"},
        {"grids": ()},
        {"grids": (0, 2)},
        {"haystack_sizes": (-1,)},
        {"needle_counts": ()},
        {"pool_size": 0},
        {"samples_per_config": 0},
    ],
)
def test_plan_config_invalid_values(kwargs: dict) -> None:
    with pytest.raises(BenchsmithError):
        PlanConfig(**kwargs)


def test_plan_config_invalid_order_from_params() -> None:
    with pytest.raises(BenchsmithError) as info:
        plan_config({"mmneedle": {"order": "shuffled"}})
    assert "shuffled" in str(info.value)


def test_render_config_from_params_and_overrides(tmp_path: Path) -> None:
    params = load_params(write_params(tmp_path))
    config = RenderConfig.from_params(params)
    assert (config.cell_size, config.jpeg_quality, config.resample) == (128, 90, "lanczos")
    assert config.reducing_gap is None
    assert config.workers == 3
    override = RenderConfig.from_params(params, jpeg_quality=50, resample=None, workers=1)
    assert (override.jpeg_quality, override.resample, override.workers) == (50, "lanczos", 1)
    assert "workers" not in override.identity()
    assert override.identity() != config.identity()
    assert RenderConfig.from_params(params, workers=8).identity() == config.identity()


@pytest.mark.parametrize("quality", [1, 100])
def test_render_config_quality_bounds_accepted(quality: int) -> None:
    assert RenderConfig(jpeg_quality=quality).jpeg_quality == quality


@pytest.mark.parametrize(
    "kwargs",
    [
        {"resample": "cubic"},
        {"resample": "BICUBIC"},
        {"jpeg_quality": 0},
        {"jpeg_quality": 101},
        {"cell_size": 0},
    ],
)
def test_render_config_invalid_values(kwargs: dict) -> None:
    with pytest.raises(BenchsmithError):
        RenderConfig(**kwargs)


def test_render_config_invalid_resample_from_params() -> None:
    with pytest.raises(BenchsmithError) as info:
        RenderConfig.from_params({"mmneedle": {"render": {"resample": "sinc"}}})
    assert "sinc" in str(info.value)
