"""What a client must do, as data like the server's requirements: ``<PREFIX>-CLIENT-NNN``.

``<PREFIX>-CLIENT-001`` (every request matches the document) is the proxy's requirement, the same
object (``proxy.document.client_registry``), judged by the same function. The rest are decided by
the ``client`` command from the mock's journal and the client's exit status, scenario by scenario
(``scenarios.py`` says which scenario decides which).
"""

from __future__ import annotations

from specs.documents import PROTOCOLS, load

from ..proxy.document import client_registry
from ..verdicts.requirements import Authority, Level, Registry, Requirement

RFC9110_RETRY_AFTER = (
    'RFC 9110 §10.2.3: \'Servers send the "Retry-After" header field to indicate how long the user agent '
    "ought to wait before making a follow-up request.'"
)
RFC9110_401 = (
    "RFC 9110 §15.5.2: 'If the request included authentication credentials, then the 401 response indicates "
    "that authorization has been refused for those credentials.'"
)
RFC9110_REDIRECT = (
    "RFC 9110 §15.4.8: 'The 307 (Temporary Redirect) status code indicates that the target resource resides "
    "temporarily under a different URI and the user agent MUST NOT change the request method if it performs an "
    "automatic redirection to that URI.'; §15.4.9: 308 'is similar to 301 (Moved Permanently) ..., except that "
    "it does not allow changing the request method from POST to GET.'"
)
RFC9110_CONTENT_ENCODING = (
    'RFC 9110 §8.4: \'The "Content-Encoding" header field indicates what content codings have been applied to '
    "the representation, beyond those inherent in the media type, and thus what decoding mechanisms have to be "
    "applied in order to obtain data in the media type referenced by the Content-Type header field.'; §12.5.3: "
    "Accept-Encoding is how the user agent says which content codings are acceptable in the response"
)

# (number, level, authority, statement, reference); {document} is the protocol's document
_GENERIC = (
    (
        "002",
        Level.SHOULD,
        Authority.DOCUMENT,
        "After a 429 or 503 answer carrying Retry-After, the client sends its next request no sooner than the "
        "delay it names",
        RFC9110_RETRY_AFTER,
    ),
    (
        "003",
        Level.SHOULD,
        Authority.PRACTICE,
        "The client gives up after a bounded number of retries (at most 5 requests answered 429 or 503 in a "
        "row) when the server stays busy, and says so by its exit status",
        "practice: bounded retries with backoff (openai-python max_retries=2, urllib3 Retry total=10)",
    ),
    (
        "004",
        Level.MUST,
        Authority.DOCUMENT,
        "The client ignores fields of an answer it does not know and completes its task",
        "{document}: the schemas leave additionalProperties open (the mock's stub carrying the extra field is "
        "validated against the document)",
    ),
    (
        "005",
        Level.SHOULD,
        Authority.DOCUMENT,
        "The client does not retry a request refused 401 with the same credentials in a loop (at most one "
        "retry), and reports the failure by its exit status",
        RFC9110_401,
    ),
    (
        "008",
        Level.MUST,
        Authority.DOCUMENT,
        "A 307 or 308 answer is either followed, to its Location with the same method (and body), and the task "
        "completed there, or reported as a failure by the exit status: it is never taken as the answer",
        RFC9110_REDIRECT,
    ),
    (
        "009",
        Level.MUST,
        Authority.DOCUMENT,
        "A client that accepts a content coding (Accept-Encoding: gzip) reads an answer sent in it by undoing the "
        "coding its Content-Encoding names, and completes its task; one that accepts none is sent none",
        RFC9110_CONTENT_ENCODING,
    ),
)

