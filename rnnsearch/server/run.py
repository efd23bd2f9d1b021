"""Running the server: load the model, listen on the address, hand both to uvicorn."""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

from rnnsearch.errors import UserError
from rnnsearch.server.limits import Limits


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
    model_dir: str | Path | Sequence[str | Path],
    host: str,
    port: int,
    device: str,
    limits: Limits,
    precision: str | None = None,
    *,
    runtime: str | None = None,
    search: Mapping[str, object] | None = None,
    glossary: str | Path | None = None,
) -> None:
    """Serve the model in `model_dir`, or the ensemble of a list of them, on host:port until
    interrupted (Ctrl+C or SIGTERM); `precision` overrides the search precision of the model's
    config, `runtime` chooses ONNX Runtime or PyTorch for an exported package and `search`
    overrides keys of the search section (see `load`). The terms of the `glossary` file
    are written in every translation (a request's own laid over them)."""
    import uvicorn

    from rnnsearch.server.app import create_app
    from rnnsearch.translation.translator import load

    translator = load(model_dir, device=device, precision=precision, runtime=runtime, search=search)
    terms = None if glossary is None else translator.glossary_of(glossary)
    app = create_app(translator, model_dir, limits, glossary=terms)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    display_host = f"[{host}]" if ":" in host else host
    served = model_dir if isinstance(model_dir, (str, Path)) else " + ".join(str(d) for d in model_dir)
    print(f"serving {served} at http://{display_host}:{bound}/ (Ctrl+C to stop)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="info"))
    with sock:
        server.run(sockets=[sock])
