"""``benchsmith curate`` publishes a whole card for every combination of enabled stages.

Seven stages, each on or off (128 runs over one small dataset, one 127.0.0.1 LLM server and one
shared cache); the review runs by model, by human verdicts, or both, in turn. Every run must
publish a card whose tables render, whose sections are those of the stages that ran, and whose
stage table matches ``decisions.parquet``; a run that would keep nothing refuses to publish.
"""

from __future__ import annotations

import itertools
import json

import pyarrow.parquet as pq
import pytest
from card_markdown import card_tables
from chat_server import ChatServer, Reply
from curate_fixtures import JUDGES, N, gold_letter, write_corpus, write_judges, write_mcq_dataset

from benchsmith.cli import main
from benchsmith.stages import STAGES

SECTION_TITLES = {
    "difficulty": "## Difficulty",
    "zero_pass_review": "## Review of zero-pass samples",
    "text_only": "## Text-only answerability",
    "blind_baselines": "## Blind baselines",
    "ngram_overlap": "## Decontamination",
    "image_duplicates": "## Duplicate images",
    "final_draw": "## Final draw",
}
REVIEW_MODES = ("model", "human", "both")


def reply(body: dict) -> Reply:
    text = json.dumps(body["messages"])
    if body["model"] == "reviewer":
        return Reply("Judgement: NO" if "picture number 10 " in text else "Judgement: YES")
    return Reply(gold_letter(1) if "picture number 1 " in text else "no idea")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("combos")
    (root / "none.yaml").write_text("{}\n")
    verdicts = root / "verdicts.jsonl"
    verdicts.write_text(json.dumps({"sample_id": "q020", "verdict": "reject"}) + "\n")
    with ChatServer(reply=reply) as server:
        yield {
            "root": root,
            "dataset": write_mcq_dataset(root / "toy", n=N),
            "judges": write_judges(root / "judges"),
            "corpus": write_corpus(root),
            "verdicts": verdicts,
            "server": server,
        }


def stage_args(setup: dict, enabled: set[str], review_mode: str) -> list[str]:
    args = ["--params", str(setup["root"] / "none.yaml"), "--base-url", setup["server"].base_url]
    args += ["--llm-cache", str(setup["root"] / "cache"), "--seed", "3"]
    if "difficulty" in enabled:
        args += ["--judges", *map(str, setup["judges"])]
    if "zero_pass_review" in enabled:
        if review_mode in ("model", "both"):
            args += ["--review-model", "reviewer"]
        if review_mode in ("human", "both"):
            args += ["--human-verdicts", str(setup["verdicts"])]
    if "text_only" in enabled:
        args += ["--text-only-model", "blind-llm"]
    if "blind_baselines" not in enabled:
        args += ["--no-blind"]
    if "ngram_overlap" in enabled:
        args += ["--reference-corpus", str(setup["corpus"])]
    if "image_duplicates" not in enabled:
        args += ["--no-image-check"]
    if "final_draw" in enabled:
        args += ["--target-size", "3"]
    return args


def test_section_titles_name_every_stage():
    assert set(SECTION_TITLES) == {stage.name for stage in STAGES}


COMBINATIONS = [
    frozenset(c)
    for r in range(len(SECTION_TITLES) + 1)
    for c in itertools.combinations(SECTION_TITLES, r)
]


@pytest.mark.parametrize("index", range(len(COMBINATIONS)))
def test_every_combination_of_stages_publishes_a_whole_card(setup, tmp_path, index, capsys):
    enabled = COMBINATIONS[index]
    review_mode = REVIEW_MODES[index % len(REVIEW_MODES)]
    out = tmp_path / "out"
    code = main(
        ["curate", str(setup["dataset"]), "--config", "vqa", "--out", str(out)]
        + stage_args(setup, enabled, review_mode)
    )
    assert code == 0, capsys.readouterr().err
    card = (out / "README.md").read_text(encoding="utf-8")
    tables = card_tables(card)
    decisions = pq.read_table(out / "decisions.parquet").to_pylist()
    ran = {row["stage"] for row in decisions}
    # the review has work only when the difficulty stage found zero-pass samples
    expected = set(enabled) - ({"zero_pass_review"} if "difficulty" not in enabled else set())
    assert ran == expected, (sorted(enabled), sorted(ran))
    for stage, title in SECTION_TITLES.items():
        assert (title in card) == (stage in ran), (stage, sorted(enabled))
    stage_table = next((t for t in tables if t[0][:2] == ["stage", "in"]), [[]])
    assert [row[0].strip("`") for row in stage_table[1:]] == [
        s.name for s in STAGES if s.name in ran
    ]
    assert ("No stage had anything to do" in card) == (not ran)
    for row in stage_table[1:]:
        rows = [d for d in decisions if d["stage"] == row[0].strip("`")]
        assert int(row[1]) == len(rows)
        assert int(row[3]) == sum(d["action"] == "drop" for d in rows)
    if "zero_pass_review" in ran:
        review = card.split(SECTION_TITLES["zero_pass_review"], 1)[1].split("\n## ", 1)[0]
        assert ("`reviewer`" in review) == (review_mode != "human")
        assert ("human reviewers" in review) == (review_mode != "model")
    dropped = {d["sample_id"] for d in decisions if d["action"] == "drop"}
    assert f"**{N - len(dropped)} of {N}**" in card


def test_a_curation_that_keeps_nothing_publishes_nothing(setup, tmp_path, capsys):
    """Judges that all solve every sample make every sample EASY: no dataset, a clear error."""
    judges = tmp_path / "all-right"
    judges.mkdir()
    for model in JUDGES:
        rows = [
            {"sample_id": f"q{i:03d}", "model": model, "response": gold_letter(i)} for i in range(N)
        ]
        (judges / f"{model}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    args = ["curate", str(setup["dataset"]), "--config", "vqa", "--out", str(out)]
    code = main([*args, "--judges", *map(str, sorted(judges.iterdir())), "--params",
                 str(setup["root"] / "none.yaml")])  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "no sample survived (0 of 40 kept; `difficulty` dropped 40)" in err
    assert "left as it was" in err and "fix:" in err
    assert not out.exists()
