"""extparity's pytest plugin: a project's parity run as pytest items, judged by `extparity run`.

With ``--extparity`` (or ``extparity = true`` in the pytest ini options) the config file that
holds ``[tool.extparity]`` is collected like a test file: one item per engine and case
(``pyproject.toml::ENGINE::CASE``) and one per run-level check (``corpus``, ``modules``,
``known-deviations``, ``engine[NAME]``). It is collected when pytest collects its default
paths (no path arguments), or when a path argument is the config file or walks its folder.

The items never judge anything themselves. The first item that runs makes one
``api.run`` (the orchestration `extparity run` calls, judged pairwise without a reference,
by majority, with the known deviations) and every item reads its cell or check from the
JSON result that run produces, so an item cannot pass where `extparity run` fails on the
same corpus and engines. ``-k`` selects which items report; the engines that run (and so
the judgement) are ``--extparity-engines``, as `extparity run --engines`.

Under pytest-xdist the run happens once per session, not once per worker: the first worker
to need it runs it under a file lock in the session's shared temporary folder and writes the
result there; the others wait for the lock and read it.
"""

from __future__ import annotations

import fcntl
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr
    from _pytest.terminal import TerminalReporter

    from .api import Corpus, Project, ResultDocument

ENABLED_INI = "extparity"
SHARED_RESULT = "extparity-result.json"
RUN_CHECKS = ("corpus", "modules", "known-deviations")
state_key = pytest.StashKey["ParitySession"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("extparity", "extparity: the parity run as pytest items")
    group.addoption("--extparity", action="store_true", default=None,
                    help="collect one item per engine and case of the [tool.extparity] project, and its run-level checks")
    group.addoption("--extparity-engines", metavar="NAMES",
                    help="comma-separated engine names to run (default: every configured engine)")
    group.addoption("--extparity-corpus", action="append", metavar="PATH",
                    help="corpus folder or .jsonl file instead of the configured corpus, repeatable")
    group.addoption("--extparity-config", metavar="PYPROJECT",
                    help="the pyproject.toml holding [tool.extparity] (default: the nearest one from the rootdir up)")
    parser.addini(ENABLED_INI, type="bool", default=False,
                  help="collect the extparity items as --extparity does")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "extparity: an item of the extparity parity run (added by the plugin)")
    session = ParitySession(config)
    config.stash[state_key] = session
    if session.enabled:
        session.check_usage()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """On the xdist controller: note which worker ran the parity, for the summary."""
    ran = getattr(node, "workeroutput", {}).get("extparity_ran")
    if ran:
        node.config.stash[state_key].runs.append(ran)


def pytest_sessionfinish(session: pytest.Session) -> None:
    parity = session.config.stash[state_key]
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None and parity.runs:
        workeroutput["extparity_ran"] = parity.runs[0]


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    parity = terminalreporter.config.stash[state_key]
    for ran in parity.runs:
        terminalreporter.write_line(f"extparity: ran {ran['engines']} engines over {ran['cases']} cases once, "
                                    f"in {ran['where']} ({ran['wall_s']:.1f} s)")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    parity = parent.config.stash[state_key]
    if parity.enabled and file_path.resolve() == parity.project.path:
        return ParityFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    parity = config.stash[state_key]
    if (not parity.enabled or config.args_source == pytest.Config.ArgsSource.ARGS
            or any(isinstance(item, ParityItem) for item in items)):  # collected by path already
        return
    items.extend(session.genitems(ParityFile.from_parent(session, path=parity.project.path)))


@pytest.fixture(scope="session")
def extparity_project(pytestconfig: pytest.Config) -> Project:
    """The project of ``--extparity-config`` (or the nearest pyproject.toml with [tool.extparity])."""
    return pytestconfig.stash[state_key].project


@pytest.fixture(scope="session")
def extparity_result(pytestconfig: pytest.Config) -> ResultDocument:
    """The JSON result of this session's parity run (run on first use), as `extparity run
    --json` writes it: the same engines, corpus and verdicts as the items read."""
    return pytestconfig.stash[state_key].document()


