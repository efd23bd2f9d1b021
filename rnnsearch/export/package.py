"""`rnnsearch export`: a trained model as an ONNX Runtime package.

The package is a model directory (config, subword models, the weights as
best.safetensors) with an `onnx/` folder: the encoder and step graphs (graphs.py), at
fp32 and, with int8, with their matrix weights quantised to 8-bit integers by ONNX
Runtime's dynamic quantisation, and a manifest that records each graph's digest. The
manifest is written last, so a package whose export was interrupted is not taken for
one. Because the weights are there too, the same directory also runs on PyTorch
(`--runtime torch`), and scores and aligns given pairs, which the graphs do not.

Before it reports success the export checks the fp32 graphs against PyTorch: both
decode the same sample sentences step by step, fed the same tokens, and their
log-probabilities and alignments must agree to within float rounding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import onnxruntime
import torch

from rnnsearch.errors import UserError
from rnnsearch.export import graphs
from rnnsearch.export.manifest import FORMAT, GRAPHS, MANIFEST, PACKAGE_FOLDER, VERSION, file_digest, read_manifest
from rnnsearch.export.quantise import quantise_graph
from rnnsearch.export.runtime import OnnxModel, session
from rnnsearch.files import atomic, model_directory
from rnnsearch.files.atomic import atomic_write, replacing
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.reserved import BOS, EOS
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import max_output_lengths
from rnnsearch.text.batches import source_tensors

CHECK_SENTENCES = 16  # sample sentences the graphs are checked on
CHECK_STEPS = 12  # decoder steps checked per sentence
TOLERANCE = 1e-3  # largest difference of a log-probability or weight allowed at fp32


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote and measured: the largest difference between the fp32 graphs
    and PyTorch, and for int8 how many sample greedy translations equal fp32's."""

    precisions: tuple[str, ...]
    largest_difference: float
    int8_same: int | None
    sentences: int


def export_package(model_dir: str | Path, out_dir: str | Path, *, int8: bool = False) -> ExportReport:
    """Write the package of the model in `model_dir` to `out_dir`; see the module's docstring."""
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    model_directory.require_new_output(model_dir, out_dir, made_by="exported", product="package")
    config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    if src_subwords is None:
        raise UserError(f"{model_dir}: reads audio; export takes models that read text")
    # the graphs carry no alignment module, so neither does the package's copy of the weights
    model = model_directory.load_model(model_dir, config, src_subwords, tgt_subwords, aligner=False)
    with atomic.new_directory(out_dir, last=model_directory.BEST) as building:
        report = _write_package(model, building, model_dir=model_dir, vocabulary=len(src_subwords), int8=int8)
        model_directory.save_model_files(building, config, src_subwords, tgt_subwords)
        info = {
            "exported_from": str(model_dir),
            **model_directory.files_record(building, src_subwords, tgt_subwords),
            # the graphs exported from these weights: another model's graphs, digests and all, are told apart
            "graphs": read_manifest(building)["graphs"],
        }
        model_directory.write_tensors(building / model_directory.BEST, model_directory.model_tensors(model), info)
    return report


def _write_package(model: RNNSearch, out_dir: Path, *, model_dir: Path, vocabulary: int, int8: bool) -> ExportReport:
    """The graphs of `model` (from `model_dir`, with a source `vocabulary` of pieces),
    checked against PyTorch, and the manifest, in out_dir's package folder."""
    folder = out_dir / PACKAGE_FOLDER
    folder.mkdir()
    _write_graph(folder / GRAPHS["fp32"][0], lambda path: graphs.export_encoder(model, path))
    _write_graph(folder / GRAPHS["fp32"][1], lambda path: graphs.export_step(model, path))
    exported = _exported(folder, "fp32")
    sources = _sample_sources(vocabulary, seed=0)
    difference = _largest_difference(model, exported, sources)
    if not difference <= TOLERANCE:
        raise UserError(
            f"{model_dir}: the exported graphs differ from PyTorch by {difference:.3g} (more than {TOLERANCE}); "
            "nothing was exported"
        )
    precisions = ["fp32"]
    int8_same = None
    if int8:
        for fp32_name, int8_name in zip(GRAPHS["fp32"], GRAPHS["int8"]):
            _write_graph(folder / int8_name, lambda path, name=fp32_name: quantise_graph(folder / name, path))
        int8_same = _same_translations(exported, _exported(folder, "int8"), sources)
        precisions.append("int8")
    _write_manifest(folder, precisions)
    return ExportReport(tuple(precisions), difference, int8_same, len(sources))


def _write_graph(path: Path, write) -> None:
    """Run `write(temporary)` and rename its file to `path`, whole or not at all."""
    with replacing(path) as temporary:
        write(temporary)


def _exported(folder: Path, precision: str) -> OnnxModel:
    threads = torch.get_num_threads()
    return OnnxModel(*(session(folder / name, threads) for name in GRAPHS[precision]))


def _sample_sources(vocabulary: int, *, seed: int) -> list[list[int]]:
    """Sample sources of 1 to 30 random pieces (ids from 4: no special tokens), each ending in </s>."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 31, (CHECK_SENTENCES,), generator=generator)
    return [torch.randint(4, vocabulary, (int(n),), generator=generator).tolist() + [EOS] for n in lengths]


def _largest_difference(model: RNNSearch, exported: OnnxModel, sources: list[list[int]]) -> float:
    """The largest difference of log p(y_i) and α_i between PyTorch and the graphs over
    CHECK_STEPS steps of every sample sentence, both fed PyTorch's greedy tokens."""
    src, lengths = source_tensors(sources)
    largest = 0.0
    with torch.no_grad():
        ours, theirs = model.encode(src, lengths), exported.encode(src, lengths)
        tokens = torch.full((len(sources),), BOS)
        for _ in range(CHECK_STEPS):
            expected, ours, expected_weights = model.step(tokens, ours)
            found, theirs, found_weights = exported.step(tokens, theirs)
            largest = max(largest, float((expected - found).abs().max()))
            if expected_weights is not None and found_weights is not None:
                largest = max(largest, float((expected_weights - found_weights).abs().max()))
            tokens = expected.argmax(1)
    return largest


def _same_translations(first: OnnxModel, second: OnnxModel, sources: list[list[int]]) -> int:
    """How many greedy translations of the sample sentences the two models share."""
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 2.0, 10)
    found = [greedy_search(model, src, lengths, max_lengths=limits) for model in (first, second)]
    return sum(a[0].tokens == b[0].tokens for a, b in zip(*found))


def _write_manifest(folder: Path, precisions: list[str]) -> None:
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "opset": graphs.OPSET,
        "exported_with": {"torch": torch.__version__, "onnxruntime": onnxruntime.__version__},
        "graphs": {
            precision: {name: file_digest(folder / name) for name in GRAPHS[precision]} for precision in precisions
        },
    }
    atomic_write(folder / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
