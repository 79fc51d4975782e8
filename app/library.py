"""The scenario library: saved scenarios and their results in SQL (SQLite by default), through SQLAlchemy.

A pre-sales engineer keeps the configurations of a deal here: save the scenario being
sized, load it back next week, rename it, delete it, and keep the results it produced
(the whole ``Result``, so a saved sizing can be shown again without re-running it).

The database is ``$FLASHPLAN_DB_URL`` (any SQLAlchemy URL, e.g. ``postgresql://...``) or,
by default, ``library.sqlite`` in the user's data directory (``platformdirs``:
``~/.local/share/flashplan`` on Linux). Scenario files (YAML, JSON, TOML) are imported
through ``parse_scenario_file``: size-limited, parsed with the safe YAML loader without
anchors or aliases, and validated like any scenario file.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import platformdirs
import yaml
from pydantic import ValidationError
from sqlalchemy import DateTime, Float, ForeignKey, Integer, String, Text, create_engine, event, func, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, sessionmaker

from app.validity import result_from_json
from models.loading import MAX_DOCUMENT_BYTES, BadInput, decode, format_validation_error, parse_document
from models.result import Result
from models.scenario import Scenario, ScenarioFileError

DB_URL_ENV = "FLASHPLAN_DB_URL"
MAX_NAME_CHARS = 120
IMPORT_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}


class LibraryError(BadInput):
    """A library request that cannot be done: (field, message) pairs (a ``models.loading.BadInput``)."""


SAVE_ATTEMPTS = 5
"""Tries of a save that collides with another process's save of the same name (then a LibraryError)."""


def redact_url(url: str) -> str:
    """A database URL safe to show or log: the password replaced by ``***`` (and the whole URL
    hidden when it cannot be parsed, as it may still hold one)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(an unparsable database URL)"


class _Base(DeclarativeBase):
    pass


class StoredScenario(_Base):
    """One saved scenario: its name, notes and the scenario as JSON."""

    __tablename__ = "scenarios"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), unique=True, index=True)
    attachment: Mapped[str] = mapped_column(String(32))
    notes: Mapped[str] = mapped_column(Text, default="")
    data: Mapped[str] = mapped_column(Text)
    created: Mapped[datetime] = mapped_column(DateTime)
    updated: Mapped[datetime] = mapped_column(DateTime)
    results: Mapped[list[StoredResult]] = relationship(back_populates="scenario", cascade="all, delete-orphan",
                                                       passive_deletes=True)


class StoredResult(_Base):
    """One saved result of a scenario: headline figures for listing and the whole Result as JSON."""

    __tablename__ = "results"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    scenario_id: Mapped[int] = mapped_column(ForeignKey("scenarios.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(MAX_NAME_CHARS), default="")
    created: Mapped[datetime] = mapped_column(DateTime)
    iops: Mapped[float] = mapped_column(Float)
    latency_mean_us: Mapped[float] = mapped_column(Float)
    latency_p99_us: Mapped[float] = mapped_column(Float)
    bottleneck: Mapped[str] = mapped_column(String(200))
    data: Mapped[str] = mapped_column(Text)
    scenario: Mapped[StoredScenario] = relationship(back_populates="results")


@dataclass(frozen=True)
class ScenarioEntry:
    """A row of the library listing."""

    id: int
    name: str
    attachment: str
    notes: str
    created: datetime
    updated: datetime
    results: int


@dataclass(frozen=True)
class ResultEntry:
    """A saved result's headline figures."""

    id: int
    scenario_id: int
    label: str
    created: datetime
    iops: float
    latency_mean_us: float
    latency_p99_us: float
    bottleneck: str


def default_db_url() -> str:
    """``$FLASHPLAN_DB_URL``, else a SQLite file in the user's data directory."""
    url = os.environ.get(DB_URL_ENV, "").strip()
    if url:
        return url
    folder = Path(platformdirs.user_data_dir("flashplan", appauthor=False))
    return f"sqlite:///{folder / 'library.sqlite'}"


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None, microsecond=0)


def _clean_name(name: str, field: str = "name") -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise LibraryError([(field, "give a name (1 to 120 characters)")])
    if len(cleaned) > MAX_NAME_CHARS:
        raise LibraryError([(field, f"at most {MAX_NAME_CHARS} characters, got {len(cleaned)}")])
    return cleaned


