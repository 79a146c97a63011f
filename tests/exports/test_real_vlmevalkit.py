"""The VLMEvalKit exports in the real VLMEvalKit: its ``build_dataset`` picks the class from the
TSV's columns, its datasets build every prompt, its multiple-choice evaluator scores a
prediction file written by its own ``dump``, and ``benchsmith score --from-vlmevalkit`` reads
those files.

Runs where VLMEvalKit is importable (it is not on PyPI: install it from its source tree into
the environment of the ``[harness]`` extra, as ``docs/evaluate.md`` says) and is skipped, saying
so, where it is not. ``test_vlmevalkit.py`` and ``tests/commands/test_score_vlmevalkit.py``
check the same files in every run against what VLMEvalKit's source reads.

The fake model answers the gold for about half the rows (the row's id decides) and ``zz`` for
the others, so VLMEvalKit's accuracy, ``benchsmith score`` on VLMEvalKit's files and
``benchsmith score`` on the same answers given directly must all agree, strictly between 0
and 1.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip(
    "vlmeval",
    reason="VLMEvalKit is an optional harness installed from its source tree (docs/evaluate.md)",
)

from PIL import Image  # noqa: E402

from benchsmith.cli import main  # noqa: E402
from benchsmith.scoring import SCORERS  # noqa: E402

WRONG = "zz"
csv.field_size_limit(sys.maxsize)  # a picture cell is megabytes of base64


def right_for(row_id: str) -> bool:
    return hashlib.sha256(str(row_id).encode()).digest()[0] % 2 == 1


# MMNeedle: one single-image and one ten-image config of 2x2 grids (VLMEvalKit saves every
# picture of a row as a PNG file before it builds the prompt: the 8x8 haystacks of all 21
# configs take it over ten minutes); the others whole
CONFIGS = {"mmneedle": ("--config", "m1_n2_k1", "m10_n2_k2")}


def export(published: Path, lmu: Path, name: str, capsys) -> tuple[list[str], str]:
    """The TSVs of one family in ``lmu``; returns the ``--data`` names the export prints."""
    capsys.readouterr()
    assert main(["export", "vlmevalkit", str(published), "--out", str(lmu / f"{name}.tsv"),
                 *CONFIGS.get(name, ())]) == 0  # fmt: skip
    printed = capsys.readouterr()
    return sorted(p.stem for p in lmu.glob(f"{name}*.tsv")), printed.out + printed.err


def benchsmith_score(published: Path, config: str, capsys, *how: str) -> dict:
    capsys.readouterr()
    assert main(["score", str(published), "--config", config, *how]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("family", ["mmneedle", "vlicl", "mmiu", "multi"])
def test_real_vlmevalkit_loads_every_row_and_scores_as_benchsmith(family, sample_project,
                                                                   tmp_path, monkeypatch, capsys):  # fmt: skip
    monkeypatch.setenv("LMUData", str(tmp_path / "lmu"))
    (tmp_path / "lmu").mkdir()
    from vlmeval.dataset import build_dataset
    from vlmeval.smp import dump

    published = sample_project / "published" / family
    names, printed = export(published, tmp_path / "lmu", family, capsys)
    assert names and (len(names) == 1 or f"--data {' '.join(names)}" in printed)
    loaded, answers, by_config = 0, {}, {}
    vlmevalkit_accuracy: dict[str, float] = {}
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not officially supported": a custom dataset
            dataset = build_dataset(name)
        assert dataset is not None, name
        data = dataset.data
        with (tmp_path / "lmu" / f"{name}.tsv").open(encoding="utf-8", newline="") as handle:
            written = sum(1 for _ in csv.reader(handle, delimiter="\t")) - 1  # quoted newlines
        assert len(data) == written  # VLMEvalKit kept every row the export wrote
        loaded += len(data)
        for index in range(len(data)):
            prompt = dataset.build_prompt(data.iloc[index])
            pictures = [m["value"] for m in prompt if m["type"] == "image"]
            assert prompt[-1]["type"] == "text" and prompt[-1]["value"]
            assert ("image" in data.columns) == bool(pictures), (name, index)
            for picture in pictures:
                with Image.open(picture) as image:
                    image.load()
        predictions = data.drop(columns=[c for c in ("image",) if c in data.columns]).copy()
        predictions["prediction"] = [str(a) if right_for(i) else WRONG
                                     for i, a in zip(data["id"], data["answer"], strict=True)]  # fmt: skip
        for row_id, config, reply in zip(predictions["id"], predictions["config"],
                                         predictions["prediction"], strict=True):  # fmt: skip
            answers[(config, str(row_id))] = reply  # ids are per config (MMNeedle's 0..9)
            by_config.setdefault(config, []).append(str(row_id))
        file = tmp_path / f"fake_{name}.xlsx"
        dump(predictions, str(file))  # as VLMEvalKit writes a model's predictions
        if dataset.TYPE == "MCQ":  # image or text multiple choice: VLMEvalKit scores it
            accuracy = dataset.evaluate(str(file), model="exact_matching", nproc=1)
            right = [right_for(i) for i in data["id"]]
            assert accuracy["Overall"][0] == pytest.approx(sum(right) / len(right))
            for category in set(data["category"]):
                vlmevalkit_accuracy[str(category)] = float(accuracy[str(category)][0])
        else:
            with pytest.raises(NotImplementedError):  # why the docs send these to benchsmith
                dataset.evaluate(str(file))
    files = [str(tmp_path / f"fake_{name}.xlsx") for name in names]
    scorer = SCORERS.get(family)
    headlines = []
    for config, ids in sorted(by_config.items()):
        from_files = benchsmith_score(published, config, capsys, "--from-vlmevalkit", *files)
        # the same answers as a predictions file, keyed as the scorer keys its rows
        keys = [k for k in scorer.reference_predictions(published, config)
                if (config, str(next(iter(k.values())))) in answers]  # fmt: skip
        direct = tmp_path / f"{config}.jsonl"
        direct.write_text("".join(
            json.dumps({**k, "response": answers[config, str(next(iter(k.values())))]},
                       ensure_ascii=False) + "\n" for k in keys), encoding="utf-8")  # fmt: skip
        given = benchsmith_score(published, config, capsys, "--predictions", str(direct))
        assert from_files == given, config
        assert len(keys) == len(ids)  # every row VLMEvalKit answered is a sample of the config
        headline = scorer.headline_value(from_files)
        if family == "mmiu":  # VLMEvalKit's category is the task: its accuracy is ours
            assert vlmevalkit_accuracy[config] == pytest.approx(headline), config
        headlines.append(headline)
    assert min(headlines) < max(headlines) or 0 < headlines[0] < 1, headlines
    assert loaded == sum(len(ids) for ids in by_config.values()) > 0
