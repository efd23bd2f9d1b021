"""The subword models of a new dataset: SentencePiece learns from a reproducible random
sample of the training pairs, drawn while the corpus streams past (reservoir sampling),
so memory holds the sample only, never the corpus."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from rnnsearch.config import SubwordConfig
from rnnsearch.config.data import ParallelFiles
from rnnsearch.prepared import streaming
from rnnsearch.prepared.streaming import Progress, total_bytes
from rnnsearch.text.corpus import PairCounts, require_usable, stream_parallel
from rnnsearch.text.subwords import Subwords, train_subwords

SAMPLE_SEED = 0  # the subword sample is the same for the same corpus, whatever the run's seed


def _usable_chunks(corpus: ParallelFiles, counts: PairCounts) -> Iterator[tuple[list[str], list[str], int, int]]:
    """The pairs of `corpus` with words on both sides, a chunk at a time, with the lines
    read and the bytes read so far; `counts` counts the blank ones."""
    for chunk in stream_parallel(corpus.src, corpus.tgt, chunk_lines=streaming.CHUNK_LINES):
        usable = counts.add(chunk.sources, chunk.targets)
        sources = [s for s, keep in zip(chunk.sources, usable) if keep]
        targets = [t for t, keep in zip(chunk.targets, usable) if keep]
        yield sources, targets, len(chunk.sources), chunk.bytes_read


def sample(corpora: Sequence[ParallelFiles], size: int) -> tuple[list[str], list[str]]:
    """A reproducible uniform random sample of at most `size` (subwords.sample_sentences)
    usable pairs of all the `corpora`, in corpus order when every pair fits, drawn in one
    pass over the stream (reservoir sampling), so memory holds the sample only.

    Reading checks every line, so a corpus with nothing usable is refused here, before
    SentencePiece runs."""
    rng = random.Random(SAMPLE_SEED)
    sources: list[str] = []
    targets: list[str] = []
    seen = 0
    progress = Progress("reading", total_bytes(corpora))
    try:
        for corpus in corpora:
            counts = PairCounts()
            for chunk_sources, chunk_targets, lines, bytes_read in _usable_chunks(corpus, counts):
                for source, target in zip(chunk_sources, chunk_targets):
                    if seen < size:
                        sources.append(source)
                        targets.append(target)
                    else:
                        slot = rng.randrange(seen + 1)
                        if slot < size:
                            sources[slot], targets[slot] = source, target
                    seen += 1
                progress.update(lines, bytes_read)
            require_usable(counts, corpus.src, corpus.tgt, purpose="training")
            progress.next_corpus()
    finally:
        progress.close()
    return sources, targets


def train_vocabularies(options: SubwordConfig, sources: list[str], targets: list[str]) -> tuple[Subwords, Subwords]:
    """Source and target SentencePiece models (the same one twice if `options.joint`)."""

    def train(texts: list[str]) -> Subwords:
        return train_subwords(texts, options.kind, options.vocab_size, options.min_frequency)

    if options.joint:
        joint = train(sources + targets)
        return joint, joint
    return train(sources), train(targets)
