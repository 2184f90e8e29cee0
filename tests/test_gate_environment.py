"""The gate's ``environment`` check: code that reads the locale, the time zone, the date, the user
agent or ``navigator.webdriver`` passes every other check (each engine agrees with itself under
the gate's one environment) and fails this one, with a line naming the environment, the engine
and the case.

Each plant is a throwaway copy of the project (``support.gate_copy.Copy``) whose parser keeps its
allowlist rule only while the environment looks like the gate's. The purity check refuses these
reads statically, so each copy declares the identifier it uses as a purity exception (data in the
config, as a real extension with a good reason would): the point is what slips past purity.
"""

from __future__ import annotations

import pytest

from extparity.project.config import load_project
from extparity.project.environments import Environment, expand

from support import PARSER
from support.gate_copy import Copy, bundled_gate, call_in, skip_allowlist_when

# Plant -> (the condition that keeps the allowlist rule, the purity exceptions it needs, the engines
# whose verdict must change under the default environment "elsewhere"). Engine names as in the
# small copies: python, quickjs-chrome, chromium, firefox and the two message-path twins.
BROWSERS = ("chromium", "firefox", "chromium-background", "firefox-background")
PLANTS = {
    # Intl follows the locale in Chromium's page and service worker, and Firefox's follows its UI
    # language, which the gate can set to German because `make setup` installs the de language
    # pack (docs/message-path.md); QuickJS has no Intl.
    "locale": ('typeof Intl === "undefined" || new Intl.NumberFormat().format(1.5) === "1.5"', ("Intl", "Intl.NumberFormat"),
               BROWSERS),
    "time zone": ("new Date(0).getTimezoneOffset() === 0", ("Date",), ("quickjs-chrome", *BROWSERS)),
    "date": ("Date.now() < 1.9e12", ("Date.now",), ("quickjs-chrome", *BROWSERS)),  # before March 2030
    "user agent": ('typeof navigator !== "object" || navigator.userAgent.indexOf("Chrome/") < 0'
                   ' || navigator.userAgent.indexOf("HeadlessChrome/") >= 0', ("navigator", "navigator.userAgent"),
                   ("chromium", "chromium-background")),
    # Chromium already hides automation from pages, and a worker has no navigator.webdriver: a
    # plant that reads it there fails parity in the first run. Under BiDi Firefox says true.
    "navigator.webdriver": ('typeof navigator !== "object" || navigator.userAgent.indexOf("Firefox/") < 0'
                            " || navigator.webdriver === true", ("navigator", "navigator.userAgent", "navigator.webdriver"),
                            ("firefox", "firefox-background")),
}


@pytest.mark.gate
@pytest.mark.browser
@pytest.mark.parametrize("plant", PLANTS)
def test_a_verdict_that_depends_on_the_environment_fails_the_environment_check_alone(tmp_path, plant):
    condition, identifiers, engines = PLANTS[plant]
    exceptions = [{"identifier": i, "module": PARSER, "reason": "written by test_gate_environment"} for i in identifiers]
    copy = Copy(tmp_path, second_environments=True, purity=bundled_gate("purity") + exceptions)
    skip_allowlist_when(f"({condition})")(copy)
    outcome = copy.gate(only="parity,environment")
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.failing() == {"environment"}, outcome.out
    line = outcome.reason("environment")
    assert line.startswith("elsewhere: "), line
    assert (": parse-not-allowed: the verdict depends on the environment (de-DE, Pacific/Kiritimati, "
            "2041-07-15T03:30:00Z") in line, line
    problems = next(c for c in outcome.json["gate"]["checks"] if c["name"] == "environment")["problems"]
    assert {p.split(": ")[1] for p in problems} == set(engines), problems
    assert all(p.split(": ")[2] == "parse-not-allowed" for p in problems), problems  # the one case the plant changes


