"""Second environments: named sets of settings under which the gate runs the corpus again.

Why: a differential gate only sees the environment it creates. Code that reads the locale, the
time zone, the date, the user agent or ``navigator.webdriver`` agrees with itself in every engine
under the gate (one locale, UTC, today, a headless browser under automation) and takes another
branch in users' browsers. The gate's ``environment`` check runs the engines again under each
environment here and wants every verdict byte-identical to the first run's.

An environment is data: each setting is applied by every engine kind that knows how (the kinds'
``environment_reach``, see ``engines.base.Engine``), so a new kind or setting needs no branch here.
``locale = "shipped"`` stands for the locales the extension ships in ``_locales/``: one
environment per locale folder (``NAME-LOCALE``), none when the trees ship none.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import ConfigError

SHIPPED = "shipped"
NORMAL = "normal"  # user_agent: the browser's own user agent as a normal (non-headless) build sends it


@dataclass(frozen=True)
class Environment:
    name: str
    locale: str | None = None  # BCP 47 ("de-DE"), or "shipped" before expansion
    timezone: str | None = None  # IANA ("Pacific/Kiritimati")
    date: str | None = None  # ISO 8601 instant the clocks start from ("2041-07-15T03:30:00Z")
    user_agent: str | None = None  # "normal", or a literal user agent
    webdriver: bool | None = None  # False: navigator.webdriver is false where it can be made so

    @property
    def start_ms(self) -> int | None:
        """The date as milliseconds since the epoch, where clocks start."""
        return None if self.date is None else int(parse_date(self.date).timestamp() * 1000)

    def settings(self) -> dict[str, object]:
        """The settings this environment changes (name -> value), in declaration order."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "name" and getattr(self, f.name) is not None}

    def worker_variables(self) -> dict[str, str]:
        """Process environment variables a worker or browser reads its zone and language from."""
        variables = {}
        if self.timezone:
            variables["TZ"] = self.timezone
        if self.locale:
            language = self.locale.replace("-", "_")
            variables.update(LANG=f"{language}.UTF-8", LC_ALL=f"{language}.UTF-8", LANGUAGE=language)
        return variables

    def describe(self) -> str:
        """``de-DE, Pacific/Kiritimati, 2041-07-15T03:30:00Z, normal user agent, navigator.webdriver false``."""
        words = {"user_agent": lambda v: "normal user agent" if v == NORMAL else f"user agent {v!r}",
                 "webdriver": lambda v: f"navigator.webdriver {str(v).lower()}"}
        return ", ".join(words.get(k, str)(v) for k, v in self.settings().items())


DEFAULT = (
    Environment("elsewhere", locale="de-DE", timezone="Pacific/Kiritimati", date="2041-07-15T03:30:00Z",
                user_agent=NORMAL, webdriver=False),
    Environment("shipped", locale=SHIPPED),
)


def parse_date(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def parse(items: list[dict], where: str) -> tuple[Environment, ...]:
    """``[tool.extparity.gate].environments``, whose shape the config's schema holds: here what
    it cannot check (a time zone the zone database knows, a date Python reads, a name used twice)."""
    found: list[Environment] = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]"
        if "timezone" in item:
            try:
                ZoneInfo(item["timezone"])
            except (ZoneInfoNotFoundError, ValueError):
                raise ConfigError(f"{at}.timezone: {item['timezone']!r} is not an IANA time zone") from None
        if "date" in item:
            try:
                parse_date(item["date"])
            except ValueError:
                raise ConfigError(f"{at}.date: {item['date']!r} is not an ISO 8601 date") from None
        if any(other.name == item["name"] for other in found):
            raise ConfigError(f"{at}.name: {item['name']!r} is declared twice")
        found.append(Environment(**item))
    return tuple(found)


def shipped_locales(trees: dict[str, Path]) -> list[str]:
    """The locale folders of every tree's ``_locales/`` (``pt_BR`` as ``pt-BR``), sorted."""
    found = set()
    for tree in trees.values():
        folder = tree / "_locales"
        if folder.is_dir():
            found |= {p.name.replace("_", "-") for p in folder.iterdir() if (p / "messages.json").is_file()}
    return sorted(found)


def expand(environments: tuple[Environment, ...], trees: dict[str, Path]) -> list[Environment]:
    """Every environment to run: ``locale = "shipped"`` becomes one per shipped locale."""
    out = []
    for environment in environments:
        if environment.locale != SHIPPED:
            out.append(environment)
            continue
        for locale in shipped_locales(trees):
            out.append(Environment(**{**environment.__dict__, "name": f"{environment.name}-{locale}", "locale": locale}))
    return out
