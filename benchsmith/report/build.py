"""Gather a dataset's report and write it: ``OUT/index.html`` (self-contained: every picture
inline, no script, nothing fetched), ``OUT/charts/*.png`` and ``OUT/contact/<config>.png``.

The page holds no date or path of the machine it was made on beyond the dataset folder given,
so the same folder and predictions give the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import log
from benchsmith.family.report_table import ReportTable
from benchsmith.report.items import ConfigItems, gold_letter, gold_text, not_embedded, read_config
from benchsmith.report.predictions import RunBreakdown, break_down, read_predictions

IMAGES_PER_CARD = 4
QUESTION_CHARS = 600
PROVENANCE_KEYS = ("family", "version", "benchsmith_version", "code_revision", "params_hash",
                   "plan_fingerprint", "build_fingerprint", "mode", "seed", "scannet_images",
                   "jpeg_engine", "resize_engine")  # fmt: skip


@dataclass(frozen=True)
class ReportRequest:
    """What to report on: the folder, the family that evaluates it, its sample configs and
    splits, the family's checks and the predictions files (``config`` None: find it)."""

    dataset_dir: Path
    info: dict[str, Any]
    title: str
    family: Any
    configs: tuple[tuple[str, str], ...]
    checks: tuple[ReportTable, ...] = ()
    predictions: tuple[tuple[str | None, Path], ...] = ()
    items: int = 12
    wrong: int = 12


@dataclass
class ReportSummary:
    out: Path
    configs: int = 0
    items: int = 0
    runs: list[RunBreakdown] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)


def anchor(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name)


def card(item: Any, images: list[bytes], choices: list[str] | None, gold: str) -> dict[str, Any]:
    from benchsmith.report.thumbnails import data_uri, thumbnail

    letter = gold_letter(gold, choices)
    question = item.question if len(item.question) <= QUESTION_CHARS else (
        item.question[:QUESTION_CHARS] + " …")  # fmt: skip
    # an Item of the spread knows what it lacks; a wrong answer's row is read here
    missing = item.not_embedded if hasattr(item, "not_embedded") else not_embedded(item)
    return {"sample_id": item.sample_id, "category": getattr(item, "category", None) or
            getattr(item, "subtask", ""), "not_embedded": missing,
            "question": question, "gold": gold,
            "images": [data_uri(thumbnail(i), "image/jpeg") for i in images[:IMAGES_PER_CARD]],
            "more_images": max(0, len(images) - IMAGES_PER_CARD),
            "choices": [{"text": c, "gold": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[k] == letter}
                        for k, c in enumerate(choices or [])]}  # fmt: skip


def config_section(facts: ConfigItems, files: dict[str, bytes]) -> dict[str, Any]:
    from benchsmith.report.plots import count_chart
    from benchsmith.report.thumbnails import contact_sheet, data_uri

    charts = []
    name = anchor(facts.config)
    for kind, counts, title in (
        ("letters", facts.letters, "gold answer letters"),
        ("categories", facts.categories, "items per category"),
        ("answers", facts.answers, "gold answers (most frequent)"),
    ):
        if not counts or (kind == "categories" and len(counts) < 2):
            continue
        if kind == "answers" and sum(facts.letters.values()) == facts.rows:
            continue  # the gold answers are the letters charted above
        ordered = sorted(
            counts.items(), key=lambda kv: kv[0] if kind == "letters" else (-kv[1], kv[0])
        )
        png = count_chart(f"{facts.config}: {title}", ordered)
        files[f"charts/{name}-{kind}.png"] = png
        charts.append({"alt": f"{facts.config} {title}", "src": data_uri(png, "image/png")})
    files[f"contact/{name}.png"] = contact_sheet(
        [(item.sample_id, item.images[0] if item.images else None) for item in facts.items]
    )
    return {"name": facts.config, "anchor": name, "split": facts.split, "rows": facts.rows,
            "provenance_rows": facts.provenance_rows, "category_count": len(facts.categories),
            "charts": charts,
            "cards": [card(i, i.images, i.choices, i.gold) for i in facts.items]}  # fmt: skip


def check_section(table: ReportTable, files: dict[str, bytes]) -> dict[str, Any]:
    from benchsmith.report.plots import rate_chart
    from benchsmith.report.thumbnails import data_uri

    chart = None
    if table.intervals:
        png = rate_chart(table.title, [(r.label, r.rate, r.low, r.high, r.reference)
                                       for r in table.intervals], table.reference_label,
                         interval=table.interval_label)  # fmt: skip
        files[f"charts/check-{anchor(table.title)[:60]}.png"] = png
        chart = data_uri(png, "image/png")
    return {"title": table.title, "header": table.header, "rows": table.rows,
            "note": table.note, "chart": chart}  # fmt: skip


