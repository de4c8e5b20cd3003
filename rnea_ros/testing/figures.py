"""Figures for the documentation, written by the script that measures them: a Markdown table in
``docs/figures/<name>.md`` headed with the script, the date and the machine. Never edited by hand:
the docs include these files, so a figure in the docs is always one some run printed."""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Sequence
from pathlib import Path

FIGURES = Path(__file__).resolve().parents[2] / "docs" / "figures"


def machine() -> str:
    """The processor, its cores and the Python that ran the measurement."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def write_table(
    name: str, script: str, header: Sequence[str], rows: Sequence[Sequence[object]], note: str = ""
) -> Path:
    """Writes ``docs/figures/<name>.md`` and returns its path."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Measured by `{script}` on {now}; machine: {machine()}.",
        *(["", note] if note else []),
        "",
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