class Library:
    """Saved scenarios and results in one database (see the module docstring for where)."""

    def __init__(self, url: str | None = None):
        real = url or default_db_url()
        self.url = redact_url(real)
        """The database URL as shown to the user: its password replaced by ``***``."""
        try:
            self.engine: Engine = self._engine(real)
            self._create_tables()
        except (ArgumentError, ValueError, ImportError) as exc:
            raise LibraryError([(DB_URL_ENV, f"not a database URL flashplan can use ({type(exc).__name__}), got {self.url}")]) from None
        except SQLAlchemyError as exc:
            raise LibraryError([(DB_URL_ENV, f"cannot open the database {self.url}: {type(exc).__name__}")]) from None
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def _create_tables(self) -> None:
        """Create the tables that are missing, safely when other processes open the same new library at once.

        On SQLite the check for each table and its CREATE run in one ``BEGIN IMMEDIATE`` transaction: it takes
        the database's write lock before looking, so a second process waits for the first to commit (up to the
        connection's 15 s busy timeout) and then finds the tables, instead of both seeing none and both issuing
        CREATE TABLE. Other databases check and create in one transaction as well. A creation that still fails
        with ``OperationalError`` ("database is locked" past the timeout, "table ... already exists" from a
        database without transactional DDL) is tried again, as a save that collides reads again.
        """
        for attempt in range(SAVE_ATTEMPTS):
            try:
                with self.engine.connect() as conn:
                    if conn.dialect.name == "sqlite":
                        conn.exec_driver_sql("BEGIN IMMEDIATE")
                    _Base.metadata.create_all(conn)
                    conn.commit()
                return
            except OperationalError:
                if attempt == SAVE_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    @staticmethod
    def _engine(url: str) -> Engine:
        if url.startswith("sqlite"):
            path = url.split("///", 1)[1] if "///" in url else ""
            if path and path != ":memory:":
                Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 15})

            @event.listens_for(engine, "connect")
            def _foreign_keys(dbapi_connection, _record):  # type: ignore[no-untyped-def]
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

            return engine
        return create_engine(url, pool_pre_ping=True)

    def _session(self) -> Session:
        return self._sessions()

    # -- scenarios ---------------------------------------------------------------------------
    def list_scenarios(self) -> list[ScenarioEntry]:
        """Every saved scenario, most recently updated first."""
        with self._session() as s:
            counts = {sid: n for sid, n in s.execute(select(StoredResult.scenario_id, func.count()).group_by(StoredResult.scenario_id)).all()}
            rows = s.scalars(select(StoredScenario).order_by(StoredScenario.updated.desc(), StoredScenario.id.desc())).all()
            return [ScenarioEntry(r.id, r.name, r.attachment, r.notes, r.created, r.updated, int(counts.get(r.id, 0))) for r in rows]

    def find(self, name: str) -> ScenarioEntry | None:
        """The saved scenario called ``name`` (spaces normalised), if any."""
        cleaned = " ".join(name.split())
        return next((e for e in self.list_scenarios() if e.name == cleaned), None)

    def save_scenario(self, name: str, scenario: Scenario, notes: str = "", overwrite: bool = False) -> int:
        """Save ``scenario`` under ``name``; an existing name is replaced only with ``overwrite``. Returns the id."""
        cleaned = _clean_name(name)
        data = scenario.model_dump_json(exclude_none=True)
        for attempt in range(SAVE_ATTEMPTS):
            try:
                return self._save_once(cleaned, scenario, data, notes, overwrite)
            except (IntegrityError, OperationalError):
                # another process saved the same name (or held the database) between our read and our
                # write: read again, so the name check sees its row (and `overwrite` replaces it)
                if attempt == SAVE_ATTEMPTS - 1:
                    raise LibraryError([("name", f"could not save {cleaned!r}: another save of the same name kept "
                                                 "colliding; try again")]) from None
        raise AssertionError("unreachable")

    def _save_once(self, cleaned: str, scenario: Scenario, data: str, notes: str, overwrite: bool) -> int:
        now = _now()
        with self._session() as s:
            row = s.scalars(select(StoredScenario).where(StoredScenario.name == cleaned)).first()
            if row is not None and not overwrite:
                raise LibraryError([("name", f"a scenario called {cleaned!r} is already saved; choose another name or overwrite it")])
            if row is None:
                row = StoredScenario(name=cleaned, attachment=scenario.topology.kind, notes=notes, data=data, created=now, updated=now)
                s.add(row)
            else:
                row.attachment, row.notes, row.data, row.updated = scenario.topology.kind, notes, data, now
            s.commit()
            return row.id

    def _row(self, s: Session, scenario_id: int) -> StoredScenario:
        row = s.get(StoredScenario, scenario_id)
        if row is None:
            raise LibraryError([("scenario", f"no saved scenario with id {scenario_id}")])
        return row

    def get_scenario(self, scenario_id: int) -> Scenario:
        """The saved scenario, validated again (a catalog change can make an old one invalid: LibraryError says how)."""
        with self._session() as s:
            row = self._row(s, scenario_id)
            try:
                return Scenario.model_validate(json.loads(row.data))
            except ValidationError as exc:
                raise LibraryError(format_validation_error(exc)) from None

    def rename_scenario(self, scenario_id: int, new_name: str) -> None:
        """Rename a saved scenario (its library name and the ``name`` inside the scenario)."""
        cleaned = _clean_name(new_name, "new name")
        with self._session() as s:
            row = self._row(s, scenario_id)
            data = json.loads(row.data)
            data["name"] = cleaned
            row.name, row.data, row.updated = cleaned, json.dumps(data), _now()
            try:
                s.commit()
            except IntegrityError:
                raise LibraryError([("new name", f"a scenario called {cleaned!r} is already saved")]) from None

    def delete_scenario(self, scenario_id: int) -> None:
        """Delete a scenario and every result saved with it."""
        with self._session() as s:
            s.delete(self._row(s, scenario_id))
            s.commit()

    # -- results -----------------------------------------------------------------------------
    def save_result(self, scenario_id: int, result: Result, label: str = "") -> int:
        with self._session() as s:
            self._row(s, scenario_id)
            row = StoredResult(scenario_id=scenario_id, label=" ".join(label.split())[:MAX_NAME_CHARS], created=_now(),
                               iops=result.iops.value, latency_mean_us=result.latency_mean_us.value,
                               latency_p99_us=result.latency_p99_us.value, bottleneck=result.bottleneck,
                               data=result.model_dump_json())
            s.add(row)
            s.commit()
            return row.id

    def list_results(self, scenario_id: int) -> list[ResultEntry]:
        with self._session() as s:
            rows = s.scalars(select(StoredResult).where(StoredResult.scenario_id == scenario_id)
                             .order_by(StoredResult.created.desc(), StoredResult.id.desc())).all()
            return [ResultEntry(r.id, r.scenario_id, r.label, r.created, r.iops, r.latency_mean_us, r.latency_p99_us, r.bottleneck)
                    for r in rows]

    def get_result(self, result_id: int) -> Result:
        with self._session() as s:
            row = s.get(StoredResult, result_id)
            if row is None:
                raise LibraryError([("result", f"no saved result with id {result_id}")])
            try:
                return result_from_json(row.data)  # one saved before Result.validity existed reads as not final
            except ValidationError as exc:
                raise LibraryError(format_validation_error(exc)) from None
            except ValueError as exc:  # not JSON
                raise LibraryError([("result", f"saved result {result_id} is not readable JSON: {exc}")]) from None

    def delete_result(self, result_id: int) -> None:
        with self._session() as s:
            row = s.get(StoredResult, result_id)
            if row is None:
                raise LibraryError([("result", f"no saved result with id {result_id}")])
            s.delete(row)
            s.commit()


