"""Imported at start-up by the neuro-san peer server's interpreter (this folder is put on its
PYTHONPATH by test_neuro_san_server.py), before neuro-san itself, to keep the server on loopback
and offline.

- neuro-san 0.7.15 has no setting for the listening address: HttpServer calls
  ``tornado.netutil.bind_sockets(port, ...)`` with no address, which binds every interface. Here
  an absent address means 127.0.0.1.
- ChatMockLlm counts tokens with ``tiktoken.get_encoding("o200k_base")``, whose first use
  downloads the encoding's ranks file. Here every encoding is one built offline over the 256
  single bytes (one token per byte): the counts are wrong, which nothing checked here reads, and
  no download is attempted.
"""

from __future__ import annotations

from typing import Any

import tiktoken
import tiktoken.registry
import tornado.netutil
import tornado.tcpserver

LOOPBACK = "127.0.0.1"
_bind_sockets = tornado.netutil.bind_sockets


def bind_sockets(port: int, address: str | None = None, *args: Any, **kwargs: Any) -> Any:
    return _bind_sockets(port, address or LOOPBACK, *args, **kwargs)


tornado.netutil.bind_sockets = bind_sockets
tornado.tcpserver.bind_sockets = bind_sockets  # TCPServer.bind (the health probe) imported it by name

OFFLINE_ENCODING = tiktoken.Encoding(
    name="offline-bytes",
    pat_str=r"\S+|\s+",
    mergeable_ranks={bytes([i]): i for i in range(256)},
    special_tokens={},
)


def offline_encoding(*_args: Any, **_kwargs: Any) -> tiktoken.Encoding:
    return OFFLINE_ENCODING


tiktoken.get_encoding = offline_encoding
tiktoken.registry.get_encoding = offline_encoding
tiktoken.encoding_for_model = offline_encoding
