"""Tesseract 5 through ``pytesseract``: an OCR engine for machines that have the program.

Tesseract is a system program, not a wheel (Debian: ``tesseract-ocr`` and
``tesseract-ocr-chi-sim``), so it is an alternative to the default engine, chosen with
``--backend tesseract`` or ``multi.ocr.backend: tesseract``. Its result depends on the program's
version and on the language data it loads, so :meth:`model_files` names the ``.traineddata``
file of every language, found where the program itself looks (``tesseract --list-langs``).
"""

from __future__ import annotations

import os
import re
import subprocess
from functools import cache
from pathlib import Path

from PIL import Image

from benchsmith.images.ocr import OcrBackend, OcrResult, OcrUnavailable, OcrWord

NOT_INSTALLED_FIX = (
    "install it (Debian: apt-get install tesseract-ocr tesseract-ocr-chi-sim), or use the "
    "default engine: --backend rapidocr"
)


@cache
def _listed_languages(program: str) -> tuple[Path, tuple[str, ...]]:
    """(tessdata folder, installed languages) as ``tesseract --list-langs`` prints them."""
    try:
        listed = subprocess.run([program, "--list-langs"], capture_output=True, text=True,
                                check=True, timeout=60)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise OcrUnavailable("the tesseract program is not installed or does not run",
                             path=program, fix=NOT_INSTALLED_FIX) from exc  # fmt: skip
    lines = (listed.stdout + listed.stderr).splitlines()
    folder = next((re.search(r'"(.+?)"', line) for line in lines if "languages in" in line), None)
    if folder is None:
        raise OcrUnavailable("tesseract --list-langs did not say where its language data is",
                             path=program, fix=NOT_INSTALLED_FIX)  # fmt: skip
    languages = tuple(line.strip() for line in lines[1:] if line.strip())
    return Path(folder.group(1)), languages


class TesseractBackend(OcrBackend):
    name = "tesseract"
    PAGE_MODE = 6  # one uniform block of text: an exam page column

    def _program(self) -> str:
        import pytesseract

        return pytesseract.pytesseract.tesseract_cmd

    def version(self) -> str:
        import pytesseract

        try:
            return str(pytesseract.get_tesseract_version())
        except (pytesseract.TesseractNotFoundError, OSError) as exc:
            raise OcrUnavailable("the tesseract program is not installed",
                                 fix=NOT_INSTALLED_FIX) from exc  # fmt: skip

    def model_files(self) -> list[Path]:
        self.version()
        folder, installed = _listed_languages(self._program())
        missing = [lang for lang in self.languages if lang not in installed]
        if missing:
            raise OcrUnavailable(
                f"tesseract has no language data for {missing} (installed: {sorted(installed)})",
                fix="install it: apt-get install "
                + " ".join(f"tesseract-ocr-{m.replace('_', '-')}" for m in missing),
            )
        return [folder / f"{lang}.traineddata" for lang in self.languages]

    def read(self, image: Image.Image) -> OcrResult:
        import pytesseract

        identity = self.identity()  # checks the program and its language data first
        # Tesseract's own OpenMP threads make it slower on a page this size and compete with
        # worker processes: one thread each, unless the user set OMP_THREAD_LIMIT.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        data = pytesseract.image_to_data(
            image.convert("RGB"),
            lang="+".join(self.languages),
            config=f"--psm {self.PAGE_MODE}",
            output_type=pytesseract.Output.DICT,
        )
        lines: dict[tuple[int, int, int], int] = {}
        words = []
        for k, text in enumerate(data["text"]):
            if not str(text).strip() or float(data["conf"][k]) < 0:
                continue
            key = (data["block_num"][k], data["par_num"][k], data["line_num"][k])
            line = lines.setdefault(key, len(lines))
            left, top = int(data["left"][k]), int(data["top"][k])
            box = (left, top, left + int(data["width"][k]), top + int(data["height"][k]))
            words.append(OcrWord(str(text), box, float(data["conf"][k]) / 100.0, line))
        return OcrResult(identity, words)
