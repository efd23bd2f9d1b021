"""Label-smoothed cross-entropy over real target positions only, fused with the output
layer; for guided alignment, the cross-entropy between the attention and the given
word links (docs/model.md, "Guided alignment"); and the alignment module's terms
(docs/model.md, "The alignment module")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from rnnsearch.config import Config
from rnnsearch.model.aligner import AlignerRows, Normalising
from rnnsearch.model.linear import CHUNK_ELEMENTS
from rnnsearch.model.objectives import PieceLinks, agreement_loss, needs_links, terms_of
from rnnsearch.model.seq2seq import RNNSearch, SourceSide
from rnnsearch.reserved import PAD
from rnnsearch.text.batches import Batch, GuidedBatch
from rnnsearch.training.frozen_passes import Forced


def _chunked_loss(
    readout: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    targets: torch.Tensor,
    smoothing: float,
    gradients: bool,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None]:
    """The summed loss, and the gradients of readout, weight and bias if asked, a chunk of
    rows at a time; rows whose target is <pad> count for nothing (a fixed shape's padding)."""
    rows = max(1, CHUNK_ELEMENTS // weight.size(0))
    total = readout.new_zeros((), dtype=torch.float32)
    grads = (torch.empty_like(readout), torch.zeros_like(weight), torch.zeros_like(bias)) if gradients else None
    for start in range(0, readout.size(0), rows):
        chunk, chunk_targets = readout[start : start + rows], targets[start : start + rows]
        counts = (chunk_targets != PAD).unsqueeze(1).float()  # (n, 1): 1, or 0 for <pad>
        shifted = F.linear(chunk, weight, bias).float()  # logits (n, V), shifted in place below
        shifted -= shifted.amax(dim=1, keepdim=True)  # a constant per row cancels in every term
        target_logits = shifted.gather(1, chunk_targets.unsqueeze(1)).squeeze(1)
        mean_logits = shifted.mean(dim=1)
        normaliser = shifted.exp_().sum(dim=1, keepdim=True)  # the logits' buffer now holds exp(shifted)
        log_normaliser = normaliser.log().squeeze(1)
        nll = log_normaliser - target_logits
        uniform = log_normaliser - mean_logits
        total += (((1.0 - smoothing) * nll + smoothing * uniform) * counts.squeeze(1)).sum()
        if grads is not None:
            grad_readout, grad_weight, grad_bias = grads
            # softmax − ε/V, and 0 on a <pad> row: dividing its exponentials by ∞ zeroes them
            grad = shifted.div_(normaliser.masked_fill(counts == 0, torch.inf)).sub_(
                counts * (smoothing / shifted.size(1))
            )
            grad.scatter_add_(1, chunk_targets.unsqueeze(1), counts * (smoothing - 1.0))
            grad_bias += grad.sum(0)
            grad = grad.to(chunk.dtype)
            grad_readout[start : start + rows] = torch.matmul(grad, weight.to(chunk.dtype))
            grad_weight += torch.matmul(grad.t(), chunk)
    return total, grads


class OutputLayerLoss(torch.autograd.Function):
    """Summed label-smoothed cross-entropy of softmax(W_o t_n + b_o) against targets y_n.

    loss_n = (1 − ε) · (−log p(y_n)) + ε · mean_v(−log p(v)), as torch's
    cross_entropy(label_smoothing=ε) defines it. The (N, V) logits are the largest
    tensor of a training step, and their gradient is as large. Here they never exist
    whole: rows are taken a chunk at a time, and while a chunk's logits are in cache,
    the loss and the gradients of t, W_o and b_o are computed from them (softmax −
    smoothed one-hot, in place). The backward pass only scales what the forward pass kept.
    """

    @staticmethod
    def forward(ctx, readout, weight, bias, targets, smoothing: float) -> torch.Tensor:
        total, grads = _chunked_loss(readout, weight, bias, targets, smoothing, gradients=True)
        ctx.save_for_backward(*cast(tuple[torch.Tensor, ...], grads))  # asked for: never None
        return total

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        grad_readout, grad_weight, grad_bias = ctx.saved_tensors
        return grad_readout * grad_output, grad_weight * grad_output, grad_bias * grad_output, None, None


def output_layer_loss(readout: torch.Tensor, layer: nn.Linear, targets: torch.Tensor, smoothing: float) -> torch.Tensor:
    """Summed label-smoothed cross-entropy of the output layer applied to `readout` (N, l)
    against `targets` (N,); gradients are computed only where autograd will want them."""
    if torch.is_grad_enabled() and (readout.requires_grad or layer.weight.requires_grad):
        return OutputLayerLoss.apply(readout, layer.weight, layer.bias, targets, smoothing)
    return _chunked_loss(readout, layer.weight, layer.bias, targets, smoothing, gradients=False)[0]


def guided_alignment_loss(weights: torch.Tensor, links: torch.Tensor) -> torch.Tensor:
    """−Σ_ij A_ij log α_ij: the summed cross-entropy between each guided row of α (`weights`,
    (B, T, S)) and its links' distribution A_i (`links`, `Guide.matrix`; rows without links
    are 0 and count for nothing). α_ij is floored at the smallest positive float before the
    log, so that a weight that underflowed to 0 gives a large finite loss, not an infinite one."""
    return -(links * weights.float().clamp_min(torch.finfo(torch.float32).tiny).log()).sum()


def translation_loss(
    model: RNNSearch,
    objective: Objective,
    readout: torch.Tensor,
    weights: torch.Tensor | None,
    tgt_out: torch.Tensor,
    links: torch.Tensor | None = None,
    *,
    real: torch.Tensor | None = None,
) -> torch.Tensor:
    """The translation's terms of `objective` from a teacher-forced pass (readout (B, T, l),
    α (B, T, S)): the output layer's label-smoothed cross-entropy against `tgt_out` (B, T),
    plus λ times the guided alignment loss against `links` (`Guide.matrix`; None: no
    guided term). The one function that eager steps run and the CUDA graphs replay
    (training.graphed_loss). Eager steps pass `real`, the mask of target positions not
    holding <pad>, and the output layer runs on those rows alone; a fixed shape passes
    none, and its <pad> positions count for nothing."""
    if real is None:
        rows, targets = readout.flatten(0, 1), tgt_out.flatten()
    else:
        rows, targets = readout[real], tgt_out[real]
    loss = output_layer_loss(rows, model.decoder.output_layer, targets, objective.label_smoothing)
    if links is not None:
        assert weights is not None, "a guided model attends: it has α"
        loss = loss + objective.guided_alignment_weight * guided_alignment_loss(weights, links)
    return loss


def guide_links(batch: Batch, objective: Objective, shape: tuple[int, int, int]) -> torch.Tensor | None:
    """The dense links (`Guide.matrix`) that the objective's guided term reads for `batch`,
    α's `shape`; None where there is no such term or the batch carries no links."""
    if not (objective.translation and objective.guided_alignment_weight and isinstance(batch, GuidedBatch)):
        return None
    return batch.guide.matrix(shape) if len(batch.guide.weights) else None


def aligner_loss(model: RNNSearch, batch: Batch, forced: tuple, objective: Objective) -> torch.Tensor:
    """The alignment module's summed loss over the batch's target pieces: the sum of the
    terms its objective names (model/objectives.py), from the teacher-forced pass `forced`
    (`RNNSearch.teacher_forced`'s readout, α and state). Its inputs are detached, so it
    trains the module alone."""
    return _module_terms(model, batch, forced, objective)[0]


def _module_terms(
    model: RNNSearch, batch: Batch, forced: tuple, objective: Objective
) -> tuple[torch.Tensor, AlignerRows]:
    """`aligner_loss`, and the module's rows it was computed from: the lexicon normalised
    over the batch's own target pieces, the links read as a dense matrix of α's shape."""
    real = batch.tgt_out != PAD
    links = None
    if isinstance(batch, GuidedBatch):
        links = batch.guide.matrix((*batch.tgt_out.shape, batch.src.size(1)))
    inputs = ModuleInputs(batch.src, batch.tgt_out, Normalising(batch.tgt_out[real].unique()), links)
    return module_loss(model, objective, forced, inputs)


@dataclass(frozen=True)
class ModuleInputs:
    """What the module's terms read of a batch besides the teacher-forced pass: its
    sources `src` (B, S) and target pieces `targets` (B, T), the lexicon normalised over
    the batch's vocabulary (`normalising`: its pieces, and the padding that makes it a
    fixed size), and the dense `links` (B, T, S) its links term reads (None: the batch
    carries none)."""

    src: torch.Tensor
    targets: torch.Tensor
    normalising: Normalising
    links: torch.Tensor | None = None


def module_loss(
    model: RNNSearch, objective: Objective, forced: tuple, inputs: ModuleInputs
) -> tuple[torch.Tensor, AlignerRows]:
    """The module's terms of `objective` summed over the real pieces of the targets, and
    the module's rows, from the teacher-forced pass `forced` (readout, α, source side)
    of the `inputs`. The one function that eager steps run and the CUDA graphs replay
    (training.graphed_loss), which pass it every tensor padded to a fixed shape."""
    readout, weights, state = forced
    targets, links = inputs.targets, inputs.links
    rows = model.aligner_rows(inputs.src, state, readout, weights, targets, inputs.normalising)
    piece_links = None if links is None else PieceLinks(links, targets)
    real = targets != PAD
    loss = readout.new_zeros((), dtype=torch.float32)
    assert objective.aligner is not None, "called for an objective with the module's terms"
    for term in terms_of(objective.aligner):
        loss = loss + term.loss(rows, real, piece_links)
    return loss, rows


def two_way_loss(
    model: RNNSearch,
    reverse: RNNSearch,
    batches: tuple[Batch, Batch],
    objective: Objective,
    *,
    forced: tuple[Forced | None, Forced | None] = (None, None),
) -> tuple[torch.Tensor, int]:
    """Both directions' modules trained together (`train-aligner --reverse`), both
    translations frozen: each module's terms on its direction of the same pairs
    (`batches`: the model's batch and the same pairs read the other way round), plus
    `objective.agreement_weight` times their agreement (model/objectives.py), and the
    target tokens of both. `forced`: each batch's kept frozen pass (frozen_passes.py),
    None where the pass is to be computed here."""
    losses, rows, real = [], [], []
    for net, batch, kept in zip((model, reverse), batches, forced, strict=True):
        loss, module_rows = _module_terms(net, batch, kept or frozen_pass(net, batch), objective)
        losses.append(loss)
        rows.append(module_rows)
        real.append(batch.tgt_out != PAD)
    total = losses[0] + losses[1]
    if objective.agreement_weight:
        total = total + objective.agreement_weight * agreement_loss(rows[0], rows[1], real[0], real[1])
    return total, int(real[0].sum() + real[1].sum())


@torch.no_grad()
def frozen_pass(model: RNNSearch, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None, SourceSide]:
    """The teacher-forced pass of a frozen translation, without gradients."""
    return model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)


@dataclass(frozen=True)
class Objective:
    """The loss terms a run trains, declared once (docs/model.md): the output layer's
    cross-entropy, label-smoothed by ε (`label_smoothing`), plus λ
    (`guided_alignment_weight`) times the guided alignment loss of a batch that carries
    word links, unless `translation` is False; plus the alignment module's terms, those
    its objective `aligner` names (model/objectives.py; None: no module to train), and,
    where a reverse model's module trains with it, `agreement_weight` times their agreement.
    `sequence_loss` computes them all (`two_way_loss` for two modules); a new translation term is a field here and its
    term there, a new term of the module a class in model/objectives.py."""

    label_smoothing: float = 0.0
    guided_alignment_weight: float = 0.0
    aligner: str | None = None
    translation: bool = True
    agreement_weight: float = 0.0

    @classmethod
    def of(cls, config: Config, *, translation: bool = True) -> Objective:
        """The objective a config asks for: the translation's terms, unless `translation` is
        False (its weights frozen, as `rnnsearch train-aligner` trains), and the alignment
        module's `train.aligner_objective` where the model has one (model.aligner)."""
        train = config.train
        aligner = train.aligner_objective if config.model.aligner else None
        return cls(
            train.label_smoothing, train.guided_alignment_weight, aligner, translation, train.aligner_agreement_weight
        )

    @property
    def guided(self) -> bool:
        """Whether batches must carry their word links (for guided alignment or the module's links term)."""
        return (self.translation and self.guided_alignment_weight > 0) or (
            self.aligner is not None and needs_links(self.aligner)
        )


LIKELIHOOD = Objective()
"""The cross-entropy alone, unsmoothed: the loss validation and scoring report."""


def sequence_loss(
    model: RNNSearch,
    batch: Batch,
    objective: Objective = LIKELIHOOD,
    *,
    ddp: DistributedDataParallel | None = None,
    forced: Forced | None = None,
) -> tuple[torch.Tensor, int]:
    """The `objective`'s summed loss over the batch's target tokens, and how many there are.

    The vocabulary projection, the costliest layer, is applied to real (unpadded)
    positions only; padding therefore contributes neither loss nor work. `ddp`, in a
    run of several processes, is `model`'s DistributedDataParallel wrapper: it runs the
    forward pass, so that the backward pass averages the gradients across ranks. The
    guided alignment term counts where the batch carries links (a `GuidedBatch`'s). With
    the translation frozen, its pass runs without gradients, or is the batch's kept pass
    (`forced`, frozen_passes.py).
    """
    real = batch.tgt_out != PAD
    if forced is not None:  # a frozen translation's kept pass: the module's terms alone
        return aligner_loss(model, batch, forced, objective), int(real.sum())
    state: SourceSide | None = None
    if objective.aligner is None:
        readout, weights = (model if ddp is None else ddp)(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, l)
    elif not objective.translation:
        readout, weights, state = frozen_pass(model, batch)
    else:
        readout, weights, state = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
    terms = []
    if objective.translation:
        links = None if weights is None else guide_links(batch, objective, weights.shape)
        terms.append(translation_loss(model, objective, readout, weights, batch.tgt_out, links, real=real))
    if state is not None:
        terms.append(aligner_loss(model, batch, (readout, weights, state), objective))
    return sum(terms[1:], terms[0]), int(real.sum())
