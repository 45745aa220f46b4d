"""A finding's reproduction as a runnable POSIX ``sh`` script, and the comparison both replays make.

The script sends the calls with curl, captures each id with grep and sed (nothing a user may lack),
and judges as ``conformance replay`` does: every compared answer (each setup call that writes or
gives an id, and the deciding call) against the recorded one, by its status, its headers and its
body with today's ids named and what every run makes anew blanked (uuids, date-times, epoch
numbers); a body the report could not keep as text by its POSIX ``cksum``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from ..verdicts.cksum import cksum
from ..verdicts.reproduction import WRITES, Part, Reproduction, fill, produced, sent_tokens, template
from ..verdicts.results import Exchange, Finding
from .curl import printable, printf_format

# Blanked in a fingerprint (after today's captured values are named): what every run makes anew.
# Each is written once for Python (``re``) and once for sed's basic regular expressions, the same.
VOLATILE: tuple[tuple[str, str, str], ...] = (
    (
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        r"[0-9a-fA-F]\{8\}-[0-9a-fA-F]\{4\}-[0-9a-fA-F]\{4\}-[0-9a-fA-F]\{4\}-[0-9a-fA-F]\{12\}",
        "<uuid>",
    ),
    # a hex id (a completion's chatcmpl-...) before numbers: a digit run inside one is not a number
    (r"[0-9a-f]{16,}", r"[0-9a-f]\{16,\}", "<hex>"),
    (
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?",
        r"[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}[T ][0-9]\{2\}:[0-9]\{2\}:[0-9]\{2\}\(\.[0-9][0-9]*\)\{0,1\}",
        "<date-time>",
    ),
    (r"[0-9]{9,}(\.[0-9]+)?", r"[0-9]\{9,\}\(\.[0-9][0-9]*\)\{0,1\}", "<n>"),
)


# ---- judging ----------------------------------------------------------------------------------


def fingerprint(body: str, named: dict[str, str]) -> str:
    """A body as a reproduction compares it: captured values named, volatile ones blanked."""
    for value, name in sorted(named.items(), key=lambda kv: -len(kv[0])):
        if value:
            body = body.replace(value, "{" + name + "}")
    for python, _sed, mark in VOLATILE:
        body = re.sub(python, mark, body)
    return body.rstrip("\n")


def recorded_body(ex: Exchange) -> tuple[str, int | None]:
    """The recorded answer's text and, when the report kept only its start, how many bytes of a
    new answer to compare (None: the whole)."""
    text = ex.response_body or ""
    cut = re.search(r"\.\.\. \[\d+ more characters\]$", text)
    if cut:
        text = text[: cut.start()]
    elif not streamed(ex) or ex.stream_ended:
        return text, None
    # a stream is recorded as far as the check read it (it may stop at the frame that decided)
    kept = text.rstrip("\ufffd")  # a transcript may end inside a character
    return kept, len(kept.encode("utf-8"))


def streamed(ex: Exchange) -> bool:
    """Whether the call was read as a stream (its curl line has ``-N``, as the client sent it)."""
    return " -N " in ex.curl


VOLATILE_HEADERS = frozenset(
    {
        "date",
        "server",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "etag",
        "last-modified",
        "age",
        "expires",
        "set-cookie",
        "via",
        "alt-svc",
        "x-request-id",
        "x-correlation-id",
        "request-id",
        "traceparent",
    }
)
"""Headers a replay does not compare: they describe the connection or change by themselves."""
BINARY = "<binary>"
"""A body the report kept only as a lossy preview and no checksum of: compared by status and headers."""


def judged_setup(rep: Reproduction, index: int) -> bool:
    """Whether a replay requires the call at ``index`` to answer as recorded: a write, or a call
    whose answer gives a later one its id. A read that only looked (a poll, a probe) is sent for its
    timing and never judged: its recorded answer may be the very fault."""
    ex = rep.steps[index]
    return ex.method.upper() in WRITES or any(c.step == index for c in rep.captures)


def compared(rep: Reproduction) -> list[int]:
    """The calls whose answers a replay compares with the recorded ones: the judged setup calls
    (an earlier answer may be the wrong one, as an upload's that a later listing contradicts) and
    the deciding call."""
    last = len(rep.steps) - 1
    return [n for n in range(last) if judged_setup(rep, n)] + [last]


def _headers(headers: Iterable[tuple[str, str]], named: dict[str, str]) -> list[str]:
    return sorted(
        f"{k.lower()}: {fingerprint(v.strip(), named)}" for k, v in headers if k.lower() not in VOLATILE_HEADERS
    )


def expected(rep: Reproduction, index: int) -> str:
    """The recorded answer of call ``index`` as a replay compares it: status, headers, body."""
    ex = rep.steps[index]
    text, _ = recorded_body(ex)
    named = {c.value: c.name for c in rep.captures if c.step <= index}
    if ex.response_cksum is not None:
        body = f"{BINARY} {ex.response_cksum}"
    else:
        body = BINARY if "\ufffd" in text else fingerprint(text, named)
    return "\n".join([f"HTTP {ex.status}", *_headers(ex.response_headers.items(), named), "--", body])


def observed(
    rep: Reproduction, index: int, status: int, headers: Iterable[tuple[str, str]], body: bytes, values: dict[str, str]
) -> str:
    """Today's answer of call ``index`` as a replay compares it (``values``: today's captures)."""
    ex = rep.steps[index]
    text, cut = recorded_body(ex)
    names = {c.name for c in rep.captures if c.step <= index}
    named = {v: k for k, v in values.items() if k in names}
    if ex.response_cksum is not None:
        shown = f"{BINARY} {cksum(body)}"
    elif "\ufffd" in text:
        shown = BINARY
    else:
        kept = body[:cut] if cut is not None else body
        shown = fingerprint(kept.decode("utf-8", "replace"), named)
    return "\n".join([f"HTTP {status}", *_headers(headers, named), "--", shown])


def outside_state(rep: Reproduction) -> bool:
    """Whether the recorded answers depend on state these calls did not make: the requirement says
    so, or a compared read answered with objects they did not make (a listing of what the whole run,
    or the server before it, held). From a fresh state those answers differ whatever the server
    does, so a difference cannot tell."""
    if rep.state_dependent:
        return True
    made = {v for ex in rep.steps if ex.method.upper() in WRITES for _, _, v in produced(ex)}
    made |= {v for ex in rep.steps for v in sent_tokens(ex)}
    for n in compared(rep):
        ex = rep.steps[n]
        if ex.method.upper() in WRITES:
            continue
        if any(v not in made and any(ch.isdigit() for ch in v) for _, _, v in produced(ex)):
            return True
    return False


# ---- the script -------------------------------------------------------------------------------

_OWN_HEADERS = frozenset({"host", "content-length", "connection", "user-agent", "accept-encoding", "transfer-encoding"})


def _sh(parts: Sequence[Part]) -> str:
    return "".join(f'"${{{p}}}"' if var else shlex.quote(p) for p, var in parts if p)


def _sed_header(name: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in name)


_PRELUDE = r"""set -u
LC_ALL=C; export LC_ALL
MAX_TIME=${MAX_TIME:-30}
D=$(mktemp -d) || exit 2
trap 'rm -rf "$D"' EXIT
NAMED=""   # sed expressions naming each captured value, as the recorded answers name them
DIFFER=""  # the calls whose answer is not the recorded one
inconclusive() { echo "INCONCLUSIVE: $*"; exit 2; }
capture() { # variable, value, call
  [ -n "$2" ] || inconclusive "answer $3 carries no value for $1"
  eval "$1=\$2"
  NAMED="$NAMED -e s/$(printf '%s' "$2" | sed 's/[.]/\\./g')/{$1}/g"
}
norm() {
  sed -e 's/^//' $NAMED @NORM@
}
setup() { # call, recorded status: a setup call must answer as it did (a 2xx stays a 2xx)
  got=$(cat "$D/$1.code"); echo "$1. HTTP $got (recorded $2)"
  case "$got:$2" in 2??:2??|3??:3??|???:4??|???:5??) ;;  # a refused write made nothing to lose
  *) inconclusive "setup call $1 answered $got, recorded $2";; esac
}
heads() { # call: its answer's headers, named, sorted, without those that change by themselves
  tr -d '\r' < "$D/$1.head" | sed -n '/^HTTP\//h; /^HTTP\//!H; ${x;p;}' | sed '1d; /^$/d' \
    | awk '{ i = index($0, ":"); if (i) print tolower(substr($0, 1, i - 1)) ": " substr($0, i + 1) }' \
    | sed 's/: */: /; s/ *$//' | grep -v -E '^(@HEADERS@): ' | norm | sort
}
compare() { # call [bytes]: its answer (status, headers, body) against the recorded one
  body=$(sed -n '/^--$/{n;p;q;}' "$D/$1.want")
  case "$body" in
    "<binary> "*) body="<binary> $(cksum < "$D/$1.body")";;
    "<binary>") ;;
    *) if [ -n "${2:-}" ]; then body=$(dd bs=1 count="$2" 2>/dev/null < "$D/$1.body" | norm)
       else body=$(norm < "$D/$1.body"); fi;;
  esac
  got=$(printf 'HTTP %s\n' "$(cat "$D/$1.code")"; heads "$1"; printf -- '--\n%s' "$body")
  printf '%s\n' "$got" > "$D/$1.got"
  printf '%s\n' "$(cat "$D/$1.want")" > "$D/$1.want.n"
  cmp -s "$D/$1.want.n" "$D/$1.got" || { DIFFER="$DIFFER $1"; diff "$D/$1.want.n" "$D/$1.got"; }
}"""


def script(rep: Reproduction, title: str, base_url: str) -> str:
    """A POSIX sh script that sends the calls with curl, captures each id with grep and sed, and
    says whether the answers are the recorded ones: exit 0 reproduced, 1 not reproduced, 2
    inconclusive (a setup call failed, an id could not be captured, or the recorded answer showed
    objects these calls did not make)."""
    base = base_url.rstrip("/")
    norm = " ".join(f"-e {shlex.quote(f's/{sed}/{mark}/g')}" for _, sed, mark in VOLATILE)
    judged = compared(rep)
    outside = outside_state(rep)
    lines = [
        "#!/bin/sh",
        *(f"# {line}" for line in title.splitlines()[:6]),
        f"# {len(rep.steps)} call(s) from a fresh state; the last one's answer broke the rule.",
        "# Usage: sh THIS_FILE [BASE_URL]    (needs curl, grep and sed)",
        "# Exit: 0 reproduced, 1 not reproduced (an answer differs), 2 inconclusive (it cannot tell).",
        "# MAX_TIME (seconds, default 30) bounds each call.",
    ]
    if rep.baked:
        lines.append(
            f"# Sends values an earlier run's answers gave (the server may no longer hold them): {', '.join(rep.baked)}"
        )
    if outside:
        lines.append(
            "# The recorded answers also showed objects these calls did not make: another state answers otherwise."
        )
    prelude = _PRELUDE.replace("@NORM@", norm).replace("@HEADERS@", "|".join(sorted(VOLATILE_HEADERS)))
    lines += [f"BASE=${{1:-{shlex.quote(base)}}}", prelude]
    for n, ex in enumerate(rep.steps, 1):
        index = n - 1
        last = index == len(rep.steps) - 1
        relative = ex.url.startswith(base)
        url = template(ex.url[len(base) :] if relative else ex.url, rep.captures, index)
        opts = [
            "curl",
            "-sS",
            "-m",
            '"$MAX_TIME"',
            "-o",
            f'"$D/{n}.body"',
            "-D",
            f'"$D/{n}.head"',
            "-w",
            "'%{http_code}'",
        ]
        opts += ["-X", ex.method.upper()]
        for name, value in ex.request_headers.items():
            if name.lower() not in _OWN_HEADERS:
                opts += ["-H", shlex.quote(f"{name}: {value}")]
        prefix = ""
        raw = ex.sent_body
        if raw:
            text = printable(raw)
            if text is not None:
                opts += ["--data-binary", _sh(template(text, rep.captures, index))]
            else:
                pieces = template(raw.decode("latin-1"), rep.captures, index)
                printfs = [
                    f"printf '%s' \"${{{p}}}\"" if var else f"printf -- {printf_format(p.encode('latin-1'))}"
                    for p, var in pieces
                    if p
                ]
                prefix = "{ " + "; ".join(printfs) + "; } | "
                opts += ["--data-binary", "@-"]
        opts += ["--globoff", ('"$BASE"' if relative else "") + _sh(url)]
        what = "the answer that broke the rule" if last else ("setup" if index in judged else "sent for its timing")
        shown = fill(url, {c.name: "{" + c.name + "}" for c in rep.captures})
        lines += [
            "",
            f"# {n}. {ex.method.upper()} {urlsplit(shown).path or shown} (recorded: HTTP {ex.status}; {what})",
        ]
        call = f'{prefix}{" ".join(opts)} > "$D/{n}.code"'
        if last and ex.error:  # the recorded failure is that no whole answer came: still none is the same
            lines.append(f'{call} || {{ echo "REPRODUCED: no whole answer within $MAX_TIME s, as recorded"; exit 0; }}')
            lines.append(f'DIFFER="$DIFFER {n}"; echo "{n}. a whole answer came; the recorded call got none"')
        else:
            lines.append(f'{call} || inconclusive "call {n} got no whole answer within $MAX_TIME s"')
        if index in judged and not last:
            lines.append(f"setup {n} {ex.status}")
        for c in rep.captures:
            if c.step != index:
                continue
            if c.source == "header":
                grab = f"tr -d '\\r' < \"$D/{n}.head\" | sed -n 's/^{_sed_header(c.key)}: *//p' | sed -n '$p'"
            else:
                member = shlex.quote(f'"{c.key}" *: *"[^"]*"')
                value_of = 'sed \'s/.*"\\([^"]*\\)"$/\\1/\''
                grab = f"grep -o {member} \"$D/{n}.body\" | sed -n '{c.nth}p' | {value_of}"
            lines.append(f'capture {c.name} "$({grab})" {n}')
        if index in judged:
            _, cut = recorded_body(ex)
            lines += [f"cat > \"$D/{n}.want\" <<'RECORDED_{n}'", expected(rep, index), f"RECORDED_{n}"]
            lines.append(f"compare {n}" + (f" {cut}" if cut is not None else ""))
    n = len(rep.steps)
    lines += [
        f'echo "{n}. HTTP $(cat "$D/{n}.code") (recorded {rep.steps[-1].status})"; cat "$D/{n}.body"; echo',
        'if [ -z "$DIFFER" ]; then echo "REPRODUCED: the answers are the recorded ones"; exit 0; fi',
    ]
    if outside:
        lines.append(
            'inconclusive "call(s)$DIFFER answered otherwise, but the recorded answers showed objects made elsewhere"'
        )
    else:
        lines.append('echo "NOT REPRODUCED: call(s)$DIFFER answered otherwise than recorded"; exit 1')
    return "\n".join(lines) + "\n"


def script_of(finding: Finding, base_url: str, *, state_dependent: bool = False) -> str:
    """The finding's reproduction as a script (empty when it records no call)."""
    if not finding.evidence:
        return ""
    rep = Reproduction(finding.evidence, finding.captures, finding.baked, state_dependent)
    return script(rep, f"{finding.key}\n{finding.message}", base_url)


def script_name(finding: Finding, n: int) -> str:
    """``AP-TASK-002-1.sh``: the requirement and the finding's place among its findings."""
    return f"{finding.requirement}-{n}.sh"