# -- scenario files ------------------------------------------------------------------------------

def parse_scenario_file(filename: str, content: bytes) -> Scenario:
    """Read an uploaded scenario file (.yaml/.yml, .json, .toml) through ``models.loading`` and validate it.

    Raises ScenarioFileError (``models.loading.BadInput``) with (field, message) pairs: too large,
    unknown format, not UTF-8, not parseable, a YAML anchor or alias (a scenario never needs them),
    or every validation problem with its field path.
    """
    origin = Path(filename).name or "file"
    if len(content) > MAX_DOCUMENT_BYTES:
        raise ScenarioFileError([(origin, f"file is larger than {MAX_DOCUMENT_BYTES:,} bytes ({len(content):,})")])
    fmt = IMPORT_FORMATS.get(Path(filename).suffix.lower())
    if fmt is None:
        raise ScenarioFileError([(origin, f"unknown format {Path(filename).suffix!r}; use {', '.join(IMPORT_FORMATS)}")])
    text = decode(content, origin)
    if fmt == "yaml":
        _reject_yaml_references(text, origin)
    data = parse_document(text, fmt, origin)
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioFileError(format_validation_error(exc)) from None


def _reject_yaml_references(text: str, origin: str) -> None:
    """Refuse YAML anchors and aliases in an uploaded scenario (``models.loading`` bounds their expansion anyway)."""
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.AnchorToken | yaml.AliasToken):
                raise ScenarioFileError([(origin, "YAML anchors and aliases (&name, *name) are not accepted in imported files")])
    except yaml.YAMLError as exc:
        raise ScenarioFileError([(origin, f"not valid YAML: {' '.join(str(exc).split())}")]) from None


def export_scenario(scenario: Scenario, fmt: Literal["yaml", "json"] = "yaml") -> str:
    """The scenario as a file the CLI (``flashplan simulate``) and ``parse_scenario_file`` read back."""
    data = scenario.model_dump(mode="json", exclude_none=True)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
