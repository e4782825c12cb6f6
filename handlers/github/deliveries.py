"""The GitHub App's webhook deliveries: which recent ones failed, and asking GitHub to send one again.

GitHub never redelivers on its own: a delivery that found ReqGate down or unreachable is lost unless it is
asked for again (`POST /app/hook/deliveries/{id}/attempts`, App JWT only). GitHub keeps deliveries for a
few days and lists them newest first, paged by a cursor in the Link header. A redelivery keeps the
delivery's GUID (the `X-GitHub-Delivery` header), which is what ReqGate dedupes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import httpx
from pydantic import BaseModel, ConfigDict

from reqgate.handlers.github.client import DEFAULT_API_URL, USER_AGENT, app_auth


class Delivery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    guid: str
    delivered_at: datetime
    redelivery: bool = False
    status_code: int = 0  # 0: no answer at all (timeout, connection refused)
    status: str = ""
    event: str = ""
    action: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300


def failed_guids(deliveries: list[Delivery]) -> dict[str, Delivery]:
    """GUID -> its latest attempt, for every GUID none of whose attempts was answered with a 2xx."""
    latest: dict[str, Delivery] = {}
    delivered: set[str] = set()
    for delivery in deliveries:
        if delivery.ok:
            delivered.add(delivery.guid)
        current = latest.get(delivery.guid)
        if current is None or delivery.delivered_at > current.delivered_at:
            latest[delivery.guid] = delivery
    return {guid: attempt for guid, attempt in latest.items() if guid not in delivered}


class AppDeliveries:
    """The App's delivery log over the REST API, authenticated with the App's JWT."""

    def __init__(self, app_id: int, private_key: str, api_url: str = DEFAULT_API_URL, timeout: float = 15.0) -> None:
        self._auth = app_auth(app_id, private_key)
        self._http = httpx.Client(base_url=api_url.rstrip("/") + "/", timeout=timeout,
                                  headers={"Accept": "application/vnd.github+json", "User-Agent": USER_AGENT,
                                           "X-GitHub-Api-Version": "2022-11-28"})

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._auth.token}"}

    def since(self, oldest: datetime) -> Iterator[Delivery]:
        """Deliveries newer than `oldest`, newest first."""
        url: str | None = "app/hook/deliveries"
        params: dict[str, str] | None = {"per_page": "100"}
        while url is not None:
            response = self._http.get(url, params=params, headers=self._headers())
            response.raise_for_status()
            for item in response.json():
                delivery = Delivery.model_validate(item)
                if delivery.delivered_at < oldest:
                    return
                yield delivery
            url = response.links.get("next", {}).get("url")
            params = None  # the next link carries the cursor and page size

    def redeliver(self, delivery_id: int) -> None:
        response = self._http.post(f"app/hook/deliveries/{delivery_id}/attempts", headers=self._headers())
        response.raise_for_status()

    def close(self) -> None:
        self._http.close()
