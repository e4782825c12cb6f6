"""Per-ticket state in the workflow database: what was last published, so that an unchanged ticket costs no
LLM call and the sticky comment is edited rather than posted again.

The stored review is the redacted `ReviewResult`: safe to keep, like the CLI's file cache.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict
from sqlalchemy.dialects import postgresql, sqlite

from reqgate.pipeline.schemas import ReviewResult

# Every table of ours (this one, bot/executors.py's, bot/pacing.py's), created together at connect.
METADATA = sa.MetaData()
TICKET_STATE = sa.Table(
    "reqgate_ticket_state",
    METADATA,
    sa.Column("ticket_id", sa.String(400), primary_key=True),
    sa.Column("content_hash", sa.String(128)),
    sa.Column("verdict", sa.String(32)),
    sa.Column("comment_id", sa.String(128)),
    sa.Column("result_json", sa.Text),
    sa.Column("workflow_id", sa.String(400)),
    sa.Column("updated_at", sa.Float, nullable=False),
)


class TicketState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ticket_id: str
    content_hash: str | None = None
    verdict: str | None = None  # ready, needs_info or error
    comment_id: str | None = None
    result: ReviewResult | None = None
    workflow_id: str | None = None


# Any 64-bit number of our own: the transaction-scoped advisory lock that serialises table creation.
_SCHEMA_LOCK = 0x7265716761746531


class DatabaseSetupError(ValueError):
    """The database cannot be used at all; the message is one line that says why and what to do."""


def sqlalchemy_url(database_url: str) -> sa.URL:
    """The same database DBOS uses; plain postgres URLs get the psycopg 3 driver that DBOS ships with."""
    url = sa.make_url(database_url)
    if url.drivername in ("postgresql", "postgres"):
        url = url.set(drivername="postgresql+psycopg")
    return url


def ensure_database(url: sa.URL) -> None:
    """Create the PostgreSQL database named in the URL when it does not exist yet (DBOS would, but our
    tables are made first). Several processes starting at once may all try: losing that race is fine."""
    probe = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with probe.connect():
            return
    except sa.exc.OperationalError as exc:
        if f'database "{url.database}" does not exist' not in str(exc.orig):
            raise DatabaseSetupError(f"cannot connect to the database {url.database!r} on "
                                     f"{url.host}:{url.port or 5432}: {_first_line(exc)}") from None
    finally:
        probe.dispose()
    admin = sa.create_engine(url.set(database="postgres"), poolclass=sa.pool.NullPool,
                             isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{url.database}"'))
    except (sa.exc.ProgrammingError, sa.exc.IntegrityError) as exc:
        if "already exists" not in str(exc.orig) and "duplicate key" not in str(exc.orig):
            raise DatabaseSetupError(f"the database {url.database!r} does not exist and cannot be created "
                                     f"({_first_line(exc)}): create it, or grant CREATEDB") from None
    except sa.exc.OperationalError as exc:
        raise DatabaseSetupError(f"the database {url.database!r} does not exist and cannot be created "
                                 f"({_first_line(exc)}): create it, or grant CREATEDB") from None
    finally:
        admin.dispose()


def _first_line(exc: sa.exc.DBAPIError) -> str:
    return str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__


def dialect_insert(engine: sa.Engine, table: sa.Table) -> Any:
    """An INSERT with the engine's own ON CONFLICT clauses (PostgreSQL's or SQLite's)."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


def create_tables(engine: sa.Engine, metadata: sa.MetaData = METADATA) -> None:
    """Our tables (these, or another module's `metadata`), once, however many processes start together:
    `CREATE TABLE` checked first still races (two see no table, the second's insert into the catalogue
    fails), so on PostgreSQL it runs under an advisory lock held for the transaction."""
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
        metadata.create_all(conn, checkfirst=True)


def create_engine(database_url: str) -> sa.Engine:
    url = sqlalchemy_url(database_url)
    if url.get_backend_name() != "sqlite":
        ensure_database(url)
        return sa.create_engine(url, pool_pre_ping=True, pool_size=5)
    if url.database:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url)

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        # Shares the file with DBOS's writers: wait for the lock instead of failing at once. WAL (stored in
        # the file, so DBOS's connections get it too) lets the web side enqueue while workers checkpoint.
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        dbapi_conn.execute("PRAGMA journal_mode=WAL")

    return engine


class StateStore:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    @classmethod
    def connect(cls, database_url: str) -> StateStore:
        store = cls(create_engine(database_url))
        create_tables(store.engine)
        return store

    def get(self, ticket_id: str) -> TicketState | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(TICKET_STATE).where(TICKET_STATE.c.ticket_id == ticket_id)).first()
        if row is None:
            return None
        result = None
        if row.result_json:
            try:
                result = ReviewResult.model_validate_json(row.result_json)
            except ValueError:
                # A review stored by an older version is only a cache miss: the ticket is reviewed again.
                result = None
        return TicketState(ticket_id=row.ticket_id, content_hash=row.content_hash if result else None,
                           verdict=row.verdict, comment_id=row.comment_id, result=result,
                           workflow_id=row.workflow_id)

    def put(self, state: TicketState) -> None:
        values = {
            "ticket_id": state.ticket_id,
            "content_hash": state.content_hash,
            "verdict": state.verdict,
            "comment_id": state.comment_id,
            "result_json": state.result.model_dump_json() if state.result else None,
            "workflow_id": state.workflow_id,
            "updated_at": time.time(),
        }
        statement = dialect_insert(self.engine, TICKET_STATE).values(**values)
        statement = statement.on_conflict_do_update(
            index_elements=[TICKET_STATE.c.ticket_id],
            set_={k: statement.excluded[k] for k in values if k != "ticket_id"},
        )
        with self.engine.begin() as conn:
            conn.execute(statement)

    def ping(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))

    def close(self) -> None:
        self.engine.dispose()
