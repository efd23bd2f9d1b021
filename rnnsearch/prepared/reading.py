"""Reading a prepared dataset for training: its manifest and arrays checked once, then
pair k served as two numpy views of memory maps, read from disk when a batch needs them,
and its word links (if the dataset has them) as a third."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnnsearch.errors import UserError
from rnnsearch.prepared.manifest import (
    FORMAT,
    LINK_ARRAYS,
    MANIFEST,
    SIDES,
    SRC_SUBWORDS,
    TGT_SUBWORDS,
    changed_array,
    manifest_problem,
    missing_array,
    read_manifest,
)
from rnnsearch.reserved import PAD
from rnnsearch.text.subwords import Subwords

CHECK_BLOCK = 1 << 20  # pairs compared at once: the check's memory stays flat whatever the corpus


def _steps_by(offsets: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether offsets[k + 1] − offsets[k] is lengths[k] for every pair k, a block at a time."""
    for start in range(0, len(lengths), CHECK_BLOCK):
        stop = min(start + CHECK_BLOCK, len(lengths))
        if not np.array_equal(np.diff(offsets[start : stop + 1]), lengths[start:stop]):
            return False
    return True


class PreparedPairs:
    """A prepared dataset opened for training: its length arrays for bucketing, and pair
    k as two numpy views of memory maps, read from disk when a batch needs them."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        manifest = read_manifest(self.directory)
        if manifest is None or manifest.get("format") != FORMAT:
            raise UserError(f"{self.directory}: no prepared data here (run rnnsearch prepare)")
        problem = manifest_problem(manifest)
        if problem is not None:
            raise UserError(f"{self.directory / MANIFEST}: not a valid manifest ({problem}); prepare the data again")
        reason = missing_array(self.directory, manifest) or changed_array(self.directory, manifest)
        if reason is not None:
            raise UserError(f"{reason}; prepare the data again")
        self.manifest = manifest
        self.tokens = [self._map(f"{side}.tokens", manifest["token_type"]) for side in SIDES]
        self.offsets = [self._map(f"{side}.offsets", "int64") for side in SIDES]
        self.source_lengths, self.target_lengths = (
            self._map(f"{side}.lengths", manifest["length_type"]) for side in SIDES
        )
        self._subwords = self._checked_subwords()
        lengths = (self.source_lengths, self.target_lengths)
        for k, side in enumerate(SIDES):
            self._check_side(side, self.tokens[k], self.offsets[k], lengths[k], vocabulary=len(self._subwords[k]))
        self.link_rows: np.ndarray | None = None
        self.link_offsets: np.ndarray | None = None
        if LINK_ARRAYS[0] in manifest["file_sizes"]:
            self.link_rows = self._map("links", manifest["length_type"]).reshape(-1, 2)
            self.link_offsets = self._map("links.offsets", "int64")
            self._check_links(self.link_rows, self.link_offsets)

    def _checked_subwords(self) -> tuple[Subwords, Subwords]:
        """The subword models beside the arrays, checked to be those that encoded them."""
        subwords = load_subwords(self.directory)
        for name, model, recorded in zip((SRC_SUBWORDS, TGT_SUBWORDS), subwords, self.manifest["subwords"]):
            if model.digest != recorded:
                raise UserError(
                    f"{self.directory / name}: not the subword model that encoded this data (its digest differs "
                    "from the manifest's); prepare the data again"
                )
        return subwords

    def _check_side(
        self, side: str, tokens: np.ndarray, offsets: np.ndarray, lengths: np.ndarray, *, vocabulary: int
    ) -> None:
        """One side's arrays against the manifest and each other, vectorised, once: as
        many lengths as pairs, each from 1 to data.max_length; offsets from 0 that step by
        those lengths to the number of tokens; token ids within the `vocabulary`."""
        limit = self.manifest["settings"]["data.max_length"]

        def refuse(name: str, what: str) -> None:
            raise UserError(f"{self.directory / f'{side}.{name}'}: {what}; prepare the data again")

        if len(lengths) != self.manifest["pairs"]:
            refuse("lengths", f"{len(lengths):,} lengths for the manifest's {self.manifest['pairs']:,} pairs")
        if len(lengths) and not (1 <= int(lengths.min()) and int(lengths.max()) <= limit):
            refuse("lengths", f"a length outside 1 … {limit} (data.max_length)")
        if len(offsets) != len(lengths) + 1 or (len(offsets) and int(offsets[0]) != 0):
            refuse("offsets", f"{len(offsets):,} offsets, not 0 followed by one per pair")
        if not _steps_by(offsets, lengths):
            refuse("offsets", "offsets that do not step by the lengths")
        end = int(offsets[-1]) if len(offsets) else 0
        if end != len(tokens):
            refuse("tokens", f"{len(tokens):,} tokens where the offsets end at {end:,}")
        if len(tokens) and not (PAD < int(tokens.min()) and int(tokens.max()) < vocabulary):
            refuse("tokens", f"a token id outside 1 … {vocabulary - 1}, the subword vocabulary")

    def _check_links(self, rows: np.ndarray, offsets: np.ndarray) -> None:
        """The link arrays against the manifest and each other, once: offsets from 0, one
        per pair and one more, never falling, to the number of link rows; positions below
        data.max_length."""
        limit = self.manifest["settings"]["data.max_length"]

        def refuse(name: str, what: str) -> None:
            raise UserError(f"{self.directory / name}: {what}; prepare the data again")

        if len(offsets) != len(self) + 1 or int(offsets[0]) != 0 or int(offsets[-1]) != len(rows):
            refuse("links.offsets", f"{len(offsets):,} offsets, not 0, one per pair, ending at {len(rows):,} links")
        for start in range(0, len(offsets), CHECK_BLOCK):
            if np.any(np.diff(offsets[start : start + CHECK_BLOCK + 1]) < 0):
                refuse("links.offsets", "offsets that fall")
        if len(rows) and not (0 <= int(rows.min()) and int(rows.max()) < limit):
            refuse("links", f"a piece position beyond data.max_length = {limit}")

    @property
    def has_links(self) -> bool:
        """Whether the dataset holds word links (some corpus named its alignments)."""
        return self.link_rows is not None

    def links(self, index: int) -> np.ndarray:
        """Pair `index`'s (target piece, source piece) links, (L, 2); none in a dataset without links."""
        if self.link_rows is None or self.link_offsets is None:
            return np.zeros((0, 2), dtype=np.int64)
        return self.link_rows[self.link_offsets[index] : self.link_offsets[index + 1]]

    def _map(self, name: str, dtype: str) -> np.ndarray:
        path = self.directory / name
        if path.stat().st_size == 0:
            return np.zeros(0, dtype=np.dtype(dtype).newbyteorder("<"))
        return np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="r")

    def __len__(self) -> int:
        return len(self.source_lengths)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        src_offsets, tgt_offsets = self.offsets
        return (
            self.tokens[0][src_offsets[index] : src_offsets[index + 1]],
            self.tokens[1][tgt_offsets[index] : tgt_offsets[index + 1]],
        )

    @property
    def subwords(self) -> tuple[Subwords, Subwords]:
        return self._subwords


def load_subwords(directory: Path) -> tuple[Subwords, Subwords]:
    """The source and target subword models saved beside a dataset's arrays."""
    return Subwords.load(directory / SRC_SUBWORDS), Subwords.load(directory / TGT_SUBWORDS)
