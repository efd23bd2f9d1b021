"""The alignment module: for each target piece y_i, where it comes from, with y_i in view.

RNNsearch's α_i is computed from s_{i-1} (Bahdanau's wiring), before y_i is chosen: it is
where the decoder looks to *predict* the next word, not where that word comes from. The
module aligns a known word instead (docs/model.md, "The alignment module"). It reads what
the translation model computed, detached, so training it never changes the translation:

    k_j   = W_k [h_j ; E_x x_j]                      keys: annotation and source embedding
    g_j   = tanh(W_g E_x x_j) + G_{x_j}              the source piece itself, as the lexicon reads it
    e_ij  = W_q t_i · k_j / √d + Σ_{δ=-1,0,1} w_δ log α_{i,j+δ}
    π_ij  = softmax_j(e_ij)                          prior: where y_i comes from, y_i not yet known
    τ_ij  = log t(y_i | x_j) = F_{y_i} · g_j + b_{y_i} − log Σ_v exp(F_v · g_j + b_v)
    β_ij  = softmax_j(log π_ij + τ_ij)               the alignment of y_i: the posterior, y_i in view
    p'(y_i | x) = Σ_j π_ij t(y_i | x_j)              the module's own model of y_i

With the NULL option (`model.aligner_null`), j also runs over one more position, ∅, that
stands for no source word (the IBM models' NULL word; Mask-Align's leaky attention):
k_∅ and g_∅ are learnt vectors, and e_i∅ = W_q t_i · k_∅ / √d + b_∅ takes the learnt
energy b_∅ where the other positions take their attention term. A target piece that no
source piece translates (an article French needs and English lacks) puts its mass on ∅
and gets no link, instead of being forced onto some source word. b_∅ starts at
NULL_START, so that ∅ first takes about a tenth of the prior.

t_i is the readout p(y_i) is computed from, α_i the attention of the step that outputs
y_i: the prior starts as that attention (w = (0, 1, 0), W_q = 0) and learns where, beside
it, the word it predicts comes from. The lexicon t(y | x) reads the source piece alone,
not its annotation, which also carries its neighbours: a lexicon that could predict y_i
from any position next to its source would leave the posterior free to drift (on
reversal it drifts one position, where the attention looks). It starts uniform (F = 0,
G = 0), as EM for IBM Model 1 starts from a uniform table.

β is a softmax over the source of an energy whose query holds y_i's own vector F_{y_i}
and the decoder's context t_i. The prior alone cannot see y_i, so p' is a proper
distribution over target pieces and predicting y_i through it (a mixture of lexical
translations weighed by the prior) cannot be won by copying y_i. The normaliser over the
vocabulary is taken, in training, over the pieces of the batch's targets only (Jean et
al. 2015), which keeps its cost a fraction of the output layer's; aligning takes it over
the whole vocabulary, once for each source piece for as long as the weights are unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from rnnsearch.model.linear import CHUNK_ELEMENTS, Linear

FLOOR = 1e-6  # α floored before its log: the prior reads a weight that underflowed as small, not as −∞
NULL_START = math.log(0.1)  # b_∅ at the start: beside attention rows that sum to 1, ∅ takes 1/11 of the prior


@dataclass(frozen=True)
class AlignerSource:
    """A batch's source side as the module reads it, computed once per batch.

    keys     k_j (B, S, d)
    pieces   x_j (B, S), the source piece ids
    lexical  g_j (B, S, d)
    padding  (B, S) True at padded positions

    With the NULL option each holds one more position, ∅, last: k_∅, g_∅, piece NO_PIECE,
    never padded.
    """

    keys: torch.Tensor
    pieces: torch.Tensor
    lexical: torch.Tensor
    padding: torch.Tensor


@dataclass(frozen=True)
class Normalising:
    """Which target pieces the lexicon's normaliser sums over.

    vocabulary: the pieces it normalises over (training: the batch's target pieces, which
                must include every piece aligned); None: all of them
    padding:    True at the entries of `vocabulary` that only pad it to a fixed size
                (CUDA graphs), which count for nothing
    known:      over all pieces, the normalisers of the source pieces computed so far
                (`Aligner.normaliser_table`), which a call reads and adds to: where many
                batches are aligned with the same weights, each piece's is computed once
    """

    vocabulary: torch.Tensor | None = None
    padding: torch.Tensor | None = None
    known: torch.Tensor | None = None


OVER_ALL = Normalising()
"""The lexicon normalised over every target piece, computed afresh."""


@dataclass(frozen=True)
class AlignerRows:
    """The module's rows for a batch's target pieces: log π_ij and τ_ij, each (B, T, S),
    −inf at padded source positions; with `null`, one more column, ∅'s, last (B, T, S + 1)."""

    log_prior: torch.Tensor
    log_lexical: torch.Tensor
    null: bool = False

    @property
    def log_joint(self) -> torch.Tensor:
        """log π_ij + τ_ij = log p'(y_i, a_i = j | x)."""
        return self.log_prior + self.log_lexical

    def alignment(self) -> torch.Tensor:
        """β_ij over the source pieces (B, T, S): each row a distribution, less the mass it
        puts on ∅ with `null`."""
        weights = self.log_joint.softmax(dim=-1)
        return weights[..., :-1] if self.null else weights

    def log_null(self) -> torch.Tensor:
        """log β_i∅, the log-mass each row puts on no source word (B, T); only with `null`."""
        if not self.null:
            raise ValueError("these rows have no NULL position")
        return self.log_joint.log_softmax(dim=-1)[..., -1]

    def log_likelihood(self) -> torch.Tensor:
        """log p'(y_i | x) = log Σ_j π_ij t(y_i | x_j), (B, T)."""
        return self.log_joint.logsumexp(dim=-1)


