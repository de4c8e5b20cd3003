"""Figures for the documentation, written by the script that measures them: a Markdown table in
``docs/figures/<name>.md`` headed with the script, the date and the machine, and for the headline
ones a shorter table in the README between ``<!-- figures: name -->`` and ``<!-- /figures -->``.
Never edited by hand: a figure in the docs is always one some run printed."""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"


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
    name: str,
    script: str,
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    note: str = "",
    more: Sequence[tuple[str, Sequence[str], Sequence[Sequence[object]]]] = (),
) -> Path:
    """Writes ``docs/figures/<name>.md`` and returns its path; ``more``: further tables of the same
    run, each (note, header, rows)."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.md"
    lines = _table(script, header, rows, note)
    for more_note, more_header, more_rows in more:
        lines += ["", more_note, "", *_markdown(more_header, more_rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_readme_table(
    name: str, script: str, header: Sequence[str], rows: Sequence[Sequence[object]], note: str = ""
) -> Path:
    """Replaces the README's block ``<!-- figures: name -->`` … ``<!-- /figures -->`` with the table."""
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    start, end = f"<!-- figures: {name} -->", "<!-- /figures -->"
    before, found, rest = text.partition(start)
    if not found or end not in rest:
        raise ValueError(f"README.md has no block {start} … {end}")
    after = rest.split(end, 1)[1]
    block = "\n".join([start, *_table(script, header, rows, note), end])
    path.write_text(before + block + after, encoding="utf-8")
    return path


def _table(script: str, header: Sequence[str], rows: Sequence[Sequence[object]], note: str) -> list[str]:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"Measured by `{script}` on {now}; machine: {machine()}.",
        *(["", note] if note else []),
        "",
        *_markdown(header, rows),
    ]


def _markdown(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---" for _ in header) + " |",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]
