"""A finding's reproduction as a runnable POSIX ``sh`` script, and the comparison both replays make.

The script sends the calls with curl, captures each id with grep and sed (nothing a user may lack),
and judges as ``conformance replay`` does: every compared answer (each setup call that writes or
gives an id, and the deciding call) against the recorded one, by its status, its headers and its
body with today's ids named and what every run makes anew blanked (uuids, date-times, epoch
numbers); a body the report could not keep as text by its POSIX ``cksum``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from ..verdicts.cksum import cksum
from ..verdicts.reproduction import (
    CUT,
    STATUS,
    Part,
    Reproduction,
    compared,
    fill,
    outside_state,
    pauses,
    required,
    sent_at_once,
    stale_facts,
    template,
)
from ..verdicts.results import Exchange, Finding
from .credentials import NONE, Credentials, variables
from .curl import printable, printf_format, word

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
    # epoch times (and other long numbers) by their number of digits: seconds and milliseconds differ
    *((rf"[0-9]{{{k}}}(\.[0-9]+)?", rf"[0-9]\{{{k}\}}\(\.[0-9][0-9]*\)\{{0,1\}}", f"<n{k}>") for k in range(19, 8, -1)),
)
DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+")
"""A date-time to the fraction of a second, blanked by its rank among the answer's own
(``<date-time#2>``): which came first, and which are the same, is kept (a response time before its
request, a modifiedOn that did not move), what the clock said is not. The suite's client never
sends two calls within 2 ms (``check/http.py``), so two events it caused never share a time by
chance; a date-time to the second only (many calls share one) is blanked as ``<date-time>``."""
_DATE_ERE = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]\\.[0-9]+"
SECONDS: tuple[str, str, str] = (
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}",
    "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]",
    "<date-time>",
)
"""A date-time to the second, blanked after the ranked ones (for Python, and for awk as an ERE
without intervals, which older mawk lacks)."""
RANK_DATES = (
    '{ body = body (NR > 1 ? "\\n" : "") $0 } END { s = body; n = 0\n'
    f"  while (match(s, /{_DATE_ERE}/)) {{ v = substr(s, RSTART, RLENGTH)\n"
    "    if (!(v in seen)) { seen[v] = 1; d[++n] = v }\n"
    "    s = substr(s, RSTART + RLENGTH) }\n"
    "  for (i = 2; i <= n; i++) { x = d[i]; j = i - 1\n"
    "    while (j > 0 && d[j] > x) { d[j + 1] = d[j]; j-- }\n"
    "    d[j + 1] = x }\n"
    "  for (i = 1; i <= n; i++) rank[d[i]] = i\n"
    '  out = ""; s = body\n'
    f"  while (match(s, /{_DATE_ERE}/)) {{\n"
    '    out = out substr(s, 1, RSTART - 1) "<date-time#" rank[substr(s, RSTART, RLENGTH)] ">"\n'
    "    s = substr(s, RSTART + RLENGTH) }\n"
    f'  out = out s; gsub(/{SECONDS[1]}/, "{SECONDS[2]}", out); printf "%s", out }}'
)
"""The same ranking for the script, then the date-times to the second blanked (POSIX awk, no sort
of its own: an insertion sort)."""


def _seconds(text: str) -> str:
    return re.sub(SECONDS[0], SECONDS[2], text)


def rank_dates(text: str) -> str:
    """Each date-time as its rank among the text's distinct date-times (the same sort awk does)."""
    ranks = {v: n for n, v in enumerate(sorted(set(DATE_TIME.findall(text))), 1)}
    return DATE_TIME.sub(lambda m: f"<date-time#{ranks[m.group()]}>", text)


# ---- judging ----------------------------------------------------------------------------------


