"""The CJK font the sample exam pages and figures are drawn with, found and fingerprinted.

Chinese text needs a CJK font, which Pillow does not ship. It is looked up, in order, at
``$BENCHSMITH_CJK_FONT``, at the Debian paths of WenQuanYi Zen Hei (``fonts-wqy-zenhei``, what
``.ci/run`` installs) and Noto CJK (``fonts-noto-cjk``), then through ``fc-list :lang=zh``. Its
sha256 goes into what is drawn with it, so a page rendered with another font is known to be
another page.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_file

KNOWN = (
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
)
FIX = "install one: apt-get install fonts-wqy-zenhei (or set BENCHSMITH_CJK_FONT to a .ttf/.ttc)"


@dataclass(frozen=True)
class CjkFont:
    path: Path
    sha256: str

    @property
    def name(self) -> str:
        return self.path.name

    def load(self, size: int):
        from PIL import ImageFont

        return ImageFont.truetype(str(self.path), size)


def _from_fontconfig() -> str | None:
    if not shutil.which("fc-list"):
        return None
    listed = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True,
                            check=False).stdout  # fmt: skip
    files = sorted(line.split(":")[0].strip() for line in listed.splitlines() if line.strip())
    return files[0] if files else None


@cache
def cjk_font() -> CjkFont:
    configured = os.environ.get("BENCHSMITH_CJK_FONT")
    if configured:
        if not Path(configured).is_file():
            raise BenchsmithError("BENCHSMITH_CJK_FONT names no file", path=configured, fix=FIX)
        path = configured
    else:
        path = next((p for p in KNOWN if Path(p).is_file()), None) or _from_fontconfig()
    if not path:
        raise BenchsmithError("no CJK font found for the sample exam pages", fix=FIX)
    return CjkFont(Path(path), sha256_file(path))
