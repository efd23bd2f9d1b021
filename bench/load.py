"""Load on `rnnsearch serve`: concurrent clients sending translation requests, on loopback only.

    python bench/load.py --model-dir runs/de-en [--clients 1,16,64] [--batch 1,8] [--requests 20]
                         [--beam-size 5] [--max-seconds 60] [--json out.json]
    python bench/load.py --url http://127.0.0.1:8000/ ...

--model-dir starts `rnnsearch serve MODEL --port 0` (default limits, CPU) and stops it at
the end; --url measures a server already running on this machine. Every pair of --batch K
and --clients N is one run: N threads, each with its own keep-alive connection, send
--requests requests one after the other, each with K sentences of --sentences (consecutive
lines, different for every request). A run stops when its requests are done or when
--max-seconds have passed; requests under way then are finished and counted.

Reported per run: requests sent and errors (any answer but a 200 with one translation
per text, or a failed connection); successful requests and their sentences per second
over the run's wall time; the 50th and 99th percentile latency of successful requests.
The clients run on the same machine as the server and take some of its CPU.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import ipaddress
import json
import math
import os
import platform
import socket
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from processor import processor_name  # noqa: E402  (this script's folder comes first on sys.path)

from rnnsearch.errors import UserError  # noqa: E402
from rnnsearch.server.child_process import served  # noqa: E402

SENTENCES = "data/multi30k/test_2016_flickr.de.gz"
REQUEST_TIMEOUT = 120.0
"""Seconds a client waits for one answer: longer than the server's default 30 s timeout."""


@dataclass
class Run:
    """One run's settings and what its clients saw."""

    sentences_per_request: int
    clients: int
    requests: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list, repr=False)
    error_examples: list[str] = field(default_factory=list)

    @property
    def sentences(self) -> int:
        return len(self.latencies) * self.sentences_per_request

    def summary(self) -> dict:
        """The figures reported for this run; latencies in milliseconds."""
        return {
            "sentences_per_request": self.sentences_per_request,
            "clients": self.clients,
            "requests": self.requests,
            "errors": self.errors,
            "seconds": self.seconds,
            "requests_per_s": len(self.latencies) / self.seconds,
            "sentences_per_s": self.sentences / self.seconds,
            "p50_ms": 1000 * percentile(self.latencies, 50),
            "p99_ms": 1000 * percentile(self.latencies, 99),
            "error_examples": self.error_examples,
        }


def percentile(values: list[float], percent: float) -> float:
    """The nearest-rank percentile (the smallest value with `percent`% of values at or below it); NaN if empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]


def loopback_address(url: str) -> tuple[str, int]:
    """(host, port) of an http:// URL whose host is this machine's loopback; SystemExit for any other.

    A load test sends a lot of traffic: it is only ever aimed at a server on this machine.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise SystemExit(f"--url {url}: expected http://HOST:PORT/")
    port = parts.port or 80
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)}
    except socket.gaierror as error:
        raise SystemExit(f"--url {url}: {error.strerror}") from None
    if not all(ipaddress.ip_address(address.split("%")[0]).is_loopback for address in addresses):
        raise SystemExit(f"--url {url}: not a loopback address; this benchmark only loads servers on this machine")
    return parts.hostname, port


def read_sentences(path: str) -> list[str]:
    """The non-blank lines of a UTF-8 text file, gzip-compressed if it ends in .gz."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip()]


@contextmanager
def started_server(model_dir: str, limit: float = 300.0) -> Iterator[str]:
    """`rnnsearch serve model_dir` on a free loopback port: yields its URL, and stops it afterwards."""
    with tempfile.TemporaryDirectory(prefix="rnnsearch-load-") as folder:
        try:
            with served(model_dir, Path(folder) / "server.log", limit) as url:
                yield url
        except UserError as error:
            raise SystemExit(str(error)) from None


class Client:
    """One keep-alive connection to the server, reopened after a failure."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """(status, body) of one POST; a failed connection raises OSError (or http.client.HTTPException)."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
        try:
            self.connection.request("POST", path, body, {"Content-Type": "application/json"})
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def request_body(texts: list[str], beam_size: int, alignments: bool) -> bytes:
    return json.dumps({"texts": texts, "beam_size": beam_size, "alignments": alignments}).encode()


def client_loop(
    run: Run,
    index: int,
    address: tuple[str, int],
    options: argparse.Namespace,
    sentences: list[str],
    deadline: float,
    lock: threading.Lock,
) -> None:
    """One client's requests, one after the other, until done or past the deadline; results go into `run`."""
    client = Client(*address)
    k = run.sentences_per_request
    try:
        for number in range(options.requests):
            if time.monotonic() >= deadline:
                return
            start = (index * options.requests + number) * k
            texts = [sentences[(start + i) % len(sentences)] for i in range(k)]
            outcome = timed_request(client, request_body(texts, options.beam_size, options.alignments), k)
            with lock:
                record(run, outcome)
    finally:
        client.close()


