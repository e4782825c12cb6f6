"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 that records and answers from a script.

    fake = FakeAnthropic().start()          # or the `fake_anthropic` pytest fixture
    fake.script(Reply.rate_limited(), Reply.json({...}))
    client = LLMClient("sk-ant-fake", settings, base_url=fake.url)
    ... fake.requests[0].body["model"] ...
    subprocess.run([...], env={**os.environ, **fake.env()})   # another process talks to it over HTTP

Each request to `POST /v1/messages` takes the next scripted item (a `Reply`, a `Hold`, or a callable
`RecordedRequest -> Reply`); with the script empty, `default_reply` answers plausibly: a valid
structure JSON for a structured-output request, a PRD section that contains every criterion, question
and the verdict line for a text request. Requests the real API would refuse (unknown parameters such as
`temperature`, a schema with keywords that structured output rejects, more than four cache breakpoints,
a trailing assistant turn) get the API's 400 without consuming the script.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

KNOWN_PARAMS = frozenset({
    "model", "max_tokens", "messages", "cache_control", "container", "diagnostics", "inference_geo",
    "metadata", "output_config", "service_tier", "speed", "stop_sequences", "stream", "system", "thinking",
    "tool_choice", "tools", "user_profile_id", "workspace_id",
})
UNSUPPORTED_SCHEMA_KEYWORDS = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
    "maxItems", "minProperties", "maxProperties",
})


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    raw: str
    body: dict[str, Any]
    received_at: float

    @property
    def system_blocks(self) -> list[dict[str, Any]]:
        system = self.body.get("system") or []
        return [{"type": "text", "text": system}] if isinstance(system, str) else list(system)

    @property
    def system_text(self) -> str:
        return "\n".join(block.get("text", "") for block in self.system_blocks)

    def texts(self, role: str) -> list[str]:
        out = []
        for message in self.body.get("messages", []):
            if message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            else:
                out.extend(block.get("text", "") for block in content or [] if isinstance(block, dict))
        return out

    @property
    def user_text(self) -> str:
        return "\n".join(self.texts("user"))

    @property
    def last_user_text(self) -> str:
        texts = self.texts("user")
        return texts[-1] if texts else ""

    @property
    def schema(self) -> dict[str, Any] | None:
        output_config = self.body.get("output_config") or {}
        fmt = output_config.get("format") or {}
        return fmt.get("schema") if fmt.get("type") == "json_schema" else None


