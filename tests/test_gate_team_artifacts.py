"""`gate --artifact TREE=ZIP`: the zip a team uploads (`wxt zip`, `web-ext build`) is what the
gate judges, not only its own pack. Its files must be the tree's, byte for byte (the folder
entries such tools write hold nothing and are allowed); the engines run on its bytes, so a zip
built from other sources fails parity too; the gate writes no zip of its own for that tree."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from support.gate_copy import Copy, call_in

pytestmark = pytest.mark.gate

HEADLESS = ("python", "quickjs-chrome")


def team_zip(tree, path, change=None):
    """A zip as a team's tool writes it: folder entries, today's times, its own order."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(tree.rglob("*"), reverse=True):
            name = file.relative_to(tree).as_posix() + ("/" if file.is_dir() else "")
            data = b"" if file.is_dir() else file.read_bytes()
            archive.writestr(name, change(name, data) if change else data)
    return path


def test_the_teams_zip_of_the_tree_passes_and_is_what_the_gate_records(tmp_path):
    copy = Copy(tmp_path, engines=HEADLESS)
    uploaded = team_zip(copy.tree("chrome"), tmp_path / "upload-chrome.zip")
    outcome = copy.gate("--artifact", f"chrome={uploaded}", only="artifacts")
    assert outcome.code == 0, outcome.out + outcome.err
    recorded = outcome.json["gate"]["artifacts"]["chrome"]
    assert recorded["sha256"] == hashlib.sha256(uploaded.read_bytes()).hexdigest()
    assert recorded["path"] == "upload-chrome.zip"
    assert recorded["files"] == sum(1 for f in copy.tree("chrome").rglob("*") if f.is_file())
    assert [name.rsplit("-", 1)[-1] for name in copy.dist()] == ["firefox.zip"]  # its own pack only where none was given


def test_a_teams_zip_that_is_not_the_tree_fails_artifacts_and_the_engines_run_its_bytes(tmp_path):
    copy = Copy(tmp_path, engines=HEADLESS)

    def stale(name, data):  # built before a fix: the allowlist rule is not in the uploaded parser
        return data.replace(b"if (!allowed.has(name)) return", b"if (false) return") if name.endswith("parser.js") else data

    uploaded = team_zip(copy.tree("chrome"), tmp_path / "upload-chrome.zip", stale)
    (copy.tree("chrome") / "extra.txt").write_text("not uploaded")
    outcome = copy.gate("--artifact", f"chrome={uploaded}", only="artifacts,parity")
    assert outcome.failing() == {"artifacts", "parity"}, outcome.out + outcome.err
    problems = outcome.problems("artifacts")
    assert "upload-chrome.zip: extra.txt: in the tree, not in the artifact" in problems
    assert any(p.startswith("upload-chrome.zip: ") and p.endswith("parser.js: its bytes differ from the tree's")
               for p in problems), problems
    assert "parse-not-allowed" in outcome.reason("parity") + "".join(outcome.problems("parity")), outcome.out


@pytest.mark.parametrize("value, message", [
    ("chrome", "--artifact chrome: expected TREE=ZIP"),
    ("edge=x.zip", "--artifact edge=x.zip: no tree 'edge' in [tool.extparity.trees] (the trees are chrome, firefox)"),
    ("chrome=missing.zip", "--artifact chrome=missing.zip: missing.zip: no such file"),
])
def test_a_bad_artifact_option_is_one_line_before_anything_runs(tmp_path, value, message):
    copy = Copy(tmp_path, engines=HEADLESS)
    code, out, err = call_in(copy, "gate", "--artifact", value)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_a_file_that_is_not_a_zip_fails_artifacts_in_one_line(tmp_path):
    copy = Copy(tmp_path, engines=HEADLESS)
    (tmp_path / "upload.zip").write_text("not a zip")
    outcome = copy.gate("--artifact", f"chrome={tmp_path / 'upload.zip'}", only="artifacts")
    assert outcome.failing() == {"artifacts"}
    assert outcome.reason("artifacts").startswith(f"chrome: cannot read the artifact {tmp_path / 'upload.zip'}: not a zip")