@pytest.mark.gate
@pytest.mark.browser
def test_merged_shard_results_are_held_to_the_second_environment_as_a_live_gate_is(tmp_path):
    """`gate --results` judges verdicts the shards recorded; the second environment is run in the
    gate itself and compared with them, so a sharded gate cannot pass it unrun."""
    condition, identifiers, engines = PLANTS["time zone"]
    exceptions = [{"identifier": i, "module": PARSER, "reason": "written by test_gate_environment"} for i in identifiers]
    copy = Copy(tmp_path, second_environments=True, purity=bundled_gate("purity") + exceptions)
    skip_allowlist_when(f"({condition})")(copy)
    for k in (1, 2):
        code, _, err = call_in(copy, "run", "--shard", f"{k}/2", "--json", str(tmp_path / f"shard-{k}.json"),
                               "--coverage", str(tmp_path / f"coverage-{k}.json"))
        assert code == 0, err
    code, _, err = call_in(copy, "merge", str(tmp_path / "shard-1.json"), str(tmp_path / "shard-2.json"),
                           "--json", str(tmp_path / "merged.json"))
    assert code == 0, err
    outcome = copy.gate("--results", str(tmp_path / "merged.json"), "--coverage-from",
                        str(tmp_path / "coverage-1.json"), str(tmp_path / "coverage-2.json"), report="sharded.json",
                        only="parity,environment")
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.failing() == {"environment"}, outcome.out
    problems = next(c for c in outcome.json["gate"]["checks"] if c["name"] == "environment")["problems"]
    assert {p.split(": ")[1] for p in problems} == set(engines), problems


def test_an_environment_is_checked_key_by_key_and_shipped_locales_expand_per_tree(tmp_path):
    """Not an attack: the config's table, and `locale = "shipped"` over the trees' _locales/."""
    copy = Copy(tmp_path, environments=[{"name": "de", "locale": "shipped"}, {"name": "far", "date": "2050-01-01"}])
    project = load_project(copy.config)
    assert expand(project.gate.environments, project.trees) == [Environment("far", date="2050-01-01")]
    for tree in ("chrome", "firefox"):
        for locale in ("de", "pt_BR"):
            (copy.tree(tree) / "_locales" / locale).mkdir(parents=True, exist_ok=True)
            (copy.tree(tree) / "_locales" / locale / "messages.json").write_text("{}")
    assert [e.name for e in expand(project.gate.environments, project.trees)] == ["de-de", "de-pt-BR", "far"]
    assert [e.locale for e in expand(project.gate.environments, project.trees)][:2] == ["de", "pt-BR"]


LAX_IN_GERMAN = """
const lax = api.i18n.getMessage("allowlist") === "any";
const answered = answer;
answer = (message) => answered(lax && message?.type === "parseToolCalls"
  ? { ...message, allowed: [...message.allowed, ...(message.text.match(/[a-z_]+/g) ?? [])] } : message);
"""


@pytest.mark.gate
@pytest.mark.browser
def test_a_background_that_reads_its_german_messages_fails_the_shipped_locale_environment(tmp_path):
    """The background lets every tool through when its _locales/de messages say so: only a
    browser whose UI language is German reads them, which the `shipped` environment asks for.
    Chromium reads them under --lang alone; Firefox needs the language pack `make setup`
    installs (without it, firefox-background agreed under shipped-de on the previous code)."""
    copy = Copy(tmp_path, environments=[{"name": "shipped", "locale": "shipped"}])
    for tree in ("chrome", "firefox"):
        copy.edit_json(copy.tree(tree) / "manifest.json", lambda manifest: manifest.update(default_locale="en"))
        for locale, word in (("en", "listed"), ("de", "any")):
            (copy.tree(tree) / "_locales" / locale).mkdir(parents=True)
            (copy.tree(tree) / "_locales" / locale / "messages.json").write_text(
                f'{{"allowlist": {{"message": "{word}"}}}}\n')
    copy.edit("background.js", "function answer(message) {", "let answer = function (message) {")
    copy.edit("background.js", "api.runtime.onMessage.addListener(", LAX_IN_GERMAN + "\napi.runtime.onMessage.addListener(")
    outcome = copy.gate(only="parity,environment")
    assert outcome.code == 1, outcome.out + outcome.err
    assert outcome.failing() == {"environment"}, outcome.out
    problems = next(c for c in outcome.json["gate"]["checks"] if c["name"] == "environment")["problems"]
    assert {p.split(": ")[0] for p in problems} == {"shipped-de"}, problems
    assert {p.split(": ")[1] for p in problems} == {"chromium-background", "firefox-background"}, problems
    assert all(p.split(": ")[2] == "parse-not-allowed" for p in problems), problems


