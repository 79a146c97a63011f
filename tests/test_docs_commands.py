"""Every ``benchsmith`` command the README and the docs show is a command the CLI accepts, and
the ones the sample build can run are run, in the order a page gives them.

Commands run in a folder that links the build's ``published/`` and ``data/`` (read only) and
takes what the commands write. A page's ``bash`` blocks are read as a reader would type them (continuation lines joined,
comments dropped, ``[optional parts]`` left out). Each command must parse with the real
parser: a renamed flag or verb in the code fails here before a reader meets it. The commands
that need only the sample build (audit one row, predict against a model server, score what was
predicted, export to a harness, report on it) run in a copy of it, with the model server a local one on
127.0.0.1 answering "A" (and a grey square to a request for an image); each must exit 0. The rest are named with the reason they do not run
here and the test that runs the same step (a build step is run by the pipeline, ``dvc repro``,
in ``test_fresh_checkout.py``), so a new command in the docs must be placed in one list or the
other.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# commands the sample build runs here (first word after `benchsmith`, and what they read)
RUN_HERE = ("audit published/", "predict published/", "score published/vlicl --config clevr --predictions preds/qwen2-vl.jsonl",
            "score published/vlicl --config open_t2i_mi --predictions preds/gen.jsonl",
            "export ", "report published/")  # fmt: skip
# what does not run here, and why (each matched by its start)
NOT_HERE = {
    "audit published/mmneedle --root": "points at the reader's own moved COCO copy",
    "audit published/mmneedle": "a whole-folder audit: tests/publish/test_audit_mutations.py",
    "curate ": "needs judge model runs; tests/commands/test_curate.py runs curate with its own",
    "build ": "a build step: the pipeline runs it (`dvc repro`, tests/test_fresh_checkout.py)",
    "publish ": "a build step: the pipeline runs it (`dvc repro`, tests/test_fresh_checkout.py)",
    "source ": "a source step: the pipeline runs it; `source fetch` downloads (tests/sources)",
    "push ": "needs a Hub; tests/publish/test_push.py pushes to a local one",
    "score published/": "reads the reader's own predictions file (score runs above on predict's)",
}


def doc_commands() -> list[tuple[str, str]]:
    """(page, command) for every ``benchsmith`` command in a bash block, in page order."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:bash|sh|console)\n(.*?)```", text, re.S):
            joined = re.sub(r"\\\n\s*", " ", block)
            for line in joined.splitlines():
                line = re.sub(r"\s+#.*$", "", line).strip()
                for part in line.split("&&"):
                    part = re.sub(r"\s*\[[^\]]*\]", "", part).strip()
                    if part.startswith("benchsmith "):
                        found.append((page.relative_to(ROOT).as_posix(), part))
    return found


def runs_here(command: str) -> bool:
    rest = command.removeprefix("benchsmith ")
    if rest.startswith("audit published/mmneedle --root"):
        return False
    if rest.startswith("audit ") and "--id" not in rest:
        return False
    return rest.startswith(RUN_HERE)


def test_the_docs_show_commands_and_each_is_placed():
    commands = doc_commands()
    assert len(commands) > 25 and any(p == "README.md" for p, _ in commands)
    for page, command in commands:
        rest = command.removeprefix("benchsmith ")
        assert runs_here(command) or rest.startswith(tuple(NOT_HERE)), (page, command)


@pytest.mark.parametrize(("page", "command"), doc_commands())
def test_every_command_in_the_docs_parses(page, command):
    from benchsmith.cli import build_parser

    argv = shlex.split(command)[1:]
    try:
        build_parser(argv).parse_args(argv)
    except SystemExit as exc:  # argparse's exit on an unknown flag or verb
        pytest.fail(f"{page}: `{command}` does not parse (exit {exc.code})")


def test_the_commands_the_sample_build_can_run_run(sample_project, tmp_path, monkeypatch):
    import io

    from chat_server import ChatServer, ImageReply, Reply
    from PIL import Image

    from benchsmith.cli import main

    project = tmp_path / "project"
    project.mkdir()
    for folder in ("published", "data"):  # read, never written: the build's own, linked
        (project / folder).symlink_to(sample_project / folder, target_is_directory=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    ran = []
    grey = io.BytesIO()
    Image.new("RGB", (16, 16), (128, 128, 128)).save(grey, format="PNG")

    def answer(body: dict):
        return ImageReply(grey.getvalue()) if "modalities" in body else Reply("A")

    with ChatServer(reply=answer) as server:
        for page, command in doc_commands():
            if not runs_here(command):
                continue
            argv = [server.base_url if re.fullmatch(r"http://localhost:80\d\d/v1", w) else w
                    for w in shlex.split(command)[1:]]  # fmt: skip
            assert main(argv) == 0, (page, command)
            ran.append(command)
    assert {c.split()[1] for c in ran} == {"audit", "predict", "score", "export", "report"}
    assert (project / "preds" / "qwen2-vl.jsonl").is_file()
    assert len(list((project / "preds" / "gen-images").glob("*.png"))) == 1  # one grey square
    assert (project / "reports" / "mmiu" / "index.html").is_file()
    assert "Wrong answers" in (project / "reports" / "vlicl-qwen" / "index.html").read_text()
    assert (project / "mmiu.tsv").is_file() and any((project / "lmms_tasks").iterdir())