def provenance_rows(info: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [(k, str(info[k])) for k in PROVENANCE_KEYS if info.get(k) not in (None, "")]
    for key in ("roots", "libraries"):
        for name, value in sorted((info.get(key) or {}).items()):
            rows.append((f"{key}.{name}", str(value)))
    if isinstance(info.get("rows_built_by"), list):
        rows.append(("rows built by", ", ".join(map(str, info["rows_built_by"]))))
    return rows


def gather(request: ReportRequest) -> tuple[dict[str, Any], ReportSummary]:
    """Everything the page shows, and the PNG files beside it."""
    from benchsmith import __version__
    from benchsmith.scoring import SCORERS

    summary = ReportSummary(Path())
    columns = request.family.columns(request.info)
    runs = [(config, path, read_predictions(path)) for config, path in request.predictions]
    facts = {}
    for config, split in request.configs:
        log(f"report: reading {config}/{split}")
        facts[config] = read_config(request.dataset_dir, config, split, columns, request.items)
    context = {
        "title": request.title, "dataset_dir": str(request.dataset_dir),
        "version": request.info.get("version", "?"),
        "built_by": request.info.get("benchsmith_version", "?"), "reported_by": __version__,
        "provenance": provenance_rows(request.info),
        "checks": [check_section(t, summary.files) for t in request.checks],
        "configs": [config_section(f, summary.files) for f in facts.values()],
        "runs": [],
    }  # fmt: skip
    summary.configs, summary.items = len(facts), sum(len(f.items) for f in facts.values())
    if request.predictions:
        scorer = SCORERS.get(request.family.name)
        key_field = request.family.request_row_key or columns.id
        for config, path, predictions in runs:
            run = run_section(request, scorer, key_field, config, path, predictions,
                              summary.files)  # fmt: skip
            context["runs"].append(run)
    return context, summary


def rows_of(request: ReportRequest, config: str, split: str) -> dict[str, Any]:
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(request.dataset_dir, config, split, request.family.columns(request.info))
    return {s.sample_id: s for s in view.iter_samples(with_images=False)}


def which_config(request: ReportRequest, predictions: list[dict], key_field: str, path: Path,
                 samples: dict[str, dict[str, Any]]) -> str:  # fmt: skip
    """The config whose ids the replies name most (a tie is an error asking CONFIG=FILE)."""
    named = {str(p.get(key_field)) for p in predictions}
    overlap = sorted(((len(named & set(samples[c])), c) for c, _ in request.configs), reverse=True)
    if not overlap or overlap[0][0] == 0 or (len(overlap) > 1 and overlap[1][0] == overlap[0][0]):
        raise BenchsmithError("cannot tell which config these predictions answer",
                              path=path, fix="name it: --predictions CONFIG=FILE")  # fmt: skip
    return overlap[0][1]


def run_section(request: ReportRequest, scorer: Any, key_field: str, config: str | None,
                path: Path, predictions: list[dict[str, Any]],
                files: dict[str, bytes]) -> dict[str, Any]:  # fmt: skip
    from benchsmith.hf.dataset_view import DatasetView
    from benchsmith.report.plots import rate_chart
    from benchsmith.report.thumbnails import data_uri

    splits = dict(request.configs)
    samples = {c: rows_of(request, c, s) for c, s in request.configs if config in (None, c)}
    if config is not None and config not in splits:
        raise BenchsmithError(f"config {config!r} is not a sample config of this folder",
                              path=request.dataset_dir,
                              fix=f"one of: {', '.join(splits)}")  # fmt: skip
    config = config or which_config(request, predictions, key_field, path, samples)
    rows = samples[config]
    run = break_down(path, config, predictions, {i: s.row for i, s in rows.items()},
                     {i: s.subtask for i, s in rows.items()}, key_field, scorer,
                     request.dataset_dir, request.wrong)  # fmt: skip
    log(f"report: {path.name} on {config}: {run.overall.correct}/{run.overall.n} right")
    chart = None
    if run.categories:
        png = rate_chart(
            f"{config}: accuracy per category ({run.model})",
            [(r.label, r.accuracy, r.low, r.high, None) for r in run.categories],
        )
        files[f"charts/predictions-{anchor(config)}-{anchor(path.stem)}.png"] = png
        chart = data_uri(png, "image/png")
    wanted = {w.sample_id for w in run.wrong}
    view = DatasetView(request.dataset_dir, config, splits[config],
                       request.family.columns(request.info))  # fmt: skip
    shown = {s.sample_id: s for s in view.iter_samples(only=wanted)} if wanted else {}
    wrong_cards = []
    for w in run.wrong:
        sample = shown[w.sample_id]
        item = card(sample, list(sample.images), sample.choices, gold_text(sample.answer))
        key = ", ".join(f"{k}={v}" for k, v in w.key.items() if str(v) != w.sample_id)
        wrong_cards.append({**item, "key": key, "response": w.response[:400]})
    return {"config": config, "model": run.model, "path": str(path),
            "headline_name": run.headline_name,
            "headline": "n/a" if run.headline is None else f"{run.headline:.4f}",
            "overall": run.overall, "categories": run.categories, "chart": chart,
            "wrong": wrong_cards, "missing": run.missing, "unknown": run.unknown,
            "breakdown": run}  # fmt: skip


def write_report(request: ReportRequest, out: Path) -> ReportSummary:
    """Render the page and write the folder atomically (only over a report benchsmith wrote)."""
    import jinja2

    from benchsmith.core.atomic import atomic_directory

    context, summary = gather(request)
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("benchsmith.report", "templates"),
        autoescape=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
    )  # fmt: skip
    page = environment.get_template("report.html.j2").render(**context)
    summary.runs = [r["breakdown"] for r in context["runs"]]
    summary.out = out
    with atomic_directory(out, inputs=[request.dataset_dir]) as staging:
        (staging / "index.html").write_text(page, encoding="utf-8")
        for name, data in sorted(summary.files.items()):
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return summary
