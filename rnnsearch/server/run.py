"""Running the server: listen on the address, hand it and the loaded model to uvicorn."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rnnsearch.errors import UserError
from rnnsearch.server.limits import Limits

if TYPE_CHECKING:
    from rnnsearch.translation.translator import Translator


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free port).

    Binding here rather than in uvicorn turns an address in use or a bad host into
    one UserError line instead of a log record and an exit.
    """
    if not 0 <= port <= 65535:
        raise UserError(f"port {port}: not between 0 and 65535")
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        return socket.create_server((address[0], port), family=family)
    except socket.gaierror as error:
        raise UserError(f"--host {host}: {error.strerror}") from None
    except OSError as error:
        raise UserError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


def serve(
    translator: Translator,
    model_dir: str | Path | Sequence[str | Path],
    limits: Limits,
    *,
    host: str,
    port: int,
    glossary: str | Path | None = None,
) -> None:
    """Serve `translator`, loaded from `model_dir` (or the ensemble of a list of them), on
    host:port until interrupted (Ctrl+C or SIGTERM), writing the terms of `glossary` in
    every translation (create_app)."""
    import uvicorn

    from rnnsearch.server.app import create_app

    app = create_app(translator, model_dir, limits, glossary=glossary)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    display_host = f"[{host}]" if ":" in host else host
    served = model_dir if isinstance(model_dir, (str, Path)) else " + ".join(str(d) for d in model_dir)
    print(f"serving {served} at http://{display_host}:{bound}/ (Ctrl+C to stop)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="info"))
    with sock:
        server.run(sockets=[sock])
