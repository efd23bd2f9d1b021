"""The training step's decoder and loss, replayed as CUDA graphs on a GPU.

With Multi30k-sized batches a GPU spends a training step launching kernels: the
decoder runs its attention and recurrence once per target position, forward and
backward, each a handful of small kernels. Here each batch shape's decoder forward
and backward are captured once (`torch.cuda.make_graphed_callables`) and replayed.

The encoder stays eager: its cuDNN RNN reads packed sequences whose layout depends on
every sentence's length. Its annotations are then padded to a grid of shapes (rows to
a multiple of ROW_MULTIPLE, source and target positions to a multiple of
POSITION_MULTIPLE), so that a few dozen shapes cover a corpus. Padded source positions
are masked as always, padded rows attend to nothing real, and padded target positions
(<pad>) count for nothing in the loss: the loss and the gradients are those of the
batch itself. The loss is the function eager steps run, so the objective's every term
is replayed: `training.loss.translation_loss`, the cross-entropy and, with guided
alignment, the guided term, whose links enter as a dense matrix of α's padded shape;
and with the alignment module, `training.loss.module_loss`, whose lexicon normalises
over the batch's target pieces, a vocabulary padded to a multiple of
VOCABULARY_MULTIPLE and masked. Where the translation is frozen (`train-aligner`), the
graphs replay the module's terms alone, on the frozen pass, kept or computed by
GraphedPass, the frozen decoder's forward replayed as a graph of its own. Each shape
keeps what its backward pass needs, so GPU memory grows with the number of shapes met;
`train.cuda_graphs: false` turns this off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from rnnsearch.kernels.capture import garbage_collector_paused
from rnnsearch.model.aligner import Normalising
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.reserved import PAD
from rnnsearch.text.batches import Batch, GuidedBatch
from rnnsearch.training.frozen_passes import Forced, KeptSource
from rnnsearch.training.loss import ModuleInputs, Objective, module_loss, translation_loss

ROW_MULTIPLE = 16
POSITION_MULTIPLE = 8
VOCABULARY_MULTIPLE = 256


class DecoderLoss(nn.Module):
    """The objective's terms from the encoder's annotations and summary (`translation_loss`,
    then `module_loss` where the objective trains the alignment module), on inputs padded
    to a fixed shape (`fixed_shape_inputs`): target positions holding <pad> count for
    nothing, and the links, where the objective reads any, enter as a dense matrix."""

    def __init__(self, model: RNNSearch, objective: Objective):
        super().__init__()
        self.model, self.objective = model, objective

    def forward(
        self,
        annotations: torch.Tensor,
        summary: torch.Tensor,
        padding: torch.Tensor,
        tgt_in: torch.Tensor,
        tgt_out: torch.Tensor,
        *extra: torch.Tensor,
    ) -> torch.Tensor:
        decoder = self.model.decoder
        state = decoder.initial_state(annotations, summary, padding)
        readout, weights = decoder(tgt_in, state)
        links, module = _split_extra(self.objective, extra)
        guided = links if self.objective.guided_alignment_weight else None
        loss = translation_loss(self.model, self.objective, readout, weights, tgt_out, guided)
        if module is None:
            return loss
        src, vocabulary, vocabulary_padding = module
        inputs = ModuleInputs(src, tgt_out, Normalising(vocabulary, vocabulary_padding), links)
        return loss + module_loss(self.model, self.objective, (readout, weights, state), inputs)[0]


class ModuleLoss(nn.Module):
    """The alignment module's terms alone (`module_loss`), on a frozen translation's
    teacher-forced pass, every input padded to a fixed shape (`module_inputs`)."""

    def __init__(self, model: RNNSearch, objective: Objective):
        super().__init__()
        self.model, self.objective = model, objective

    def forward(
        self,
        readout: torch.Tensor,
        weights: torch.Tensor,
        annotations: torch.Tensor,
        padding: torch.Tensor,
        tgt_out: torch.Tensor,
        src: torch.Tensor,
        vocabulary: torch.Tensor,
        vocabulary_padding: torch.Tensor,
        *links: torch.Tensor,
    ) -> torch.Tensor:
        forced = (readout, weights, KeptSource(annotations, padding))
        inputs = ModuleInputs(src, tgt_out, Normalising(vocabulary, vocabulary_padding), links[0] if links else None)
        return module_loss(self.model, self.objective, forced, inputs)[0]


def _split_extra(
    objective: Objective, extra: tuple[torch.Tensor, ...]
) -> tuple[torch.Tensor | None, tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None]:
    """DecoderLoss's inputs after the decoder's: the dense links where the objective reads
    links, then the module's source pieces, vocabulary and its padding where it trains one."""
    links = extra[0] if objective.guided else None
    if objective.aligner is None:
        return links, None
    src, vocabulary, vocabulary_padding = extra[1 if objective.guided else 0 :]
    return links, (src, vocabulary, vocabulary_padding)


