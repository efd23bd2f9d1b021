"""What trains the alignment module (model/aligner.py): its objective's terms, one class
each in TERMS, and the objectives a config can name (`train.aligner_objective`), each a
set of terms summed, in OBJECTIVES (docs/model.md, "The alignment module").

A term reads the module's rows for a batch's target pieces (AlignerRows: log π and τ,
whence log β and log p'), the mask of the real (unpadded) pieces, and the batch's word
links over its pieces where it has any, and returns its loss summed over the batch. A
new term is a class here with its name, whether it reads links (so that batches carry
them and a config whose corpora name none is refused), and its loss; a new objective is
an entry of OBJECTIVES. The trainer, `train-aligner` and the config's check read them
from here and nowhere else.

One term reads two modules: `agreement_loss`, between a model's module and its reverse
model's, which `train-aligner --reverse` trains together (weighed by
`train.aligner_agreement_weight`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from rnnsearch.model.aligner import AlignerRows
from rnnsearch.reserved import EOS, PAD


@dataclass(frozen=True)
class PieceLinks:
    """A batch's word links spread over its pieces: `matrix` (B, T, S), A_ij the weight of
    the link of target piece i to source piece j (each linked row sums to 1), 0 where there
    is none (`Guide.matrix`, α's shape; a fixed shape's padded rows and positions are 0
    too), for the batch whose target pieces are `targets` (B, T: each pair's pieces,
    "</s>", padding). Dense, so that one term serves eager steps and CUDA graphs alike,
    whatever the number of links."""

    matrix: torch.Tensor
    targets: torch.Tensor

    def unlinked(self) -> torch.Tensor:
        """(B, T) the target pieces of words that a pair with links leaves unlinked (what
        its aligner aligned to NULL; never "</s>" or padding). Computed where a term
        reads it, a module with the NULL option's."""
        linked = self.matrix.sum(dim=-1) > 0  # (B, T)
        linked_pairs = linked.any(dim=1, keepdim=True)
        words = (self.targets != EOS) & (self.targets != PAD)
        return words & linked_pairs & ~linked


class AlignerTerm:
    """One term of the module's loss, summed over a batch's real target pieces."""

    name: ClassVar[str]
    needs_links: ClassVar[bool] = False

    def loss(self, rows: AlignerRows, real: torch.Tensor, links: PieceLinks | None) -> torch.Tensor:
        """This term's loss for the batch whose rows are `rows`, `real` (B, T) marking its
        unpadded target pieces, `links` its word links (None: it carries none)."""
        raise NotImplementedError


class Prediction(AlignerTerm):
    """−Σ_i log p'(y_i | x): each target piece predicted through the module's own
    alignment, a mixture of lexical translations weighed by the prior. Needs no links."""

    name = "prediction"

    def loss(self, rows: AlignerRows, real: torch.Tensor, links: PieceLinks | None) -> torch.Tensor:
        return -rows.log_likelihood().where(real, 0.0).sum()


class LinkFollowing(AlignerTerm):
    """−Σ_ij A_ij log β_ij over the linked pieces: the posterior β follows the word links
    (A: the links spread over the pieces, as guided alignment spreads them). A module with
    the NULL option also learns −log β_i∅ for every piece its pair's links leave unlinked."""

    name = "links"
    needs_links = True

    def loss(self, rows: AlignerRows, real: torch.Tensor, links: PieceLinks | None) -> torch.Tensor:
        if links is None:
            return rows.log_prior.new_zeros((), dtype=torch.float32)
        log_alignment = rows.log_joint.log_softmax(dim=-1)  # log β; −inf at padded positions, which no link reads
        linked = links.matrix > 0
        loss = -(links.matrix * log_alignment[..., : links.matrix.size(2)].where(linked, 0.0)).sum()
        if rows.null:
            loss = loss - log_alignment[..., -1].where(links.unlinked(), 0.0).sum()
        return loss


TERMS: dict[str, AlignerTerm] = {term.name: term for term in (Prediction(), LinkFollowing())}
"""Every term of the module's objective, by name."""

OBJECTIVES: dict[str, tuple[str, ...]] = {
    "prediction": ("prediction",),
    "links": ("links",),
    "both": ("prediction", "links"),
}
"""What `train.aligner_objective` can name: the terms each objective sums, in order."""


def terms_of(objective: str) -> list[AlignerTerm]:
    """The terms the objective `objective` (a name of OBJECTIVES) sums."""
    return [TERMS[name] for name in OBJECTIVES[objective]]


def needs_links(objective: str) -> bool:
    """Whether a term of `objective` reads word links."""
    return any(term.needs_links for term in terms_of(objective))


def agreement_loss(
    forward: AlignerRows, backward: AlignerRows, forward_real: torch.Tensor, backward_real: torch.Tensor
) -> torch.Tensor:
    """Σ_ij (β_fwd[i, j] − β_bwd[j, i])² over the real pieces of a batch read both ways
    (Liang, Taskar & Klein 2006; Mask-Align's agreement loss): `forward` the rows of the
    model's module (target pieces × source pieces, (B, T, S)), `backward` the reverse
    model's for the same pairs the other way round ((B, S, T): its targets are the
    model's sources, </s> included), `forward_real` (B, T) and `backward_real` (B, S)
    their unpadded target pieces. Symmetric in the two directions, and its gradient
    reaches both modules."""
    ahead, back = forward.alignment(), backward.alignment().transpose(1, 2)
    if ahead.shape != back.shape:
        raise ValueError(f"the directions' rows do not transpose: {tuple(ahead.shape)} and {tuple(back.shape)}")
    real = forward_real.unsqueeze(2) & backward_real.unsqueeze(1)  # (B, T, S)
    return ((ahead - back).square() * real).sum()
