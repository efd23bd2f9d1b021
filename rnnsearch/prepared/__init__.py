"""Prepared data: the training corpus encoded once into flat arrays on disk, then
memory-mapped by every training run (and every rank of one) that uses it.

    manifest.json                     what the data was built from; written last
    subwords.src.model / .tgt.model   the SentencePiece models that encoded it
    source.tokens, target.tokens      the piece ids of every kept pair, one sentence after another
    source.offsets, target.offsets    int64: pair k is tokens[offsets[k]:offsets[k + 1]]
    source.lengths, target.lengths    pieces per sentence, for length bucketing
    links, links.offsets              where a corpus names word alignments: each kept pair's
                                      (target piece, source piece) links (links.py)

The arrays are raw little-endian numpy arrays (numpy.memmap reads them), with their
types and sizes in the manifest, as in fairseq's indexed datasets. The corpus is read
as a stream and never held whole: SentencePiece learns from a random sample drawn
while streaming (reservoir sampling, reproducible), and worker processes encode the
pairs a chunk at a time, in order, while this process writes them out. So the memory
of preparing and of training does not grow with the corpus, beyond a few bytes per
pair of lengths and batch order.

One module per step, in the order the data flows:

    manifest.py    the files' layout, the manifest's schema, and whether a dataset is stale
    streaming.py   the corpus read a chunk at a time, with a progress bar
    sampling.py    the subword sample and the SentencePiece models learnt from it
    workers.py     the encoder, and the pool of worker processes that runs it
    links.py       a corpus's word alignments checked and placed on the pairs' pieces, in the encoder
    writing.py     the encoded chunks appended to the arrays, in order
    preparing.py   prepare and ensure_prepared: the steps above, manifest last
    reading.py     PreparedPairs: a dataset checked and memory-mapped for training

The package's public API is what the rest of rnnsearch uses (below); everything else is
imported from the module it lives in.
"""

from rnnsearch.prepared.manifest import prepared_dir, stale_reason
from rnnsearch.prepared.preparing import ensure_prepared, prepare
from rnnsearch.prepared.reading import PreparedPairs
from rnnsearch.prepared.writing import FilterReport

__all__ = ["FilterReport", "PreparedPairs", "ensure_prepared", "prepare", "prepared_dir", "stale_reason"]