class ParitySession:
    """What one pytest process knows of the parity run: the options, the project and corpus
    (loaded when first needed), and the result (run when first needed, once)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        option = config.getoption("extparity")
        self.enabled: bool = bool(config.getini(ENABLED_INI) if option is None else option)
        self.runs: list[dict[str, Any]] = []  # where the run happened, for the summary
        self._project: Project | None = None
        self._corpus: Corpus | None = None
        self._engines: list[str] | None = None
        self._document: ResultDocument | None = None
        self._error: str | None = None  # why the run could not finish: told once, not retried per item
        self._cases: dict[str, dict[str, Any]] = {}

    def check_usage(self) -> None:
        """A bad config or option is a usage error before anything is collected: this loads
        the project and checks the engine names."""
        self._engines = self.engines

    def _usage(self, error: Exception) -> pytest.UsageError:
        return pytest.UsageError(f"extparity: {error}")

    def _paths(self, values: list[str] | None) -> list[Path] | None:
        if not values:
            return None
        return [self.config.invocation_params.dir / value for value in values]

    @property
    def project(self) -> Project:
        if self._project is None:
            from .api import ConfigError, load_project
            from .project.config import find_pyproject

            given = self.config.getoption("extparity_config")
            try:
                path = self.config.invocation_params.dir / given if given else find_pyproject(self.config.rootpath)
                self._project = load_project(path)
            except ConfigError as error:
                raise self._usage(error) from None
        return self._project

    @property
    def corpus_paths(self) -> list[Path] | None:
        return self._paths(self.config.getoption("extparity_corpus"))

    @property
    def corpus(self) -> Corpus:
        if self._corpus is None:
            from .api import load_corpus

            self._corpus = load_corpus(self.project, self.corpus_paths)
        return self._corpus

    @property
    def engines(self) -> list[str]:
        if self._engines is None:
            from .api import ConfigError
            from .run.parity import select_engines

            try:
                self._engines = select_engines(self.project, self.config.getoption("extparity_engines"))
            except ConfigError as error:
                raise self._usage(error) from None
        return self._engines

    def document(self) -> ResultDocument:
        """The run's JSON result; the first call in the session (across workers) runs it."""
        if self._error is not None:
            raise ParityFailure(f"the parity run could not finish: {self._error}")
        if self._document is None:
            workerinput = getattr(self.config, "workerinput", None)
            try:
                if workerinput is None:
                    self._document = self._run("this process")
                else:
                    self._document = self._shared(Path(self.config.getoption("basetemp")).parent,
                                                  workerinput["workerid"])
            except Exception as error:
                self._error = f"{type(error).__name__}: {error}"
                raise
        return self._document

    def _shared(self, folder: Path, worker: str) -> ResultDocument:
        """One run for all workers: xdist gives each worker ``--basetemp=SESSION/gwN``, so SESSION
        is this session's alone (pytest removes old ones). The lock serialises the workers;
        the first writes the result, the others read it."""
        from .project.atomic import write_atomic
        from .results.build import dumps

        result = folder / SHARED_RESULT
        with open(folder / f"{SHARED_RESULT}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if result.is_file():
                document: ResultDocument = json.loads(result.read_text(encoding="ascii"))
                return document
            document = self._run(f"worker {worker}")
            write_atomic(result, dumps(document))
            return document

    def _run(self, where: str) -> ResultDocument:
        from . import api

        started = time.perf_counter()
        outcome = api.run(self.project, engines=self.engines, corpus=self.corpus_paths)
        self.runs.append({"engines": len(outcome.result.engines), "cases": len(outcome.result.results),
                          "where": where, "wall_s": time.perf_counter() - started})
        # Through the bytes `--json` writes, so every worker reads the same value.
        document: ResultDocument = json.loads(api.result_bytes(outcome.document))
        return document

    def case(self, case_id: str) -> dict[str, Any] | None:
        """A case of the result by id (the index is built once)."""
        if not self._cases:
            self._cases = {case["id"]: case for case in self.document()["cases"]}
        return self._cases.get(case_id)


class ParityFailure(Exception):
    """A failing cell or check: its text is the whole report (no traceback: the harness is fine,
    the subject is not)."""


@dataclass(frozen=True)
class CaseInfo:
    id: str
    file: str
    line: int


class ParityFile(pytest.File):
    """The config file as a test file: run-level checks first, then one collector per engine."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        parity = self.config.stash[state_key]
        for check in RUN_CHECKS:
            yield CheckItem.from_parent(self, name=check, check=check, engine=None)
        for engine in parity.engines:
            yield CheckItem.from_parent(self, name=f"engine[{engine}]", check="engine", engine=engine)
        cases = [CaseInfo(case.id, case.file, case.line) for case in parity.corpus.cases]
        for engine in parity.engines:
            yield EngineCollector.from_parent(self, name=engine, engine=engine, cases=cases)


class EngineCollector(pytest.Collector):
    def __init__(self, *, engine: str, cases: list[CaseInfo], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine, self.cases = engine, cases

    def collect(self) -> Iterator[pytest.Item]:
        for case in self.cases:
            yield CellItem.from_parent(self, name=case.id, engine=self.engine, case=case)


class ParityItem(pytest.Item):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker("extparity")

    @property
    def parity(self) -> ParitySession:
        return self.config.stash[state_key]

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, ParityFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)


class CellItem(ParityItem):
    """One engine's cell of one case: passes when the run judged it ``pass``, is an expected
    failure when it is a known deviation, and fails with the run's reason otherwise."""

    def __init__(self, *, engine: str, case: CaseInfo, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine, self.case = engine, case

    def runtest(self) -> None:
        from .reports.junit import failure_body
        from .run.outcomes import Outcome

        case = self.parity.case(self.case.id)
        if case is None or self.engine not in case["cells"]:
            raise ParityFailure(f"{self.case.id}: not in the run's result for {self.engine}")
        cell = case["cells"][self.engine]
        notes = case.get("notes", {}).get(self.engine, [])
        if cell == Outcome.KNOWN:
            pytest.xfail("; ".join(notes))
        if cell != Outcome.PASS:
            body = failure_body(self.parity.document(), case, self.engine, cell, notes)
            raise ParityFailure(f"{self.engine} {cell} ({self.case.file}:{self.case.line}): {body}")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.parity.project.root / self.case.file, self.case.line - 1, f"{self.engine}: {self.case.id}"


class CheckItem(ParityItem):
    """A run-level check, failing with every problem the run reported for it."""

    def __init__(self, *, check: str, engine: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check, self.engine = check, engine

    def problems(self, document: ResultDocument) -> list[str]:
        if self.check == "corpus":
            empty = [] if document["cases"] else ["no cases ran: a run of zero cases proves nothing"]
            return [*document["corpus"]["problems"], *empty]
        if self.check == "modules":
            modules = document["modules"]
            return [*modules["problems"], *(f"background: {p}" for p in modules["background_problems"])]
        if self.check == "known-deviations":
            return list(document["known_deviation_problems"])
        engine = document["engines"][self.engine]
        return [] if engine["status"] == "ok" else [f"{self.engine}: {engine['status']}: {engine['detail']}"]

    def runtest(self) -> None:
        problems = self.problems(self.parity.document())
        if problems:
            raise ParityFailure("\n".join(problems))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.parity.project.path, 0, f"extparity {self.name}"
