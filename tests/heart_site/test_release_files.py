"""The release's files agree: the version in pyproject.toml, CITATION.cff and the changelog
(docs/releasing.md)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_the_citation_file_names_the_projects_version_and_the_heart_paper():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0" and citation["version"] == version
    assert citation["title"] and citation["authors"] and citation["license"] == "MIT"
    paper = citation["references"][0]
    assert paper["identifiers"][0]["value"] == "arXiv:2601.19922"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.search(rf"^## \[{re.escape(version)}\] - (\S+)$", changelog, re.M)
    assert released and released.group(1) == str(citation["date-released"])
