"""`rnnsearch prepare`: the training corpus streamed, encoded to memory-mapped arrays on
disk, reused while it matches its inputs and settings, and never half-accepted."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, tiny_config, write_config, write_lines

from rnnsearch.cli import main
from rnnsearch.config import config_from_dict
from rnnsearch.errors import UserError
from rnnsearch.files import atomic
from rnnsearch.prepared import FilterReport, PreparedPairs, ensure_prepared, prepare, stale_reason, streaming, writing
from rnnsearch.prepared.manifest import FORMAT, MANIFEST, SIDES, SRC_SUBWORDS, TGT_SUBWORDS
from rnnsearch.prepared.sampling import sample, train_vocabularies
from rnnsearch.prepared.writing import Writer
from rnnsearch.text.batches import InMemoryPairs, epoch_batches, make_batch
from rnnsearch.text.corpus import is_blank, read_lines
from rnnsearch.text.subwords import Subwords, train_subwords


@pytest.fixture(scope="module")
def subset(tmp_path_factory) -> Path:
    """1,200 Multi30k pairs with blank, one-sided and over-long pairs mixed in."""
    folder = tmp_path_factory.mktemp("subset")
    sources = read_lines(DATA / "train.de.gz")[:1200]
    targets = read_lines(DATA / "train.en.gz")[:1200]
    for k in (5, 300, 901):
        sources[k] = "  "
    targets[600] = ""
    long = " ".join(sources[:12])
    sources[77], sources[1100] = long, long
    write_lines(folder / "train.de", sources)
    write_lines(folder / "train.en", targets)
    write_lines(folder / "val.de", read_lines(DATA / "val.de.gz")[:20])
    write_lines(folder / "val.en", read_lines(DATA / "val.en.gz")[:20])
    return folder


def config_for(data: Path, model_dir: Path, **data_keys):
    tree = tiny_config(data, model_dir)
    tree["data"].update({"max_length": 60, **data_keys})
    return config_from_dict(tree)


def in_memory_pairs(config) -> tuple[Subwords, Subwords, list, FilterReport]:
    """What training held in memory before prepared data: every usable pair given to
    SentencePiece, then every pair encoded and filtered by length, in order."""
    corpus = config.data.train_corpora[0]
    sources, targets = read_lines(corpus.src), read_lines(corpus.tgt)
    usable = [(s, t) for s, t in zip(sources, targets) if not is_blank(s) and not is_blank(t)]
    src_subwords, tgt_subwords = train_vocabularies(config.subwords, [s for s, _ in usable], [t for _, t in usable])
    encoded = zip(src_subwords.encode([s for s, _ in usable]), tgt_subwords.encode([t for _, t in usable]))
    limit = config.data.max_length
    pairs = [(s, t) for s, t in encoded if len(s) <= limit and len(t) <= limit]
    report = FilterReport(kept=len(pairs), empty=len(sources) - len(usable), too_long=len(usable) - len(pairs))
    return src_subwords, tgt_subwords, pairs, report


def counting_chunks(monkeypatch, chunk_lines: int) -> list[int]:
    """Set the chunk size where preparing reads it, and count the chunks it writes: a list
    of each chunk's lines, which a test checks, so that it fails if the size is ignored."""
    monkeypatch.setattr(streaming, "CHUNK_LINES", chunk_lines)
    seen: list[int] = []
    reading = writing.stream_raw_parallel

    def counted(*args, **kwargs):
        for chunk in reading(*args, **kwargs):
            seen.append(len(chunk.raw_sources))
            yield chunk

    monkeypatch.setattr(writing, "stream_raw_parallel", counted)
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_prepared_data_holds_exactly_the_pairs_training_held_in_memory(subset, tmp_path, monkeypatch, workers):
    chunks = counting_chunks(monkeypatch, 250)  # several chunks, several in flight
    config = config_for(subset, tmp_path / "run", workers=workers)
    src_subwords, tgt_subwords, pairs, report = in_memory_pairs(config)
    subwords = prepare(config, tmp_path / "prepared")
    assert chunks == [250] * 4 + [len(read_lines(subset / "train.de")) - 1000]
    assert [s.model_bytes for s in subwords] == [src_subwords.model_bytes, tgt_subwords.model_bytes]
    data = PreparedPairs(tmp_path / "prepared")
    assert len(data) == len(pairs) == report.kept
    assert all(list(data[k][0]) == pairs[k][0] and list(data[k][1]) == pairs[k][1] for k in range(len(pairs)))
    assert data.manifest["filtered"][0] == {"corpus": config.data.train_corpora[0].src, **vars(report)}
    assert report.empty == 4 and report.too_long >= 2  # the two joined lines, and others at 400 pieces


