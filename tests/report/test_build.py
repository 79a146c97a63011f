"""``benchsmith report``: one self-contained page per dataset of the sample build, its items'
gold read back against the published rows, its charts, the family's checks and a predictions
file's breakdown against ``benchsmith score``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.dataset as pads
import pytest
from report_page import decode_data_uri, read_page

from benchsmith.cli import main
from benchsmith.scoring import SCORERS

# (folder, id column, gold column) read straight from the parquet, not through the report
GOLD = {
    "mmneedle": ("sample_id", "gold_answer"),
    "vlicl": ("id", "answer"),
    "mmiu": ("id", "answer"),
    "multi": ("question_id", "answer"),
}


def published_rows(folder: Path, config: str, split: str, id_column: str, gold: str) -> dict:
    files = sorted(str(p) for p in (folder / "data" / config).glob(f"{split}-*.parquet"))
    table = pads.dataset(files, format="parquet").to_table(columns=[id_column, gold])
    return {str(i): g for i, g in zip(*(table.column(k).to_pylist() for k in (id_column, gold)),
                                      strict=True)}  # fmt: skip


def as_text(value) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


@pytest.fixture(scope="module")
def reports(sample_project, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("reports")
    made = {}
    for family in GOLD:
        assert main(["report", str(sample_project / "published" / family), "--items", "5",
                     "--out", str(out / family)]) == 0  # fmt: skip
        made[family] = out / family
    return made


@pytest.mark.parametrize("family", sorted(GOLD))
def test_the_page_holds_everything_it_shows_and_its_gold_is_the_published_gold(
    family, reports, sample_project
):
    folder = sample_project / "published" / family
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    page = read_page((reports[family] / "index.html").read_text(encoding="utf-8"))
    assert page.scripts == 0 and not page.stylesheets  # no script, nothing fetched
    assert all(link.startswith("#") for link in page.links)
    assert page.images and all(decode_data_uri(src).size[0] > 0 for src in page.images)
    # every sample config, with the row count of build_info
    expected = {c: s for c, splits in info["configs"].items() for s in splits
                if c in page.summary}  # fmt: skip
    assert page.summary, "no summary table"
    for config, (split, rows) in page.summary.items():
        assert split in info["configs"][config]
        assert rows == info["configs"][config][split]["num_examples"]
    assert set(expected) == set(page.summary)
    # each card's gold is the published row's, read here from the parquet
    id_column, gold = GOLD[family]
    by_config: dict[str, dict] = {}
    for config, (split, _) in page.summary.items():
        by_config[config] = published_rows(folder, config, split, id_column, gold)
    assert page.cards and len(page.cards) == sum(min(5, n) for _, n in page.summary.values())
    for card in page.cards:
        owners = [c for c, rows in by_config.items() if card.sample_id in rows]
        assert owners, card.sample_id
        assert card.gold in {as_text(by_config[c][card.sample_id]) for c in owners}
    # the charts and contact sheets beside the page are real PNGs
    pngs = sorted((reports[family]).rglob("*.png"))
    assert {p.parent.name for p in pngs} == {"charts", "contact"}
    assert {p.stem for p in (reports[family] / "contact").glob("*.png")} == set(page.summary)
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_each_family_shows_its_builds_checks(reports):
    text = {f: read_page((reports[f] / "index.html").read_text(encoding="utf-8")).text
            for f in GOLD}  # fmt: skip
    assert "Shortcut gate" in text["mmiu"] and "best blind rule" in text["mmiu"]
    assert "Support/query leakage" in text["vlicl"]
    assert "Twin pictures" in text["mmneedle"] and "Haystack checks" in text["mmneedle"]
    assert "Near-duplicate questions" in text["multi"] and "OCR of scanned pages" in text["multi"]
    assert any(p.name.startswith("check-Shortcut") for p in (reports["mmiu"] / "charts").iterdir())
    # MULTI's question types by their names, not their ClassLabel integers
    html = (reports["multi"] / "index.html").read_text(encoding="utf-8")
    kinds = [line.rsplit(" · ", 1)[-1] for line in re.findall(r'class="id">([^<]*)', html)]
    assert kinds and set(kinds) <= {"SA", "MA", "FB", "OP", "Other"} and len(set(kinds)) > 1


def test_the_same_folder_gives_the_same_bytes(reports, sample_project, tmp_path):
    again = tmp_path / "again"
    assert main(["report", str(sample_project / "published" / "mmiu"), "--items", "5",
                 "--out", str(again)]) == 0  # fmt: skip
    first = {p.relative_to(reports["mmiu"]): p.read_bytes()
             for p in reports["mmiu"].rglob("*") if p.is_file() and p.name != ".benchsmith-output"}  # fmt: skip
    second = {p.relative_to(again): p.read_bytes()
              for p in again.rglob("*") if p.is_file() and p.name != ".benchsmith-output"}  # fmt: skip
    assert first.keys() == second.keys() and first == second


def write_run(path: Path, rows: list[dict], wrong_every: int, extra: dict | None = None) -> set:
    """The gold reply for most rows, a wrong one every ``wrong_every``; the wrong ids."""
    wrong = set()
    with path.open("w", encoding="utf-8") as handle:
        for k, row in enumerate(rows):
            reply = row["response"]
            if k % wrong_every == 0:
                reply, _ = "no idea", wrong.add(str(next(iter(row.values()))))
            handle.write(
                json.dumps({**row, **(extra or {}), "model": "m", "response": reply}) + "\n"
            )
    return wrong


def test_predictions_break_down_as_score_reports_and_show_the_wrong_answers(
    sample_project, tmp_path, capsys
):
    folder = sample_project / "published" / "mmiu"
    config = "jigsaw_puzzle_solving"
    run = tmp_path / "run.jsonl"
    wrong = write_run(run, SCORERS.get("mmiu").reference_predictions(folder, config), 3)
    out = tmp_path / "report"
    # the config is found from the ids the replies name
    assert main(["report", str(folder), "--config", config, "--predictions", str(run),
                 "--out", str(out), "--wrong", "50"]) == 0  # fmt: skip
    page = read_page((out / "index.html").read_text(encoding="utf-8"))
    shown = [c for c in page.cards if "wrong" in c.classes.split()]
    assert {c.sample_id for c in shown} == wrong
    assert all(c.reply.strip() == "reply: no idea" and c.images > 0 for c in shown)
    capsys.readouterr()
    assert main(["score", str(folder), "--config", config, "--predictions", str(run)]) == 0
    headline = json.loads(capsys.readouterr().out)["overall"]["accuracy"]
    n = len(SCORERS.get("mmiu").reference_predictions(folder, config))
    assert f"{headline:.4f}" in page.text
    assert f"replies judged right: {n - len(wrong)} of {n}" in page.text
    assert len(wrong) < n


def test_in_context_runs_break_down_by_shot_count(sample_project, tmp_path):
    folder = sample_project / "published" / "vlicl"
    rows = SCORERS.get("vlicl").reference_predictions(folder, "clevr")
    run = tmp_path / "run.jsonl"
    write_run(run, rows, 2, {"n_shot": 0})
    with run.open("a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps({**row, "n_shot": 4, "model": "m"}) + "\n")
    out = tmp_path / "report"
    assert main(["report", str(folder), "--config", "clevr", "--predictions",
                 f"clevr={run}", "--out", str(out)]) == 0  # fmt: skip
    text = read_page((out / "index.html").read_text(encoding="utf-8")).text
    half = len(rows) - len(range(0, len(rows), 2))
    assert f"clevr · 0-shot{half}{len(rows)}" in text.replace("\n", "")
    assert f"clevr · 4-shot{len(rows)}{len(rows)}1.000" in text.replace("\n", "")


def test_bad_input_is_a_clear_error_and_nothing_is_written(sample_project, tmp_path, capsys):
    folder = sample_project / "published" / "mmiu"
    out = tmp_path / "report"
    stray = tmp_path / "stray.jsonl"
    stray.write_text('{"id": "nobody", "response": "A"}\n', encoding="utf-8")
    assert main(["report", str(folder), "--predictions", str(stray), "--out", str(out)]) == 2
    assert "cannot tell which config" in capsys.readouterr().err and not out.exists()
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "response": "A"}\n{not json\n', encoding="utf-8")
    assert main(["report", str(folder), "--predictions", f"jigsaw_puzzle_solving={broken}",
                 "--out", str(out)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "line 2 is not JSON" in err and str(broken) in err and not out.exists()
    assert main(["report", str(folder), "--config", "nope", "--out", str(out)]) == 2
    assert "nope" in capsys.readouterr().err
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["report", str(folder), "--config", "jigsaw_puzzle_solving",
                 "--out", str(mine)]) == 2  # fmt: skip
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_curated_folder_reports_with_its_source_familys_columns(sample_project, tmp_path):
    folder = sample_project / "published" / "curated" / "mmiu_jigsaw"
    out = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(out)]) == 0
    page = read_page((out / "index.html").read_text(encoding="utf-8"))
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    [(config, (split, rows))] = page.summary.items()
    assert rows == info["configs"][config][split]["num_examples"]
    published = published_rows(folder, config, split, "id", "answer")
    assert page.cards and all(published[c.sample_id] == c.gold for c in page.cards)