@dataclass(frozen=True)
class Reply:
    """One scripted answer. `text=None` on a 200 means "let the smart default write the text"."""

    status: int = 200
    text: str | None = None
    stop_reason: str = "end_turn"
    error_type: str = ""
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: dict[str, int] | None = None
    empty_content: bool = False

    @classmethod
    def json(cls, data: Any, **kw: Any) -> Reply:
        return cls(text=data if isinstance(data, str) else json.dumps(data), **kw)

    @classmethod
    def markdown(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def default(cls, **kw: Any) -> Reply:
        return cls(**kw)

    @classmethod
    def invalid_json(cls) -> Reply:
        return cls(text='{"ticket_type": "story", "prd": {"title": "Export tasks", ')

    @classmethod
    def refusal(cls) -> Reply:
        return cls(stop_reason="refusal", empty_content=True)

    @classmethod
    def truncated(cls, text: str = '{"ticket_type": "story", "prd": {"title": "Exp') -> Reply:
        return cls(text=text, stop_reason="max_tokens")

    @classmethod
    def error(cls, status: int, error_type: str, message: str = "", headers: dict[str, str] | None = None) -> Reply:
        return cls(status=status, error_type=error_type, error_message=message or error_type,
                   headers=headers or {})

    @classmethod
    def rate_limited(cls, retry_after: str | None = "0", **headers: str) -> Reply:
        extra = {"retry-after": retry_after} if retry_after is not None else {}
        return cls.error(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit.",
                         {**extra, **{k.replace("_", "-"): v for k, v in headers.items()}})

    @classmethod
    def overloaded(cls, retry_after: str | None = None) -> Reply:
        return cls.error(529, "overloaded_error", "Overloaded",
                         {"retry-after": retry_after} if retry_after is not None else {})

    @classmethod
    def server_error(cls) -> Reply:
        return cls.error(500, "api_error", "Internal server error")

    @classmethod
    def bad_request(cls, message: str = "invalid request") -> Reply:
        return cls.error(400, "invalid_request_error", message)

    @classmethod
    def slow(cls, delay_s: float, then: Reply | None = None) -> Reply:
        return replace(then or cls(), delay_s=delay_s)


class Hold:
    """Blocks the request that takes it until `release()`: `arrived` is set once the request is in."""

    def __init__(self, then: Reply | None = None):
        self.then = then or Reply()
        self.arrived = threading.Event()
        self._gate = threading.Event()

    def release(self) -> None:
        self._gate.set()

    def wait_arrived(self, timeout: float = 10.0) -> bool:
        return self.arrived.wait(timeout)

    def _block(self, stopping: threading.Event) -> None:
        self.arrived.set()
        while not self._gate.wait(0.05):
            if stopping.is_set():
                return


ScriptItem = Reply | Hold | Callable[[RecordedRequest], Reply]


# --- the smart default -------------------------------------------------------------------------------

def _between(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    return match.group(1) if match else None


def ticket_text(request: RecordedRequest) -> str:
    """The ticket as call 1 delimits it in the user message (the whole message if it is not delimited)."""
    return _between(request.user_text, "untrusted_ticket") or request.user_text


def _find_enum(schema: Any, prop: str) -> list[str] | None:
    if isinstance(schema, dict):
        found = (schema.get("properties") or {}).get(prop)
        if isinstance(found, dict) and isinstance(found.get("enum"), list):
            return [str(value) for value in found["enum"]]
        for value in schema.values():
            result = _find_enum(value, prop)
            if result:
                return result
    elif isinstance(schema, list):
        for value in schema:
            result = _find_enum(value, prop)
            if result:
                return result
    return None


def _first_sentence(ticket: str) -> str:
    for line in ticket.splitlines():
        line = line.strip()
        if len(line) >= 3:
            sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
            return sentence[:80].rsplit(" ", 1)[0] if len(sentence) > 80 else sentence
    return ticket.strip()[:80]


def _prd_properties(schema: Any) -> set[str]:
    try:
        return set(schema["properties"]["prd"]["properties"])
    except (KeyError, TypeError):
        return set()


def _typed_draft(parts: set[str], quoted: dict[str, Any], sentence: str) -> dict[str, Any]:
    """The type-specific part of the draft, shaped as the request's schema asks."""
    if "bug" in parts:
        return {"bug": {"observed": quoted, "expected": None, "steps": [], "environment": None}}
    if "task" in parts:
        return {"task": {"change": quoted, "done": [
            {"text": "The change is covered by an automated test.", "evidence": None, "inferred": True}]}}
    if "spike" in parts:
        return {"spike": {"question": quoted, "expected_output": None, "timebox": None}}
    return {
        "user_story": {"role": None, "want": quoted, "benefit": None},
        "acceptance_criteria": [
            {"text": f"The delivered change does what the ticket states: {sentence}", "evidence": sentence,
             "inferred": False},
            {"text": "The change is covered by an automated test.", "evidence": None, "inferred": True},
        ],
    }


def smart_structure(request: RecordedRequest) -> dict[str, Any]:
    """A valid structure answer quoting the ticket's first sentence, with top ratings, shaped like the
    request's schema (a story's, a bug's, a task's or a spike's draft)."""
    sentence = _first_sentence(ticket_text(request))
    types = _find_enum(request.schema, "ticket_type") or ["story"]
    hinted = re.search(r"Ticket type[^:\n]*:\s*(\w+)", request.user_text)
    ticket_type = hinted.group(1) if hinted and hinted.group(1) in types else types[0]
    dimensions = _find_enum(request.schema, "dimension") or []
    quoted = {"text": sentence, "evidence": sentence, "inferred": False}
    parts = _prd_properties(request.schema)
    answer: dict[str, Any] = {
        "ticket_type": ticket_type,
        "prd": {
            "title": sentence[:60] or "Untitled",
            **_typed_draft(parts, quoted, sentence),
            "edge_cases": [],
            "dependencies": [],
            "missing_info": [],
            "questions": ["Who is the primary user of this change?"],
        },
        "ratings": [{"dimension": d, "score": 5, "rationale": "Stated clearly in the ticket.", "evidence": sentence}
                    for d in dimensions],
        "suspected_injection": False,
        "injection_evidence": None,
    }
    properties = (request.schema or {}).get("properties") or {}
    for name in ("issues", "dismissals"):
        if name in properties:
            answer[name] = []
    return answer


def smart_markdown(request: RecordedRequest) -> str:
    """A PRD section that names every criterion, step, done condition, question and the verdict line it was
    given."""
    text = request.user_text
    verdict = re.search(r"Verdict: (Ready|Needs info)", text)
    draft: dict[str, Any] = {}
    raw = _between(text, "draft_json")
    if raw:
        try:
            draft = json.loads(raw)
        except json.JSONDecodeError:
            draft = {}
    prd = draft.get("prd") or {}
    lines = [f"**Title:** {prd.get('title', 'Untitled')}", "", "**Acceptance criteria**"]
    for item in prd.get("acceptance_criteria") or []:
        source = f'_(from: "{item["evidence"]}")_' if item.get("evidence") else "_(inferred)_"
        lines.append(f"- [ ] {item.get('text', '')} {source}")
    for part, key, heading in (("bug", "steps", "**Steps to reproduce**"), ("task", "done", "**Done when**")):
        items = (prd.get(part) or {}).get(key) or []
        if items:
            lines += ["", heading, *[f"- [ ] {item.get('text', '')}" for item in items]]
    lines += ["", "**Questions**"]
    lines += [f"- [ ] {question}" for question in prd.get("questions") or []]
    lines += ["", f"Verdict: {verdict.group(1) if verdict else 'Needs info'}"]
    return "\n".join(lines)


def default_reply(request: RecordedRequest) -> str:
    return json.dumps(smart_structure(request)) if request.schema is not None else smart_markdown(request)


# --- request checks the real API makes ------------------------------------------------------------------

def _schema_problem(node: Any, path: str = "schema") -> str | None:
    if isinstance(node, dict):
        for key in UNSUPPORTED_SCHEMA_KEYWORDS & set(node):
            return f"{path}: '{key}' is not supported by structured outputs"
        if node.get("minItems") not in (None, 0, 1):
            return f"{path}: minItems only supports 0 or 1"
        if node.get("type") == "object" and node.get("additionalProperties") is not False:
            return f"{path}: objects must set additionalProperties to false"
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    problem = _schema_problem(sub, f"{path}.properties.{name}")
                    if problem:
                        return problem
            else:
                problem = _schema_problem(value, f"{path}.{key}")
                if problem:
                    return problem
    elif isinstance(node, list):
        for index, value in enumerate(node):
            problem = _schema_problem(value, f"{path}[{index}]")
            if problem:
                return problem
    return None


def _count_breakpoints(body: dict[str, Any]) -> int:
    blocks: list[Any] = list(body.get("system") or []) if isinstance(body.get("system"), list) else []
    for message in body.get("messages") or []:
        if isinstance(message.get("content"), list):
            blocks.extend(message["content"])
    return sum(1 for block in blocks if isinstance(block, dict) and block.get("cache_control"))


def request_problem(request: RecordedRequest) -> tuple[int, str, str] | None:
    if request.method != "POST" or request.path.split("?")[0] != "/v1/messages":
        return 404, "not_found_error", f"Not found: {request.method} {request.path}"
    if not request.headers.get("x-api-key") and not request.headers.get("authorization"):
        return 401, "authentication_error", "x-api-key header is required"
    body = request.body
    if not isinstance(body, dict):
        return 400, "invalid_request_error", "body must be a JSON object"
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return 400, "invalid_request_error", f"{name}: Field required"
    unknown = sorted(set(body) - KNOWN_PARAMS)
    if unknown:
        return 400, "invalid_request_error", f"{unknown[0]}: Extra inputs are not permitted"
    if body.get("stream"):
        return 400, "invalid_request_error", "this fake does not stream"
    messages = body["messages"]
    if not messages or messages[-1].get("role") != "user":
        return 400, "invalid_request_error", "This model does not support assistant message prefill."
    if _count_breakpoints(body) > 4:
        return 400, "invalid_request_error", "A maximum of 4 blocks with cache_control may be provided."
    if "output_config" in body:
        problem = _schema_problem(request.schema)
        if request.schema is None or problem:
            return 400, "invalid_request_error", f"output_config.format: {problem or 'a json_schema is required'}"
    return None


# --- the server ----------------------------------------------------------------------------------------

def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class FakeAnthropic:
    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.requests: list[RecordedRequest] = []
        self.default_responder: Callable[[RecordedRequest], str] = default_reply
        self._host, self._port = host, port
        self._script: list[ScriptItem] = []
        self._holds: list[Hold] = []
        self._cache_prefixes: set[str] = set()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # Requests of this test being answered at this moment, and the most there ever were: the client's
        # concurrency. A request a previous test gave up on (a timeout) may still be answered; it is not counted.
        self.in_flight = 0
        self.most_at_once = 0
        self._generation = 0
        # (received, answered) wall-clock times of every request: how busy the client kept the API.
        self.busy: list[tuple[float, float]] = []

    # lifecycle

    def start(self) -> Self:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                fake._handle(self)

            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output quiet

        self._server = ThreadingHTTPServer((self._host, self._port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        return f"http://{self._host}:{self._server.server_port}"

    def env(self, api_key: str = "sk-ant-fake-key") -> dict[str, str]:
        """Environment for a subprocess (or monkeypatch) that should use this fake."""
        return {"ANTHROPIC_API_KEY": api_key, "ANTHROPIC_BASE_URL": self.url}

    # scripting

    def script(self, *items: ScriptItem) -> Self:
        with self._lock:
            self._script.extend(items)
        return self

    def hold_next(self, then: Reply | None = None) -> Hold:
        hold = Hold(then)
        self.script(hold)
        return hold

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    def reset(self) -> None:
        """Forget requests, script and cache state; release any held request."""
        with self._lock:
            self.requests.clear()
            self.busy.clear()
            self._script.clear()
            self._cache_prefixes.clear()
            holds, self._holds = self._holds, []
            self._generation += 1
            self.in_flight = self.most_at_once = 0
        self.default_responder = default_reply
        for hold in holds:
            hold.release()

    def structure_calls(self) -> int:
        """Call 1 is the request with an output schema (structured output); call 2 has none."""
        return sum(1 for request in self.requests if request.schema is not None)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
            return True

    @property
    def messages_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    # serving

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        handler._reqgate_received = time.time()  # type: ignore[attr-defined]
        with self._lock:
            handler._reqgate_generation = self._generation  # type: ignore[attr-defined]
            self.in_flight += 1
            self.most_at_once = max(self.most_at_once, self.in_flight)
        try:
            self._answer(handler)
        finally:
            self._answered(handler)

    def _answered(self, handler: BaseHTTPRequestHandler) -> None:
        """Counted out before the answer is written: the client may send its next request once it has read it."""
        if getattr(handler, "_reqgate_answered", False):
            return
        handler._reqgate_answered = True  # type: ignore[attr-defined]
        with self._lock:
            if handler._reqgate_generation == self._generation:  # type: ignore[attr-defined]
                self.in_flight -= 1
                self.busy.append((handler._reqgate_received, time.time()))  # type: ignore[attr-defined]

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length).decode("utf-8", "replace") if length else ""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = None
        request = RecordedRequest(
            method=handler.command, path=handler.path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            raw=raw, body=body if isinstance(body, dict) else {}, received_at=time.time(),
        )
        with self._arrived:
            self.requests.append(request)
            self._arrived.notify_all()
        problem = request_problem(request) if body is not None else (400, "invalid_request_error", "invalid JSON")
        if problem:
            status, kind, message = problem
            self._send(handler, status, {"type": "error", "error": {"type": kind, "message": message}}, {})
            return
        reply = self._next_reply(request)
        if reply.delay_s and self._stopping.wait(reply.delay_s):
            return
        if reply.status != 200:
            error = {"type": "error", "error": {"type": reply.error_type, "message": reply.error_message}}
            self._send(handler, reply.status, error, reply.headers)
            return
        self._send(handler, 200, self._message(request, reply), reply.headers)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            item = self._script.pop(0) if self._script else Reply()
            if isinstance(item, Hold):
                self._holds.append(item)
        if isinstance(item, Hold):
            item._block(self._stopping)
            return item.then
        if isinstance(item, Reply):
            return item
        return item(request)

    def _usage(self, request: RecordedRequest, text: str) -> dict[str, int]:
        # Simulate prompt caching: everything up to the last system breakpoint is written once, then read.
        blocks = request.system_blocks
        marked = [i for i, block in enumerate(blocks) if block.get("cache_control")]
        prefix = "".join(block.get("text", "") for block in blocks[: marked[-1] + 1]) if marked else ""
        cached = _tokens(prefix) if prefix else 0
        read = creation = 0
        if prefix:
            key = hashlib.sha256((request.body.get("model", "") + prefix).encode()).hexdigest()
            with self._lock:
                if key in self._cache_prefixes:
                    read = cached
                else:
                    creation = cached
                    self._cache_prefixes.add(key)
        return {"input_tokens": max(_tokens(request.raw) - cached, 1), "output_tokens": _tokens(text) if text else 0,
                "cache_creation_input_tokens": creation, "cache_read_input_tokens": read}

    def _message(self, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        text = "" if reply.empty_content else (reply.text if reply.text is not None else
                                                 self.default_responder(request))
        content = [] if reply.empty_content else [{"type": "text", "text": text}]
        return {
            "id": f"msg_fake_{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model"),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": reply.usage or self._usage(request, text),
        }

    def _send(self, handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any],
              headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self._answered(handler)
        try:
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.send_header("request-id", f"req_fake_{next(self._ids):06d}")
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (a timeout test); nothing to tell it