@dataclass(frozen=True)
class Grid:
    """How far a batch is padded to its shape of the grid: `rows` more rows, `source` more
    source positions and `target` more target positions."""

    rows: int
    source: int
    target: int

    @classmethod
    def of(cls, src: torch.Tensor, targets: torch.Tensor, longest_source: int) -> Grid:
        """The padding of a batch of sources `src` (B, S) and targets (B, T): rows to a
        multiple of ROW_MULTIPLE, target positions to one of POSITION_MULTIPLE, source
        positions too but no further than `longest_source`, beyond which some alignment
        models cannot reach."""
        rows, source, target = src.size(0), src.size(1), targets.size(1)
        return cls(
            _round_up(rows, ROW_MULTIPLE) - rows,
            max(source, min(_round_up(source, POSITION_MULTIPLE), longest_source)) - source,
            _round_up(target, POSITION_MULTIPLE) - target,
        )

    def source_padding(self, src_lengths: torch.Tensor, source: int) -> torch.Tensor:
        """(rows, source positions) True at padded positions, of sources `source` positions
        long before padding; padded rows have no real one."""
        lengths = F.pad(src_lengths, (0, self.rows))
        positions = torch.arange(source + self.source, device=lengths.device)
        return positions.unsqueeze(0) >= lengths.unsqueeze(1)

    def targets(self, values: torch.Tensor) -> torch.Tensor:
        """(B, T) target pieces padded with <pad>."""
        return F.pad(values, (0, self.target, 0, self.rows), value=PAD)

    def per_source(self, values: torch.Tensor) -> torch.Tensor:
        """(B, S, …) padded with 0 (<pad> for source pieces)."""
        trailing = (0, 0) * (values.dim() - 2)
        return F.pad(values, (*trailing, 0, self.source, 0, self.rows))

    def per_target(self, values: torch.Tensor) -> torch.Tensor:
        """(B, T, …) padded with 0."""
        trailing = (0, 0) * (values.dim() - 2)
        return F.pad(values, (*trailing, 0, self.target, 0, self.rows))

    def links(self, batch: Batch) -> torch.Tensor:
        """The batch's links as a dense matrix of α's padded shape, 0 where there are none."""
        shape = (batch.src.size(0), batch.tgt_out.size(1), batch.src.size(1))
        if isinstance(batch, GuidedBatch) and len(batch.guide.weights):
            dense = batch.guide.matrix(shape)
        else:
            dense = torch.zeros(shape, device=batch.src.device)
        return F.pad(dense, (0, self.source, 0, self.target, 0, self.rows))