def fingerprint(body: str, named: dict[str, str], *, ranked: bool = True) -> str:
    """A body as a reproduction compares it: captured values named, volatile ones blanked (date-
    times by their rank, unless ``ranked`` is False: the caller ranks several texts as one)."""
    for value, name in sorted(named.items(), key=lambda kv: -len(kv[0])):
        if value:
            body = body.replace(value, "{" + name + "}")
    for python, _sed, mark in VOLATILE:
        body = re.sub(python, mark, body)
    return (_seconds(rank_dates(body)) if ranked else body).rstrip("\n")


_PREVIEW_CUT = CUT


def truncated(ex: Exchange) -> bool:
    """Whether the report kept only the start of the answer (``... [N more characters]``): what
    the check judged may lie past it, so the same start cannot say the failure is still there."""
    return _PREVIEW_CUT.search(ex.response_body or "") is not None


def cut_short(rep: Reproduction) -> bool:
    """Whether what the check judged of the deciding answer may lie past what the report kept of
    it (never when it judged the status alone)."""
    return rep.judged != STATUS and truncated(rep.steps[-1])


def undecidable(rep: Reproduction) -> bool:
    """Whether a replay's verdict may be inconclusive however the target answers: the recorded
    answers depend on state the calls did not make, the deciding answer was kept only in part, or
    the calls send values of the recorded run (an old id, a cursor) that this server reads otherwise."""
    return outside_state(rep) or cut_short(rep) or bool(rep.baked) or sent_at_once(rep)


def recorded_body(ex: Exchange) -> tuple[str, int | None]:
    """The recorded answer's text and, when the report kept only its start, how many bytes of a
    new answer to compare (None: the whole)."""
    text = ex.response_body or ""
    cut = _PREVIEW_CUT.search(text)
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


def _headers(headers: Iterable[tuple[str, str]], named: dict[str, str]) -> list[str]:
    """The compared headers, named and blanked, their date-times ranked together (as the script
    ranks its header lines)."""
    lines = [  # an empty value as "name:", as the script's awk writes it
        f"{k.lower()}: {fingerprint(v.strip(), named, ranked=False)}".rstrip(" ")
        for k, v in headers
        if k.lower() not in VOLATILE_HEADERS
    ]
    return sorted(_seconds(rank_dates("\n".join(lines))).split("\n")) if lines else []


def _decides(rep: Reproduction, index: int) -> bool:
    """The deciding call of a finding whose check named the statuses it would accept."""
    return bool(rep.accepted) and index == len(rep.steps) - 1


def _not_accepted(rep: Reproduction) -> str:
    return "HTTP not " + " ".join(map(str, rep.accepted))


def expected(rep: Reproduction, index: int) -> str:
    """The recorded answer of call ``index`` as a replay compares it: status, headers, body (the
    status alone when that is all the check judged)."""
    ex = rep.steps[index]
    if rep.judged == STATUS:
        return _not_accepted(rep) if _decides(rep, index) else f"HTTP {ex.status}"
    text, _ = recorded_body(ex)
    named = {c.value: c.name for c in rep.captures if c.step <= index}
    if ex.response_cksum is not None:
        body = f"{BINARY} {ex.response_cksum}"
    else:
        body = BINARY if "\ufffd" in text else fingerprint(text, named)
    return "\n".join([f"HTTP {ex.status}", *_headers(ex.response_headers.items(), named), "--", body])


def observed(
    rep: Reproduction,
    index: int,
    status: int,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    values: dict[str, str],
    credentials: Credentials = NONE,
) -> str:
    """Today's answer of call ``index`` as a replay compares it (``values``: today's captures; a
    token it echoes named as the report names it)."""
    ex = rep.steps[index]
    if rep.judged == STATUS:
        if _decides(rep, index) and status not in rep.accepted:
            return _not_accepted(rep)  # any status the check would not accept is the failure again
        return f"HTTP {status}"
    headers = [(k, credentials.header(v)) for k, v in headers]
    text, cut = recorded_body(ex)
    names = {c.name for c in rep.captures if c.step <= index}
    named = {v: k for k, v in values.items() if k in names}
    if ex.response_cksum is not None:
        shown = f"{BINARY} {cksum(body)}"
    elif "\ufffd" in text:
        shown = BINARY
    else:
        kept = body[:cut] if cut is not None else body
        shown = fingerprint(credentials.redact(kept.decode("utf-8", "replace")), named)
    return "\n".join([f"HTTP {status}", *_headers(headers, named), "--", shown])


