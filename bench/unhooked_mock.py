"""The mock with its client-developer hooks taken off the request path: the baseline of hook_cost.py.

``Hooks.wrap`` hands back each operation's endpoint itself (no wrapper, no ``active`` test, no
``Host`` check) and ``--no-cors`` drops the CORS headers and preflights, which is the request path
as it was before chaos, the journal, the access log, CORS and the gate existed. What remains of
them: one request-dict lookup per JSON body and two per stream, which hook_cost.py therefore
charges to the baseline too.

    python bench/unhooked_mock.py --port 8000 [any python -m mockserver option]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# this checkout's mockserver, as `python -m mockserver` run from the root would import
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockserver import hooks
from mockserver.__main__ import main


def _unwrapped(
    self: hooks.Hooks,
    protocol_id: str,
    operation_id: str | None,
    serve: Any,
    error_response: Callable[..., Any],
    identify: Any = None,
) -> Any:
    return serve


if __name__ == "__main__":
    setattr(hooks.Hooks, "wrap", _unwrapped)  # noqa: B010 - replacing a method on purpose
    sys.exit(main([*sys.argv[1:], "--no-cors"]))