def timed_request(client: Client, body: bytes, texts: int) -> tuple[float | None, str]:
    """(seconds, "") for a 200 answer with one translation per text, or (None, what went wrong)."""
    started = time.perf_counter()
    try:
        status, answer = client.post("/v1/translate", body)
    except (OSError, http.client.HTTPException) as error:
        return None, f"{type(error).__name__}: {error}"
    seconds = time.perf_counter() - started
    if status != 200:
        return None, f"HTTP {status}: {answer[:200].decode('utf-8', 'replace')}"
    try:
        translations = json.loads(answer)["translations"]
    except (ValueError, KeyError, TypeError):
        return None, f"not a translation answer: {answer[:200].decode('utf-8', 'replace')}"
    if len(translations) != texts:
        return None, f"{len(translations)} translations for {texts} texts"
    return seconds, ""


def record(run: Run, outcome: tuple[float | None, str]) -> None:
    seconds, problem = outcome
    run.requests += 1
    if seconds is None:
        run.errors += 1
        if len(run.error_examples) < 5:
            run.error_examples.append(problem)
    else:
        run.latencies.append(seconds)


def measure(address: tuple[str, int], options: argparse.Namespace, sentences: list[str], k: int, clients: int) -> Run:
    """One run: `clients` threads sending `options.requests` requests of `k` sentences each."""
    run = Run(sentences_per_request=k, clients=clients)
    lock = threading.Lock()
    started = time.monotonic()
    deadline = started + options.max_seconds
    threads = [
        threading.Thread(target=client_loop, args=(run, i, address, options, sentences, deadline, lock), daemon=True)
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.seconds = time.monotonic() - started
    return run


def warm_up(address: tuple[str, int], options: argparse.Namespace, sentences: list[str]) -> None:
    """A few requests first, so that the first run does not pay for the model's first calls."""
    client = Client(*address)
    try:
        for k in (1, max(options.batch)):
            seconds, problem = timed_request(client, request_body(sentences[:k], options.beam_size, True), k)
            if seconds is None:
                raise SystemExit(f"the warm-up request failed: {problem}")
    finally:
        client.close()


def table(rows: list[dict]) -> str:
    """The runs as a Markdown table."""
    header = (
        "| sentences/request | clients | requests | errors | seconds | requests/s | sentences/s | p50 ms | p99 ms |"
    )
    lines = [header, "|" + "---|" * header.count(" | ") + "---|"]
    for row in rows:
        lines.append(
            f"| {row['sentences_per_request']} | {row['clients']} | {row['requests']:,} | {row['errors']} "
            f"| {row['seconds']:.1f} | {row['requests_per_s']:.1f} | {row['sentences_per_s']:.1f} "
            f"| {row['p50_ms']:.0f} | {row['p99_ms']:.0f} |"
        )
    return "\n".join(lines)


def numbers(text: str) -> list[int]:
    """An argparse type: comma-separated positive integers, '1,16,64'."""
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"every number must be at least 1: {text!r}")
    return values


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--model-dir", help="start `rnnsearch serve` on this model, on a free loopback port")
    target.add_argument("--url", help="a server already running on loopback, e.g. http://127.0.0.1:8000/")
    parser.add_argument("--clients", type=numbers, default=[1, 16, 64], help="concurrent clients, one run each")
    parser.add_argument("--batch", type=numbers, default=[1], help="sentences per request, one run each")
    parser.add_argument("--requests", type=int, default=20, help="requests per client (default %(default)s)")
    parser.add_argument("--beam-size", type=int, default=5, help="default %(default)s")
    parser.add_argument("--no-alignments", dest="alignments", action="store_false", help="ask for no alignments")
    parser.add_argument("--max-seconds", type=float, default=60.0, help="time budget of one run (default 60)")
    parser.add_argument("--sentences", default=SENTENCES, help="source sentences, one a line (default %(default)s)")
    parser.add_argument("--json", help="also write the results here")
    options = parser.parse_args()
    if options.requests < 1 or options.max_seconds <= 0:
        parser.error("--requests and --max-seconds must be positive")
    return options


def benchmark(url: str, options: argparse.Namespace) -> list[dict]:
    """Every run against the server at `url`, printing each as it finishes."""
    address = loopback_address(url)
    sentences = read_sentences(options.sentences)
    warm_up(address, options, sentences)
    print("\n".join(table([]).splitlines()[:2]), flush=True)
    rows = []
    for k in options.batch:
        for clients in options.clients:
            rows.append(measure(address, options, sentences, k, clients).summary())
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    return rows


def describe_machine() -> str:
    try:
        torch = f", torch {metadata.version('torch')}"
    except metadata.PackageNotFoundError:
        torch = ""
    return f"{processor_name()}, {os.cpu_count()} CPUs, Python {platform.python_version()}{torch}"


def main() -> None:
    options = parse_arguments()
    if options.url:
        rows = benchmark(options.url, options)
    else:
        with started_server(options.model_dir) as url:
            rows = benchmark(url, options)
    print()
    print(table(rows))
    for row in rows:
        for example in row["error_examples"]:
            print(f"error ({row['sentences_per_request']} × {row['clients']} clients): {example}")
    if options.json:
        results = {
            "date": time.strftime("%Y-%m-%d"),
            "machine": describe_machine(),
            "target": options.url or f"rnnsearch serve {options.model_dir}",
            "beam_size": options.beam_size,
            "alignments": options.alignments,
            "requests_per_client": options.requests,
            "max_seconds": options.max_seconds,
            "runs": rows,
        }
        Path(options.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