# ---- the script -------------------------------------------------------------------------------

_OWN_HEADERS = frozenset({"host", "content-length", "connection", "user-agent", "accept-encoding", "transfer-encoding"})


def _sh(parts: Sequence[Part]) -> str:
    return "".join(f'"${{{p}}}"' if var else word(p) for p, var in parts if p)


def _ere(text: str) -> str:
    """``text`` matched literally in a POSIX extended regular expression (``grep -E``)."""
    return re.sub(r"([.\[\]{}()*+?^$|\\])", r"\\\1", text)


def _sed_header(name: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in name)


_PRELUDE = r"""set -u -f
LC_ALL=C; export LC_ALL
MAX_TIME=${MAX_TIME:-30}
D=$(mktemp -d) || exit 2
trap 'rm -rf "$D"' EXIT
: > "$D/named"  # sed commands naming each captured value as the recorded answers name it
: > "$D/named.sed"; NAMED=""  # norm's order of them, made again (once) when a value was named since
NL='
'
DIFFER=""  # the calls whose answer is not the recorded one
inconclusive() { echo "INCONCLUSIVE: $*"; exit 2; }
capture() { # variable, value, call: a value a later call sends
  [ -n "$2" ] || inconclusive "answer $3 carries no value for $1"
  name "$1" "$2"
}
need() { # variable, call: a value the failure's own call gave (none: it answered otherwise)
  eval "value=\${$1:-}"
  [ -n "$value" ] || { DIFFER="$DIFFER $2"; echo "$2. HTTP $(cat "$D/$2.code"): no $1 for the calls after it"; finish; }
}
name() { # variable, value: named where the recorded answers name it (absent: left as it came)
  [ -n "$2" ] || return 0
  eval "$1=\$2"
  printf '%s s/%s/{%s}/g\n' "${#2}" "$(literal "$2")" "$1" >> "$D/named"; NAMED=1
}
literal() { printf '%s' "$1" | sed 's/[][\/.^$*&]/\\&/g'; }  # a value as a sed pattern
secret() { # variable: a credential the report names by it (never printed)
  eval "value=\${$1:-}"
  [ -n "$value" ] || inconclusive "set $1 to the token the run was given (the report names it \${$1})"
  printf '%s s/%s/${%s}/g\n' "${#value}" "$(literal "$value")" "$1" >> "$D/named"; NAMED=1
}
named() { # the longest value named first: an id may hold another (sgr_agent_1f2e holds sgr_agent)
  [ -z "$NAMED" ] || { sort -rn "$D/named" | sed 's/^[0-9]* //' > "$D/named.sed"; NAMED=""; }
}
norm() { # the values named, then what every run makes anew blanked (one sed: they act line by line)
  sed -f "$D/named.sed" @NORM@ | awk @RANK@
}
setup() { # call, recorded status: a setup call must answer as it did (a 2xx stays a 2xx)
  IFS= read -r got < "$D/$1.code"; echo "$1. HTTP $got (recorded $2)"
  case "$got:$2" in 2??:2??|3??:3??|???:4??|???:5??) ;;  # a refused write made nothing to lose
  *) inconclusive "setup call $1 answered $got, recorded $2";; esac
}
heads() { # call: its answer's headers (curl's last block), named, sorted, without those that change by themselves
  awk '{ gsub(/\r/, "") } /^HTTP\// { n = 0; next }
    { i = index($0, ":"); if (!i) next; v = substr($0, i + 1); sub(/^[ \t]*/, "", v); sub(/[ \t]*$/, "", v)
      h = tolower(substr($0, 1, i - 1)); if (h !~ /^(@HEADERS@)$/) l[++n] = v == "" ? h ":" : h ": " v }
    END { for (j = 1; j <= n; j++) print l[j] }' "$D/$1.head" | norm | sort
}
compare() { # call [bytes]: its answer (status, headers, body) against the recorded one
  named; want=$(cat "$D/$1.want"); IFS= read -r code < "$D/$1.code"; got="HTTP $code"
  case "$NL$want$NL" in *"$NL--$NL"*)  # else the status alone is recorded: all the check judged
    body="$NL$want$NL"; body=${body#*"$NL--$NL"}; body=${body%%"$NL"*}  # the line after the first --
    case "$body" in
      "<binary> - "*) body="<binary> - $(wc -c < "$D/$1.body" | tr -d ' ')";;  # too large to checksum: its size
      "<binary> "*) body="<binary> $(cksum < "$D/$1.body")";;
      "<binary>") ;;
      *) if [ -n "${2:-}" ]; then body=$(dd bs=1 count="$2" 2>/dev/null < "$D/$1.body" | norm)
         else body=$(norm < "$D/$1.body"); fi;;
    esac
    got=$(printf '%s\n' "$got"; heads "$1"; printf -- '--\n%s' "$body");;
  esac
  case "$want" in "HTTP not "*)  # any status the check would not accept
    not=${want%%"$NL"*}
    case " ${not#HTTP not } " in *" $code "*) ;;
    *) got=$not;; esac;; esac
  printf '%s\n' "$got" > "$D/$1.got"
  printf '%s\n' "$want" > "$D/$1.want.n"
  cmp -s "$D/$1.want.n" "$D/$1.got" || { DIFFER="$DIFFER $1"; diff "$D/$1.want.n" "$D/$1.got"; }
}"""