def test_a_shipped_locale_firefox_has_no_language_pack_for_fails_instead_of_passing_unexercised(tmp_path):
    """Without the language pack Firefox stays in English and reads _locales/en, so the
    environment would agree for the wrong reason (on the previous code the plant above passed
    in firefox-background without the pack). A Firefox laid out as Debian installs it."""
    from extparity.gate.checks.environment import unread_locales
    from extparity.project.kinds import build_engine

    packs = tmp_path / "firefox-esr" / "browser" / "extensions"
    packs.mkdir(parents=True)
    (tmp_path / "firefox-esr" / "firefox-esr").write_text("")
    (packs / "langpack-de@firefox-esr.mozilla.org.xpi").write_bytes(b"")
    (packs / "langpack-pt-BR@firefox-esr.mozilla.org.xpi").write_bytes(b"")
    copy = Copy(tmp_path / "copy")
    copy.reconfigure(lambda table: table["engines"]["firefox"].update(executable=str(tmp_path / "firefox-esr" / "firefox-esr")))
    project = load_project(copy.config)
    firefox = build_engine(project.engines["firefox"], project)
    assert [firefox.ui_language_missing(locale) for locale in ("de", "pt-BR", "pt", "en", "en-US")] == [None] * 5
    assert firefox.ui_language_missing("de-AT") is not None, "a Firefox in de reads _locales/de, not de_AT"
    assert unread_locales(project, ["python", "chromium", "firefox"], Environment("shipped-fr", locale="fr")) == [
        f"shipped-fr: firefox cannot read the extension's _locales/ for fr: Firefox has no fr language pack "
        f"(none in {packs} or {tmp_path}/firefox-esr/distribution/extensions; Debian packages them as firefox-esr-l10n-*)"]


@pytest.mark.parametrize("environment, words", [
    ({"name": "x", "timezone": "Mars/Olympus"}, "[tool.extparity.gate].environments[0].timezone: 'Mars/Olympus' is not an IANA time zone"),
    ({"name": "x", "date": "next year"}, "[tool.extparity.gate].environments[0].date: 'next year' is not an ISO 8601 date"),
    ({"name": "x", "webdriver": "no"}, "[tool.extparity.gate].environments[0].webdriver: expected true or false"),
    ({"name": "x", "tz": "UTC"}, "[tool.extparity.gate].environments[0]: unknown key 'tz'"),
    ({"name": "x"}, "[tool.extparity.gate].environments[0]: expected an environment that changes something: "
                    "a name and at least one of locale, timezone, date, user_agent, webdriver, got a table of 1 key"),
])
def test_a_malformed_environment_exits_2_naming_the_key(tmp_path, environment, words):
    copy = Copy(tmp_path, environments=[environment])
    outcome = copy.gate()
    assert outcome.code == 2 and words in outcome.err, outcome.err


def test_dropping_or_changing_a_second_environment_is_a_policy_change_against_the_baseline(tmp_path):
    """Emptying `environments` removes items, which for exception lists would make the gate
    stricter; for environments it is a weakening, so the policy records them in effect."""
    from extparity.corpus.cases import load_corpus
    from extparity.gate import policy

    def recorded(folder: str, **gate) -> dict:
        project = load_project(Copy(tmp_path / folder, second_environments=True, **gate).config)
        return policy.record(project, load_corpus(list(project.corpus), project.entries, base=project.root), [])

    default = recorded("default")
    assert policy.changes(default, default, [], []) == []
    assert policy.changes(default, recorded("none", environments=[]), [], []) == [
        "[tool.extparity.gate].environments: elsewhere removed", "[tool.extparity.gate].environments: shipped removed"]
    assert policy.changes(default, recorded("near", environments=[
        {"name": "elsewhere", "locale": "en-US"}, {"name": "shipped", "locale": "shipped"}]), [], []) == [
        '[tool.extparity.gate].environments: elsewhere changed from {"date":"2041-07-15T03:30:00Z","locale":"de-DE",'
        '"timezone":"Pacific/Kiritimati","user_agent":"normal","webdriver":false} to {"locale":"en-US"}']
