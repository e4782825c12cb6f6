"""LLM spend per GitHub installation / Jira site, kept in a table of its own beside the ticket state: one row
per LLM stage of a review (call 1, call 2), keyed by workflow id and stage so that a replayed step never
counts twice.
Month totals and a ticket's reviews of the day are sums over it (pipeline/cost.py decides what they allow).
"""

from __future__ import annotations

import time
from datetime import datetime

import sqlalchemy as sa

from reqgate.bot.state import create_tables, dialect_insert
from reqgate.handlers.base import TicketRef

_METADATA = sa.MetaData()
LLM_SPEND = sa.Table(
    "reqgate_llm_spend",
    _METADATA,
    sa.Column("run_id", sa.String(400), primary_key=True),
    sa.Column("stage", sa.String(40), primary_key=True),
    sa.Column("account", sa.String(400), nullable=False),
    sa.Column("ticket_id", sa.String(400), nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("cost_usd", sa.Float, nullable=False),
    sa.Index("reqgate_llm_spend_account_at", "account", "at"),
    sa.Index("reqgate_llm_spend_ticket_at", "ticket_id", "at"),
)


def account_of(ref: TicketRef) -> str:
    """Whose budget a ticket spends: the GitHub App installation (else the repository owner), or the Jira site
    (one per deployment)."""
    if ref.source == "github":
        owner = ref.project.split("/", 1)[0].casefold()
        return f"github:installation:{ref.installation_id}" if ref.installation_id else f"github:owner:{owner}"
    return "jira:site"


class SpendLedger:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        create_tables(engine, _METADATA)

    def record(
        self, run_id: str, stage: str, account: str, ticket_id: str, cost_usd: float, at: float | None = None
    ) -> None:
        values = {"run_id": run_id, "stage": stage, "account": account, "ticket_id": ticket_id,
                  "cost_usd": cost_usd, "at": time.time() if at is None else at}
        statement = dialect_insert(self.engine, LLM_SPEND).values(**values).on_conflict_do_nothing(
            index_elements=[LLM_SPEND.c.run_id, LLM_SPEND.c.stage])
        with self.engine.begin() as conn:
            conn.execute(statement)

    def spent(self, account: str, since: datetime) -> float:
        query = sa.select(sa.func.coalesce(sa.func.sum(LLM_SPEND.c.cost_usd), 0.0)).where(
            LLM_SPEND.c.account == account, LLM_SPEND.c.at >= since.timestamp())
        with self.engine.connect() as conn:
            return float(conn.execute(query).scalar_one())

    def reviews(self, ticket_id: str, since: datetime) -> int:
        """LLM reviews of the ticket since `since`: runs, not stages."""
        query = sa.select(sa.func.count(sa.distinct(LLM_SPEND.c.run_id))).where(
            LLM_SPEND.c.ticket_id == ticket_id, LLM_SPEND.c.at >= since.timestamp())
        with self.engine.connect() as conn:
            return int(conn.execute(query).scalar_one())