def prelude() -> str:
    """What every script starts with: its folder, and the functions that capture, name and compare."""
    norm = " ".join(f"-e {shlex.quote(f's/{sed}/{mark}/g')}" for _, sed, mark in VOLATILE)
    return (
        _PRELUDE.replace("@NORM@", norm)
        .replace("@RANK@", shlex.quote(RANK_DATES))
        .replace("@HEADERS@", "|".join(sorted(VOLATILE_HEADERS)))
    )


def script(rep: Reproduction, title: str, base_url: str) -> str:
    """A POSIX sh script that sends the calls with curl, captures each id with grep and sed, and
    says whether the answers are the recorded ones: exit 0 reproduced, 1 not reproduced, 2
    inconclusive (a setup call failed, an id could not be captured, or the recorded answer showed
    objects these calls did not make)."""
    base = base_url.rstrip("/")
    judged = compared(rep)
    outside = outside_state(rep)
    credentials = variables(rep.steps)  # the tokens, from the environment
    lines = [
        "#!/bin/sh",
        *(f"# {line}" for line in title.splitlines()[:6]),
        f"# {len(rep.steps)} call(s) from a fresh state; the last one's answer broke the rule.",
        "# Usage: "
        + "".join(f"{name}=... " for name in credentials)
        + "sh THIS_FILE [BASE_URL]    (needs curl, grep and sed)",
        "# Exit: 0 reproduced, 1 not reproduced (an answer differs), 2 inconclusive (it cannot tell).",
        "# MAX_TIME (seconds, default 30) bounds each call.",
    ]
    if rep.baked:
        lines.append(
            f"# Sends values an earlier run's answers gave (the server may no longer hold them): {', '.join(rep.baked)}"
        )
    if rep.judged == STATUS:
        lines.append("# The check judged the last answer's status alone: the answers are compared by status.")
    if rep.unsure:
        lines.append(f"# Another answer cannot tell: {rep.unsure}.")
    elif outside:
        lines.append(
            "# The recorded answers also showed objects these calls did not make: another state answers otherwise."
        )
    lines += [f"BASE=${{1:-{shlex.quote(base)}}}", prelude()]
    if outside:
        lines.append(
            'finish() { inconclusive "call(s)$DIFFER answered otherwise, but the recorded answers showed objects '
            'made elsewhere"; }'
        )
    elif rep.baked:  # an old run's value, gone or read otherwise by this server: a difference cannot tell
        lines.append(
            'finish() { inconclusive "call(s)$DIFFER answered otherwise, but the calls sent values of the recorded '
            'run"; }'
        )
    else:
        lines.append('finish() { echo "NOT REPRODUCED: call(s)$DIFFER answered otherwise than recorded"; exit 1; }')
    lines += [f"secret {name}" for name in credentials]
    waits = pauses(rep)
    compare: list[str] = []
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
                opts += ["-H", word(f"{name}: {value}")]
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
        called = ('"$BASE"' if relative else "") + _sh(url)
        opts += ["--globoff", called]
        shown = fill(url, {c.name: "{" + c.name + "}" for c in rep.captures})
        lines += [
            "",
            f"# {n}. {ex.method.upper()} {urlsplit(shown).path or shown} (recorded: HTTP {ex.status}; "
            f"{_role(rep, index, judged)})",
        ]
        if waits[index]:
            lines.append(f"sleep {waits[index]:g}  # as long as the recorded run waited before it")
        call = f'{prefix}{" ".join(opts)} > "$D/{n}.code"'
        if last and ex.error:  # the recorded failure is that no whole answer came: still none is the same
            lines.append(f'{call} || {{ echo "REPRODUCED: no whole answer within $MAX_TIME s, as recorded"; exit 0; }}')
            lines.append(f'DIFFER="$DIFFER {n}"; echo "{n}. a whole answer came; the recorded call got none"')
        else:
            lines.append(f'{call} || inconclusive "call {n} got no whole answer within $MAX_TIME s"')
        if required(rep, index):
            lines.append(f"setup {n} {ex.status}")
        probe = index in rep.probe  # the failure's own call: a value it gives is not required of it
        for c in rep.captures:
            if c.step != index:
                continue
            if c.source == "header":
                grab = f"tr -d '\\r' < \"$D/{n}.head\" | sed -n 's/^{_sed_header(c.key)}: *//p' | sed -n '$p'"
            else:
                member = shlex.quote(f'"{_ere(c.key)}" *: *("[^"]*"|-?[0-9]+)')
                value_of = f'sed -n \'{c.nth}{{s/^"[^"]*" *: *//; s/^"//; s/"$//; p;}}\''  # the nth, unquoted
                grab = f'grep -o -E {member} "$D/{n}.body" | {value_of}'
            if c.used and not probe:
                lines.append(f'capture {c.name} "$({grab})" {n}')
            else:
                lines.append(f'name {c.name} "$({grab})"')
        if index in judged:  # compared once every call is sent: the calls go out as fast as recorded
            _, cut = recorded_body(ex)
            compare += [f"cat > \"$D/{n}.want\" <<'RECORDED_{n}'", expected(rep, index), f"RECORDED_{n}"]
            compare.append(f"compare {n}" + (f" {cut}" if cut is not None else ""))
        if probe:
            lines += [f"need {c.name} {n}" for c in rep.captures if c.step == index and c.used]
    if rep.judgment and not stale_facts(rep):  # facts naming an old id cannot be judged again
        lines += _rejudge(rep, called, outside)
    lines += ["", "# the answers against the recorded ones", *compare]
    n = len(rep.steps)
    lines.append(f'echo "{n}. HTTP $(cat "$D/{n}.code") (recorded {rep.steps[-1].status})"; cat "$D/{n}.body"; echo')
    if cut_short(rep):
        kept = recorded_body(rep.steps[-1])[1]
        lines.append(
            'if [ -z "$DIFFER" ]; then inconclusive "the answers are the recorded ones as far as the report '
            f'kept answer {n} (its first {kept} bytes): what broke the rule may lie past them"; fi'
        )
    elif sent_at_once(rep):
        lines.append(
            'inconclusive "the recorded calls were sent at the same moment (a race); this script sends them one '
            'after another"'
        )
    else:
        lines.append('if [ -z "$DIFFER" ]; then echo "REPRODUCED: the answers are the recorded ones"; exit 0; fi')
    lines.append("finish")
    return "\n".join(lines) + "\n"