NO_PIECE = -1  # the piece id of ∅ in AlignerSource.pieces: no source piece


class Aligner(nn.Module):
    """W_k, W_q, w, the lexicon's W_g and G over the source pieces, and its F and b over
    the target pieces; with `null`, k_∅, b_∅ and g_∅."""

    def __init__(
        self,
        source_vocab_size: int,
        target_vocab_size: int,
        *,
        annotation_size: int,
        embedding_size: int,
        readout_size: int,
        size: int,
        null: bool = False,
    ):
        super().__init__()
        self.key_layer = Linear(annotation_size + embedding_size, size, bias=False)  # W_k
        self.query_layer = Linear(readout_size, size, bias=False)  # W_q
        self.attention_weights = nn.Parameter(torch.tensor([0.0, 1.0, 0.0]))  # w_{-1}, w_0, w_{+1}
        self.lexical_layer = Linear(embedding_size, size)  # W_g
        self.source_words = nn.Embedding(source_vocab_size, size)  # G
        self.words = nn.Embedding(target_vocab_size, size)  # F
        self.word_bias = nn.Parameter(torch.zeros(target_vocab_size))  # b
        for uniform in (self.query_layer.weight, self.source_words.weight, self.words.weight):
            nn.init.zeros_(uniform)
        self.size = size
        self.null = null
        self.jumps: tuple[float, ...] | None = None
        """The weights of the jump table counted from the module's own links once it was
        trained (rnnsearch/alignments/counted_jumps.py), attached with it on loading;
        None where none was counted."""
        if null:
            self.null_key = nn.Parameter(torch.zeros(size))  # k_∅
            self.null_energy = nn.Parameter(torch.tensor(NULL_START))  # b_∅
            self.null_word = nn.Parameter(torch.zeros(size))  # g_∅
        self._normalisers: tuple[tuple, torch.Tensor] | None = None  # `normaliser_table`'s, with its weights' key

    def source_side(
        self, pieces: torch.Tensor, annotations: torch.Tensor, embedded: torch.Tensor, padding: torch.Tensor
    ) -> AlignerSource:
        """k_j and g_j of source pieces x_j (B, S), from h_j (B, S, A) and E_x x_j (B, S, E), both detached."""
        embedded = embedded.detach().float()
        keys = self.key_layer(torch.cat([annotations.detach().float(), embedded], dim=-1))
        source = AlignerSource(keys, pieces, self._lexical(pieces, embedded), padding)
        return self._with_null(source) if self.null else source

    def _with_null(self, source: AlignerSource) -> AlignerSource:
        """`source` with ∅ after its last position (every pair's, padded or not)."""
        batch = source.pieces.size(0)

        def appended(values: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
            return torch.cat([values, last.expand(batch, 1, *values.shape[2:])], dim=1)

        return AlignerSource(
            appended(source.keys, self.null_key),
            appended(source.pieces, source.pieces.new_full((), NO_PIECE)),  # made on the device: no copy
            appended(source.lexical, self.null_word),
            appended(source.padding, source.padding.new_zeros(())),
        )

    def _lexical(self, pieces: torch.Tensor, embedded: torch.Tensor) -> torch.Tensor:
        """g = tanh(W_g E_x x) + G_x."""
        return torch.tanh(self.lexical_layer(embedded)) + self.source_words(pieces)

    def forward(
        self,
        readout: torch.Tensor,
        targets: torch.Tensor,
        attention: torch.Tensor,
        source: AlignerSource,
        normalising: Normalising = OVER_ALL,
    ) -> AlignerRows:
        """The rows of target pieces `targets` (B, T) whose readouts t_i are `readout` (B, T, l)
        and whose attention rows α_i are `attention` (B, T, S).

        `normalising` says which target pieces the lexicon normalises over (Normalising).
        """
        blocked = source.padding.unsqueeze(1)  # (B, 1, S)
        queries = self.query_layer(readout.detach().float())  # q_i: (B, T, d)
        energies = torch.bmm(queries, source.keys.transpose(1, 2)) / math.sqrt(self.size)
        beside = _neighbours(attention.detach().float().clamp_min(FLOOR).log()) @ self.attention_weights
        if self.null:  # ∅ takes b_∅ where the source positions take their attention term
            beside = torch.cat([beside, self.null_energy.expand(*beside.shape[:2], 1)], dim=-1)
        energies = energies + beside
        log_prior = energies.masked_fill(blocked, -math.inf).log_softmax(dim=-1)
        word_scores = torch.bmm(self.words(targets), source.lexical.transpose(1, 2))  # F_{y_i} · g_j
        word_scores = word_scores + self.word_bias[targets].unsqueeze(-1)
        normaliser = self._log_normaliser(source, normalising)
        log_lexical = (word_scores - normaliser.unsqueeze(1)).masked_fill(blocked, -math.inf)
        return AlignerRows(log_prior, log_lexical, self.null)

    def normaliser_table(self, source_embedding: torch.Tensor) -> torch.Tensor:
        """The table of the lexicon's normaliser over all target pieces for each source
        piece (and ∅, last), NaN where none is known yet: `forward`'s `known`.

        The normalisers depend on the weights alone, so the table is kept, with what the
        calls that read it added, for as long as the weights it is computed from are the
        ones they were (the lexicon's and `source_embedding`, the E_x it reads): a loaded
        model that aligns call after call (a server, a file read in chunks) computes
        each piece's normaliser once. A step, a loaded state or a move to another device
        changes a weight's storage or its version, and starts a new table."""
        key = tuple(_identity(weight) for weight in (source_embedding, *self._lexicon_weights()))
        if self._normalisers is None or self._normalisers[0] != key:
            with torch.inference_mode(False):  # a table made under inference mode could not be written outside it
                table = torch.full((self.source_words.num_embeddings + 1,), math.nan, device=self.word_bias.device)
            self._normalisers = (key, table)
        return self._normalisers[1]

    def _lexicon_weights(self) -> list[torch.Tensor]:
        """The weights the normalisers are computed from, besides E_x: W_g, G, F, b and g_∅."""
        layer = self.lexical_layer
        weights = [layer.weight, layer.bias, self.source_words.weight, self.words.weight, self.word_bias]
        return weights + [self.null_word] if self.null else weights

    def _log_normaliser(self, source: AlignerSource, normalising: Normalising) -> torch.Tensor:
        """log Σ_v exp(F_v · g_j + b_v) over the normalising vocabulary (all pieces if None;
        its padding left out), (B, S). Over all pieces it is computed once for each
        distinct source piece, g_j being the piece's own, and, with a table of those
        known, once for each piece it lacks."""
        vocabulary, vocabulary_padding, known = normalising.vocabulary, normalising.padding, normalising.known
        if vocabulary is not None:
            scores = source.lexical @ self.words(vocabulary).t() + self.word_bias[vocabulary]
            if vocabulary_padding is not None:
                scores = scores.masked_fill(vocabulary_padding, -math.inf)
            return scores.logsumexp(dim=-1)
        pieces, where = source.pieces.unique(return_inverse=True)
        first = torch.full(pieces.shape, source.pieces.numel(), dtype=torch.long, device=pieces.device)
        first.scatter_reduce_(0, where.flatten(), torch.arange(where.numel(), device=pieces.device), reduce="amin")
        rows = source.lexical.flatten(0, 1)[first]  # g of each distinct piece (and of ∅)
        if known is None:
            return self._over_all_pieces(rows)[where]
        missing = known[pieces].isnan()
        if bool(missing.any()):
            known[pieces[missing]] = self._over_all_pieces(rows[missing]).detach().to(known.dtype)
        return known[source.pieces]

    def _over_all_pieces(self, rows: torch.Tensor) -> torch.Tensor:
        """log Σ_v exp(F_v · g + b_v) of each row g of `rows`, a chunk of rows at a time."""
        step = max(1, CHUNK_ELEMENTS // self.words.num_embeddings)
        parts = [
            (rows[start : start + step] @ self.words.weight.t() + self.word_bias).logsumexp(dim=-1)
            for start in range(0, rows.size(0), step)
        ]
        return torch.cat(parts)


def _identity(weight: torch.Tensor) -> tuple[int, int, str]:
    """What changes when a weight does: its storage, its in-place version, its device."""
    return weight.data_ptr(), weight._version, str(weight.device)


def _neighbours(values: torch.Tensor) -> torch.Tensor:
    """(…, S) → (…, S, 3): each position's left neighbour's value, its own and its right
    neighbour's (log FLOOR beyond the ends)."""
    edge = math.log(FLOOR)
    left = F.pad(values, (1, 0), value=edge)[..., :-1]
    right = F.pad(values, (0, 1), value=edge)[..., 1:]
    return torch.stack([left, values, right], dim=-1)