def test_batches_from_prepared_data_equal_those_from_memory(subset, tmp_path):
    config = config_for(subset, tmp_path / "run")
    *_, pairs, _ = in_memory_pairs(config)
    prepare(config, tmp_path / "prepared")
    on_disk, in_memory = PreparedPairs(tmp_path / "prepared"), InMemoryPairs(pairs)
    for epoch in (0, 1):
        disk_batches = epoch_batches(on_disk, 500, None, seed=3, epoch=epoch)
        memory_batches = epoch_batches(in_memory, 500, None, seed=3, epoch=epoch)
        assert len(disk_batches) == len(memory_batches)
        for disk_indices, memory_indices in zip(disk_batches, memory_batches):
            disk = make_batch([on_disk[i] for i in disk_indices])
            memory = make_batch([in_memory[i] for i in memory_indices])
            assert all((a == b).all() for a, b in zip(vars(disk).values(), vars(memory).values(), strict=True)), (
                f"epoch {epoch}"
            )


def test_a_prepared_dataset_is_reused_until_an_input_or_setting_changes(subset, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("train.de", "train.en", "val.de", "val.en"):
        (data / name).write_bytes((subset / name).read_bytes())
    directory = tmp_path / "prepared"
    config = config_for(data, tmp_path / "run")
    ensure_prepared(config, directory)
    assert stale_reason(directory, config) is None
    ensure_prepared(config, directory)
    assert "reused" in capsys.readouterr().err

    assert "data.max_length changed (60 → 50)" in stale_reason(
        directory, config_for(data, tmp_path / "r", max_length=50)
    )
    smaller = config_from_dict({**config.model_dump(), "subwords": {**config.subwords.model_dump(), "vocab_size": 380}})
    assert "subwords.vocab_size changed (400 → 380)" in stale_reason(directory, smaller)
    other = prepare(smaller, tmp_path / "other")
    assert stale_reason(directory, config, other) == "the model's subword models are not those that encoded it"
    assert stale_reason(directory, config, PreparedPairs(directory).subwords) is None

    later = (data / "train.en").stat().st_mtime_ns + 10**9
    os.utime(data / "train.en", ns=(later, later))  # touched, same content: the modification time counts
    reason = stale_reason(directory, config)
    assert reason == f"{(data / 'train.en').resolve()} changed since it was prepared"
    ensure_prepared(config, directory)
    assert f"preparing the training data in {directory}: {reason}" in capsys.readouterr().err
    assert stale_reason(directory, config) is None


def test_several_corpora_are_concatenated_in_order(subset, corpus, tmp_path):
    tree = tiny_config(subset, tmp_path / "run")
    tree["data"]["train"] = [
        {"src": str(corpus / "train.de"), "tgt": str(corpus / "train.en")},
        {"src": str(subset / "train.de"), "tgt": str(subset / "train.en")},
    ]
    tree["data"]["max_length"] = 1000  # every non-blank pair kept
    both = config_from_dict(tree)
    prepare(both, tmp_path / "both")
    data = PreparedPairs(tmp_path / "both")
    src_subwords, tgt_subwords = data.subwords
    first = read_lines(corpus / "train.de")
    assert len(data) == len(first) + 1200 - 4
    assert [list(data[k][0]) for k in (0, len(first) - 1)] == src_subwords.encode([first[0], first[-1]])
    assert list(data[len(first)][1]) == tgt_subwords.encode([read_lines(subset / "train.en")[0]])[0]
    assert [f["corpus"] for f in data.manifest["filtered"]] == [str(corpus / "train.de"), str(subset / "train.de")]


def test_the_length_ratio_filter_skips_and_counts_uneven_pairs(subset, tmp_path):
    config = config_for(subset, tmp_path / "run", max_length=100, max_length_ratio=1.5)
    prepare(config, tmp_path / "prepared")
    data = PreparedPairs(tmp_path / "prepared")
    ratios = np.maximum(data.source_lengths, data.target_lengths) / np.minimum(data.source_lengths, data.target_lengths)
    assert ratios.max() <= 1.5
    filtered = data.manifest["filtered"][0]
    assert filtered["uneven"] > 0 and sum(filtered[k] for k in ("kept", "uneven", "empty", "too_long")) == 1200


def test_the_subword_sample_is_bounded_reproducible_and_drawn_from_the_whole_corpus(subset, tmp_path):
    config = config_for(subset, tmp_path / "run")
    config = config_from_dict(
        {**config.model_dump(), "subwords": {**config.subwords.model_dump(), "sample_sentences": 100}}
    )
    sources, targets = sample(config.data.train_corpora, config.subwords.sample_sentences)
    assert (sources, targets) == sample(config.data.train_corpora, config.subwords.sample_sentences)
    assert len(sources) == len(targets) == 100
    lines = read_lines(subset / "train.de")
    positions = sorted(lines.index(s) for s in sources)
    assert positions[-1] > 600, "a sample of the first lines only"
    pairs = set(zip(lines, read_lines(subset / "train.en")))
    assert all(pair in pairs for pair in zip(sources, targets))


def test_bad_lines_deep_in_the_corpus_are_one_line_errors(subset, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    lines = read_lines(subset / "train.de")
    (data / "train.de").write_bytes("".join(f"{s}\n" for s in lines[:1000]).encode() + b"Ein \xff Hund.\n")
    with gzip.open(data / "train.en.gz", "wt", encoding="utf-8") as out:
        out.writelines(f"{t}\n" for t in read_lines(subset / "train.en")[:1001])
    tree = tiny_config(subset, tmp_path / "run")
    tree["data"]["train"] = {"src": str(data / "train.de"), "tgt": str(data / "train.en.gz")}
    config = write_config(tmp_path / "bad.yaml", tree)
    assert main(["prepare", str(config)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"rnnsearch: error: {data / 'train.de'}:1001: not valid UTF-8 (byte 5)"
    )
    truncated = data / "train.en.gz"
    truncated.write_bytes(truncated.read_bytes()[:-40])
    (data / "train.de").write_text("".join(f"{s}\n" for s in lines[:1001]), encoding="utf-8")
    assert main(["prepare", str(config)]) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"rnnsearch: error: {truncated}: ") and "truncated" in line, line
    assert not (tmp_path / "run" / "prepared" / MANIFEST).exists()


def test_a_full_disk_while_preparing_leaves_no_dataset_and_no_temporaries(subset, tmp_path, monkeypatch):
    config = config_for(subset, tmp_path / "run")
    directory = tmp_path / "prepared"
    prepare(config, directory)

    def full_disk(self, name, array):
        raise atomic.write_failure(self.directory / name, OSError(28, "No space left on device"))

    monkeypatch.setattr(Writer, "_write", full_disk)
    with pytest.raises(UserError, match=r"source\.offsets: cannot write: No space left on device"):
        prepare(config_for(subset, tmp_path / "run", max_length=50), directory)
    assert sorted(p.name for p in directory.iterdir() if p.name.startswith(".")) == []
    assert stale_reason(directory, config) == "there is none yet"
    with pytest.raises(UserError, match="no prepared data here"):
        PreparedPairs(directory)


def test_a_prepare_killed_midway_leaves_nothing_a_training_run_accepts(subset, tmp_path):
    """SIGKILL at random moments of a prepare that replaces a complete dataset: what a kill
    before its manifest is in place leaves is refused; after it (the process still
    exiting), the new dataset is whole. The rerun gives the dataset an uninterrupted run gives."""
    big = tmp_path / "big"
    big.mkdir()
    sources, targets = read_lines(subset / "train.de"), read_lines(subset / "train.en")
    write_lines(big / "train.de", sources * 15)
    write_lines(big / "train.en", targets * 15)
    tree = tiny_config(subset, tmp_path / "run")
    tree["data"]["train"] = {"src": str(big / "train.de"), "tgt": str(big / "train.en")}
    config = write_config(tmp_path / "c.yaml", tree)
    assert main(["prepare", str(config), "--set", "data.max_length=40"]) == 0
    directory = tmp_path / "run" / "prepared"
    killed = 0
    for delay in (0.0, 0.8, 2.0):
        child = subprocess.Popen([sys.executable, "-m", "rnnsearch", "prepare", str(config)], stderr=subprocess.DEVNULL)
        while (directory / MANIFEST).exists() and child.poll() is None:
            time.sleep(0.005)  # until it has begun to replace the old dataset
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        if child.wait() == 0:
            continue  # it finished before the kill
        if stale_reason(directory, config_from_dict(tree)) is None:
            assert len(PreparedPairs(directory)) > 0  # killed after its last write: whole, and used as it is
            continue
        killed += 1
        with pytest.raises(UserError):
            PreparedPairs(directory)
    assert killed, "every prepare had written its dataset before its kill"
    assert main(["prepare", str(config)]) == 0
    assert main(["prepare", str(config), "--set", f"data.prepared={tmp_path / 'clean'}"]) == 0
    for name in ("source.tokens", "target.tokens", "source.offsets", "target.lengths", "subwords.src.model"):
        assert (directory / name).read_bytes() == (tmp_path / "clean" / name).read_bytes(), name
    assert not [p for p in directory.iterdir() if p.name.startswith(".")]


def descendants(pid: int) -> dict[int, str]:
    """The living processes descended from `pid`, with their command lines."""
    parents, commands = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)], commands[int(entry.name)] = int(fields[1]), command
    found, frontier = {}, {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier and child not in found}
        found.update({child: commands[child] for child in frontier})
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_a_killed_prepare_takes_its_workers_with_it(subset, tmp_path):
    """SIGKILL a prepare while its two workers encode: no process it started survives, and
    the caller's read of its standard streams ends, as a pipeline's or a CI job's does."""
    big = tmp_path / "big"
    big.mkdir()
    write_lines(big / "train.de", read_lines(subset / "train.de") * 100)
    write_lines(big / "train.en", read_lines(subset / "train.en") * 100)
    tree = tiny_config(subset, tmp_path / "run")
    tree["data"].update(train={"src": str(big / "train.de"), "tgt": str(big / "train.en")}, workers=2)
    config = write_config(tmp_path / "c.yaml", tree)
    command = [sys.executable, "-m", "rnnsearch", "prepare", str(config)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = {}
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        started = descendants(child.pid)
        if sum("spawn_main" in command for command in started.values()) >= 2:
            break
        time.sleep(0.02)
    assert child.poll() is None and len(started) >= 2, "prepare ended before its workers started"
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)  # returns once nothing holds the streams any more
    deadline = time.monotonic() + 30
    while (alive := set(started) & set(descendants(1)) - {os.getpid()}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive, {pid: started[pid] for pid in alive}


@pytest.fixture(scope="module")
def intact(subset, tmp_path_factory) -> Path:
    """A prepared dataset of the subset, to copy and damage."""
    directory = tmp_path_factory.mktemp("intact") / "prepared"
    ensure_prepared(config_for(subset, directory.parent / "run", prepared=str(directory)), directory)
    return directory


def edit_manifest(directory: Path, **changes) -> None:
    manifest = json.loads((directory / MANIFEST).read_text())
    for key, value in changes.items():
        manifest[key] = value
    (directory / MANIFEST).write_text(json.dumps(manifest))


def rewrite_array(directory: Path, name: str, change) -> None:
    """Replace an array by `change(array)`, with the manifest's size and digest made to
    match, as a careful vandal would: what is left to tell is the arrays' own sense."""
    manifest = json.loads((directory / MANIFEST).read_text())
    types = {"tokens": manifest["token_type"], "offsets": "int64", "lengths": manifest["length_type"]}
    dtype = np.dtype(types[name.split(".")[1]]).newbyteorder("<")
    array = change(np.fromfile(directory / name, dtype=dtype)).astype(dtype)
    (directory / name).write_bytes(array.tobytes())
    digest = hashlib.sha256(array.tobytes()).hexdigest()
    edit_manifest(
        directory,
        file_sizes={**manifest["file_sizes"], name: array.nbytes},
        file_digests={**manifest["file_digests"], name: digest},
    )


def other_target_subwords(directory: Path) -> None:
    texts = ["a dog runs", "two men sit on a bench", "the girl in red"] * 20
    (directory / TGT_SUBWORDS).write_bytes(train_subwords(texts, "unigram", 300).model_bytes)


DAMAGES = {
    "pairs many": (lambda d: edit_manifest(d, pairs="many"), "manifest.json", "pairs"),
    "pairs -1": (lambda d: edit_manifest(d, pairs=-1), "manifest.json", "pairs"),
    "token type complex128": (lambda d: edit_manifest(d, token_type="complex128"), "manifest.json", "token_type"),
    "token type uint8": (lambda d: edit_manifest(d, token_type="uint8"), "manifest.json", "token_type"),
    "a manifest without its sizes": (lambda d: edit_manifest(d, file_sizes={}), "manifest.json", "file_sizes"),
    "lengths cut short": (lambda d: rewrite_array(d, "source.lengths", lambda a: a[:-5]), "source.lengths", "lengths"),
    "lengths of 60,000": (
        lambda d: rewrite_array(d, "target.lengths", lambda a: np.full_like(a, 60000)),
        "target.lengths",
        "outside",
    ),
    "offsets of 10¹²": (
        lambda d: rewrite_array(d, "source.offsets", lambda a: np.full_like(a, 10**12)),
        "source.offsets",
        "offsets",
    ),
    "tokens cut short": (lambda d: rewrite_array(d, "target.tokens", lambda a: a[:-7]), "target.tokens", "end at"),
    "a token past the vocabulary": (
        lambda d: rewrite_array(d, "source.tokens", lambda a: np.where(np.arange(len(a)) == 3, 9999, a)),
        "source.tokens",
        "outside",
    ),
    "a padding id among the tokens": (
        lambda d: rewrite_array(d, "target.tokens", lambda a: np.where(np.arange(len(a)) == 0, 0, a)),
        "target.tokens",
        "outside",
    ),
    "another target subword model": (other_target_subwords, "subwords.tgt.model", "not the subword model"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_prepared_data_is_one_line_naming_the_file_before_any_training(intact, tmp_path, damage):
    directory = tmp_path / "prepared"
    shutil.copytree(intact, directory)
    apply, name, fragment = DAMAGES[damage]
    apply(directory)
    with pytest.raises(UserError) as refusal:
        PreparedPairs(directory)
    message = str(refusal.value)
    assert "\n" not in message and message.startswith(f"{directory / name}: "), message
    assert fragment in message and message.endswith("prepare the data again"), message


def test_an_array_changed_in_place_is_told_by_its_digest(intact, tmp_path):
    """A flipped bit in a token leaves a valid id: only the manifest's digest tells it."""
    directory = tmp_path / "prepared"
    shutil.copytree(intact, directory)
    data = bytearray((directory / "target.tokens").read_bytes())
    data[10] ^= 1
    (directory / "target.tokens").write_bytes(bytes(data))
    with pytest.raises(UserError, match="target.tokens: its bytes do not match the manifest's digest"):
        PreparedPairs(directory)


def test_training_on_a_damaged_manifest_prepares_the_data_again_saying_why(subset, intact, tmp_path, capsys):
    directory = tmp_path / "prepared"
    shutil.copytree(intact, directory)
    edit_manifest(directory, pairs="many")
    config = config_for(subset, tmp_path / "run", prepared=str(directory))
    ensure_prepared(config, directory)
    assert "is not a valid manifest (pairs: " in capsys.readouterr().err
    assert len(PreparedPairs(directory)) == len(PreparedPairs(intact))


def test_memory_of_the_batch_source_does_not_grow_with_the_corpus(word_subwords, tmp_path):
    """Batching N and 10·N prepared pairs: the memory Python allocates grows by a few
    bytes per pair (lengths and batch order), not by the pairs themselves."""
    peaks = {}
    for pairs in (20_000, 200_000):
        directory = tmp_path / str(pairs)
        write_synthetic_dataset(directory, pairs, word_subwords)
        tracemalloc.start()
        data = PreparedPairs(directory)
        batches = epoch_batches(data, 2000, None, seed=1, epoch=0)
        for k in range(0, len(batches), 50):
            make_batch([data[i] for i in batches[k]])
        peaks[pairs] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del data, batches
    per_pair = (peaks[200_000] - peaks[20_000]) / 180_000
    assert per_pair < 24, f"{per_pair:.1f} bytes per pair"


def write_synthetic_dataset(directory: Path, pairs: int, subwords: Subwords) -> None:
    """A prepared dataset of `pairs` random pairs of `subwords`' pieces, written as prepare
    writes one, with a manifest that holds all a real one does."""
    rng = np.random.default_rng(0)
    directory.mkdir()
    sizes = {}
    for side in SIDES:
        lengths = rng.integers(1, 60, pairs).astype("<u2")
        offsets = np.concatenate([[0], np.cumsum(lengths, dtype="<i8")])
        tokens = rng.integers(4, len(subwords), int(offsets[-1])).astype("<u2")
        for kind, array in (("tokens", tokens), ("offsets", offsets), ("lengths", lengths)):
            (directory / f"{side}.{kind}").write_bytes(array.tobytes())
            sizes[f"{side}.{kind}"] = array.nbytes
    for name in (SRC_SUBWORDS, TGT_SUBWORDS):
        (directory / name).write_bytes(subwords.model_bytes)
    identity = {"path": str(directory / "corpus"), "size": 0, "mtime_ns": 0}
    manifest = {
        "format": FORMAT,
        "inputs": [{"src": identity, "tgt": identity}],
        "settings": {"data.max_length": 60},
        "subwords": [subwords.digest, subwords.digest],
        "pairs": pairs,
        "token_type": "uint16",
        "length_type": "uint16",
        "file_sizes": sizes,
        "filtered": [],
    }
    (directory / MANIFEST).write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def word_subwords() -> Subwords:
    texts = ["the cat sat", "a dog ran far away", "the dog sat on the mat", "cat and dog"]
    return train_subwords(texts, "word", 100)


def prepare_lines(folder: Path, sources: list[str], targets: list[str], subwords: Subwords, max_length: int):
    """The prepared data of these lines, encoded with `subwords` on both sides."""
    folder.mkdir()
    write_lines(folder / "train.src", sources)
    write_lines(folder / "train.tgt", targets)
    tree = tiny_config(folder, folder / "run")
    tree["data"]["train"] = {"src": str(folder / "train.src"), "tgt": str(folder / "train.tgt")}
    tree["data"]["max_length"] = max_length
    prepare(config_from_dict(tree), folder / "prepared", (subwords, subwords))
    return PreparedPairs(folder / "prepared")


@pytest.mark.parametrize("chunk", [3, 10_000])  # pairs encoded three at a time, or all at once
def test_preparing_skips_and_counts_blank_and_over_long_pairs(word_subwords, tmp_path, monkeypatch, chunk):
    chunks = counting_chunks(monkeypatch, chunk)
    sources = ["the cat sat", "", "the dog", "   \t ", "the cat sat on the mat", "cat", "the dog ran", ""]
    targets = [
        "a dog ran",
        "the cat",
        "  ",
        "cat",
        "the dog",
        "the dog sat on the mat and",
        "the cat",
        "the dog sat on the mat and far away",
    ]
    data = prepare_lines(tmp_path / "data", sources, targets, word_subwords, max_length=4)
    report = FilterReport(**{k: v for k, v in data.manifest["filtered"][0].items() if k != "corpus"})
    assert report == FilterReport(kept=2, empty=4, too_long=2)
    assert str(report) == "kept 2 pairs; skipped 4 empty and 2 longer than the limit"
    kept = [("the cat sat", "a dog ran"), ("the dog ran", "the cat")]
    expected = [(word_subwords.encode([s])[0], word_subwords.encode([t])[0]) for s, t in kept]
    assert [(list(data[k][0]), list(data[k][1])) for k in range(len(data))] == expected
    assert chunks == ([3, 3, 2] if chunk == 3 else [8])


def test_the_length_limit_is_inclusive(word_subwords, tmp_path):
    data = prepare_lines(tmp_path / "data", ["the cat sat on"], ["the dog sat"], word_subwords, max_length=4)
    assert list(data.source_lengths) == [4]


def test_a_corpus_whose_every_pair_is_skipped_is_refused(word_subwords, tmp_path):
    with pytest.raises(UserError, match=r"train\.src: no usable training pairs \(each is over data\.max_length = 3"):
        prepare_lines(tmp_path / "data", ["", "the cat sat on the mat"], ["x", "y"], word_subwords, max_length=3)
    assert not (tmp_path / "data" / "prepared" / MANIFEST).exists()


def test_training_reuses_a_prepared_dataset_with_the_losses_of_a_run_that_prepared_its_own(corpus, tmp_path, capsys):
    settings = tiny_config(corpus, tmp_path / "own", max_steps=6, valid_every=3, log_every=1)
    config = str(write_config(tmp_path / "c.yaml", settings))
    assert main(["train", config]) == 0
    assert "preparing the training data in" in capsys.readouterr().err
    shared = f"data.prepared={tmp_path / 'shared'}"
    assert main(["prepare", config, "--set", shared]) == 0
    capsys.readouterr()
    assert main(["train", config, "--set", shared, "--set", f"train.model_dir={tmp_path / 'reusing'}"]) == 0
    assert "prepared pairs in" in capsys.readouterr().err
    assert not (tmp_path / "reusing" / "prepared").exists()

    def losses(run: str) -> list[float]:
        rows = [json.loads(line) for line in (tmp_path / run / "metrics.jsonl").read_text().splitlines()]
        return [row["train_loss"] for row in rows if "train_loss" in row]

    assert len(losses("own")) == 6 and losses("own") == losses("reusing")
    for name in ("subwords.src.model", "subwords.tgt.model"):
        assert (tmp_path / "own" / name).read_bytes() == (tmp_path / "shared" / name).read_bytes()


def test_validation_translates_the_first_sentences_and_the_whole_set_at_the_end(corpus, tmp_path, capsys):
    settings = tiny_config(corpus, tmp_path / "run", max_steps=4, valid_every=2, valid_bleu_sentences=10)
    assert main(["train", str(write_config(tmp_path / "c.yaml", settings))]) == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    validations = [row for row in rows if "valid_loss" in row]
    assert [row["step"] for row in validations] == [2, 4, 4]
    assert all("valid_bleu_all" not in row for row in validations[:2])
    assert validations[-1]["valid_sentences_all"] == 40 and "valid_bleu_all" in validations[-1]
    assert validations[-1]["valid_bleu"] == validations[-2]["valid_bleu"]  # the same 10 sentences, same model
    assert "on the first 10; on all 40:" in capsys.readouterr().err


@pytest.mark.parametrize("workers", [1, 2])
def test_a_bad_line_met_by_an_encoding_worker_is_reported_before_a_later_error(subset, tmp_path, monkeypatch, workers):
    """A resumed run encodes with its own subword models, with no sampling pass before:
    the worker that decodes a bad line reports it, ahead of the shorter file met later."""
    chunks = counting_chunks(monkeypatch, 250)
    lines = read_lines(subset / "train.de")
    source = "".join(f"{s}\n" for s in lines[:600]).encode() + b"Ein \xff Hund.\n"
    (tmp_path / "train.de").write_bytes(source + "".join(f"{s}\n" for s in lines[601:1200]).encode())
    write_lines(tmp_path / "train.en", read_lines(subset / "train.en")[:1100])  # the shorter, in a later chunk
    tree = tiny_config(subset, tmp_path / "run")
    tree["data"].update(train={"src": str(tmp_path / "train.de"), "tgt": str(tmp_path / "train.en")}, workers=workers)
    subwords = PreparedPairs(prepare_subset(subset, tmp_path)).subwords
    with pytest.raises(UserError) as error:
        prepare(config_from_dict(tree), tmp_path / "prepared", subwords)
    assert str(error.value) == f"{tmp_path / 'train.de'}:601: not valid UTF-8 (byte 5)"
    assert chunks[:3] == [250, 250, 250]  # the bad line is in the third chunk, the shorter file in the fifth


def prepare_subset(subset: Path, tmp_path: Path) -> Path:
    """The subset's prepared data, in tmp_path/subset."""
    prepare(config_for(subset, tmp_path / "run"), tmp_path / "subset")
    return tmp_path / "subset"
