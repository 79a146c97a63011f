"""Run a command as on a machine that has Python and git and nothing else.

The README promises that its two commands work on such a machine: no system fonts, no
``tesseract``. A test machine may have both (a developer's laptop, a CI image), so the command
runs in a mount namespace of its own (``unshare --mount``) where every system font folder is an
empty tmpfs and every ``tesseract`` on ``PATH`` (and its language data) is hidden, and it first
checks that they really are gone: no CJK font for fontconfig, no ``tesseract`` that runs.

Where mount namespaces are not allowed (an unprivileged container without user namespaces), a
machine that has neither anyway is as bare as the namespace would make it; on any other, the
command runs as it is and :func:`bare_command` says why. CI (``CI=true``) accepts only the first
two, so the promise is proved where it matters.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

HIDDEN = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    os.path.expanduser("~/.fonts"),
    os.path.expanduser("~/.local/share/fonts"),
    "/usr/share/tesseract-ocr",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
)

SCRIPT = r"""
set -e
for folder in $BARE_HIDE; do
  if [ -d "$folder" ]; then mount -t tmpfs -o size=1m bare "$folder"; fi
done
old_ifs=$IFS; IFS=:
for folder in $PATH; do
  if [ -e "$folder/tesseract" ]; then mount --bind /dev/null "$folder/tesseract"; fi
done
IFS=$old_ifs
if tesseract --version >/dev/null 2>&1; then echo "bare machine: tesseract still runs" >&2; exit 97; fi
if command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh 2>/dev/null)" ]; then
  echo "bare machine: a CJK font is still visible" >&2; exit 97
fi
exec "$@"
"""


def _unshare_prefix() -> list[str]:
    flags = ["--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        flags.append("--map-root-user")
    return ["unshare", *flags]


@functools.cache
def namespace_refusal() -> str | None:
    """None when a mount namespace can be made here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare program"
    probe = subprocess.run([*_unshare_prefix(), "sh", "-c", "mount -t tmpfs bare /mnt"],
                           capture_output=True, text=True, timeout=30)  # fmt: skip
    if probe.returncode != 0:
        return f"unshare --mount refused: {probe.stderr.strip()[:200]}"
    return None


CJK_FONT_NAMES = re.compile(r"cjk|wqy|wenquanyi|hei|song|ming|kai|han|droidsansfallback", re.I)


def visible_system_extras() -> list[str]:
    """What this machine has beyond Python and git that the build could lean on: a runnable
    ``tesseract``, a CJK font fontconfig knows or a CJK-looking font file in the font folders."""
    found = []
    tesseract = shutil.which("tesseract")
    if tesseract and subprocess.run([tesseract, "--version"], capture_output=True,
                                    timeout=30).returncode == 0:  # fmt: skip
        found.append(tesseract)
    if shutil.which("fc-list"):
        listed = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True, text=True,
                                timeout=60).stdout  # fmt: skip
        found += [line.split(":")[0] for line in listed.splitlines() if line.strip()]
    for folder in HIDDEN[:4]:
        if os.path.isdir(folder):
            for root, _dirs, files in os.walk(folder):
                found += [os.path.join(root, f) for f in files if CJK_FONT_NAMES.search(f)]
    return sorted(set(found))


def bare_command(argv: list[str]) -> tuple[list[str], dict[str, str], str | None]:
    """(command, extra environment, why not bare): ``argv`` wrapped to run with system fonts
    and tesseract hidden, or ``argv`` itself with the reason it could not be wrapped. Where no
    namespace can be made but the machine has none of them anyway, the command is as bare as
    wrapped; CI (``CI=true``) accepts nothing else."""
    refusal = namespace_refusal()
    if refusal is not None:
        extras = visible_system_extras()
        if not extras:
            return argv, {}, None
        if os.environ.get("CI") == "true":
            raise AssertionError(f"CI must prove the bare-machine build, but {refusal} and this "
                                 f"machine has {extras[:5]}")  # fmt: skip
        return argv, {}, refusal
    return (
        [*_unshare_prefix(), "sh", "-c", SCRIPT, "bare", *argv],
        {"BARE_HIDE": " ".join(HIDDEN)},
        None,
    )
