"""The documentation: the site builds with warnings as errors, the README stays a five-minute read,
and every figure file comes from the script that measured it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def strict_build(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """The site built once with warnings as errors (one build: 0.8 s of the inner loop each), and where."""
    if importlib.util.find_spec("mkdocs") is None:  # run as `python -m mkdocs`: no command on PATH needed
        pytest.fail("mkdocs is not installed: scripts/setup installs it (requirements-dev.txt)")
    site = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    return done, site


def test_the_site_builds_with_warnings_as_errors(strict_build):
    done, site = strict_build
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (site / "reference" / "parameters" / "index.html").is_file()
    benchmarks = (site / "benchmarks" / "index.html").read_text()
    assert "Measured by <code>benchmarks/core.py</code>" in benchmarks  # the included figure file


def test_the_readme_is_short_and_its_links_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 80
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        assert (ROOT / target).exists(), target


def test_every_figure_file_says_which_script_measured_it_when_and_where():
    figures = sorted((ROOT / "docs" / "figures").glob("*.md"))
    assert figures
    for path in figures:
        first = path.read_text().splitlines()[0]
        assert re.match(r"Measured by `[\w/.]+\.py` on \d{4}-\d\d-\d\d \d\d:\d\d UTC; machine: .+ cores", first), first


def test_every_link_of_the_built_site_lands_and_every_table_renders(strict_build):
    """What --strict does not catch: the site root and the logo's link (a home page), links to
    anchors that no heading has, and tables left as raw text (an unescaped | in a cell)."""
    done, site = strict_build
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (site / "index.html").is_file(), "no home page: the site root and every page's logo link 404"
    broken, raw_tables = [], []
    for page in site.rglob("*.html"):
        if page.is_relative_to(site / "assets") or page.name == "404.html":
            continue
        html = page.read_text()
        for target in re.findall(r'href="([^"]+)"', html):
            if re.match(r"^[a-z]+:|^//", target):
                continue  # another site, mailto:
            path, _, anchor = target.partition("#")
            landing = (page.parent / path).resolve() if path else page
            if landing.is_dir():
                landing = landing / "index.html"
            if not landing.is_file():
                broken.append(f"{page.relative_to(site)} -> {target}")
            elif anchor and f'id="{anchor}"' not in landing.read_text():
                broken.append(f"{page.relative_to(site)} -> {target} (no such anchor)")
        raw_tables += [f"{page.relative_to(site)}: {m[:60]}" for m in re.findall(r"<p>\|[^<]*\|", html)]
    assert not broken, broken
    assert not raw_tables, raw_tables