_STREAMED = (
    (
        "006",
        Level.MUST,
        Authority.DOCUMENT,
        "The client does not take a stream cut before its end as a complete answer: it exits non-zero",
        "{document}: a stream ends with its terminal frame ({end})",
    ),
)
HTML_SSE_EVENT_TYPE = (
    "HTML Standard §9.2.6 (interpreting an event stream): 'If the event type buffer has a value other than the "
    "empty string, change the type of the newly created event to equal the value of the event type buffer'; an "
    "event of another type is not a message event"
)
_SSE = (
    (
        "007",
        Level.MUST,
        Authority.DOCUMENT,
        "The client ignores SSE events of a type it does not know (an event: field other than message) and "
        "completes its task from the message events",
        HTML_SSE_EVENT_TYPE,
    ),
)
_SSE_PROTOCOLS = frozenset({"sgr-agent-core"})
_STREAM_END = {
    "sgr-agent-core": "data: [DONE]",
    "neuro-san": "the last AGENT_FRAMEWORK message, which carries the chat_context",
}

# the protocols' own flows: (protocol, number, level, authority, statement, reference)
_FLOWS = (
    (
        "agent-protocol",
        "010",
        Level.MUST,
        Authority.DOCUMENT,
        "The client walks GET /ap/v1/agent/tasks page by page (current_page 1 to pagination.total_pages) to "
        "the end and no further",
        "{document}#/components/schemas/Pagination (total_pages, current_page)",
    ),
    (
        "synapse-agent",
        "010",
        Level.MUST,
        Authority.DOCUMENT,
        "The client walks POST /agent/sessions/list page by page, sending each nextPageToken back, to the "
        "page that has none and no further",
        "{document}#/paths/~1agent~1sessions~1list/post (nextPageToken)",
    ),
    (
        "synapse-agent",
        "011",
        Level.MUST,
        Authority.DOCUMENT,
        "The client polls GET /agent/chat/async/get/{jobId} while it answers 202 and reads the result it "
        "answers when the job is done",
        "{document}#/paths/~1agent~1chat~1async~1get~1{jobId}/get (202 PROCESSING, then 200/201)",
    ),
    (
        "synapse-agent",
        "012",
        Level.SHOULD,
        Authority.PRACTICE,
        "The client polls a running job at a bounded rate (no more than 5 polls a second)",
        "practice: synapseclient polls every second while the job is PROCESSING",
    ),
    (
        "neuro-san",
        "010",
        Level.MUST,
        Authority.DOCUMENT,
        "The client continues a conversation by sending back, whole, the chat_context of the last "
        "AGENT_FRAMEWORK message of the previous answer",
        "{document}#/paths/~1api~1v1~1{agent_name}~1streaming_chat/post (description, point 2)",
    ),
    (
        "sgr-agent-core",
        "010",
        Level.MUST,
        Authority.DOCUMENT,
        "The client answers an agent's clarification question on the documented route (POST "
        "/agents/{agent_id}/provide_clarification, or POST /v1/chat/completions with the agent's id as model) "
        "for the agent that asked, and reads the continuation to its end",
        "{document}#/paths/~1agents~1{agent_id}~1provide_clarification/post",
    ),
)

CLIENT_SUITES: dict[str, Registry] = {}


def client_suite(protocol_id: str) -> Registry:
    """Every client requirement of a protocol: the proxy's CLIENT-001 first, then the scenarios'."""
    if protocol_id not in CLIENT_SUITES:
        info = PROTOCOLS[protocol_id]
        registry = Registry(protocol_id)
        for check in client_registry(protocol_id):
            registry.add(check.requirement, None)
        secured = bool((load(protocol_id).raw.get("components") or {}).get("securitySchemes"))
        # 401 only where the document has credentials to refuse
        rows = [row for row in _GENERIC if secured or row[0] != "005"]
        rows += _STREAMED if protocol_id in _STREAM_END else ()
        rows += _SSE if protocol_id in _SSE_PROTOCOLS else ()
        rows += [row[1:] for row in _FLOWS if row[0] == protocol_id]
        for number, level, authority, statement, ref in rows:
            registry.add(
                Requirement(
                    f"{info.prefix}-CLIENT-{number}",
                    level,
                    statement,
                    ref.replace("{document}", info.document).replace("{end}", _STREAM_END.get(protocol_id, "")),
                    protocol_id,
                    phase="client",
                    authority=authority,
                ),
                None,
            )
        CLIENT_SUITES[protocol_id] = registry
    return CLIENT_SUITES[protocol_id]


def client_requirements(protocol_id: str) -> list[Requirement]:
    return [check.requirement for check in client_suite(protocol_id)]