def _rejudge(rep: Reproduction, url: str, outside: bool) -> list[str]:
    """Lines that judge the deciding answer again by the finding's judgment, when the kit is
    installed (``agent-conformance judge``, else ``python3 -m conformance judge``): whatever else
    moved in the answer, it still shows the problem or not. Without the kit (or with one that lacks
    the judgment: it prints neither ``shows:`` nor ``holds:``) the script compares, with sh and curl."""
    n = len(rep.steps)
    ex = rep.steps[-1]
    facts = json.dumps(rep.facts, sort_keys=True, separators=(",", ":"))
    holds = f"the judgment {rep.judgment} holds on answer {n}"
    if sent_at_once(rep):
        held = f'inconclusive "{holds}, but the recorded calls were sent at the same moment (a race)"'
    elif outside:
        held = f'inconclusive "{holds}, but the recorded answers showed objects made elsewhere (another state)"'
    elif rep.baked:
        held = f'inconclusive "{holds}, but the calls sent values of the recorded run"'
    else:
        held = f'echo "NOT REPRODUCED: {holds}"; exit 1'
    return [
        "",
        f"# answer {n} judged again by the kit's judgment {rep.judgment}, when the kit is installed",
        "KIT='python3 -m conformance'",
        "if command -v agent-conformance >/dev/null 2>&1; then KIT=agent-conformance; fi",
        # the facts through a file, written by the shell's own printf: a value sent may be longer than
        # an argument of a command may be
        "{ "
        + "; ".join(f"printf '%s' {_sh([piece])}" for piece in template(facts, rep.captures, n - 1) if piece[0])
        + '; } > "$D/facts"',
        f'$KIT judge {word(rep.judgment)} --facts @"$D/facts" '
        f'--method {ex.method.upper()} --url {url} --status "$(cat "$D/{n}.code")" '
        f'--headers "$D/{n}.head" --body "$D/{n}.body" > "$D/judged" 2>/dev/null',
        'case "$(sed -n 1p "$D/judged")" in',
        f'  "shows: "*) echo "{n}. HTTP $(cat "$D/{n}.code") (recorded {ex.status})"; '
        'echo "REPRODUCED: $(sed -n \'1s/^shows: //p\' "$D/judged")"; exit 0;;',
        f'  "holds: "*) {held};;',
        "esac  # no kit, or one without this judgment: the answers are compared below",
    ]


def _role(rep: Reproduction, index: int, judged: list[int]) -> str:
    """What a call is to the reproduction, as its comment in the script says."""
    if index == len(rep.steps) - 1:
        return "the answer that broke the rule"
    if index in rep.probe:
        return "the failure's own call"
    if index in rep.wrong:
        return "another failure's call"
    return "setup" if index in judged else "sent for its timing"


def script_of(finding: Finding, base_url: str, *, state_dependent: bool = False) -> str:
    """The finding's reproduction as a script (empty when it records no call)."""
    if not finding.evidence:
        return ""
    rep = Reproduction.of(finding, state_dependent)
    return script(rep, f"{finding.key}\n{finding.message}", base_url)


def script_name(finding: Finding, n: int) -> str:
    """``AP-TASK-002-1.sh``: the requirement and the finding's place among its findings."""
    return f"{finding.requirement}-{n}.sh"
