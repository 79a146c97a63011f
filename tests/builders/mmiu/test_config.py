"""A setting written in ``params.yaml`` and its default in code are one setting: the shipped
``params.yaml`` (``distractor_min_rotation_deg: 15``, ``max_rotation_deg: 20``) and the code's
defaults (``15.0``, ``20.0``) record and hash identically."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from benchsmith.builders.mmiu.config import FrameChoice, MmiuConfig, OptionStyle
from benchsmith.core.hashing import params_hash

PARAMS = Path(__file__).resolve().parents[3] / "params.yaml"


def test_the_shipped_params_and_the_defaults_give_one_hash():
    block = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))["mmiu"]
    for profile in ("sample", "full"):
        written = MmiuConfig.from_params(block, profile).as_dict()
        defaults = MmiuConfig.from_params({}, profile).as_dict()
        assert json.dumps(written, sort_keys=True) == json.dumps(defaults, sort_keys=True)
        assert params_hash(written) == params_hash(defaults)


def test_an_integer_for_a_float_setting_is_that_float():
    frames = FrameChoice(max_rotation_deg=20, distractor_min_rotation_deg=15)
    assert frames == FrameChoice(max_rotation_deg=20.0, distractor_min_rotation_deg=15.0)
    assert isinstance(frames.distractor_min_rotation_deg, float) and isinstance(frames.stride, int)
    assert json.dumps(OptionStyle(depth_display_max_m=6).depth_display_max_m) == "6.0"