def vocabulary_inputs(targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct pieces of `targets` (<pad> aside), padded with <pad> to a multiple of
    VOCABULARY_MULTIPLE, and the mask of that padding: the module's lexicon normalises
    over them as over the batch's own vocabulary."""
    vocabulary = targets[targets != PAD].unique()
    size = _round_up(vocabulary.numel(), VOCABULARY_MULTIPLE)
    padding = torch.arange(size, device=vocabulary.device) >= vocabulary.numel()
    return F.pad(vocabulary, (0, size - vocabulary.numel()), value=PAD), padding


def fixed_shape_inputs(
    annotations: torch.Tensor,
    summary: torch.Tensor,
    batch: Batch,
    longest_source: int,
    objective: Objective,
) -> tuple[torch.Tensor, ...]:
    """DecoderLoss's inputs for `batch` under `objective`, padded to the grid of shapes:
    the annotations, summary, source padding and targets; then the dense links where the
    objective reads links (`Objective.guided`); then, where it trains the alignment
    module, the source pieces and the padded vocabulary with its mask."""
    grid = Grid.of(batch.src, batch.tgt_out, longest_source)
    inputs: tuple[torch.Tensor, ...] = (
        grid.per_source(annotations),
        F.pad(summary, (0, 0, 0, grid.rows)),
        grid.source_padding(batch.src_lengths, batch.src.size(1)),
        grid.targets(batch.tgt_in),
        grid.targets(batch.tgt_out),
    )
    if objective.guided:
        inputs = (*inputs, grid.links(batch))
    if objective.aligner is not None:
        inputs = (*inputs, grid.per_source(batch.src), *vocabulary_inputs(batch.tgt_out))
    return inputs


def module_inputs(forced: tuple, batch: Batch, longest_source: int, objective: Objective) -> tuple[torch.Tensor, ...]:
    """ModuleLoss's inputs for `batch` and its frozen pass `forced` (readout, α, source side:
    kept, or a GraphedPass's), padded to the grid of shapes."""
    readout, weights, state = forced
    grid = Grid.of(batch.src, batch.tgt_out, longest_source)
    inputs = (
        grid.per_target(readout.float()),
        F.pad(weights.float(), (0, grid.source, 0, grid.target, 0, grid.rows)),
        grid.per_source(state.annotations.float()),
        grid.source_padding(batch.src_lengths, batch.src.size(1)),
        grid.targets(batch.tgt_out),
        grid.per_source(batch.src),
        *vocabulary_inputs(batch.tgt_out),
    )
    return (*inputs, grid.links(batch)) if objective.guided else inputs


class GraphedLoss:
    """`sequence_loss` for one model and objective on a GPU, its fixed shapes replayed as
    CUDA graphs, each captured when first met. Training the translation, the encoder runs
    eagerly, then the decoder and the objective's terms (DecoderLoss); with the translation
    frozen, the frozen pass is given, or computed by `teacher_forced` (a GraphedPass),
    then the module's terms replay (ModuleLoss). An objective that reads links replays
    its terms on every batch, with a matrix of zeros where a batch carries no links, so
    that one graph serves a shape whether or not it does.

    All shapes share one memory pool: their graphs run one after another, and what one
    keeps between its forward and backward replays is kept alive, so no other reuses it.
    Captures run on a forked random-number generator: the warm-up passes a capture
    makes draw no dropout masks from the run's own stream, which therefore does not
    depend on when shapes are first met (a resumed run meets them at other steps).
    """

    def __init__(self, model: RNNSearch, objective: Objective, longest_source: int):
        self.model, self.objective, self.longest_source = model, objective, longest_source
        self.loss = DecoderLoss if objective.translation else ModuleLoss  # a new one each capture, which patches it
        self.teacher_forced = None if objective.translation else GraphedPass(model, longest_source)
        self.graphed: dict[tuple[tuple[int, ...], ...], nn.Module] = {}
        self.pool = torch.cuda.graph_pool_handle()
        # The decoder's parameters gather their gradients in nodes made while capturing, on
        # the capture's stream, and kept by the graphs; the replayed backward pass hands
        # them gradients from the training stream. That costs a stream synchronisation, not
        # a wrong result, so autograd need not warn about it at every run.
        torch.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(False)

    def __call__(self, batch: Batch, *, forced: Forced | None = None) -> tuple[torch.Tensor, int]:
        """Summed loss over the batch's target tokens, and how many there are; with the
        translation frozen, `forced` is the batch's kept pass (None: computed here)."""
        if self.objective.translation:
            annotations, summary = self.model.encoder(batch.src, batch.src_lengths)
            inputs = fixed_shape_inputs(annotations, summary, batch, self.longest_source, self.objective)
        else:
            kept = forced or cast(GraphedPass, self.teacher_forced)(batch.src, batch.src_lengths, batch.tgt_in)
            inputs = module_inputs(kept, batch, self.longest_source, self.objective)
        shape = tuple(tuple(t.shape) for t in inputs)
        if shape not in self.graphed:
            self.graphed[shape] = self._capture(inputs)
        return self.graphed[shape](*inputs), batch.target_tokens

    def _capture(self, inputs: tuple[torch.Tensor, ...]) -> nn.Module:
        samples = tuple(t.detach().clone().requires_grad_(t.requires_grad) for t in inputs)
        with (
            garbage_collector_paused(),
            torch.random.fork_rng(devices=[inputs[0].device.index]),
            torch.enable_grad(),
        ):
            graphed = torch.cuda.make_graphed_callables(
                self.loss(self.model, self.objective), samples, pool=self.pool, allow_unused_input=True
            )
            return cast(nn.Module, graphed)  # a module given, a module returned


WARM_UP_PASSES = 2  # run before a capture, on a side stream, as CUDA graph capture asks


def padded_pass(
    model: RNNSearch, annotations: torch.Tensor, summary: torch.Tensor, padding: torch.Tensor, tgt_in: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The decoder's teacher-forced readout and α from the encoder's annotations and
    summary, on inputs padded to a fixed shape: what GraphedPass captures."""
    decoder = model.decoder
    readout, weights = decoder(tgt_in, decoder.initial_state(annotations, summary, padding))
    assert weights is not None, "a model with an alignment module attends"
    return readout, weights


class GraphedPass:
    """A frozen translation's teacher-forced pass (`RNNSearch.teacher_forced`, without
    gradients) on a GPU: the encoder eager, then the decoder's forward for the batch's
    padded shape replayed as a CUDA graph, captured when first met, its readout and α cut
    back to the batch's own shape. `train-aligner` computes each pair's pass once, in
    the first epoch (frozen_passes.py); eagerly, that pass launched its kernels one target
    position at a time and made the first epoch slower than a translation step."""

    def __init__(self, model: RNNSearch, longest_source: int):
        self.model, self.longest_source = model, longest_source
        self.captured: dict[tuple[int, ...], tuple[torch.cuda.CUDAGraph, tuple[torch.Tensor, ...], tuple]] = {}
        self.pool = torch.cuda.graph_pool_handle()

    @torch.no_grad()
    def __call__(
        self, src: torch.Tensor, src_lengths: torch.Tensor, tgt_in: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, KeptSource]:
        """The readout (B, T, l), α (B, T, S) and source side of the batch."""
        annotations, summary = self.model.encoder(src, src_lengths)
        grid = Grid.of(src, tgt_in, self.longest_source)
        inputs = (
            grid.per_source(annotations),
            F.pad(summary, (0, 0, 0, grid.rows)),
            grid.source_padding(src_lengths, src.size(1)),
            grid.targets(tgt_in),
        )
        shape = (*inputs[0].shape[:2], inputs[3].size(1))
        if shape not in self.captured:
            self.captured[shape] = self._capture(inputs)
        graph, static, (readout, weights) = self.captured[shape]
        for place, value in zip(static, inputs, strict=True):
            place.copy_(value)
        graph.replay()
        rows, targets, sources = src.size(0), tgt_in.size(1), src.size(1)
        return (
            readout[:rows, :targets].clone(),  # the graph's outputs are overwritten by its next replay
            weights[:rows, :targets, :sources].clone(),
            KeptSource(annotations, inputs[2][:rows, :sources]),
        )

    def _capture(
        self, inputs: tuple[torch.Tensor, ...]
    ) -> tuple[torch.cuda.CUDAGraph, tuple[torch.Tensor, ...], tuple]:
        """Warm up on a side stream, then record the pass on copies of `inputs`, which each
        replay reads after the batch's inputs are copied into them."""
        static = tuple(t.clone() for t in inputs)
        device = static[0].device
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(WARM_UP_PASSES):
                padded_pass(self.model, *static)
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with garbage_collector_paused(), torch.cuda.graph(graph, pool=self.pool):
            outputs = padded_pass(self.model, *static)
        return graph, static, outputs


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple
